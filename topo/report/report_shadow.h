/*
 * report_shadow: the evidence for switching Policy= (placement-report
 * shadow, docs/admin-guide.md).
 *
 * In shadow mode (Mode=shadow) Slurm's topology/tree allocates, and the
 * plugin's commit line records, for the same request at the same moment,
 * the configured (learned) policy's choice ("topognn", with its locality
 * decision) and the baselines' ("shadow": `model` and `tree-switches`,
 * topognn_shadow.c), each either a host set or a hold (the policy would
 * not start the job now). The job's end event gives its realised run time.
 *
 * Per baseline this computes, over the decisions that recorded both:
 *   - agreement: the share of decisions where both did the same (the same
 *     hosts, or both held), and the share with the same group count;
 *   - bytes: over heavy decisions where both would start the job now and
 *     that ended, the ratio of the learned policy's cross-group bytes to
 *     the baseline's. A choice's cross-group bytes: a ring all-reduce over
 *     its hosts, group by group (as Slurm orders nodes), crosses groups
 *     once per group when it spans more than one, each crossing carrying
 *     2(n-1)/n x bytes_per_iter per iteration; iterations are the job's
 *     realised run time / compute_s_per_iter (the run time itself when the
 *     compute time is not known): the same for both choices, so the ratio
 *     is a placement measure on the jobs really run;
 *   - holds: the share of heavy decisions each would hold, and their
 *     paired difference. In shadow mode no policy's hold is acted on, so
 *     what a hold would cost in wait is not observed; the waits the report
 *     gives are Slurm's (start - eligible time), for reference.
 * Intervals: Wilson 95 % for shares; for the bytes ratio and the hold
 * difference a paired percentile bootstrap over decisions (2,000
 * resamples, fixed seed: the same log gives the same numbers); for the
 * mean wait a normal 95 % interval (1.96 standard errors).
 *
 * Verdict per baseline: the learned policy is ahead with confidence when
 * the bootstrap interval of the bytes ratio lies below 1.0 and that of the
 * hold difference (learned - baseline) is at most 0 (it holds no more
 * often, so it does not buy bytes with unobserved waits), over at least
 * REPORT_SHADOW_MIN_PAIRS compared decisions.
 */
#ifndef REPORT_SHADOW_H
#define REPORT_SHADOW_H

#include "report_log.h"

#define REPORT_SHADOW_MIN_PAIRS 20
#define REPORT_SHADOW_BASELINES 2

/* An estimate with its 95 % interval (NAN when there is no data). */
typedef struct report_interval {
	double est, lo, hi;
	int n;
} report_interval;

typedef struct report_shadow_vs {
	char baseline[16];            /* "model", "tree-switches" */
	int decisions;                /* decisions with both choices */
	report_interval agree;        /* same hosts or both held */
	report_interval same_groups;  /* both place, the same group count */
	int heavy;                    /* heavy decisions among them */
	int compared;                 /* heavy, both place now, ended: bytes compared */
	double learned_bytes, baseline_bytes; /* summed over the compared */
	report_interval bytes_ratio;  /* learned / baseline */
	report_interval hold_learned, hold_baseline; /* shares of heavy decisions */
	report_interval hold_diff;    /* learned - baseline */
	double expected_wait_learned, expected_wait_baseline; /* mean predicted wait of holds; NAN */
	int ahead;                    /* 1 ahead with confidence, 0 not, -1 too few decisions */
} report_shadow_vs;

typedef struct report_shadow {
	char learned[16];     /* the configured policy (the commit lines' "topognn") */
	int decisions;        /* plugin decisions in the window that topognn made */
	int with_shadow;      /* ... that recorded the baselines (shadow mode) */
	int ended;            /* ... with an end event */
	report_interval wait_s; /* Slurm's realised wait (start - eligible), mean */
	report_shadow_vs vs[REPORT_SHADOW_BASELINES];
	int nvs;
} report_shadow;

/* Compare over the decisions stamped in [since, until]. 0, or -1 when
 * memory runs out. */
int report_shadow_compute(const report_log *log, double since, double until, report_shadow *out);

/* One choice's cross-group bytes for a decision (see above): groups,
 * hosts, the request's bytes per iteration and compute time, the job's run
 * time. */
double report_shadow_bytes(int groups, int nhosts, double bytes_per_iter, double compute_s_per_iter,
			   double elapsed_s);

/* Wilson 95 % interval of k successes in n. */
report_interval report_wilson(int k, int n);

#endif
