/*
 * placement-report-job.c: placement-report job JOBID: where a job went, what else was
 * scored and why it lost, and what the node side reported.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "placement-report.h"
#include "report_history.h"
#include "report_node.h"
#include "report_why.h"
#include "topo_hostlist.h"
#include "topo_num.h"

/* ---- job ----------------------------------------------------------------- */

static char *hostlist_of(char **hosts, int n)
{
	topo_error err;
	char *s = topo_hostlist_compress((const char *const *)hosts, (size_t)n, &err);

	return s ? s : strdup("?");
}

static json_t *choice_json(const report_choice *c, const char *role, const char *why)
{
	json_t *o = json_object(), *h = json_array();

	json_object_set_new(o, "role", json_string(role));
	for (int i = 0; i < c->nhosts; i++)
		json_array_append_new(h, json_string(c->hosts[i]));
	json_object_set_new(o, "hosts", h);
	json_object_set_new(o, "kind", json_string(c->kind));
	json_object_set_new(o, "nhosts", json_integer(c->nhosts));
	json_object_set_new(o, "groups", json_integer(c->groups));
	json_object_set_new(o, "leaves", json_integer(c->leaves));
	json_object_set_new(o, "hop_diameter", json_integer(c->diameter));
	json_object_set_new(o, "cost", isnan(c->cost) ? json_null() : json_real(c->cost));
	json_object_set_new(o, "comm_time_s",
			    isnan(c->comm_time_s) ? json_null() : json_real(c->comm_time_s));
	json_object_set_new(o, "frag_cost",
			    isnan(c->frag_cost) ? json_null() : json_real(c->frag_cost));
	if (why)
		json_object_set_new(o, "why_lost", json_string(why));
	return o;
}

static void choice_row(const report_choice *c, const char *role, const char *why)
{
	char cost[16] = "-", comm[16] = "-", frag[16] = "-";

	if (!isnan(c->cost))
		snprintf(cost, sizeof(cost), "%.4g", c->cost);
	if (!isnan(c->comm_time_s))
		snprintf(comm, sizeof(comm), "%.3g", c->comm_time_s * 1e3);
	if (!isnan(c->frag_cost))
		snprintf(frag, sizeof(frag), "%.3g", c->frag_cost);
	printf("  %-16s %-15s %5d %6d %6d %4d %9s %9s %7s  %s\n", role, c->kind[0] ? c->kind : "-",
	       c->nhosts, c->groups, c->leaves, c->diameter, cost, comm, frag, why ? why : "");
}

/* Whether the record says anything about waiting for locality. */
static int has_locality(const report_decision *d)
{
	return d->locality_checked || d->deferred || d->waited_s > 0;
}

/* The locality wait as the engine weighed it (docs/decision-record.md):
 * NULL when the record says nothing of it. */
static json_t *locality_json(const report_decision *d)
{
	json_t *o, *f;

	if (!has_locality(d))
		return NULL;
	o = json_pack("{s:b, s:b, s:f}", "checked", d->locality_checked, "deferred",
		      d->deferred, "waited_s", d->waited_s);
	if (!o)
		return NULL;
	if (d->min_groups >= 0)
		json_object_set_new(o, "min_groups", json_integer(d->min_groups));
	if (!isnan(d->budget_s))
		json_object_set_new(o, "budget_s", json_real(d->budget_s));
	if (d->deferred && !isnan(d->expected_wait_s))
		json_object_set_new(o, "expected_wait_s", json_real(d->expected_wait_s));
	if (d->deferred && d->expected_groups >= 0)
		json_object_set_new(o, "expected_groups", json_integer(d->expected_groups));
	if (!isnan(d->hold_gate)) {
		f = json_object();
		for (int i = 0; f && i < d->nhold_features; i++)
			json_object_set_new(f, d->hold_feature[i], json_real(d->hold_value[i]));
		json_object_set_new(o, "hold_gate", json_real(d->hold_gate));
		json_object_set_new(o, "hold_features", f);
	}
	if (d->locality_why[0])
		json_object_set_new(o, "why", json_string(d->locality_why));
	return o;
}

/* What the engine was told of the job's duration: the prediction (what a
 * hold and light-job packing weigh) and the limit. */
