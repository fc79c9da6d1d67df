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
#include "sim.h"

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
	double rails;        /* rails its hosts use */
} sim_flows;

sim_net *sim_net_new(const place_cluster *c, topo_error *err);
void sim_net_free(sim_net *n);
int sim_net_nres(const sim_net *n);
int sim_net_nleaves(const sim_net *n);
int sim_net_nrails(const sim_net *n);
/* Pod (leaves and spines below any core level) of leaf l. */
int sim_net_leaf_pod(const sim_net *n, int l);
/* Leaf index of host h on rail r, -1 none. */
int sim_net_host_leaf(const sim_net *n, int h, int r);
/* Ring flows of a job on ascending host indices (rail r of host i to rail
 * r of host i+1, closed). Returns 0 or -1 on memory exhaustion. */
int sim_net_ring(sim_net *n, const int *hosts, int nhosts, sim_flows *f);
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
 * iteration's collective time on idle cables. */
void sim_ring_cost(const sim_flows *f, int nh, double bytes_per_iter, double *bytes_per_flow,
		   double *t_ideal);
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
/* Count one heavy job placed on `hosts` into m (multi_group_heavy,
 * avoidable_multi_group) and add its bound bytes (bound_*). 0 or -1 (memory). */
int sim_bound_account(sim_bound *b, const int *hosts, int nhosts, const place_comm *comm,
		      double base, sim_metrics *m);

/* ---- training ------------------------------------------------------------- */

/* One decision re-run with each candidate: the state as a graph, and per
 * candidate the host set, its features and the measured target. */
typedef struct sim_sample_set {
	int nvertices, nentries;
	int32_t *offsets, *neighbours; /* CSR, from place_features */
	float *weights;
	float *features; /* nvertices x PLACE_FEAT_VERTEX */
	int ncands;
	int **sets;      /* vertex ids */
	int *set_len;
	float *set_features; /* ncands x PLACE_FEAT_SET */
	float *targets;  /* higher is better: minus the measured cost */
} sim_sample_set;

/* The state as the gnn scorer sees it (place_features): this state's CSR
 * graph and vertex features into ss. Shared by the simulator's samples and
 * placement-report's export. Returns 0, or -1 when memory runs out. */
int sim_sample_graph(place_features *feat, const place_state *st, sim_sample_set *ss);

/* Takes ownership of s (freed on failure too). Returns 0 or -1. */
int sim_training_add(sim_training *t, sim_sample_set *s);
void sim_sample_set_free(sim_sample_set *s);

#endif
