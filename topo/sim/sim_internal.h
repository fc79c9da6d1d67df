/*
 * sim_internal: what the sim*.c files share. Not installed.
 *
 * sim_net is the simulator's own measurement of the fabric, independent of
 * the engine's analytic model on purpose: the simulator is the ground truth
 * that policies (and the GNN's training targets) are judged by.
 */
#ifndef SIM_INTERNAL_H
#define SIM_INTERNAL_H

#include "place_features.h"
#include "place_runtime.h"
#include "sim.h"
#include "sim_samples.h"

/* ---- the fabric as shared resources -------------------------------------- */

typedef struct sim_net sim_net;

/* The flows of one job: distinct resources with the number of its flows on
 * each, and what crossing they do per iteration. */
typedef struct sim_flows {
	int *res;
	double *cnt;
	int nres, cap;
	double flows;        /* flows (per rail and ring step) */
	double cross_leaf;   /* of which between different leaves */
	double cross_group;  /* of which between different groups */
	double cable_gbps;   /* slowest host cable of the job */
	double rails;        /* rails its hosts use: those every host has */
	uint32_t rail_mask;  /* which */
	int fast;            /* some of it over NVLink or reduced in the network
			      * (SHARP): it may run faster than its ring on
			      * idle cables, the trace's reference */
} sim_flows;

sim_net *sim_net_new(const place_cluster *c, topo_error *err);
void sim_net_free(sim_net *n);
int sim_net_nleaves(const sim_net *n);
int sim_net_nrails(const sim_net *n);
/* The fastest host cable, Gb/s: with sim_net_nrails, the nominal host. */
double sim_net_ref_gbps(const sim_net *n);
/* Leaf index of host h on rail r, -1 none. */
int sim_net_host_leaf(const sim_net *n, int h, int r);
/* Ring flows of a job on ascending host indices (rail r of host i to rail
 * r of host i+1, closed). Returns 0 or -1 on memory exhaustion. */
int sim_net_ring(sim_net *n, const int *hosts, int nhosts, sim_flows *f);
/* SHARP in-network all-reduce of a job on hosts under one SHARP tree
 * (place_cluster_sharp_eligible): per rail one flow up and down each host
 * cable, one reduced stream per leaf to the root and back. 0 or -1. */
int sim_net_sharp(sim_net *n, const int *hosts, int nhosts, sim_flows *f);
void sim_flows_free(sim_flows *f);
/* Max-min fair rate (Gb/s per flow) of each of n jobs' flows, all flows of
 * a job at one rate (a collective ends with its slowest flow). */
void sim_net_share(sim_net *n, sim_flows *const *jobs, int nj, double *rate);
/* Utilisation 0..1 of leaf l's up-cables (capacity-weighted) by the last
 * sim_net_share(). */
double sim_net_leaf_util(const sim_net *n, int l);

/* ---- one ring's bytes, and the empty-cluster bound (sim_bound.c) -------- */

/* Bytes per flow of one ring iteration of a job on nh hosts with flows f
 * (all-reduce: 2 (n-1)/n of the bytes, split over the rails), and the
 * trace's reference time of that collective: the ring on idle cables of
 * the cluster's nominal host (sim_net_ref_gbps on sim_net_nrails rails),
 * whatever hosts the job got, so that a job's work (its iterations) does
 * not depend on its placement. */
void sim_ring_cost(const sim_net *n, const sim_flows *f, int nh, double bytes_per_iter,
		   double *bytes_per_flow, double *t_ideal);
/* Iterations over a job's life of `base` seconds at full speed. */
double sim_life_iters(const place_comm *comm, double base, double t_ideal);

typedef struct sim_bound sim_bound;

/* The reference for cluster c (net: its fabric, used for the rings). */
sim_bound *sim_bound_new(const place_cluster *c, sim_net *net);
void sim_bound_free(sim_bound *b);
/* Fewest groups n hosts fit in on an empty cluster (largest groups first). */
int sim_bound_gmin(const sim_bound *b, int nhosts);
/* Groups spanned by a host set. */
int sim_bound_groups(sim_bound *b, const int *hosts, int nhosts);
/* Slurm topology/tree's level-0 switch of each host, as the topology.conf
 * of topognn-discover describes it (place_tree.c): the group on a fabric
 * with several rails, else the host's leaf on rail 0. Fills leaf[nhosts]
 * (-1 none) and size_desc (their host counts, largest first; room for
 * nhosts + nleaves + ngroups + 1) and returns the number of switches. */