static void run_time_print(const report_decision *d)
{
	if (isnan(d->time_limit_s) && isnan(d->predicted_run_s))
		return;
	printf("  run time      ");
	if (!isnan(d->predicted_run_s))
		printf("predicted %.*f s%s", d->predicted_run_s < 10 ? 1 : 0, d->predicted_run_s,
		       isnan(d->time_limit_s) ? "" : " of a ");
	else
		printf("no prediction; ");
	if (!isnan(d->time_limit_s))
		printf("%.*f s limit", d->time_limit_s < 10 ? 1 : 0, d->time_limit_s);
	printf("\n");
}

/* The same as text: what was weighed, the gate's say, the engine's why;
 * every line after pad (a held decision's lines sit under its heading). */
static void locality_print(const report_decision *d, const char *pad)
{
	if (!has_locality(d))
		return;
	printf("%s  locality      %s", pad, d->deferred ? "deferred (not started by this decision)"
					    : d->waited_s > 0 ? "started after waiting" : "weighed");
	if (d->min_groups >= 0)
		printf("; fewest groups %d", d->min_groups);
	if (d->waited_s > 0 || !isnan(d->budget_s))
		printf("; waited %.0f s", d->waited_s);
	if (!isnan(d->budget_s))
		printf(" of a %.0f s budget", d->budget_s);
	printf("\n");
	if (d->deferred && !isnan(d->expected_wait_s))
		printf("%s                waits about %.0f s for %d group%s\n", pad,
		       d->expected_wait_s, d->expected_groups, d->expected_groups == 1 ? "" : "s");
	if (!isnan(d->hold_gate)) {
		printf("%s  hold gate     %.2f (the learned gate holds above 0.50) on:", pad,
		       d->hold_gate);
		for (int i = 0; i < d->nhold_features; i++) { /* four to a line */
			if (i % 4)
				printf(", ");
			else
				printf("\n%s                ", pad);
			printf("%s %.3g", d->hold_feature[i], d->hold_value[i]);
		}
		printf("\n");
	}
	if (d->locality_why[0])
		printf("%s  why           %s\n", pad, d->locality_why);
}

/* What cmd_job shows of a decision, beyond the record itself. */
typedef struct job_view {
	const report_decision *d;
	char *hl;                        /* the allocated hosts, as a hostlist */
	char *groups, *leaves, *domains; /* names spanned (NULL without a graph) */
	int ng, nl, ndom;
	int sharp;                       /* SHARP eligible; -1 no SHARP in the graph */
	report_node_outcome *nodes;      /* the node side's reports */
	int nnodes;
	report_node_skips skips;         /* files in the report dir not read, and why */
	const report_decision *held;     /* the first decision that deferred the job */
	int nheld;                       /* how many did, up to the one that placed it */
} job_view;

