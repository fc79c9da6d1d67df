/*
 * place_internal: the structures the place_*.c files share. Not installed;
 * nothing outside topo/place_*.c includes it.
 *
 * The cluster is a flat, index-based copy of what placement needs from the
 * topo_graph (hosts, their rail leaves, leaf up-links, groups), so that the
 * hot path never walks the graph. The state is per-host availability plus
 * per-link counts of background flows, kept up to date incrementally when
 * jobs start and end.
 */
#ifndef PLACE_INTERNAL_H
#define PLACE_INTERNAL_H

#include "place.h"
#include "place_scorer.h"

/* Rate assumed for a cable whose speed is unknown (topology.conf graphs). */
#define PLACE_DEFAULT_LINK_GBPS 100.0
/* More rails than this on one host are ignored (a sanity bound). */
#define PLACE_MAX_RAILS 32
/* Most host classes whose hops are tabulated at creation (1 MB); beyond,
 * hops are computed per pair. A 16,384-host rail-optimised fat tree has
 * 512. */
#define PLACE_CLASS_HOPS_MAX 1024
/* NVLink bandwidth of one GPU, each way, Gb/s: NVLink 5 (GB200 NVL72)
 * gives 1.8 TB/s per GPU in both directions together, 900 GB/s each way
 * (docs/simulator.md cites NVIDIA's GB200 NVL72 specification). */
#define PLACE_NVLINK_GBPS_PER_GPU 7200.0
/* GPUs assumed on a domain host whose graph lists none (a GB200 tray). */
#define PLACE_NVLINK_DEFAULT_GPUS 4

struct place_cluster {
	const topo_graph *g;
	int nhosts, ngroups, nleaves, nrails;
	int has_core;          /* some spine has links to a core level */
	/* hosts, ordered by group then name */
	int *host_vid;
	const char **host_name;
	int *host_group;
	int *host_leaf;        /* nhosts * nrails: leaf index per rail, -1 none */
	double *host_gbps;     /* nhosts * nrails: host cable rate */
	uint8_t *host_leaf_first; /* nhosts * nrails: first rail on that leaf */
	int *host_gpus;        /* GPU parts found in the graph */
	int *host_class;       /* hosts with identical leaf vectors share a class */
	int nclasses;
	int *class_host;       /* a representative host per class */
	int8_t *class_hops;    /* nclasses^2 hops between classes (NULL when
				  there are more than PLACE_CLASS_HOPS_MAX) */
	/* groups: hosts of group g are group_first[g] .. +group_nhosts[g]-1 */
	char **group_name;
	int *group_first, *group_nhosts;
	double *group_up_gbps; /* spine -> core capacity of the group (core only) */
	/* leaf switches, in vertex name order */
	int *leaf_vid;
	const char **leaf_name;
	int *leaf_group;       /* group of its hosts, -1 when mixed or none */
	int *leaf_nhosts;
	double *leaf_up_gbps;
	int *leaf_spine_off;   /* CSR: spines (vertex ids, ascending) above leaf l */
	int *leaf_spines;
	int *vid_leaf;         /* graph vertex id -> leaf index, -1 */
	int nvertices;
	/* SHARP (place_sharp.c): per leaf, the SHARP aggregation switches
	 * that can root a tree over it (root indices, ascending; none when the
	 * leaf itself has no SHARP); per root, its leaves; per leaf, its hosts */
	int has_sharp;
	int nroots;
	int *leaf_root_off, *leaf_roots;
	int *root_leaf_off, *root_leaves;
	int *leaf_host_off, *leaf_hosts;
	int *root_vid;         /* per root: its switch vertex */
	/* NVLink domains (place_domain.c): hosts of domain d are
	 * domain_hosts[domain_off[d] .. domain_off[d+1]), ascending */
	int ndomains;
	int *host_domain;      /* -1: none */
	const char **domain_name;
	int *domain_off, *domain_hosts;
	double *host_nvl_gbps; /* NVLink each way, 0 outside a domain */
	/* link resources of the flow model: host cables up/down, leaf up-links
	 * up/down (aggregated per leaf), group up-links up/down, and, with
	 * NVLink domains, each host's NVLink up/down */
	int nres;
};

/* Resource ids of the flow model. */
static inline int place_res_host_up(const place_cluster *c, int h, int r)
{
	return h * c->nrails + r;
}
static inline int place_res_host_down(const place_cluster *c, int h, int r)
{
	return c->nhosts * c->nrails + h * c->nrails + r;
}
static inline int place_res_leaf_up(const place_cluster *c, int l)
{
	return 2 * c->nhosts * c->nrails + l;
}
static inline int place_res_leaf_down(const place_cluster *c, int l)
{
	return 2 * c->nhosts * c->nrails + c->nleaves + l;
}
static inline int place_res_group_up(const place_cluster *c, int g)
{
	return 2 * c->nhosts * c->nrails + 2 * c->nleaves + g;
}
static inline int place_res_group_down(const place_cluster *c, int g)
{
	return 2 * c->nhosts * c->nrails + 2 * c->nleaves + c->ngroups + g;
}

