/*
 * report_metrics: Prometheus text exposition of topognn's own metrics.
 * Names and meanings: docs/metrics.md. See report_metrics.h.
 */
#include "report_metrics.h"

#include <math.h>
#include <string.h>

static void head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Prometheus spells non-finite values NaN, +Inf, -Inf. */
static void value(FILE *f, double v)
{
	if (isnan(v))
		fputs("NaN\n", f);
	else if (isinf(v))
		fputs(v > 0 ? "+Inf\n" : "-Inf\n", f);
	else
		fprintf(f, "%.17g\n", v);
}

/* A label value: backslash, double quote and newline escaped. */
static void label(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', f);
		if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

static void gauge(FILE *f, const char *name, const char *help, double v)
{
	head(f, name, "gauge", help);
	fprintf(f, "%s ", name);
	value(f, v);
}

static void counter(FILE *f, const char *name, const char *help, double v)
{
	head(f, name, "counter", help);
	fprintf(f, "%s ", name);
	value(f, v);
}

int report_metrics_write(FILE *f, const report_stats *st, const report_occupancy *o,
			 int skipped_lines)
{
	head(f, "topognn_decisions_total", "counter",
	     "Placement decisions in the decision log that placed a job, by policy.");
	for (int i = 0; i < st->npolicies; i++)
	{
		fputs("topognn_decisions_total{policy=\"", f);
		label(f, st->policies[i].policy);
		fprintf(f, "\"} %d\n", st->policies[i].n);
	}
	if (st->npolicies == 0)
		fputs("topognn_decisions_total{policy=\"none\"} 0\n", f);
	counter(f, "topognn_decisions_failed_total",
		"Decisions where topognn found no placement, so Slurm's own choice stood (fallbacks).",
		st->failed);
	counter(f, "topognn_decisions_not_followed_total",
		"Jobs whose Slurm allocation differs from topognn's choice (shadow mode).",
		st->not_followed);
	head(f, "topognn_decision_latency_microseconds", "histogram",
	     "Wall time of one placement decision.");
	for (int b = 0; b < REPORT_LATENCY_BUCKETS; b++) {
		if (isinf(report_latency_bounds[b]))
			fprintf(f, "topognn_decision_latency_microseconds_bucket{le=\"+Inf\"} %ld\n",
				st->latency_bucket[b]);
		else
			fprintf(f, "topognn_decision_latency_microseconds_bucket{le=\"%g\"} %ld\n",
				report_latency_bounds[b], st->latency_bucket[b]);
	}
	fprintf(f, "topognn_decision_latency_microseconds_sum %.17g\n", st->latency_sum_us);
	fprintf(f, "topognn_decision_latency_microseconds_count %d\n", st->nlatency);
	counter(f, "topognn_shadow_decisions_total",
		"Decisions for which the baseline policy was also run.", st->shadow);
	counter(f, "topognn_shadow_agreements_total",
		"Shadow decisions where the baseline chose exactly the same hosts.", st->agree);
	gauge(f, "topognn_shadow_agreement_ratio",
	      "Share of shadow decisions where the baseline chose the same hosts.",
	      st->shadow ? (double)st->agree / st->shadow : NAN);
	counter(f, "topognn_shadow_chosen_cheaper_total",
		"Shadow decisions that differ where the choice has the lower predicted cost.",
		st->chosen_cheaper);
	gauge(f, "topognn_shadow_predicted_cost_advantage",
	      "Mean predicted cost of the baseline minus that of the choice (positive: topognn ahead).",
	      st->baseline_cost_mean - st->chosen_cost_mean);
	gauge(f, "topognn_predicted_slowdown_mean",
	      "Mean predicted communication slowdown of ended jobs with a realised slowdown.",
	      st->predicted_slowdown_mean);
	gauge(f, "topognn_realised_slowdown_mean",
	      "Mean realised slowdown of the same jobs.", st->realised_slowdown_mean);
	gauge(f, "topognn_slowdown_prediction_error_mean",
	      "Mean absolute error of the predicted slowdown.", st->slowdown_mae);
	counter(f, "topognn_heavy_jobs_spanning_groups_total",
		"Heavy multi-host jobs placed over more than one group.", st->heavy_spanning);
	counter(f, "topognn_decision_log_skipped_lines_total",
		"Lines of the decision log that could not be read.", skipped_lines);
	if (o) {
		gauge(f, "topognn_running_jobs", "Jobs running now.", o->njobs);
		gauge(f, "topognn_hosts_busy", "Hosts with a running job.", o->busy_hosts);
		gauge(f, "topognn_hosts_idle", "Usable hosts without a job.", o->idle_hosts);
		gauge(f, "topognn_fragmentation_ratio",
		      "Share of idle hosts in groups that are not wholly idle.", o->fragmentation);
		head(f, "topognn_group_busy_hosts", "gauge", "Busy hosts per group.");
		for (int g = 0; g < o->ngroups; g++)
			if (o->group_hosts[g] > 0) {
				fputs("topognn_group_busy_hosts{group=\"", f);
				label(f, g < place_cluster_ngroups(o->c) ? place_cluster_group_name(o->c, g)
									 : "none");
				fprintf(f, "\"} %d\n", o->group_busy[g]);
			}
	}
	return ferror(f) ? -1 : 0;
}