int sim_tree_leaves(const place_cluster *c, const sim_net *net, int *leaf, int *size_desc);
/* Fewest units of sizes size_desc[nunits] (largest first) that n hosts
 * fit in on an empty cluster. */
int sim_units_needed(const int *size_desc, int nunits, int n);

/* Count one heavy job placed on `hosts` into m (multi_group_heavy,
 * avoidable_multi_group) and add its bound bytes (bound_*). 0 or -1 (memory). */
int sim_bound_account(sim_bound *b, const int *hosts, int nhosts, const place_comm *comm,
		      double base, sim_metrics *m);

/* ---- a run (sim.c): plain arrays, so that a moment can be forked ------------- */

enum { J_FUTURE = 0, J_QUEUED, J_RUNNING, J_DONE, J_DROPPED };

typedef struct sjob {
	int nh, gpus, cores; /* gpus = cores = 0: whole hosts (exclusive) */
	int heavy;
	place_comm comm;
	double submit, base, req;
	int status;
	double start, end, work_left, rate;
	int *hosts;
	sim_flows fl;
	double bytes_per_flow; /* per iteration */
	double t_ideal;        /* one iteration's collective on idle cables, s */
	double defer_start;    /* first deferral for locality, -1 never */
	double defer_deadline; /* when its locality wait budget runs out */
	double hold_until;     /* the lookahead deferred it: not started at or
				* before this time (-1 never) */
	double switch_start;   /* tree-switches: Slurm's wait4switch_start, set
				* at its first evaluation (-1 not yet) */
	place_runtime_job rtj; /* what a predictor knows of it at submit */
	double pred;           /* its predicted run time at submit, 0 none */
} sjob;

typedef struct sim {
	const place_cluster *c;
	const sim_config *cfg;
	place_engine *eng;
	place_state *st;
	sim_net *net;
	int H, G, C, ngroups;
	sjob *jobs;
	int nj;
	int *queue, nq;
	int *run, nrun;
	int next_arrival;
	double now;
	int *host_njobs, *host_gpus_used, *host_cores_used;
	int *group_busy, *group_size;
	int busy_hosts;
	double frag_int, busy_gpu_s;
	double *lat;
	long nlat, failed;
	double *ref;    /* place_engine_refresh times, when it refreshed */
	long nref;
	double *rates;
	sim_flows **flp;
	int *rank;      /* scratch: running jobs by expected end */
	int *hostbuf;   /* scratch: 3 x nhosts */
	int *chosen;    /* the decision's hosts, copied: nhosts */
	double *endt;   /* scratch: expected end per job */
	int net_dirty;
	long heavy_decisions;
	int done;
	int is_fork;
	place_features *feat; /* training: the GNN's graph and features */
	int forced_job;  /* fork: the job whose outcome is measured */
	/* the queue head held although it may fit (deferred for locality,
	 * waiting for --switches, held by the lookahead): Slurm's backfill
	 * plans it at the earliest expected time it fits in resv_limit
	 * groups (tree leaf switches with resv_by_leaf) and reserves the
	 * hosts it would take then (held_reservation in sim.c) */
	int resv_job;    /* job index, -1 none */
	int resv_limit;  /* groups or leaf switches it waits for */
	int resv_by_leaf;
	int resv_fixed;  /* the lookahead: resv_hosts are its chosen hosts, now */
	double resv_until;
	uint8_t *resv_hosts; /* nhosts */
	/* Slurm topology/tree's level-0 switch of each host (sim_tree_leaves) */
	int *tree_leaf, *tree_leaf_size, ntree_leaves;
	int *unit_buf;   /* scratch: a unit per host, and two per-unit arrays */
	uint8_t *allowed;   /* scratch: hosts a backfilled job may use */
	uint8_t *defer_mask; /* lookahead: the engine's defer groups, kept over its forks */
	long deferrals;
	char last_reason[256]; /* the engine's last refusal */
	long lookahead_changed; /* decisions where the lookahead left the base choice */
	long lookahead_started, lookahead_held; /* of those: a deferral started, a start held */
	place_runtime *rt;      /* SIM_RT_LEARNED: the run's predictor (forks read it) */
} sim;