static int job_json(struct ctx *x, const job_view *v)
{
	const report_decision *d = v->d;
	char why[256];
	json_t *root = json_object(), *alts = json_array(), *req = json_object(), *nd;

	json_object_set_new(root, "job", json_integer(d->job));
	json_object_set_new(root, "timestamp", json_real(d->timestamp));
	json_object_set_new(root, "format", json_string(d->format));
	json_object_set_new(root, "policy", json_string(d->policy));
	json_object_set_new(root, "baseline_policy", json_string(d->baseline_policy));
	json_object_set_new(root, "scorer", json_string(d->scorer));
	if (d->model[0])
		json_object_set_new(root, "model", json_string(d->model));
	json_object_set_new(root, "candidates", json_integer(d->candidates));
	json_object_set_new(root, "latency_us",
			    isnan(d->latency_us) ? json_null() : json_real(d->latency_us));
	json_object_set_new(req, "min_hosts", json_integer(d->min_hosts));
	json_object_set_new(req, "gpus_per_host", json_integer(d->gpus_per_host));
	json_object_set_new(req, "comm_class", json_string(d->comm_class));
	if (!isnan(d->time_limit_s))
		json_object_set_new(req, "time_limit_s", json_real(d->time_limit_s));
	if (!isnan(d->predicted_run_s))
		json_object_set_new(req, "predicted_run_s", json_real(d->predicted_run_s));
	json_object_set_new(root, "request", req);
	json_object_set_new(root, "hosts", json_string(v->hl));
	json_object_set_new(root, "nhosts", json_integer(d->nallocated));
	json_object_set_new(root, "groups", v->groups ? json_string(v->groups) : json_null());
	json_object_set_new(root, "ngroups", json_integer(v->groups ? v->ng : d->chosen.groups));
	json_object_set_new(root, "leaves", v->leaves ? json_string(v->leaves) : json_null());
	json_object_set_new(root, "nleaves", json_integer(v->leaves ? v->nl : d->chosen.leaves));
	json_object_set_new(root, "hop_diameter", json_integer(d->chosen.diameter));
	if (v->domains) {
		json_object_set_new(root, "nvlink_domains", json_string(v->domains));
		json_object_set_new(root, "nnvlink_domains", json_integer(v->ndom));
	}
	if (v->sharp >= 0 || d->sharp_user) { /* a graph with SHARP, or a SHARP user */
		json_object_set_new(root, "sharp_user", json_boolean(d->sharp_user));
		json_object_set_new(root, "sharp_eligible", v->sharp < 0 ? json_null()
								   : json_boolean(v->sharp));
	}
	json_object_set_new(root, "predicted_cost",
			    isnan(d->chosen.cost) ? json_null() : json_real(d->chosen.cost));
	json_object_set_new(root, "confidence", isnan(d->chosen.confidence)
			    ? json_null() : json_real(d->chosen.confidence));
	json_object_set_new(root, "followed",
			    d->followed < 0 ? json_null() : json_boolean(d->followed));
	if (has_locality(d))
		json_object_set_new(root, "locality", locality_json(d));
	if (v->held)
		json_object_set_new(root, "held",
				    json_pack("{s:i, s:f, s:o*}", "decisions", v->nheld,
					      "first_timestamp", v->held->timestamp, "first",
					      locality_json(v->held)));
	json_object_set_new(root, "chosen", choice_json(&d->chosen, "chosen", NULL));
	if (d->baseline.nhosts) {
		report_why_lost(&d->chosen, &d->baseline, why, sizeof(why));
		json_object_set_new(root, "baseline", choice_json(&d->baseline, "baseline", why));
	}
	for (int a = 0; a < d->nalternatives; a++) {
		report_why_lost(&d->chosen, &d->alternatives[a], why, sizeof(why));
		json_array_append_new(alts, choice_json(&d->alternatives[a], "alternative", why));
	}
	json_object_set_new(root, "alternatives", alts);
	json_object_set_new(root, "ended", json_boolean(d->ended));
	json_object_set_new(root, "realised_slowdown", isnan(d->realised_slowdown)
			    ? json_null() : json_real(d->realised_slowdown));
	nd = json_object();
	for (int i = 0; i < v->nnodes; i++) {
		json_t *h = json_object();

		for (int k = 0; k < v->nodes[i].nkeys; k++)
			json_object_set_new(h, v->nodes[i].keys[k], json_string(v->nodes[i].values[k]));
		if (v->nodes[i].problem)
			json_object_set_new(h, "problem", json_string(v->nodes[i].problem));
		json_object_set_new(nd, v->nodes[i].host, h);
	}
	json_object_set_new(root, "node_side", nd);
	if (x->o->node_dir) {
		json_t *sk = json_array();

		for (int i = 0; i < v->skips.n; i++)
			json_array_append_new(sk, json_pack("{s:s, s:s}", "file", v->skips.file[i],
							    "why", v->skips.why[i]));
		json_object_set_new(root, "node_side_skipped", sk);
	}
	json_object_set_new(root, "notes", notes_json(x));
	return emit_json(root);
}

