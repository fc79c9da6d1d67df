/*
 * place: the placement engine. Given a job request and the cluster's current
 * state, choose the hosts.
 *
 *   place_cluster  static view of a topo_graph for placement: hosts in group
 *                  order, each host's group and rail leaves, fabric link
 *                  capacities. Built once per graph.
 *   place_state    what changes: free GPUs/cores per host, down/drained hosts,
 *                  running jobs and their traffic, a per-link utilisation
 *                  overlay (telemetry). A version number changes on every
 *                  update so scorers can cache per state (GNN embeddings).
 *   place_engine   config, scorers and all scratch memory: place_decide()
 *                  allocates nothing.
 *
 * A decision builds up to K candidate host sets (best fit inside one group
 * or leaf, fewest-groups covers, Slurm's topology/tree choice, Slurm's
 * consecutive best fit), scores them with the policy's scorer and returns the
 * best, together with the baseline policy's choice for shadow mode and a
 * decision record (place_record.h).
 *
 * Hosts are identified by their index 0..nhosts-1 in the cluster.
 * Nothing here knows Slurm: the plugin translates node_map <-> host indices.
 *
 * Thread safety: there is no global state and no lock inside. A
 * place_cluster is read-only once built (as is the graph under it, which
 * must not change while the cluster lives) and may be read from any number
 * of threads. A place_state and a place_engine (whose scratch memory every
 * decision reuses) belong to one thread at a time: the caller serialises
 * updates and decisions on them, e.g. slurmctld's plugin under its lock,
 * or gives each thread its own.
 */
#ifndef PLACE_H
#define PLACE_H

#include "topognn_export.h"

#include <stddef.h>
#include <stdint.h>

#include "topo_error.h"
#include "topo_graph.h"

typedef enum place_comm_class {
	PLACE_COMM_NONE = 0,
	PLACE_COMM_LIGHT,
	PLACE_COMM_HEAVY
} place_comm_class;

typedef enum place_pattern {
	PLACE_PATTERN_RING = 0, /* ring all-reduce (data parallel) */
	PLACE_PATTERN_ALLTOALL,
	PLACE_PATTERN_PIPELINE /* neighbour exchange along the host order */
} place_pattern;

typedef struct place_comm {
	place_comm_class cls;
	place_pattern pattern;
	double bytes_per_iter;     /* bytes each host exchanges per iteration */
	double compute_s_per_iter; /* compute time per iteration, seconds */
	int sharp;                 /* a SHARP user: its all-reduce may be reduced in the
				    * network (NCCL CollNet) when its hosts lie under one
				    * SHARP aggregation tree (place_cluster_sharp_eligible) */
} place_comm;

typedef enum place_policy {
	PLACE_POLICY_LINEAR = 0, /* Slurm's consecutive best fit over node order */
	PLACE_POLICY_TREE,       /* Slurm's topology/tree: fewest leaf switches, best fit */
	PLACE_POLICY_MODEL,      /* analytic flow-level model + fragmentation cost */
	PLACE_POLICY_GNN,        /* the GNN scorer */
	PLACE_POLICY_RANDOM,     /* uniformly random feasible hosts (seeded) */
	PLACE_POLICY_COUNT
} place_policy;

TOPOGNN_EXPORT const char *place_policy_name(place_policy p);
TOPOGNN_EXPORT int place_policy_parse(const char *s); /* -1 if unknown */
TOPOGNN_EXPORT const char *place_comm_class_name(place_comm_class c);
TOPOGNN_EXPORT int place_comm_class_parse(const char *s);

/* ---- cluster ------------------------------------------------------------- */

typedef struct place_cluster place_cluster;

/* Build from an analysed graph (groups and switch levels known). Hosts are
 * ordered by group, then name: this is also the node ranking handed to
 * Slurm. Hosts without a group form a trailing pseudo-group. */
TOPOGNN_EXPORT place_cluster *place_cluster_new(const topo_graph *g, topo_error *err);
TOPOGNN_EXPORT void place_cluster_free(place_cluster *c);

