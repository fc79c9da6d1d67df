/*
 * report_node: the node side's outcome for a job (which NIC, CPUs and IRQ
 * steering each host really got), read back for placement-report job.
 *
 * The node side (topognn-bind / the SPANK plugin) leaves one JSON object per
 * job and host in a report directory, named job-<jobid>.<host>.json (or
 * job-<jobid>.<host>.<random>.json when that name was taken; <jobid>.<host>.json
 * also reads). The reader
 * is tolerant on purpose (the node side's schema is still settling): every
 * top-level member is kept as a key and a value rendered as text (strings
 * as they are, anything else as compact JSON), in file order.
 */
#ifndef REPORT_NODE_H
#define REPORT_NODE_H

#include <stdint.h>

#include "topo_error.h"

typedef struct report_node_outcome {
	char *host;
	int nkeys;
	char **keys, **values;
	char *problem; /* NULL, or why the file could not be read (kept, not fatal) */
} report_node_outcome;

/* Files with the job's name that were not read, and why. */
typedef struct report_node_skips {
	int n;
	char **file; /* the name in the directory */
	char **why;  /* "is a symbolic link (not followed)", "is owned by uid 65534, ..." */
} report_node_skips;

/* The largest report read. */
#define REPORT_NODE_MAX_BYTES ((size_t)1 << 20)

/*
 * The outcomes of job in dir, sorted by host. Admins run this as root on a
 * directory users may write to (a shared report_dir), so a file is read only
 * when it is a regular file, not reached through a symbolic link, owned by
 * root or by the user running this, not writable by group or others, with
 * one hard link and at most REPORT_NODE_MAX_BYTES (topo_open_input with
 * TOPO_OPEN_NOFOLLOW|TOPO_OPEN_TRUSTED; a FIFO never blocks). Its host is the
 * report's "node" member (else the name's), and a report whose "job_id" is
 * another job is skipped. Every candidate name (job-<job>.*.json,
 * <job>.*.json) that is not read goes into `skipped` (may be NULL) with the
 * reason. Returns the count (0: none), or -1 with err when dir cannot be
 * read or memory runs out.
 */
int report_node_load(const char *dir, uint32_t job, report_node_outcome **out,
		     report_node_skips *skipped, topo_error *err);

void report_node_free(report_node_outcome *o, int n);
void report_node_skips_free(report_node_skips *s);

/* The node side's health for monitoring (placement-report metrics): every
 * report in a directory, each host's newest one (by its "time", then job id)
 * summarised. Finding kinds are those of the IRQ audit (docs/node-side.md). */
#define REPORT_NODE_IRQ_KINDS 4
extern const char *const report_node_irq_kinds[REPORT_NODE_IRQ_KINDS];

typedef struct report_node_health {
	char *host;
	uint32_t job;       /* of the newest report */
	double time;        /* its "time" (seconds since the epoch), 0 unknown */
	char mode[12];      /* irq.mode: "audit", "enforce", "off"; "" unknown */
	char status[12];    /* irq.status: "ok", "error", "skipped"; "" unknown */
	int findings[REPORT_NODE_IRQ_KINDS]; /* irq.findings by kind */
} report_node_health;

typedef struct report_node_summary {
	report_node_health *nodes; /* sorted by host */
	int n;
	int jobs;           /* distinct job ids with at least one report */
	int reports;        /* report files */
	int unreadable;     /* of which not a readable JSON object */
} report_node_summary;

/* Summarise every report in dir. Returns 0, or -1 with err when dir cannot
 * be read or memory runs out. */
int report_node_summarise(const char *dir, report_node_summary *s, topo_error *err);
void report_node_summary_free(report_node_summary *s);

#endif