static void job_print(struct ctx *x, const job_view *v)
{
	const report_decision *d = v->d;
	char tb[64], why[256];

	if (d->ok) {
		printf("%sjob %u%s  decided %s by %s%s%s (scorer %s, %d candidates",
		       BOLD, d->job, RESET, fmt_time(d->timestamp, tb, sizeof(tb)), BOLD,
		       d->policy[0] ? d->policy : "?", RESET,
		       d->scorer[0] ? d->scorer : "?", d->candidates);
		if (!isnan(d->latency_us))
			printf(", %.1f us", d->latency_us);
		printf(")\n");
	} else {
		printf("%sjob %u%s  placed %s by Slurm's generic selection (policy %s fell back)\n",
		       BOLD, d->job, RESET, fmt_time(d->timestamp, tb, sizeof(tb)),
		       d->policy[0] ? d->policy : "?");
		printf("  fallback      %s\n", d->reason);
	}
	if (d->model[0])
		printf("  model         %s\n", d->model);
	if (d->min_hosts)
		printf("  request       %d host%s, %s, comm %s%s%s\n", d->min_hosts,
		       d->min_hosts == 1 ? "" : "s",
		       d->gpus_per_host ? "shared hosts" : "whole hosts",
		       d->comm_class[0] ? d->comm_class : "?",
		       d->pattern[0] ? " " : "", d->pattern);
	run_time_print(d);
	printf("  hosts         %s (%d)\n", v->hl, d->nallocated);
	if (v->groups)
		printf("  groups        %d: %s\n", v->ng, v->groups);
	else
		printf("  groups        %d\n", d->chosen.groups);
	if (v->leaves)
		printf("  leaves        %d: %s\n", v->nl, v->leaves);
	else
		printf("  leaves        %d\n", d->chosen.leaves);
	printf("  hop diameter  %d\n", d->chosen.diameter);
	if (v->domains)
		printf("  nvlink        %d domain%s: %s\n", v->ndom, v->ndom == 1 ? "" : "s",
		       v->ndom ? v->domains : "(hosts in none)");
	if (v->sharp >= 0)
		printf("  sharp         %s%s\n",
		       v->sharp ? "eligible (under one SHARP aggregation tree)"
			     : "not eligible (no SHARP tree joins its leaves)",
		       d->sharp_user ? "; a SHARP user" : "");
	if (!isnan(d->chosen.cost))
		printf("  predicted     cost %.4g (communication %.3g ms per iteration, "
		       "fragmentation %.3g)\n", d->chosen.cost, d->chosen.comm_time_s * 1e3,
		       d->chosen.frag_cost);
	if (!isnan(d->chosen.confidence))
		printf("  confidence    %.2f (share of the gnn ensemble's models that rank "
		       "this placement first)\n", d->chosen.confidence);
	locality_print(d, "");
	if (v->held) {
		printf("  held by       %d decision%s, the first %s:\n", v->nheld,
		       v->nheld == 1 ? "" : "s", fmt_time(v->held->timestamp, tb, sizeof(tb)));
		locality_print(v->held, "  ");
	}
	if (d->followed == 0)
		printf("  %sSlurm did not follow topognn%s (shadow mode?): it chose %s\n",
		       YELLOW, RESET, v->hl);
	printf("\n  %s%-16s %-15s %5s %6s %6s %4s %9s %9s %7s  %s%s\n", BOLD, "candidate",
	       "kind", "hosts", "groups", "leaves", "hops", "cost", "comm_ms", "frag",
	       "why it lost", RESET);
	choice_row(&d->chosen, "chosen", NULL);
	if (d->baseline.nhosts) {
		char role[32];

		snprintf(role, sizeof(role), "baseline %s", d->baseline_policy);
		report_why_lost(&d->chosen, &d->baseline, why, sizeof(why));
		choice_row(&d->baseline, role, why);
	}
	for (int a = 0; a < d->nalternatives && a < x->o->top; a++) {
		char role[32];

		snprintf(role, sizeof(role), "alternative %d", a + 1);
		report_why_lost(&d->chosen, &d->alternatives[a], why, sizeof(why));
		choice_row(&d->alternatives[a], role, why);
	}
	if (d->nalternatives > x->o->top)
		printf("  %s(%d more alternatives: --top N)%s\n", DIM,
		       d->nalternatives - x->o->top, RESET);
	printf("\n  outcome       ");
	if (d->ended)
		printf("ended after %.0f s, realised slowdown %.3g\n", d->elapsed_s,
		       d->realised_slowdown);
	else
		printf("running (or its end is not in the log)\n");
	if (x->o->node_dir) {
		printf("  node side     %s\n", v->nnodes ? "" : "no report for this job");
		for (int i = 0; i < v->nnodes; i++) {
			printf("    %-20s", v->nodes[i].host);
			if (v->nodes[i].problem)
				printf(" %sunreadable: %s%s", RED, v->nodes[i].problem, RESET);
			for (int k = 0; k < v->nodes[i].nkeys; k++)
				printf(" %s=%s", v->nodes[i].keys[k], v->nodes[i].values[k]);
			printf("\n");
		}
		for (int i = 0; i < v->skips.n; i++)
			printf("    %sskipped %s: %s%s\n", RED, v->skips.file[i], v->skips.why[i], RESET);
	}
	print_notes(x);
}