TOPOGNN_EXPORT int place_cluster_nhosts(const place_cluster *c);
TOPOGNN_EXPORT int place_cluster_ngroups(const place_cluster *c);
TOPOGNN_EXPORT int place_cluster_nleaves(const place_cluster *c);
TOPOGNN_EXPORT const char *place_cluster_host_name(const place_cluster *c, int host);
/* the host named `name`, -1 if absent */
TOPOGNN_EXPORT int place_cluster_find_host(const place_cluster *c, const char *name);
TOPOGNN_EXPORT int place_cluster_host_group(const place_cluster *c, int host);
TOPOGNN_EXPORT const char *place_cluster_group_name(const place_cluster *c, int group);
/* Hops between two hosts (cables on the shortest path, min over rails). */
TOPOGNN_EXPORT int place_cluster_hops(const place_cluster *c, int a, int b);
/* The graph it was built from. */
TOPOGNN_EXPORT const topo_graph *place_cluster_graph(const place_cluster *c);

/* SHARP (place_sharp.c): 1 when some leaf has SHARP aggregation
 * (TOPO_CAP_SHARP) at all. */
TOPOGNN_EXPORT int place_cluster_has_sharp(const place_cluster *c);
/* 1 when hosts[0..n) lie under one SHARP aggregation tree on every rail
 * they use: on each rail, all their leaves have SHARP and one SHARP switch
 * (one of those leaves when there is only one, else a spine or core above
 * them all, reached through SHARP switches only) joins them. A job placed
 * so can reduce in the network. Allocates nothing. */
TOPOGNN_EXPORT int place_cluster_sharp_eligible(const place_cluster *c, const int *hosts, int n);
/* The graph vertex of the SHARP switch that roots such a tree over the
 * hosts' leaves on `rail` (the lowest-numbered when several can), or -1. */
TOPOGNN_EXPORT int place_cluster_sharp_root(const place_cluster *c, const int *hosts, int n,
					    int rail);

/* NVLink domains (groups with group_kind=nvlink, topo_nvsmi.h) as the
 * innermost level, whether or not the graph also has a fabric: their count,
 * a host's domain (-1 none), a domain's name and host count. */
TOPOGNN_EXPORT int place_cluster_ndomains(const place_cluster *c);
TOPOGNN_EXPORT int place_cluster_host_domain(const place_cluster *c, int host);
TOPOGNN_EXPORT const char *place_cluster_domain_name(const place_cluster *c, int domain);
TOPOGNN_EXPORT int place_cluster_domain_nhosts(const place_cluster *c, int domain);
/* NVLink bandwidth of a host each way, Gb/s (0 outside a domain). */
TOPOGNN_EXPORT double place_cluster_host_nvlink_gbps(const place_cluster *c, int host);

/* ---- state --------------------------------------------------------------- */

#define PLACE_HOST_DOWN 0x1u
#define PLACE_HOST_DRAIN 0x2u

typedef struct place_state place_state;

TOPOGNN_EXPORT place_state *place_state_new(const place_cluster *c);
TOPOGNN_EXPORT void place_state_free(place_state *s);
/* Capacity and availability of one host. A host is usable by a request when
 * not down/drained and it has the GPUs and cores the request asks for (an
 * exclusive request needs it entirely free). */
TOPOGNN_EXPORT void place_state_set_host(place_state *s, int host, int total_gpus, int free_gpus,
			  int total_cores, int free_cores, unsigned flags);
/* A running job: its hosts are taken (exclusively, or the given GPUs/cores
 * per host) and, if it communicates, its traffic loads the fabric. */
TOPOGNN_EXPORT int place_state_add_job(place_state *s, uint32_t job_id, const int *hosts,
				       int nhosts, int gpus_per_host, int cores_per_host,
				       const place_comm *comm);
TOPOGNN_EXPORT int place_state_remove_job(place_state *s, uint32_t job_id);
/* When a running job is expected to end, in the caller's clock (the same
 * as place_request.now_s): its time limit in Slurm, its requested time in
 * the simulator, never its true run time. 0 (the default) = unknown: its
 * hosts are not counted on to free. Returns 0, or -1 for an unknown job. */
TOPOGNN_EXPORT int place_state_set_job_end(place_state *s, uint32_t job_id, double end_s);
/* The gnn's view of time and the queue (place_features: hosts' remaining
 * time, a queue summary): the caller's clock now, and the jobs waiting and
 * the hosts they ask for. Neither changes the state version: remaining
 * times are those of the last refresh. Default 0 (unknown). */
TOPOGNN_EXPORT void place_state_set_clock(place_state *s, double now_s);
TOPOGNN_EXPORT void place_state_set_queue(place_state *s, int jobs, int hosts);
/* Telemetry overlay: utilisation 0..1 of the up-links of a leaf switch
 * (by graph vertex name); unknown names are ignored and counted. */
