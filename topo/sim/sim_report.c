/*
 * sim_report: the simulator's metrics per policy as a readable table, with
 * the empty-cluster reference as a "bound" row and an optional block of
 * ratios to one policy (bench/placement uses `tree`), and as JSON (one
 * implementation for topognn-sim and bench/placement).
 */
#include "sim.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define NONE SIZE_MAX

typedef struct column {
	const char *title;
	int width, prec;
	double scale;   /* shown value = field x scale */
	size_t off;
	size_t boff;    /* the bound's field, NONE: not applicable */
	int is_long;    /* field is a long count, not a double */
} column;

#define COL(t, w, p, s, m) {t, w, p, s, offsetof(sim_metrics, m), NONE, 0}
#define COLB(t, w, p, s, m) {t, w, p, s, offsetof(sim_metrics, m), \
			     offsetof(sim_metrics, bound_##m), 0}
#define COUNT(t, w, m, b) {t, w, 0, 1, offsetof(sim_metrics, m), b, 1}

static const column cols[] = {
	COLB("xleaf_PB", 9, 3, 1e-15, cross_leaf_bytes_heavy),
	COL("xleaf%", 7, 1, 100, cross_leaf_frac),
	COLB("xgroup_PB", 10, 3, 1e-15, cross_group_bytes_heavy),
	COL("xgroup%", 8, 1, 100, cross_group_frac),
	COUNT("multi_g", 7, multi_group_heavy, offsetof(sim_metrics, bound_multi_group_heavy)),
	COUNT("avoid_g", 7, avoidable_multi_group, NONE),
	COL("slow", 7, 3, 1, mean_comm_slowdown),
	COL("slow_p95", 8, 3, 1, p95_comm_slowdown),
	COL("comm_nh", 8, 1, 1, comm_node_hours),
	COL("wait_s", 9, 0, 1, mean_wait_s),
	COL("wait_p95", 9, 0, 1, p95_wait_s),
	COL("makespan_h", 10, 1, 1.0 / 3600, makespan_s),
	COL("util%", 6, 1, 100, utilization),
	COL("useful%", 7, 1, 100, useful_utilization),
	COL("frag", 6, 3, 1, fragmentation),
	COL("dec_p50us", 9, 1, 1, decision_p50_us),
	COL("dec_p99us", 9, 1, 1, decision_p99_us),
	COL("ref_p99us", 9, 1, 1, refresh_p99_us),
};
#define NCOLS (sizeof(cols) / sizeof(cols[0]))

static double at(const sim_metrics *m, size_t off, int is_long)
{
	const char *p = (const char *)m + off;

	return is_long ? (double)*(const long *)p : *(const double *)p;
}

static double field(const sim_metrics *m, size_t c)
{
	return at(m, cols[c].off, cols[c].is_long);
}

/* The bound's value of column c; 0 for a count the bound has none of
 * (avoidable: none by definition). */
static double bound_field(const sim_metrics *m, size_t c)
{
	return cols[c].boff == NONE ? 0 : at(m, cols[c].boff, cols[c].is_long);
}

static int bound_applies(size_t c)
{
	return cols[c].boff != NONE || cols[c].is_long;
}

static void header(FILE *out, const char *first)
{
	fprintf(out, "%-8s", first);
	for (size_t c = 0; c < NCOLS; c++)
		fprintf(out, " %*s", cols[c].width, cols[c].title);
	fputc('\n', out);
}

static void ratio(FILE *out, size_t c, double v, double b)
{
	if (b != 0)
		fprintf(out, " %*.3f", cols[c].width, v / b);
	else
		fprintf(out, " %*s", cols[c].width, v == 0 ? "1.000" : "-");
}

/* The bound row: values, or ratios to base when base is given. */
static void bound_row(FILE *out, const sim_metrics *m, const sim_metrics *base)
{
	fprintf(out, "%-8s", "bound");
	for (size_t c = 0; c < NCOLS; c++) {
		if (!bound_applies(c))
			fprintf(out, " %*s", cols[c].width, "-");
		else if (base)
			ratio(out, c, bound_field(m, c), field(base, c));
		else
			fprintf(out, " %*.*f", cols[c].width, cols[c].prec,
				bound_field(m, c) * cols[c].scale);
	}
	fputc('\n', out);
}

void sim_print_table(FILE *out, const sim_metrics *m, int n, const char *ratio_to)
{
	const sim_metrics *base = NULL;

	header(out, "policy");
	for (int i = 0; i < n; i++) {
		fprintf(out, "%-8s", m[i].policy);
		for (size_t c = 0; c < NCOLS; c++)
			fprintf(out, " %*.*f", cols[c].width, cols[c].prec, field(&m[i], c) * cols[c].scale);
		fputc('\n', out);
		if (ratio_to && strcmp(m[i].policy, ratio_to) == 0)
			base = &m[i];
	}
	if (n > 0)
		bound_row(out, &m[0], NULL);
	if (!base)
		return;
	fprintf(out, "\nratio to %s (lower is better except util%%):\n", ratio_to);
	header(out, "policy");
	for (int i = 0; i < n; i++) {
		fprintf(out, "%-8s", m[i].policy);
		for (size_t c = 0; c < NCOLS; c++)
			ratio(out, c, field(&m[i], c), field(base, c));
		fputc('\n', out);
	}
	bound_row(out, &m[0], base);
}

json_t *sim_metrics_json(const sim_metrics *m)
{
	long all = m->decisions + m->failed_decisions;

	return json_pack("{s:i,s:i,s:i,s:i,s:f,s:f,s:f,s:f,s:f,s:I,s:I,s:f,s:f,s:f,s:f,s:f,s:f,s:f,"
			 "s:f,s:f,s:f,s:f,s:f,s:I,s:I,s:I,s:i,s:f,s:f,s:I,s:I,s:I}",
			 "jobs", m->jobs, "started", m->started, "dropped", m->dropped,
			 "heavy_jobs", m->heavy_jobs, "total_bytes_heavy", m->total_bytes_heavy,
			 "cross_leaf_bytes_heavy", m->cross_leaf_bytes_heavy,
			 "cross_group_bytes_heavy", m->cross_group_bytes_heavy,
			 "cross_leaf_frac_heavy", m->cross_leaf_frac,
			 "cross_group_frac_heavy", m->cross_group_frac,
			 "multi_group_heavy", (json_int_t)m->multi_group_heavy,
			 "avoidable_multi_group", (json_int_t)m->avoidable_multi_group,
			 "mean_comm_slowdown", m->mean_comm_slowdown,
			 "p95_comm_slowdown", m->p95_comm_slowdown, "mean_wait_s", m->mean_wait_s,
			 "p95_wait_s", m->p95_wait_s, "makespan_s", m->makespan_s,
			 "utilization", m->utilization, "useful_utilization", m->useful_utilization,
			 "fragmentation", m->fragmentation,
			 "decision_p50_us", m->decision_p50_us, "decision_p99_us", m->decision_p99_us,
			 "refresh_p99_us", m->refresh_p99_us,
			 "failed_decision_share", all > 0 ? (double)m->failed_decisions / (double)all : 0.0,
			 "decisions", (json_int_t)m->decisions, "failed_decisions",
			 (json_int_t)m->failed_decisions, "deferrals", (json_int_t)m->deferrals,
			 "deferred_jobs", m->deferred_jobs, "mean_defer_s", m->mean_defer_s,
			 "comm_node_hours", m->comm_node_hours,
			 "lookahead_changed", (json_int_t)m->lookahead_changed,
			 "lookahead_started", (json_int_t)m->lookahead_started,
			 "lookahead_held", (json_int_t)m->lookahead_held);
}

json_t *sim_bound_json(const sim_metrics *m)
{
	return json_pack("{s:i,s:f,s:f,s:I,s:I}", "heavy_jobs", m->heavy_jobs,
			 "cross_leaf_bytes_heavy", m->bound_cross_leaf_bytes_heavy,
			 "cross_group_bytes_heavy", m->bound_cross_group_bytes_heavy,
			 "multi_group_heavy", (json_int_t)m->bound_multi_group_heavy,
			 "avoidable_multi_group", (json_int_t)0);
}
