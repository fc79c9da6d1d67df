/*
 * place_runtime: an online predictor of a job's run time from what
 * slurmctld knows at submit time, learned from the jobs that ended.
 *
 * Slurm (and the placement engine) only know time limits, and jobs end far
 * before them: on the KTH SP2 log the median job uses a small part of its
 * limit. Deciding to hold a job for a better placement, or guessing which
 * groups free together, needs when jobs will really end.
 *
 * The predictor keeps, per user and per group, the last few jobs that
 * ended (run time, limit, size, application) and, for each of a handful of
 * simple estimators ("the limit", "the mean of the user's last two" of
 * Tsafrir, Etsion and Feitelson 2007, "the last two runs with the same
 * limit, size and application", "the median of the last three with the same
 * limit", "the median of the last five", "the user's run time / limit
 * ratio x this limit", "the last run"), an exponentially weighted absolute
 * error, scored on every job that ends before it is added. A prediction is
 * the estimator with the lowest recent error for this user (the group's,
 * then all jobs', while the user has too few), capped at the job's limit:
 * a prediction never lengthens, and is never used to shorten, a limit.
 *
 * It is small (a hash of users and groups, 16 jobs each), allocation-free
 * when predicting, and its whole state can be saved and loaded (a versioned
 * text file, for StateSaveLocation across slurmctld restarts).
 */
#ifndef PLACE_RUNTIME_H
#define PLACE_RUNTIME_H

#include <stdint.h>
#include <stdio.h>

#include "topo_error.h"

/* What is known of a job at submit time. Unknown: -1 (ids), 0 (others). */
typedef struct place_runtime_job {
	int user, group;
	uint32_t app;      /* a hash of the job name or executable */
	double limit_s;    /* requested time limit */
	int size;          /* nodes (or processors) */
	double submit_s;   /* submit time (seconds, any epoch); not used yet: a
			    * time-of-day estimator was measured worse
			    * (docs/bench.md) */
} place_runtime_job;

typedef struct place_runtime place_runtime;

place_runtime *place_runtime_new(void);
void place_runtime_free(place_runtime *p);

/* The predicted run time of j in seconds (> 0, at most its limit when the
 * limit is known). Allocates nothing. */
double place_runtime_predict(const place_runtime *p, const place_runtime_job *j);

/* The baseline of Tsafrir, Etsion and Feitelson (2007): the mean of the
 * user's last two run times, capped at the limit; the limit while the user
 * has none (the global mean run time when neither is known). */
double place_runtime_last_two(const place_runtime *p, const place_runtime_job *j);

/* Job j ended after runtime_s seconds: score the estimators on it, then
 * learn it. Returns 0, or -1 when memory runs out (the state stays usable). */
int place_runtime_observe(place_runtime *p, const place_runtime_job *j, double runtime_s);

/* Jobs learned so far. */
long place_runtime_observed(const place_runtime *p);

/* Write the whole state to f. Returns 0, or -1 on a write error. */
int place_runtime_save(const place_runtime *p, FILE *f);

/* Replace p's state by the one saved in f (`source` names it in errors).
 * Returns 0, or -1 with err (file, line, what is wrong); p is then empty. */
int place_runtime_load(place_runtime *p, FILE *f, const char *source, topo_error *err);

/* An application hash from a job name or executable (FNV-1a; 0 for NULL
 * or ""). */
uint32_t place_runtime_app_hash(const char *name);

#endif