TOPOGNN_EXPORT int place_state_set_leaf_uplink_util(place_state *s, const char *leaf, double util);
/* Returns of place_state_set_leaf_uplink_util: 0 applied, 1 the
 * name is not a leaf switch (ignored). This counts the ignored names. */
TOPOGNN_EXPORT int place_state_unknown_leaves(const place_state *s);
TOPOGNN_EXPORT uint64_t place_state_version(const place_state *s);

/* ---- requests and decisions ---------------------------------------------- */

typedef struct place_request {
	uint32_t job_id;
	int min_hosts, max_hosts; /* max_hosts 0 = min_hosts */
	int gpus_per_host;
	int cores_per_host;
	int exclusive;
	const int *required; /* hosts that must be included (-w) */
	int nrequired;
	const int *excluded; /* hosts that must not be used (--exclude) */
	int nexcluded;
	const uint8_t *allowed; /* optional: nhosts flags, 0 = not offered (Slurm node_map) */
	/* optional: nhosts flags, hosts the job could use once free (its
	 * partition); NULL: the allowed hosts and every busy host. Only
	 * waiting for locality reads it (empty-cluster groups, what frees) */
	const uint8_t *eligible;
	int max_groups;         /* 0: no limit (Slurm --switches) */
	place_comm comm;
	/* waiting for locality (place_config.locality_wait_*): the caller's
	 * clock, the job's time limit (0 unknown: never defer) and how long
	 * it has been deferred already (0 the first time) */
	double now_s;
	double time_limit_s;
	double deferred_s;
	/* a prediction of the job's run time (place_runtime.h), 0: none. Read
	 * only where the job's own duration is weighed: a locality hold must
	 * be shorter than its communication share (place_defer.c), and the
	 * packing of light jobs; it never shortens the limit. */
	double predicted_runtime_s;
	/* the job's place in the scheduler's queue when it is decided: 1 the
	 * head (the job backfill plans a reservation for), 2 the next, ...; 0
	 * unknown. Only recorded (the decision record's queue_position, which
	 * placement-report history splits holds by); no decision reads it. */
	int queue_position;
} place_request;

#define PLACE_MAX_ALTERNATIVES 8
#define PLACE_HOLD_FEATURES 12 /* place_hold_feature_names */
#define PLACE_HOLD_BETTER_SET 1 /* its index of better_set: the gate decides only at 1 */

typedef struct place_choice {
	int *hosts; /* owned by the decision; nhosts entries in ascending index */
	int nhosts;
	int groups;   /* groups spanned */
	int leaves;   /* distinct leaf switches used (over all rails) */
	int diameter; /* max hop distance between two chosen hosts */
	double cost;  /* the scorer's predicted cost, lower is better */
	double comm_time_s; /* analytic estimate of one iteration's collective time */
	double frag_cost;   /* fragmentation part of the cost */
	const char *kind;   /* candidate kind: "group-best-fit", "tree", "linear", ... */
	double confidence;  /* gnn ensemble: share of its models whose top pick
			     * this is (0..1); -1 when the scorer has none */
	int sharp;          /* the set lies under one SHARP aggregation tree
			     * (place_cluster_sharp_eligible) */
	int domains;        /* NVLink domains spanned (0: the hosts have none) */
} place_choice;

typedef struct place_decision {
	int ok;             /* 0: nothing feasible; reason says why */
	char reason[256];
	place_policy policy;
	place_choice chosen;
	place_policy baseline_policy;
	place_choice baseline;
	int nalternatives;  /* best other candidates, by cost */
	place_choice alternatives[PLACE_MAX_ALTERNATIVES];
	int ncandidates;
	double latency_us;
	double refresh_us;  /* part of latency_us spent bringing a
			     * scorer up to date with a changed state; 0 when
			     * place_engine_refresh() ran after the change */
	const char *model;  /* the GNN model file that scored (gnn policy or
			     * baseline), owned by the engine; NULL: none */
	/* waiting for locality (heavy requests only, see place_defer.c) */
	int min_groups;     /* groups the job needs on the empty cluster; 0 not computed */
	int locality_checked; /* chosen spans more than min_groups and defer was weighed */
	int deferred;       /* 1: do not start now; chosen is the best set there is now */
	double defer_wait_s;  /* predicted wait until defer_groups frees */
	int defer_groups;     /* groups of the placement expected by then */
	double defer_budget_s; /* the job's whole budget (LocalityWait) */
	char defer_why[192];  /* one sentence: why deferred, or why not */
	/* when deferred: the groups expected to hold the placement (ngroups
	 * flags, owned by the engine, valid until the next call): a
	 * reservation keeps them for the job */
	const uint8_t *defer_group_mask;
	/* when a hold was weighed (locality_checked, budget left): what the
	 * hold decision saw (place_hold_feature_names), and the learned hold
	 * gate's probability of holding (-1: the analytic rule decided) */
	int hold_weighed;
	float hold_feat[PLACE_HOLD_FEATURES];
	double hold_p;
} place_decision;