/* --svg/--html: the cluster with the job highlighted (drawn alone when it
 * is not running any more). 0, or 1 when the picture could not be made. */
static int job_pictures(struct ctx *x, const report_decision *d)
{
	char title[64];
	int hi = -1;

	if (build_occupancy(x))
		return 1;
	for (int j = 0; j < x->occ.njobs; j++)
		if (x->occ.jobs[j].job == d->job)
			hi = j;
	if (hi < 0 && x->have_occ) {
		/* not running any more: draw it alone */
		place_comm m = report_decision_comm(d);

		report_occupancy_free(&x->occ);
		report_occupancy_init(&x->occ, x->c);
		report_occupancy_add(&x->occ, d->job, (const char *const *)d->allocated,
				     d->nallocated, d->gpus_per_host, d->cores_per_host, &m,
				     d->policy);
		report_occupancy_finish(&x->occ);
		hi = 0;
	}
	snprintf(title, sizeof(title), "job %u", d->job);
	return write_pictures(x, title, hi);
}

int cmd_job(struct ctx *x)
{
	uint64_t id;
	const report_decision *d;
	job_view v = { .sharp = -1 };
	int hidx[4096], nh = 0, rc = 0;
	topo_error err;

	if (topo_parse_u64(x->o->arg, 10, UINT32_MAX, &id)) {
		fprintf(stderr, PROG ": \"%s\" is not a job id (a whole number up to %u)\n", x->o->arg,
			UINT32_MAX);
		return 2;
	}
	d = x->have_log ? report_log_find(&x->log, (uint32_t)id) : NULL;
	if (!d) {
		fprintf(stderr, PROG ": job %" PRIu64 ": no decision in %s\n", id,
			x->have_log ? x->o->decisions : "(no decision log)");
		print_notes(x);
		return 1;
	}
	v.d = d;
	for (const report_decision *e = x->log.d; e < d; e++) /* log order: up to d */
		if (e->job == d->job && e->deferred && !v.nheld++)
			v.held = e;
	if (x->c)
		for (int i = 0; i < d->nallocated && nh < 4096; i++) {
			int h = place_cluster_find_host(x->c, d->allocated[i]);

			if (h >= 0)
				hidx[nh++] = h;
		}
	if (x->c && nh) {
		v.groups = report_span_names(x->c, hidx, nh, 0, &v.ng);
		v.leaves = report_span_names(x->c, hidx, nh, 1, &v.nl);
		if (place_cluster_ndomains(x->c) > 0)
			v.domains = report_span_names(x->c, hidx, nh, 2, &v.ndom);
		if (place_cluster_has_sharp(x->c))
			v.sharp = nh == d->nallocated &&
				  place_cluster_sharp_eligible(x->c, hidx, nh);
	}
	if (x->o->node_dir) {
		v.nnodes = report_node_load(x->o->node_dir, d->job, &v.nodes, &v.skips, &err);
		if (v.nnodes < 0) {
			char buf[700];

			note(x, "node side: %s", topo_error_format(&err, buf, sizeof(buf)));
			v.nnodes = 0;
		}
	}
	v.hl = hostlist_of(d->allocated, d->nallocated);
	if (x->o->json)
		rc = job_json(x, &v);
	else
		job_print(x, &v);
	if (!rc && (x->o->svg || x->o->html))
		rc = job_pictures(x, d);
	free(v.hl);
	free(v.groups);
	free(v.leaves);
	free(v.domains);
	report_node_free(v.nodes, v.nnodes);
	report_node_skips_free(&v.skips);
	return rc;
}

