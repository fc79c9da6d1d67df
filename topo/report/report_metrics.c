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

/* name{key="value"} (no value yet). */
static void labelled(FILE *f, const char *name, const char *key, const char *v)
{
	fprintf(f, "%s{%s=\"", name, key);
	label(f, v);
	fputs("\"} ", f);
}

static void group_gauge(FILE *f, const report_occupancy *o, const char *name, const char *help,
			const int *count)
{
	head(f, name, "gauge", help);
	for (int g = 0; g < o->ngroups; g++)
		if (o->group_hosts[g] > 0) {
			labelled(f, name, "group", g < place_cluster_ngroups(o->c)
							   ? place_cluster_group_name(o->c, g) : "none");
			fprintf(f, "%d\n", count[g]);
		}
}

static const char *const hold_where[] = {"head", "behind"};

/* name{queue="all|head|behind"}: the median wait ratio of the holds of st. */
static void hold_ratios(FILE *f, const char *name, const report_stats *st)
{
	labelled(f, name, "queue", "all");
	value(f, st ? st->hold_ratio_median : NAN);
	for (int i = 0; i < 2; i++) {
		labelled(f, name, "queue", hold_where[i]);
		value(f, st ? st->hold_ratio_median_at[i] : NAN);
	}
}

/* Holds for locality closed in the window (report_stats' holds), by the
 * job's place in the queue when held: whether they keep their promise.
 * The ratio again over the day up to the log's newest line, which an
 * alert can watch recover (the whole log's median moves slowly). Returns
 * 0, or -1 when memory runs out. */
static int hold_metrics(FILE *f, const report_stats *st, const report_log *log)
{
	report_stats day;
	int have_day = 0;

	head(f, "topognn_holds_total", "counter",
	     "Jobs placed after a hold for locality, by their place in the queue when held "
	     "(head, behind, unknown).");
	for (int i = 0; i < 2; i++) {
		labelled(f, "topognn_holds_total", "queue", hold_where[i]);
		fprintf(f, "%d\n", st->holds_at[i]);
	}
	labelled(f, "topognn_holds_total", "queue", "unknown");
	fprintf(f, "%d\n", st->holds - st->holds_at[0] - st->holds_at[1]);
	counter(f, "topognn_holds_kept_total",
		"Holds placed over no more groups than they waited for.", st->holds_kept);
	head(f, "topognn_hold_wait_ratio", "gauge",
	     "Median wait a held job got over the wait predicted when it was held, by its "
	     "place in the queue (all, head, behind); NaN without such holds.");
	hold_ratios(f, "topognn_hold_wait_ratio", st);
	if (log && log->n > 0) {
		if (report_stats_compute(log, report_log_last_time(log) - 86400, INFINITY, &day))
			return -1;
		have_day = 1;
	}
	head(f, "topognn_hold_wait_ratio_last_day", "gauge",
	     "topognn_hold_wait_ratio over the holds closed in the 24 h up to the decision "
	     "log's newest line; NaN without such holds.");
	hold_ratios(f, "topognn_hold_wait_ratio_last_day", have_day ? &day : NULL);
	return 0;
}

int report_metrics_write(FILE *f, const report_stats *st, const report_log *log,
			 const report_occupancy *o)
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
	counter(f, "topognn_decisions_deferred_total",
		"Decisions that deferred a heavy job to wait for locality (it was not started).",
		st->deferred);
	counter(f, "topognn_decisions_after_wait_total",
		"Decisions that started a job after it had waited for locality.", st->waited);
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
	counter(f, "topognn_heavy_jobs_total", "Heavy multi-host jobs placed.", st->heavy);
	counter(f, "topognn_heavy_jobs_spanning_groups_total",
		"Heavy multi-host jobs placed over more than one group.", st->heavy_spanning);
	if (hold_metrics(f, st, log))
		return -1;
	counter(f, "topognn_decision_log_skipped_lines_total",
		"Lines of the decision log that could not be read.", log ? log->skipped : 0);
	counter(f, "topognn_decision_log_lines_total", "Lines of the decision log read.",
		log ? log->lines : 0);
	if (log)
		gauge(f, "topognn_decision_log_last_timestamp_seconds",
		      "Time of the newest line of the decision log (seconds since the epoch).",
		      log->n || log->lines ? report_log_last_time(log) : NAN);
	if (o) {
		gauge(f, "topognn_running_jobs", "Jobs running now.", o->njobs);
		gauge(f, "topognn_hosts_busy", "Hosts with a running job.", o->busy_hosts);
		gauge(f, "topognn_hosts_idle", "Usable hosts without a job.", o->idle_hosts);
		gauge(f, "topognn_fragmentation_ratio",
		      "Share of idle hosts in groups that are not wholly idle.", o->fragmentation);
		group_gauge(f, o, "topognn_group_busy_hosts", "Busy hosts per group.", o->group_busy);
		group_gauge(f, o, "topognn_group_idle_hosts", "Usable idle hosts per group.",
			    o->group_idle);
	}
	return ferror(f) ? -1 : 0;
}

int report_metrics_write_nodes(FILE *f, const report_node_summary *s)
{
	counter(f, "topognn_node_report_jobs_total",
		"Jobs with at least one node report (jobs the node side ran for).", s->jobs);
	gauge(f, "topognn_node_reports_unreadable",
	      "Node report files that are not a readable JSON object.", s->unreadable);
	head(f, "topognn_node_report_timestamp_seconds", "gauge",
	     "Time of the node's newest report (seconds since the epoch).");
	for (int i = 0; i < s->n; i++) {
		labelled(f, "topognn_node_report_timestamp_seconds", "node", s->nodes[i].host);
		value(f, s->nodes[i].time);
	}
	head(f, "topognn_node_irq_findings", "gauge",
	     "IRQ audit findings of the node's newest report, by kind.");
	for (int i = 0; i < s->n; i++)
		for (int k = 0; k < REPORT_NODE_IRQ_KINDS; k++) {
			fputs("topognn_node_irq_findings{node=\"", f);
			label(f, s->nodes[i].host);
			fprintf(f, "\",kind=\"%s\"} %d\n", report_node_irq_kinds[k],
				s->nodes[i].findings[k]);
		}
	head(f, "topognn_node_irq_failed", "gauge",
	     "1 when the node's newest report says its IRQ audit or enforcement failed.");
	for (int i = 0; i < s->n; i++) {
		fputs("topognn_node_irq_failed{node=\"", f);
		label(f, s->nodes[i].host);
		fputs("\",mode=\"", f);
		label(f, s->nodes[i].mode[0] ? s->nodes[i].mode : "unknown");
		fprintf(f, "\"} %d\n", strcmp(s->nodes[i].status, "error") == 0);
	}
	return ferror(f) ? -1 : 0;
}
