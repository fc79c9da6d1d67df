/*
 * report_cluster: who runs where right now, on the cluster's groups, for
 * placement-report's cluster view, its picture and whatif.
 *
 * The running jobs come from the decision log (report_log_running) or from
 * slurmrestd; either way each is a job id and host names. From them this
 * derives each host's job, each group's occupancy, the fragmentation (the
 * share of idle hosts that sit in groups which are not wholly idle, the
 * simulator's definition) and the heavy jobs that span several groups, and
 * can rebuild the engine's place_state for a what-if decision.
 */
#ifndef REPORT_CLUSTER_H
#define REPORT_CLUSTER_H

#include <stdint.h>

#include "place.h"
#include "report_log.h"
#include "topo_error.h"

typedef struct report_job {
	uint32_t job;
	int *hosts;          /* host indices in the cluster (ascending) */
	int nhosts;
	int unknown_hosts;   /* names not in the graph */
	int groups, leaves;  /* spanned */
	int gpus_per_host, cores_per_host; /* 0, 0: whole hosts */
	place_comm comm;     /* cls NONE when it does not communicate */
	int heavy;
	char policy[16];     /* who placed it ("" unknown) */
	int colour;          /* palette index for the picture */
} report_job;

typedef struct report_occupancy {
	const place_cluster *c;
	int nhosts;
	int *host_job;       /* index into jobs of the (first) job on host, -1 idle */
	int *host_njobs;
	unsigned *host_flags; /* PLACE_HOST_DOWN / PLACE_HOST_DRAIN (from slurmrestd) */
	report_job *jobs;
	int njobs, cap;
	int ngroups;          /* including the trailing pseudo-group */
	int *group_hosts, *group_busy, *group_idle; /* idle: usable hosts without a job */
	int idle_hosts, busy_hosts;
	double fragmentation; /* 0..1 */
	int heavy_spanning;   /* heavy jobs over more than one group */
} report_occupancy;

/* An empty occupancy of cluster c. Returns 0, or -1 (out of memory). */
int report_occupancy_init(report_occupancy *o, const place_cluster *c);
void report_occupancy_free(report_occupancy *o);

/* Add a running job by host names. Names not in the graph are counted in
 * the job's unknown_hosts. Returns 0, or -1 (out of memory). */
int report_occupancy_add(report_occupancy *o, uint32_t job, const char *const *hosts,
			 int nhosts, int gpus_per_host, int cores_per_host,
			 const place_comm *comm, const char *policy);

/* Add the jobs the log says were running at time `at` (report_log_running)
 * on the hosts they were allocated. Returns 0, or -1 (out of memory). Call
 * report_occupancy_finish after. */
int report_occupancy_add_running(report_occupancy *o, const report_log *log, double at);

/* Recompute the per-group counts, fragmentation and spanning counts after
 * the last add or flag change. */
void report_occupancy_finish(report_occupancy *o);

/* The engine's state with these jobs running: every host gets host_gpus
 * GPUs (the graph's count when it has GPU parts) and host_cores cores;
 * down/drained flags carried over. NULL when memory runs out. */
place_state *report_occupancy_state(const report_occupancy *o, int host_gpus, int host_cores);

/* Names of the groups (which = 0), leaf switches (1) or NVLink domains (2) that host
 * indices h[0..n-1] span, comma-separated in cluster order; sets *count.
 * malloc'd; NULL when memory runs out. */
char *report_span_names(const place_cluster *c, const int *h, int n, int which, int *count);

/* Leaf index of a leaf switch by name, -1 if it is not one. */
int report_leaf_index(const place_cluster *c, const char *name);
int report_nleaves(const place_cluster *c);
const char *report_leaf_name(const place_cluster *c, int leaf);

#endif