static inline int place_res_nvl_up(const place_cluster *c, int h)
{
	return 2 * c->nhosts * c->nrails + 2 * c->nleaves + 2 * c->ngroups + h;
}
static inline int place_res_nvl_down(const place_cluster *c, int h)
{
	return 2 * c->nhosts * c->nrails + 2 * c->nleaves + 2 * c->ngroups + c->nhosts + h;
}

/* Capacity in Gb/s of resource `res` (before telemetry). */
static inline double place_cluster_res_gbps(const place_cluster *c, int res)
{
	int hr = c->nhosts * c->nrails;

	if (res < hr)
		return c->host_gbps[res];
	if (res < 2 * hr)
		return c->host_gbps[res - hr];
	res -= 2 * hr;
	if (res < 2 * c->nleaves)
		return c->leaf_up_gbps[res % c->nleaves];
	res -= 2 * c->nleaves;
	if (res < 2 * c->ngroups)
		return c->group_up_gbps[res % c->ngroups];
	res -= 2 * c->ngroups;
	return c->host_nvl_gbps[res % c->nhosts];
}

/* Do hosts a and b share an NVLink domain? */
static inline int place_same_domain(const place_cluster *c, int a, int b)
{
	return c->host_domain[a] >= 0 && c->host_domain[a] == c->host_domain[b];
}

/* Build the SHARP trees (place_sharp.c) and the NVLink domains
 * (place_domain.c) of a cluster whose hosts and leaves are built. */
int place_cluster_build_sharp(place_cluster *c, topo_error *err);
int place_cluster_build_domains(place_cluster *c, topo_error *err);
void place_cluster_free_sharp(place_cluster *c);
void place_cluster_free_domains(place_cluster *c);
/* NVLink domains spanned by a set; mark: ndomains zeros, zero on return. */
int place_domains_spanned(const place_cluster *c, const int *hosts, int n, int *mark);

/* Do leaves a and b share a spine? */
int place_cluster_leaves_share_spine(const place_cluster *c, int a, int b);

/* Hop distance between two leaf vectors' classes (see host_class). */
int place_cluster_class_hops(const place_cluster *c, int ca, int cb);

typedef struct place_job {
	uint32_t id;
	int *hosts;
	int nhosts;
	int gpus, cores;
	int exclusive;
	place_comm comm;
	int loads;             /* its flows are counted in bg_flows */
	double end_s;          /* expected end (time limit), 0 unknown */
} place_job;

struct place_state {
	const place_cluster *c;
	int *total_gpus, *free_gpus, *total_cores, *free_cores;
	unsigned *flags;
	int *njobs;            /* running jobs per host */
	place_job *jobs;
	int njobs_running, jobs_cap;
	double *bg_flows;      /* per resource: background flows crossing it */
	double *leaf_util;     /* per leaf: telemetry utilisation of its up-links */
	int unknown_leaves;    /* overlay names not found */
	double now_s;          /* place_state_set_clock */
	int queue_jobs, queue_hosts; /* place_state_set_queue */
	uint64_t version;
};

/* Add (sign +1) or remove (-1) the flows of a ring (closed) or chain over
 * `nhosts` hosts in ring order to per-resource counters `flows`. When
 * `touched` is not NULL, resources whose counter leaves 0 are appended to it
 * (*ntouched counts them). Shared by the state (background) and the model
 * (the candidate's own flows). */
void place_ring_flows(const place_cluster *c, const int *hosts, int nhosts, int closed,
		      double *flows, double sign, int *touched, int *ntouched);

/* In-place heap sort of ints by key[v] then v: no allocation. */
void place_sort_by_key(int *v, int n, const int *key);
/* In-place heap sort of ints ascending. */
void place_sort_ints(int *v, int n);
/* Stable sort of v by key[v] (every key >= 0) in O(n), tmp: room for n
 * ints. Equal keys keep their order in v, so indices listed ascending come
 * out as place_sort_by_key() orders them. No allocation. */
void place_sort_radix(int *v, int n, const int *key, int *tmp);

/* ---- candidates ---------------------------------------------------------- */

