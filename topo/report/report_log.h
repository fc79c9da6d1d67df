/*
 * report_log: a decision log read back for placement-report.
 *
 * The log is JSON lines, all written by place_record (place_record.h), one
 * format whoever wrote the log (docs/decision-record.md):
 *   - the engine's decision record ("job", "request", "chosen", "baseline",
 *     "alternatives", ...), as topognn-sim --decision-log writes it;
 *   - the commit line ("job_id", "nodes", "topognn", "baseline",
 *     "followed", ...) of a decision that became an allocation, as the Slurm
 *     plugin writes it: the decision record inside it ("decision") is read
 *     like any other, and the commit adds what the scheduler allocated;
 *   - the end event: {"event": "end", "job": N, "timestamp": T,
 *     "elapsed_s": E, "realised_slowdown": S} when a job ends.
 *
 * A log is appended to while jobs run, so a torn or foreign line is skipped
 * and counted rather than failing the whole report; the first such line is
 * kept as a topo_error (file, line, sentence) to show the admin.
 */
#ifndef REPORT_LOG_H
#define REPORT_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "topo_error.h"

/* The most hold-gate features a report keeps (the engine records 12). */
#define REPORT_HOLD_FEATURES 24

/* One host set with what the scorer said about it. Unknown numbers are
 * -1 (counts) or NAN (costs). */
typedef struct report_choice {
	char **hosts;
	int nhosts;
	char kind[24];    /* "group-best-fit", "tree", ...; "" unknown */
	char policy[16];  /* plugin lines name the policy per choice; "" otherwise */
	int groups, leaves, diameter;
	double cost, comm_time_s, frag_cost;
	double confidence; /* gnn ensemble: share of models ranking it first; NAN unknown */
	/* shadow choices (report_decision.shadow): the policy would not start
	 * the job now, and its predicted wait (NAN unknown) */
	int hold;
	double expected_wait_s;
} report_choice;

typedef struct report_decision {
	uint32_t job;
	int line;             /* 1-based line in the log */
	double timestamp;     /* seconds since the epoch */
	int ok;
	char reason[256];
	char format[8];       /* "record", or "plugin" for a commit line */
	char policy[16], baseline_policy[16], scorer[32], mode[16];
	char model[512];      /* the GNN model file that scored; "" none or unknown */
	int candidates;
	double latency_us;    /* NAN unknown */
	int queue_position;   /* the job's place in the queue, 1 the head; 0 unknown */
	/* the request */
	int min_hosts, max_hosts, gpus_per_host, cores_per_host, exclusive, max_groups;
	char comm_class[8];   /* "none", "light", "heavy"; "" unknown */
	char pattern[12];
	int sharp_user;       /* the request's comm says "sharp": true (a SHARP user) */
	double bytes_per_iter, compute_s_per_iter;
	/* the job's duration as the engine was told it: its time limit and
	 * the run-time prediction (NAN: not in the record) */
	double time_limit_s, predicted_run_s;
	/* waiting for locality (the record's "locality"): deferred = the job was
	 * not started by this decision; waited_s = how long it had been deferred */
	int deferred;
	double waited_s;
	double expected_wait_s; /* deferred: the predicted wait; NAN unknown */
	/* the rest of what was weighed (heavy requests; docs/decision-record.md):
	 * checked = the locality wait was weighed at all; min_groups the
	 * fewest groups that could ever hold the job (-1 unknown); budget_s the
	 * wait allowed (NAN unknown); expected_groups what a deferred job waits
	 * for (-1 unknown); why the engine's sentence ("" none) */
	int locality_checked, min_groups, expected_groups;
	double budget_s;
	char locality_why[512];
	/* the learned hold gate, when it decided: its probability of holding
	 * (NAN: it did not) and what it weighed, by name, in record order */
	double hold_gate;
	int nhold_features;
	char hold_feature[REPORT_HOLD_FEATURES][32];
	double hold_value[REPORT_HOLD_FEATURES];
	/* choices (nhosts 0 when absent) */
	report_choice chosen, baseline;
	report_choice *alternatives;
	int nalternatives;
	/* what the job really got: the chosen hosts, or Slurm's allocation
	 * on plugin lines (they differ in shadow mode) */
	char **allocated;
	int nallocated;
	int followed;         /* allocation == chosen: 1, 0, -1 unknown */
	double wait_s;        /* plugin lines: start - eligible time; NAN unknown */
	/* shadow mode (plugin lines): other policies' choices for the same
	 * request at the same moment ("model", "tree-switches"), hosts empty
	 * and hold 1 when the policy would not start the job now */
	report_choice *shadow;
	int nshadow;
	/* the outcome, from the job's end event */
	int ended;
	double end_time, elapsed_s, realised_slowdown; /* NAN unknown */
} report_decision;

typedef struct report_log {
	report_decision *d;   /* in log order */
	int n, cap;
	int lines;            /* lines read */
	int skipped;          /* malformed or foreign lines */
	topo_error first_skip; /* the first skipped line and why */
	int orphan_ends;      /* end events without a decision */
} report_log;

/* Read a decision log. Returns 0 (possibly with skipped lines), or -1 with
 * err when the file cannot be read or memory runs out. */
int report_log_load(const char *path, report_log *log, topo_error *err);

/* The same from memory: text[0..len) (source names it in first_skip). */
int report_log_load_mem(const char *text, size_t len, const char *source, report_log *log,
			topo_error *err);

void report_log_free(report_log *log);

/* The job's latest decision that placed it; else its latest plugin line
 * where Slurm's generic selection placed it (ok 0, reason = the fallback);
 * else NULL. */
const report_decision *report_log_find(const report_log *log, uint32_t job);

/* Indices (ascending) of the decisions whose jobs were running at time
 * `at`: decided at or before it, not ended by then; the last decision of a
 * job wins (a requeued job has several). Sets *n; malloc'd; NULL when
 * memory runs out. Without end events every decided job counts as running. */
int *report_log_running(const report_log *log, double at, int *n);

/* Timestamp of the last line (decision or end); 0 for an empty log. */
double report_log_last_time(const report_log *log);

/* The decision's shadow choice of policy p; NULL when not recorded. */
const report_choice *report_decision_shadow(const report_decision *d, const char *p);

/* Whether two choices hold the same hosts (order ignored). */
int report_choice_same_hosts(const report_choice *a, const report_choice *b);

#endif