/* Arrays sized by the cluster and job count (shared by runs and forks). */
int sim_alloc(sim *s);
/* Frees what a run or fork owns (a fork shares the engine and network). */
void sim_free(sim *s);
/* Start job idx on hosts now. 0, or -1 with err. */
int sim_start_job(sim *s, int idx, const int *hosts, topo_error *err);
/* FCFS + EASY backfill pass over the queue. 0, or -1 with err. */
int sim_schedule(sim *s, topo_error *err);
/* Run events up to time `until` (INFINITY: to the end). 0, or -1 with err. */
int sim_loop(sim *s, double until, topo_error *err);
/* The communicating jobs' speeds after a start or end. */
void sim_recompute_rates(sim *s);
/* When the engine expects running job j to end: its start + limit, or
 * with a run-time prediction its predicted end (once past it, as long again
 * as it has run), never after the limit. */
double sim_expected_end(const sim *s, const sjob *j);
/* The engine's request for job idx. */
void sim_build_request(const sim *s, int idx, place_request *r);
/* Fabric bytes of a started job over its whole life: all, between leaves,
 * between groups (0 for a job that does not communicate). */
void sim_job_bytes(const sjob *j, double *total, double *xleaf, double *xgroup);

/* ---- forks (sim_training.c) ------------------------------------------------ */

/* A copy of s at this moment, with its own place_state, sharing s's engine
 * and network; when s is told run-time predictions (SIM_RT_LEARNED), its
 * jobs run as long as predicted, not their true run times. 0, or -1 when
 * memory runs out (sim_free(f) either way). */
int sim_fork(const sim *s, sim *f);

/* ---- lookahead (sim_lookahead.c) --------------------------------------------- */

#define SIM_LOOKAHEAD_MAX (1 + PLACE_MAX_ALTERNATIVES)

/* The first k (<= SIM_LOOKAHEAD_MAX) same-size candidates of decision d
 * for job idx, the chosen hosts first, their hosts copied into store
 * (SIM_LOOKAHEAD_MAX x the job's hosts). Returns the count. */
int sim_lookahead_candidates(const sim *s, int idx, const place_decision *d, const int *chosen,
			     int k, place_choice *cand, int *store);
/* The teacher's objective J (lower is better) of starting queue entry qi
 * on each of nc candidates (hosts NULL: defer it, d its decision): one
 * fork per candidate over the horizon.
 * Returns the count evaluated, or -1 with err. */
int sim_lookahead_eval(const sim *s, int qi, const place_choice *cand, int nc,
		       const place_decision *d, double *J, topo_error *err);
/* The lookahead policy: replace s->chosen (the base policy's pick for
 * queue entry qi, decision d) with the candidate of lowest J, or set
 * *defer when not starting the job now wins. A decision the engine
 * deferred is weighed against starting now; one that weighed locality
 * with budget left, against deferring to the next event. 0, or -1. */
int sim_lookahead_pick(sim *s, int qi, place_decision *d, int *defer, topo_error *err);
/* Job idx waits (the lookahead chose defer, d its decision): its locality
 * wait budget starts if it has not, and it is not started again before
 * the next event. */
void sim_hold_job(sim *s, int idx, const place_decision *d);

/* Add one decision of job idx labelled by J (target -J) to cfg->training;
 * decisions whose candidates all tie are skipped. 0, or -1 with err. */
int sim_training_add_decision(sim *s, int idx, const place_choice *cand, int nc,
			      const double *J, topo_error *err);

/* Training: re-run the decision just made for queue entry qi (its
 * candidates in d, the chosen hosts in chosen) with each same-size
 * candidate for cfg->lookahead_horizon_s, and add the sample set, labelled
 * by the teacher's objective, to cfg->training. 0, or -1 with err. */
int sim_training_sample(sim *s, int qi, const place_decision *d, const int *chosen,
			topo_error *err);

#endif
