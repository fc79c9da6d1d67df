/*
 * placement-report-history.c: placement-report history, metrics and dashboard: decision
 * statistics over a time window, training-sample export, Prometheus-format metrics, and the
 * Grafana dashboard's panels as a static HTML page.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "placement-report.h"
#include "report_history.h"
#include "report_dashboard.h"
#include "report_metrics.h"
#include "report_node.h"

/* ---- history ---------------------------------------------------------------- */

static json_t *num_or_null(double v)
{
	return isnan(v) ? json_null() : json_real(v);
}

/* Holds for locality: how many, whether they got what they waited for,
 * and the wait they got against the wait predicted when they were held,
 * in all and by the job's place in the queue when held. */
static json_t *hold_json(const report_stats *st)
{
	json_t *o = json_pack("{s:i, s:i, s:o, s:o, s:o, s:f}", "jobs", st->holds, "kept",
			      st->holds_kept, "predicted_wait_median_s",
			      num_or_null(st->hold_predicted_median_s), "realised_wait_median_s",
			      num_or_null(st->hold_realised_median_s),
			      "realised_per_predicted_median", num_or_null(st->hold_ratio_median),
			      "realised_wait_sum_s", st->hold_realised_sum_s);

	if (o && st->holds_at[0] + st->holds_at[1] > 0)
		json_object_set_new(
			o, "by_queue_position",
			json_pack("{s:{s:i, s:o}, s:{s:i, s:o}}", "head", "jobs", st->holds_at[0],
				  "realised_per_predicted_median",
				  num_or_null(st->hold_ratio_median_at[0]), "behind", "jobs",
				  st->holds_at[1], "realised_per_predicted_median",
				  num_or_null(st->hold_ratio_median_at[1])));
	return o;
}

/* "median 1.23x", or "no prediction" */
static const char *ratio_text(double v, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "no prediction");
	else
		snprintf(buf, len, "median %.2fx", v);
	return buf;
}

static void hold_print(const report_stats *st)
{
	char a[32], b[32];

	printf("  holds              %d job%s held for locality, %d placed over the groups "
	       "they waited for; %.0f job-seconds held\n", st->holds, st->holds == 1 ? "" : "s",
	       st->holds_kept, st->hold_realised_sum_s);
	if (!isnan(st->hold_ratio_median))
		printf("                     wait got / predicted when held: median %.2fx "
		       "(predicted %.0f s, got %.0f s)\n", st->hold_ratio_median,
		       st->hold_predicted_median_s, st->hold_realised_median_s);
	if (st->holds_at[0] + st->holds_at[1] > 0)
		printf("                     held at the queue head %d (%s), behind it %d (%s)\n",
		       st->holds_at[0], ratio_text(st->hold_ratio_median_at[0], a, sizeof(a)),
		       st->holds_at[1], ratio_text(st->hold_ratio_median_at[1], b, sizeof(b)));
}