/* Scratch and results of candidate generation; owned by the engine. */
typedef struct place_cands {
	int cap;               /* room for this many candidate sets */
	int n;
	place_candidate *set;  /* cap entries, each with nhosts room */
	int *store;            /* cap * nhosts ints */
	/* per-decision scratch */
	uint8_t *usable;       /* per host */
	uint8_t *taken;        /* per host, used while building a set */
	int *group_free;       /* usable hosts per group */
	int *group_order;      /* ngroups */
	int *leaf_free;        /* usable hosts per leaf (counted on every rail) */
	int *leaf_order;
	int *tmp;              /* max(nhosts, ngroups, nleaves) */
	uint8_t *gused;        /* ngroups */
	int nusable;
	int target;            /* hosts per set */
	int req_group_count;   /* groups holding required hosts */
	int tree_index, linear_index; /* index of those kinds in set, -1 none */
	char tree_reason[160];
	int *root_free, *root_order;  /* per SHARP root (nroots + 1) */
	int *dom_free, *dom_order;    /* per NVLink domain (ndomains + 1) */
	int *dom_mark;                /* per NVLink domain, zeros between uses */
} place_cands;

int place_cands_init(place_cands *k, const place_cluster *c, int cap);
void place_cands_free(place_cands *k);

/* Compute usable hosts for request r. Returns 0, or -1 with reason filled
 * (e.g. required host unusable, not enough hosts). */
int place_cands_prepare(place_cands *k, const place_cluster *c, const place_state *s,
			const place_request *r, char *reason, size_t len);
typedef struct place_tree place_tree;

/* Generate the candidate sets (after prepare); `tree` may be NULL. Returns
 * the count. */
int place_cands_generate(place_cands *k, const place_cluster *c, const place_request *r,
			 place_tree *tree);
/* Add a seeded random set (or, under max_groups, pick a random existing
 * one). Returns its index, or -1. */
int place_cands_random(place_cands *k, const place_cluster *c, const place_request *r,
		       uint64_t *rng);

/* Groups and leaves spanned by a set, and its hop diameter. Uses `stamp`
 * scratch of ngroups + nleaves + 2 * nclasses ints, all zero on entry and
 * on return. */
void place_set_shape(const place_cluster *c, const int *hosts, int n, int *stamp,
		     int *groups, int *leaves, int *diameter);

/* ---- tree (Slurm topology/tree) ------------------------------------------ */

place_tree *place_tree_new(const place_cluster *c);
void place_tree_free(place_tree *t);
/* Slurm's eval_nodes_tree selection over usable hosts. Writes the chosen
 * hosts (ascending) into out and returns their count, or -1 with reason. */
int place_tree_select(place_tree *t, const place_cluster *c, const uint8_t *usable,
		      const place_request *r, int *out, char *reason, size_t len);

/* ---- waiting for locality (place_defer.c) ------------------------------ */

/* Scratch of the defer check; owned by the engine, allocated once. */
typedef struct place_defer {
	int *key;        /* per host: seconds until usable, or INT_MAX */
	int *order;      /* hosts sorted by key */
	int *otmp;       /* scratch for sorting order */
	int *gcnt;       /* per group: hosts usable by the time swept */
	int *gtmp;       /* per group: scratch for the cover count */
	uint8_t *mask;   /* per group: the reservation of a deferred job */
	int *hist;       /* per count c: groups with c hosts usable (the sweep) */
	uint8_t *could;  /* per host: host_could for this request (min_groups) */
} place_defer;

/* With run-time predictions, a hold may last as long as the queue is
 * predicted to wait anyway only while at least this many jobs wait
 * (place_defer.c, queue_drain_s). Chosen among none, 4 and 8 on seeds 1-3
 * of bench/placement scenarios 1 and 6 (docs/bench.md, issue 18). */
#define PLACE_HOLD_QUEUE_JOBS 8

int place_defer_init(place_defer *d, const place_cluster *c);
void place_defer_free(place_defer *d);
/* The job's own duration as the engine weighs it: its predicted run time
 * when it has one below its limit, else its limit (place_defer.c). */
double place_request_duration(const place_request *r);
/* Fill out->min_groups for a heavy request and, for the model and gnn
 * policies with a LocalityWait budget, decide whether the chosen set
 * (already in out->chosen) should wait for a better one. `usable` are
 * the hosts usable now (place_cands). With a hold gate (the gnn policy's,
 * NULL none) and a run-time prediction (what the gate was trained with),
 * the gate, not the analytic rule, decides a hold for which a better set
 * is predicted to free in time. Allocates nothing. */
void place_defer_check(place_defer *d, const place_cluster *c, const place_state *s,
		       const place_request *r, const uint8_t *usable, const place_config *cfg,
		       const place_hold_gate *gate, place_decision *out);

/* ---- model scorer --------------------------------------------------------- */

typedef struct place_model place_model;

place_model *place_model_new(const place_cluster *c, double frag_weight, double hop_latency_us);
void place_model_free(place_model *m);
/* The model as a place_scorer (ctx = the model). */
void place_model_scorer(place_model *m, place_scorer *out);

#endif
