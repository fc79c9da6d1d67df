/*
 * report_history: what a decision log says over a time window.
 *
 *   - statistics: decisions per policy, failures, latency quantiles and a
 *     latency histogram, shadow-mode agreement (chosen vs baseline hosts),
 *     the baseline's predicted cost against the choice's, and predicted vs
 *     realised slowdown for jobs whose end is logged;
 *   - an export of decisions with an observed outcome as training samples
 *     in the "topognn-samples" format topognn-train --samples reads (the
 *     simulator's graphs and features: docs/simulator.md), closing the
 *     retraining loop on real jobs.
 */
#ifndef REPORT_HISTORY_H
#define REPORT_HISTORY_H

#include "place.h"
#include "report_log.h"
#include "topo_error.h"

/* Upper bounds (microseconds) of the latency histogram buckets; +Inf last. */
#define REPORT_LATENCY_BUCKETS 11
extern const double report_latency_bounds[REPORT_LATENCY_BUCKETS];

typedef struct report_policy_count {
	char policy[16];
	int n;
} report_policy_count;

typedef struct report_stats {
	double since, until;   /* window (inclusive) */
	int decisions;         /* lines in the window */
	int placed;            /* ok */
	int failed;            /* not ok: no topognn decision (Slurm's own choice stood) */
	int not_followed;      /* plugin lines where Slurm's allocation differs from the choice */
	int deferred;          /* placed decisions that deferred the job for locality */
	int waited;            /* placed decisions that started a job after it had waited */
	report_policy_count policies[8];
	int npolicies;
	/* latency of placed decisions */
	int nlatency;
	double latency_p50_us, latency_p99_us, latency_max_us, latency_sum_us;
	long latency_bucket[REPORT_LATENCY_BUCKETS]; /* cumulative: <= bound */
	/* shadow mode */
	int shadow;            /* placed decisions with a baseline choice */
	int agree;             /* of which the baseline chose the same hosts */
	int chosen_cheaper, baseline_cheaper; /* by predicted cost, when they differ */
	double chosen_cost_mean, baseline_cost_mean; /* over shadow decisions costed */
	double chosen_groups_mean, baseline_groups_mean; /* multi-host shadow decisions */
	/* outcomes */
	int ended;             /* decisions whose end event is logged */
	int realised;          /* of which with a realised slowdown and a prediction */
	double predicted_slowdown_mean, realised_slowdown_mean;
	double slowdown_mae;   /* mean |predicted - realised| */
	/* heavy multi-host jobs spanning several groups */
	int heavy, heavy_spanning;
	/* holds for locality: jobs placed in the window after waiting, whose
	 * first deferral (since their previous placement) is in the log. Kept:
	 * placed over no more groups than the hold waited for. The medians are
	 * of the first deferral's predicted wait, of the wait the job got, and
	 * of their ratio (realised / predicted; NAN without holds). */
	int holds, holds_kept;
	double hold_predicted_median_s, hold_realised_median_s, hold_ratio_median;
	double hold_realised_sum_s;
	/* the same holds by the job's place in the queue at that first
	 * deferral (its queue_position): [0] the queue head, [1] behind it.
	 * A hold whose place is unknown counts in neither. Behind the head a
	 * held job has no reservation, so it may wait well past its promise. */
	int holds_at[2];
	double hold_ratio_median_at[2]; /* NAN: no such hold with a prediction */
} report_stats;

/* Statistics of the decisions with since <= timestamp <= until. Returns 0,
 * or -1 when memory runs out. */
int report_stats_compute(const report_log *log, double since, double until, report_stats *st);

/* The request's communication as the engine takes it: class, pattern (ring
 * when the record names none), SHARP use, bytes and compute per iteration.
 * The one decoding of a decision's "comm" for the library and the tool. */
place_comm report_decision_comm(const report_decision *d);

/* The predicted communication slowdown of a choice (cost minus its
 * fragmentation part), NAN when unknown or when the scorer was not the
 * analytic model (a GNN's cost is a ranking score, not a slowdown). */
double report_predicted_slowdown(const report_decision *d);

/* Write the window's decisions that have an observed outcome (an end
 * event with a realised slowdown) and hosts known in cluster c as training
 * samples to path: one graph of the cluster state at the decision (jobs
 * running then, from the log) per decision, one sample (the hosts the job
 * got) whose target is the realised slowdown - 1, the measured part of the
 * simulator's target. host_gpus: GPUs per host when the graph has none.
 * Returns the number of samples (0: none, and no file is written), or -1
 * with err. */
int report_history_write_samples(const place_cluster *c, const report_log *log, double since,
				 double until, int host_gpus, const char *path, topo_error *err);

#endif