int cmd_history(struct ctx *x)
{
	double since = -INFINITY, until = INFINITY;
	report_stats st;
	char t1[64], t2[64], buf[1024];
	int exported = -1, rc = 0;
	topo_error err;

	int wrc = log_window(x, "history", &since, &until);

	if (wrc)
		return wrc;
	if (report_stats_compute(&x->log, since, until, &st))
		return 1;
	if (x->o->export_path) {
		if (!x->c) {
			fprintf(stderr, PROG ": --export needs the cluster graph (--graph FILE)\n");
			return 1;
		}
		exported = report_history_write_samples(x->c, &x->log, since, until,
							x->o->host_gpus > 0 ? x->o->host_gpus : 8,
							x->o->export_path, &err);
		if (exported < 0) {
			fprintf(stderr, PROG ": %s\n", topo_error_format(&err, buf, sizeof(buf)));
			return 1;
		}
		if (exported == 0)
			note(x, "no decision in the window has an observed outcome (end event): nothing exported");
	}
	if (x->o->json) {
		json_t *root = json_object(), *pol = json_object();

		json_object_set_new(root, "since", isinf(since) ? json_null() : json_real(since));
		json_object_set_new(root, "until", isinf(until) ? json_null() : json_real(until));
		json_object_set_new(root, "decisions", json_integer(st.decisions));
		json_object_set_new(root, "placed", json_integer(st.placed));
		json_object_set_new(root, "failed", json_integer(st.failed));
		for (int i = 0; i < st.npolicies; i++)
			json_object_set_new(pol, st.policies[i].policy, json_integer(st.policies[i].n));
		json_object_set_new(root, "policies", pol);
		json_object_set_new(root, "latency_p50_us", isnan(st.latency_p50_us) ? json_null()
				    : json_real(st.latency_p50_us));
		json_object_set_new(root, "latency_p99_us", isnan(st.latency_p99_us) ? json_null()
				    : json_real(st.latency_p99_us));
		json_object_set_new(root, "shadow_decisions", json_integer(st.shadow));
		json_object_set_new(root, "shadow_agree", json_integer(st.agree));
		json_object_set_new(root, "heavy_jobs", json_integer(st.heavy));
		json_object_set_new(root, "heavy_spanning_groups", json_integer(st.heavy_spanning));
		json_object_set_new(root, "ended", json_integer(st.ended));
		json_object_set_new(root, "holds", hold_json(&st));
		json_object_set_new(root, "exported_samples", exported < 0 ? json_null()
				    : json_integer(exported));
		json_object_set_new(root, "notes", notes_json(x));
		rc = emit_json(root);
	} else {
		printf("%shistory%s %s .. %s\n", BOLD, RESET,
		       isinf(since) ? "start" : fmt_time(since, t1, sizeof(t1)),
		       isinf(until) ? "end" : fmt_time(until, t2, sizeof(t2)));
		printf("  decisions          %d (%d placed, %d without placement)\n", st.decisions,
		       st.placed, st.failed);
		printf("  by policy         ");
		for (int i = 0; i < st.npolicies; i++)
			printf(" %s %d", st.policies[i].policy, st.policies[i].n);
		printf("\n");
		if (st.nlatency)
			printf("  latency            p50 %.1f us, p99 %.1f us, max %.1f us\n",
			       st.latency_p50_us, st.latency_p99_us, st.latency_max_us);
		printf("  heavy multi-host   %d, of which %d over several groups\n", st.heavy,
		       st.heavy_spanning);
		if (st.shadow)
			printf("  shadow agreement   %d of %d (%.0f%%)\n", st.agree, st.shadow,
			       100.0 * st.agree / st.shadow);
		if (st.not_followed)
			printf("  not followed       %d (Slurm allocated other hosts)\n", st.not_followed);
		if (st.holds)
			hold_print(&st);
		printf("  ended with outcome %d\n", st.realised);
		if (exported > 0)
			printf("  exported           %d samples to %s (topognn-train --samples %s)\n",
			       exported, x->o->export_path, x->o->export_path);
		print_notes(x);
	}
	return rc;
}

/* ---- metrics ---------------------------------------------------------------- */

int cmd_metrics(struct ctx *x)
{
	report_node_summary ns;
	report_stats st;
	topo_error err;
	char buf[1024];
	int rc = 0;

	if (x->o->node_dir && report_node_summarise(x->o->node_dir, &ns, &err)) {
		fprintf(stderr, PROG ": %s\n", topo_error_format(&err, buf, sizeof(buf)));
		return 1;
	}
	/* node reports alone (a compute node's own exporter): only node metrics */
	if (x->have_log || x->have_rest) {
		report_log empty = {0};

		if (report_stats_compute(x->have_log ? &x->log : &empty, -INFINITY, INFINITY, &st) ||
		    build_occupancy(x))
			rc = 1;
		print_notes(x);
		if (!rc && report_metrics_write(stdout, &st, x->have_log ? &x->log : NULL,
						x->have_occ ? &x->occ : NULL))
			rc = 1;
	}
	if (x->o->node_dir) {
		if (!rc && report_metrics_write_nodes(stdout, &ns))
			rc = 1;
		report_node_summary_free(&ns);
	}
	return rc;
}

/* ---- dashboard ---------------------------------------------------------------- */

int cmd_dashboard(struct ctx *x)
{
	report_dashboard_opts opts = {x->o->decisions, 0};
	report_node_summary ns;
	topo_error err;
	char buf[1024];
	FILE *f = stdout;
	int rc;

	if (!x->have_log) {
		fprintf(stderr, PROG ": dashboard needs the decision log (--decisions FILE)%s%s\n",
			x->nnotes ? ": " : "", x->nnotes ? x->notes[0] : "");
		return 1;
	}
	if (x->o->node_dir && report_node_summarise(x->o->node_dir, &ns, &err)) {
		fprintf(stderr, PROG ": %s\n", topo_error_format(&err, buf, sizeof(buf)));
		return 1;
	}
	print_notes(x);
	if (x->o->html && !(f = fopen(x->o->html, "w"))) {
		fprintf(stderr, PROG ": %s: %s\n", x->o->html, strerror(errno));
		rc = 1;
	} else {
		rc = report_dashboard_write(f, &x->log, x->c, x->o->node_dir ? &ns : NULL, &opts);
		if ((f != stdout && fclose(f)) || rc) {
			fprintf(stderr, PROG ": %s: error writing the dashboard\n",
				x->o->html ? x->o->html : "stdout");
			rc = 1;
		}
	}
	if (x->o->node_dir)
		report_node_summary_free(&ns);
	return rc;
}