/* ---- engine --------------------------------------------------------------- */

typedef struct place_config {
	int candidates;           /* K, default 32 */
	double frag_weight;       /* weight of fragmentation cost vs comm time, default 1 */
	unsigned seed;            /* for the random policy */
	const char *model_path;   /* GNN model file for the gnn policy; NULL: none.
				   * The engine does not read it: whoever sets
				   * the engine up passes it to place_gnn_register */
	double hop_latency_us;    /* model: latency per cable hop per
				   * collective step, default 0.5 */
	/* LocalityWait: a heavy job whose best placement now spans more
	 * groups than it needs on the empty cluster may be deferred (model
	 * and gnn policies) while a better one is predicted to free within
	 * min(frac x its time limit, cap) of its first deferral. Both 0
	 * (the default): never defer. cap 0 = no cap. */
	double locality_wait_frac;
	double locality_wait_cap_s;
} place_config;

#define PLACE_DEFAULT_HOP_LATENCY_US 0.5

TOPOGNN_EXPORT void place_config_init(place_config *cfg);

/* LocalityWait= default (topognn.conf.5, docs/job-classes.md has the
 * measurements behind it): a heavy job may wait for a placement over fewer
 * groups for up to its time limit, at most 8 h. The plugin and
 * bench/placement start from it. */
#define PLACE_LOCALITY_WAIT_FRAC_DEFAULT 1.0
#define PLACE_LOCALITY_WAIT_CAP_S_DEFAULT (8 * 3600.0)

/* Parse a LocalityWait value: "off", or FRAC[,CAP] where FRAC is the share
 * of a job's time limit (0..10) and CAP a duration with an optional unit
 * s, m or h (default seconds; 0 = no cap), e.g. "0.25,2h". Returns 0, or
 * -1 with a one-sentence reason. */
TOPOGNN_EXPORT int place_locality_wait_parse(const char *s, double *frac, double *cap_s, char *why,
			      size_t len);

typedef struct place_engine place_engine;

/* Preallocates every buffer for the cluster's size. */
TOPOGNN_EXPORT place_engine *place_engine_new(const place_cluster *c, const place_config *cfg,
					      topo_error *err);
TOPOGNN_EXPORT void place_engine_free(place_engine *e);

/* Load the GNN model (or ensemble) at model_path and install it as e's gnn
 * scorer, which e then owns (place_gnn.c; the engine itself does not
 * depend on gnn-infer). model_path NULL: nothing to do, 0. Returns 0, or
 * -1 with err (file, sentence) on a bad model file, a feature mismatch or
 * no memory; e is then unchanged. */
TOPOGNN_EXPORT int place_gnn_register(place_engine *e, const char *model_path, topo_error *err);

/* Bring the scorers up to date with state s (the GNN's vertex features and
 * embeddings, the model's idle-group counts): call it after the state
 * changes (jobs started or ended, hosts down, telemetry), outside the
 * decision path, so that place_decide() only generates and scores
 * candidates. Does nothing when s is unchanged since the last refresh.
 * place_decide() refreshes by itself when the state moved since (and
 * reports that time in refresh_us). Allocates nothing. Returns 1 when a
 * scorer was refreshed, 0 when all were current, -1 with reason (e.g. the
 * GNN rejected the graph). */
TOPOGNN_EXPORT int place_engine_refresh(place_engine *e, const place_state *s, char *reason,
					size_t len);

/* Decide where a request goes under `policy`, and what `baseline` would have
 * chosen (shadow mode; pass the same policy to skip). Fills `out` (whose host
 * arrays belong to the engine and stay valid until the next call). Returns 0
 * when a placement was found, -1 when the request cannot be met now
 * (out->reason says why, e.g. "needs 8 hosts with 4 free GPUs; 5 are"). */
TOPOGNN_EXPORT int place_decide(place_engine *e, const place_state *s, const place_request *r,
		 place_policy policy, place_policy baseline, place_decision *out);

#endif
