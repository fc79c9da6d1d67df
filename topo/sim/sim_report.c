/*
 * sim_report: the simulator's readable table of metrics per policy, with an
 * optional block of ratios to one policy (bench/placement uses `tree`).
 */
#include "sim.h"

#include <stddef.h>
#include <string.h>

typedef struct column {
	const char *title;
	int width, prec;
	double scale; /* shown value = field x scale */
	size_t off;
} column;

#define COL(t, w, p, s, m) {t, w, p, s, offsetof(sim_metrics, m)}

static const column cols[] = {
	COL("xleaf_PB", 9, 3, 1e-15, cross_leaf_bytes_heavy),
	COL("xleaf%", 7, 1, 100, cross_leaf_frac),
	COL("xgroup_PB", 10, 3, 1e-15, cross_group_bytes_heavy),
	COL("xgroup%", 8, 1, 100, cross_group_frac),
	COL("slow", 7, 3, 1, mean_comm_slowdown),
	COL("slow_p95", 8, 3, 1, p95_comm_slowdown),
	COL("wait_s", 9, 0, 1, mean_wait_s),
	COL("wait_p95", 9, 0, 1, p95_wait_s),
	COL("makespan_h", 10, 1, 1.0 / 3600, makespan_s),
	COL("util%", 6, 1, 100, utilization),
	COL("frag", 6, 3, 1, fragmentation),
	COL("dec_p50us", 9, 1, 1, decision_p50_us),
	COL("dec_p99us", 9, 1, 1, decision_p99_us),
	COL("ref_p99us", 9, 1, 1, refresh_p99_us),
};
#define NCOLS (sizeof(cols) / sizeof(cols[0]))

static double field(const sim_metrics *m, size_t c)
{
	return *(const double *)((const char *)m + cols[c].off);
}

static void header(FILE *out, const char *first)
{
	fprintf(out, "%-8s", first);
	for (size_t c = 0; c < NCOLS; c++)
		fprintf(out, " %*s", cols[c].width, cols[c].title);
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
	if (!base)
		return;
	fprintf(out, "\nratio to %s (lower is better except util%%):\n", ratio_to);
	header(out, "policy");
	for (int i = 0; i < n; i++) {
		fprintf(out, "%-8s", m[i].policy);
		for (size_t c = 0; c < NCOLS; c++) {
			double b = field(base, c), v = field(&m[i], c);

			if (b != 0)
				fprintf(out, " %*.3f", cols[c].width, v / b);
			else
				fprintf(out, " %*s", cols[c].width, v == 0 ? "1.000" : "-");
		}
		fputc('\n', out);
	}
}
