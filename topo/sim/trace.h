/*
 * trace: a workload log as a list of jobs, whatever file it came from.
 *
 * The simulator (topognn-sim, bench/placement) replays real logs: the
 * Parallel Workloads Archive's Standard Workload Format (trace_swf.c) and
 * Alibaba's GPU cluster trace v2023 (trace_alibaba.c). Both land in this one
 * job list so the scheduler never knows where a job came from.
 *
 * trace_load() detects the format by content (an SWF file's first
 * non-blank line is a ';' comment or 18 numbers; the Alibaba file starts
 * with its CSV header "name,cpu_milli,...") and reads gzip-compressed files
 * transparently by piping them through `gzip -dc` (no shell involved).
 *
 * Units: seconds since the trace's first submission (times are shifted so
 * the earliest job is submitted at 0).
 */
#ifndef TOPO_TRACE_H
#define TOPO_TRACE_H

#include <stdio.h>

#include "topo_error.h"

typedef enum trace_format {
	TOPO_TRACE_SWF = 0,
	TOPO_TRACE_ALIBABA
} trace_format;

typedef struct trace_job {
	long id;            /* the log's job number */
	double submit;      /* seconds from the trace start */
	double runtime;     /* actual run time in the log, seconds (> 0) */
	double requested;   /* requested wall time, seconds; = runtime when unknown */
	int procs;          /* SWF: processors; Alibaba: 1 (one pod = one host) */
	int hosts;          /* hosts after the processor->host mapping (1 before scaling) */
	int gpus_per_host;  /* GPUs per host; 0 = whole host (exclusive) */
	int cores_per_host; /* cores per host for shared jobs; 0 = whole host */
	int user;           /* SWF user id; -1 unknown */
	int group;          /* SWF group id; -1 unknown */
	int app;            /* SWF executable (application) number; -1 unknown */
	double log_wait;    /* the wait the log recorded, seconds; -1 unknown */
	int limit_known;    /* the log gave a requested time (else requested = runtime) */
	int line;           /* line in the source file, for messages */
	trace_format source;
	char name[32];      /* Alibaba pod name, or "job<id>" */
} trace_job;

typedef struct topo_trace {
	trace_job *jobs; /* ordered by submit time, then by line */
	int njobs, cap;
	int skipped;          /* records skipped as unusable (cancelled, zero runtime) */
} topo_trace;

void trace_init(topo_trace *t);
void trace_free(topo_trace *t);

/* Append a job (copied). Returns 0 or -1 on memory exhaustion. */
int trace_push(topo_trace *t, const trace_job *j);

/* Read `path` ("-" is standard input), detecting the format by content and
 * decompressing gzip. Jobs are appended to t; on error t is left empty and
 * err names the file and line. Returns 0 or -1. */
int trace_load(topo_trace *t, const char *path, topo_error *err);

/* Parse an already opened stream in a known format; `source` names it in
 * errors. Used by trace_load and the tests. Returns 0 or -1. */
int trace_load_swf(topo_trace *t, FILE *f, const char *source, topo_error *err);
int trace_load_alibaba(topo_trace *t, FILE *f, const char *source, topo_error *err);

/* Which format a file's first bytes look like; -1 when neither. */
int trace_detect(const char *head, size_t len);

/* Sort jobs by submit time (stable by line) and shift times so the first
 * submission is at 0. */
void trace_normalize(topo_trace *t);

/* Keep only the first n jobs (n <= 0: keep all). */
void trace_truncate(topo_trace *t, int n);

/* Map processors to hosts: hosts = ceil(procs / procs_per_host) x scale,
 * capped at max_hosts (jobs above the cap are counted and dropped when
 * drop_oversize, clamped otherwise). Returns the number of jobs dropped. */
int trace_map_hosts(topo_trace *t, int procs_per_host, int scale, int max_hosts,
			 int drop_oversize);

/* Append the jobs of `b` whose submit time is < until (all when until <= 0)
 * to `a`, then sort a by submit time. Returns 0 or -1. */
int trace_merge(topo_trace *a, const topo_trace *b, double until);

/* Fit a secondary trace into a primary one's period: scale submit times so
 * t spans [0, span], and drop jobs running longer than max_runtime (> 0).
 * Used to let Alibaba's single-host pods fill the gaps of a scaled SWF log.
 * Returns the number of jobs dropped. */
int trace_fit_window(topo_trace *t, double span, double max_runtime);

/* Read one line of any length into *buf (growing it). Returns the length,
 * -1 at end of file. Shared by the text parsers of the simulator. */
long trace_getline(char **buf, size_t *cap, FILE *f);
/* After trace_getline returned -1: 0 at the end of the file, else -1 with
 * err (the line could not be read: out of memory, I/O error), so a failed
 * read is not mistaken for a short file. */
int trace_getline_end(FILE *f, const char *source, int lineno, topo_error *err);

#endif
