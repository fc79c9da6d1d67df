/*
 * placement-report-whatif.c: placement-report whatif: what the engine would choose now for a
 * request (allocates nothing in Slurm).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "placement-report.h"
#include "place_scorer.h"
#include "place_record.h"
#include "report_why.h"
#include "topo_hostlist.h"

/* ---- whatif ---------------------------------------------------------------- */

int cmd_whatif(struct ctx *x)
{
	place_config cfg;
	place_engine *e;
	place_state *s;
	place_request r;
	place_decision d;
	topo_error err;
	char buf[1024], why[256];
	int pol = place_policy_parse(x->o->policy), base = place_policy_parse(x->o->baseline);
	int cls = place_comm_class_parse(x->o->comm), rc, G;

	if (!x->c) {
		fprintf(stderr, PROG ": whatif needs the cluster graph (--graph FILE)%s%s\n",
			x->nnotes ? ": " : "", x->nnotes ? x->notes[0] : "");
		return 1;
	}
	if (x->o->nodes <= 0) {
		fprintf(stderr, PROG ": whatif needs --nodes N\n");
		return 2;
	}
	if (pol < 0 || base < 0 || cls < 0) {
		fprintf(stderr, PROG ": unknown %s \"%s\"\n", pol < 0 ? "policy" : base < 0 ? "baseline"
			: "communication class", pol < 0 ? x->o->policy : base < 0 ? x->o->baseline
			: x->o->comm);
		return 2;
	}
	if (!x->have_log && !x->have_rest)
		note(x, "no running jobs known (no decision log, no slurmrestd): deciding on an idle cluster");
	if (build_occupancy(x))
		return 1;
	G = x->o->host_gpus > 0 ? x->o->host_gpus : 8;
	s = report_occupancy_state(&x->occ, G, x->o->host_cores);
	place_config_init(&cfg);
	e = s ? place_engine_new(x->c, &cfg, &err) : NULL;
	if (!e) {
		fprintf(stderr, PROG ": %s\n", s ? topo_error_format(&err, buf, sizeof(buf))
						 : "out of memory");
		place_state_free(s);
		return 1;
	}
	memset(&r, 0, sizeof(r));
	r.job_id = 0xfffffffeu;
	r.min_hosts = r.max_hosts = x->o->nodes;
	r.gpus_per_host = x->o->gpus_per_node;
	r.exclusive = x->o->gpus_per_node == 0;
	r.comm.cls = (place_comm_class)cls;
	r.comm.pattern = PLACE_PATTERN_RING;
	if (cls == PLACE_COMM_HEAVY) {
		/* a data-parallel job of the ResNet-50 kind (docs/simulator.md) */
		r.comm.bytes_per_iter = 102011648.0;
		r.comm.compute_s_per_iter = 1.095314e-3;
	} else if (cls == PLACE_COMM_LIGHT) {
		r.comm.bytes_per_iter = 1e6;
		r.comm.compute_s_per_iter = 0.1;
	}
	rc = place_decide(e, s, &r, (place_policy)pol, (place_policy)base, &d);
	if (x->o->json) {
		json_t *root = json_object();
		char *line = rc == 0 || !d.ok ? place_record_write_mem(x->c, &r, &d,
				place_engine_scorer_name(e, (place_policy)pol), 0) : NULL;

		json_object_set_new(root, "running_jobs", json_integer(x->occ.njobs));
		json_object_set_new(root, "busy_hosts", json_integer(x->occ.busy_hosts));
		json_object_set_new(root, "decision", line ? json_loads(line, 0, NULL) : json_null());
		json_object_set_new(root, "notes", notes_json(x));
		free(line);
		rc = emit_json(root);
	} else {
		printf("%swhat if%s a job asked now for %d host%s x %d GPUs, comm %s "
		       "(%d jobs running, %d hosts busy)\n", BOLD, RESET, x->o->nodes,
		       x->o->nodes == 1 ? "" : "s", x->o->gpus_per_node, x->o->comm, x->occ.njobs,
		       x->occ.busy_hosts);
		if (rc != 0 || !d.ok) {
			printf("  %sno placement now%s: %s\n", RED, RESET, d.reason);
			rc = 1;
		} else {
			report_choice ch = {0}, b = {0};
			const char *names[4096];
			int ng, nl;
			char *groups = report_span_names(x->c, d.chosen.hosts, d.chosen.nhosts, 0, &ng);
			char *leaves = report_span_names(x->c, d.chosen.hosts, d.chosen.nhosts, 1, &nl);
			char *hl;

			for (int i = 0; i < d.chosen.nhosts && i < 4096; i++)
				names[i] = place_cluster_host_name(x->c, d.chosen.hosts[i]);
			hl = topo_hostlist_compress(names, (size_t)d.chosen.nhosts, &err);
			printf("  %s would choose %s%s%s\n", x->o->policy, BOLD, hl ? hl : "?", RESET);
			printf("  groups %d: %s\n  leaves %d: %s\n  hop diameter %d, predicted cost %.4g "
			       "(communication %.3g ms, fragmentation %.3g), %.1f us\n", ng,
			       groups ? groups : "?", nl, leaves ? leaves : "?", d.chosen.diameter,
			       d.chosen.cost, d.chosen.comm_time_s * 1e3, d.chosen.frag_cost,
			       d.latency_us);
			if (d.baseline.nhosts) {
				ch.cost = d.chosen.cost;
				ch.frag_cost = d.chosen.frag_cost;
				ch.groups = d.chosen.groups;
				ch.leaves = d.chosen.leaves;
				ch.diameter = d.chosen.diameter;
				b.cost = d.baseline.cost;
				b.frag_cost = d.baseline.frag_cost;
				b.groups = d.baseline.groups;
				b.leaves = d.baseline.leaves;
				b.diameter = d.baseline.diameter;
				if (d.baseline.nhosts == d.chosen.nhosts &&
				    !memcmp(d.baseline.hosts, d.chosen.hosts,
					    (size_t)d.chosen.nhosts * sizeof(int)))
					snprintf(why, sizeof(why), "same hosts as the choice");
				else
					report_why_lost(&ch, &b, why, sizeof(why));
				printf("  baseline %s: %d groups, %d leaves, cost %.4g: %s\n", x->o->baseline,
				       d.baseline.groups, d.baseline.leaves, d.baseline.cost, why);
			}
			free(hl);
			free(groups);
			free(leaves);
			rc = 0;
		}
		print_notes(x);
	}
	place_engine_free(e);
	place_state_free(s);
	return rc;
}

