/*
 * place_record: the decision log's lines (schema in docs/decision-record.md),
 * so every choice can be audited and the policy compared with its baseline
 * after the fact. Every line of a decision log is written here, whoever
 * writes the log (the simulator, the Slurm plugin), so there is one format
 * to read (topo/report/report_log.c):
 *   - the decision record: one placement decision of the engine;
 *   - the commit line: a decision that became an allocation, with what the
 *     scheduler really allocated and the decision record inside it;
 *   - the end event: a job ended, with its realised outcome.
 */
#ifndef PLACE_RECORD_H
#define PLACE_RECORD_H

#include <stdint.h>
#include <stdio.h>

#include "place.h"
#include "topo_error.h"

/* The pattern's name: "ring", "alltoall", "pipeline". */
const char *place_pattern_name(place_pattern p);

/* The record of decision d for request r as one line of JSON (no newline),
 * malloc'd; NULL when memory runs out. `scorer` names the scorer that
 * costed the candidates ("model", or the GNN scorer's name); `timestamp` is
 * seconds since the epoch (0: now). Host indices become host names. */
char *place_record_write_mem(const place_cluster *c, const place_request *r,
			     const place_decision *d, const char *scorer, double timestamp);

/* Write the record and a newline to f. Returns 0, or -1. */
int place_record_write(FILE *f, const place_cluster *c, const place_request *r,
		       const place_decision *d, const char *scorer, double timestamp);

/*
 * Shadow mode: what another policy would have done with the same request at
 * the same moment (placement-report shadow compares them).
 */
typedef struct place_shadow_choice {
	const char *policy;     /* "model", "tree-switches" */
	const char *nodes;      /* its hosts as a hostlist; "" when it holds */
	int groups;             /* groups of its hosts; -1 none */
	int hold;               /* 1: it would not start the job now */
	double expected_wait_s; /* holding: its predicted wait; < 0 unknown */
} place_shadow_choice;

/*
 * A decision that became an allocation, as a scheduler adapter knows it
 * when the job starts (the Slurm plugin's prep hook). Plain C: the adapter
 * turns its own types (bitmaps, job records) into these numbers and
 * strings; NULL strings are written as "".
 */
typedef struct place_commit {
	uint32_t job_id;
	long time;                  /* seconds since the epoch; 0: now */
	const char *name;           /* the job's name */
	const char *mode;           /* the adapter's mode: "shadow", "enforce" */
	const char *nodes;          /* the allocation, as a hostlist */
	int node_count;
	const char *const *groups;  /* the groups the allocation touches, by name */
	int ngroups;
	int leaves;                 /* the leaf switches it touches */
	int running_jobs;           /* other jobs in the engine's state */
	const char *policy;         /* the configured placement policy */
	/* Either the scheduler placed the job itself, and this says why: */
	const char *fallback;
	/* or (fallback NULL) the engine's decision the allocation came from,
	 * with the hosts of its choice and its baseline as hostlists in the
	 * scheduler's own naming, like `nodes` (followed: chosen == nodes): */
	const place_cluster *cluster;
	const place_request *req;
	const place_decision *dec;
	const char *scorer;         /* named in the embedded decision record */
	const char *kind;           /* how the chosen set was built */
	const char *chosen_nodes, *baseline_nodes;
	const char *model;          /* the GNN model file that scored, or NULL */
	/* how long the job waited: start - eligible time (has_wait 0: unknown) */
	int has_wait;
	double wait_s;
	/* shadow mode: the other policies' choices ("shadow": [...]) */
	const place_shadow_choice *shadow;
	int nshadow;
} place_commit;

/* The commit line of cm as one line of JSON (no newline), malloc'd; NULL
 * when memory runs out. The decision record of cm->dec is inside it, under
 * "decision". */
char *place_record_write_commit_mem(const place_commit *cm);

/* Append the commit line and a newline to the file at path (created 0644
 * if missing) in one write(2) on an O_APPEND descriptor, so that lines of
 * concurrent writers never interleave. Returns 0, or -1 with err naming
 * the file and the reason (strerror, "short write", "out of memory"). */
int place_record_write_commit(const char *path, const place_commit *cm, topo_error *err);

/* Write a job's end event and a newline to f: its id, when it ended
 * (seconds since the epoch), how long it ran and its realised slowdown (its
 * run time over its run time without fabric contention; NAN: unknown, not
 * written). 0, or -1. */
int place_record_write_end(FILE *f, uint32_t job, double timestamp, double elapsed_s,
			   double realised_slowdown);

/* The same, appended to the file at path in one write(2) as
 * place_record_write_commit() does. 0, or -1 with err. */
int place_record_write_end_path(const char *path, uint32_t job, double timestamp,
				double elapsed_s, double realised_slowdown, topo_error *err);

#endif
