/*
 * sim: a discrete-event replay of a job trace on a cluster graph, with
 * every placement made by the placement engine (place_decide) under one
 * policy, to compare policies on the same workload (topognn-sim,
 * bench/placement) and to produce the GNN's training samples.
 *
 * Scheduling is FCFS plus EASY backfill as in Slurm's sched/backfill: the
 * queue head gets a reservation at the earliest time enough hosts will be
 * free (using running jobs' requested times); later jobs start now when
 * they fit and either end (by their requested time) before that reservation
 * or leave the head enough hosts.
 *
 * Communication is measured, not predicted: the running multi-node jobs'
 * ring all-reduce flows share the fabric (host cables, leaf up-links, pod
 * up-links) max-min fairly, recomputed whenever a communicating job starts
 * or ends; a job progresses at (compute + ideal comm) / (compute + current
 * comm) of its trace speed, so its runtime stretches with the contention it
 * really meets over its life. See docs/simulator.md.
 */
#ifndef TOPO_SIM_H
#define TOPO_SIM_H

#include <stdint.h>
#include <stdio.h>

#include "sim_comm_profile.h"
#include "place.h"
#include "topo_error.h"
#include "topo_graph.h"
#include "trace.h"

enum { SIM_RT_LIMIT = 0, SIM_RT_LEARNED, SIM_RT_ORACLE };

typedef struct sim_config {
	place_policy policy;
	/* the engine's configuration (place_config_init's defaults): its seed
	 * also draws the comm profiles; model_path is registered for the gnn
	 * policy (place_gnn_register); locality_wait_*: heavy jobs may be
	 * deferred under model and gnn, both 0 (default): never */
	place_config place;
	int gpus_per_host;        /* host capacity when the graph has no GPU parts; default 8 */
	int cores_per_host;       /* default 112 */
	const sim_comm_profile *profiles; /* drawn for multi-node jobs */
	int nprofiles;
	int backfill_depth;       /* queued jobs examined per backfill pass, default 100 */
	/* progress: called every ~1% of jobs with (done, total); NULL = none */
	void (*progress)(void *ctx, int done, int total);
	void *progress_ctx;
	/* training samples (sim_samples.h): every `train_every`-th
	 * placement of a communicating job is re-run with each candidate */
	struct sim_samples *training;
	int train_every;          /* default 10 */
	int train_keep_ties;      /* keep decisions whose candidates all scored
				   * the same (no ranking signal), default 0 */
	/* lookahead (docs/simulator.md): with `lookahead` set, each heavy
	 * decision forks the run once per candidate (the first lookahead_k of
	 * `policy`'s ranking), schedules on with `policy` for
	 * lookahead_horizon_s and takes the candidate of lowest
	 * J = X / (mean X + eps) + lookahead_wait_weight x W / (mean W + eps)
	 * (X heavy cross-group bytes, W wait, inside the horizon). The
	 * training samples are labelled by the same J.
	 * SIM_LOOKAHEAD_LABEL (DAgger, "dagger-gnn+pred"): the run follows
	 * `policy` (the student) and only the decisions where it weighed a
	 * hold are forked, each fork scheduling on with the model policy (the
	 * teacher's base): the hold samples label the student's own states,
	 * and nothing the student chose is changed. */
	int lookahead;            /* 0: plain `policy`; 1: lookahead; SIM_LOOKAHEAD_LABEL */
	/* tree-switches (policy tree): every heavy job asks topology/tree for
	 * --switches=<fewest leaf switches it fits in on the empty
	 * cluster>@<min(place.locality_wait_frac x its time limit, cap)>, with
	 * Slurm 24.11's semantics (docs/simulator.md) */
	int tree_switches;
	/* what the engine is told of jobs' durations: SIM_RT_LIMIT (time
	 * limits, as Slurm knows them), SIM_RT_LEARNED (place_runtime's online
	 * prediction, learned from the jobs that ended) or SIM_RT_ORACLE (the
	 * trace's run time, a reference no scheduler has). The running jobs'
	 * expected ends and a job's own duration (its locality wait budget,
	 * the packing of light jobs) follow it; Slurm's backfill (the
	 * simulator's reservations) and tree-switches always use limits. */
	int runtime_prediction;
	int lookahead_k;          /* candidates, default 8 */
	double lookahead_horizon_s; /* default 24 hours */
	double lookahead_wait_weight; /* default 0.3 */
	/* decision log (docs/decision-record.md): every placement as a decision
	 * record line, every job end as an "end" event line; NULL = none */
	FILE *decision_log;
	/* hold samples (topognn-train --holds): at every heavy decision where
	 * the lookahead weighed holding against starting, a line of the hold
	 * features (place_hold_feature_names), the teacher's objective J for
	 * holding and for the best placement now; NULL = none. A header line
	 * (sim_holds_header) names the columns. */
	FILE *holds;
	place_policy log_baseline; /* shadow policy recorded in the log, default tree */
	double log_epoch;          /* timestamp of simulated time 0, default 1.7e9 */
	/* SHARP users (place_comm.sharp): this share 0..1 of the heavy jobs,
	 * drawn per job from the seed; default 0 */
	double sharp_share;
} sim_config;

void sim_config_init(sim_config *cfg);

#define SIM_LOOKAHEAD_LABEL 2 /* sim_config.lookahead: label the student's holds */

/* The first line of a hold sample file (sim_config.holds). */
void sim_holds_header(FILE *f);

/* Set cfg's policy from a name: an engine policy (place_policy_parse),
 * "tree-switches" (tree with --switches), or "lookahead" (base tree) /
 * "lookahead-model" (base model); "model+pred" / "gnn+pred" ("+oracle")
 * tell the engine learned (true) run times instead of limits, and
 * "lookahead+pred" / "lookahead-model+pred" a teacher that knows only the
 * predictions, in its engine and its forks; "dagger-gnn+pred" runs
 * gnn+pred and labels its holds as lookahead-model+pred would
 * (SIM_LOOKAHEAD_LABEL). 0, or -1 for an unknown name. */
int sim_config_set_policy(sim_config *cfg, const char *name);
/* The name sim_config_set_policy took. */
const char *sim_config_policy_name(const sim_config *cfg);

typedef struct sim_metrics {
	char policy[32]; /* sim_config_policy_name(), "lookahead-model+pred" the longest */
	int jobs, started, dropped, heavy_jobs;
	double total_bytes_heavy;       /* fabric bytes of heavy jobs over their lives */
	double cross_leaf_bytes_heavy;  /* of which between hosts on different leaves */
	double cross_group_bytes_heavy; /* of which between hosts in different groups */
	double cross_leaf_frac, cross_group_frac;
	double mean_comm_slowdown, p95_comm_slowdown; /* heavy jobs: runtime / trace runtime */
	double comm_node_hours;  /* heavy jobs: (runtime - trace runtime) x hosts, hours */
	double mean_wait_s, p95_wait_s;               /* all jobs */
	double makespan_s;
	double utilization;     /* GPU-seconds used / (GPUs x makespan) */
	/* the jobs' work at full speed (trace run time x GPUs) / (GPUs x
	 * makespan): `utilization` counts time a job loses to slow
	 * communication as use, so a placement that speeds jobs up lowers it
	 * at the same makespan; this one does not */
	double useful_utilization;
	double fragmentation;   /* time mean of the idle hosts' share outside wholly idle groups */
	double decision_p50_us, decision_p99_us; /* place_decide: candidates + scoring */
	double refresh_p50_us, refresh_p99_us;   /* place_engine_refresh per state change */
	long refreshes;
	long decisions;         /* successful place_decide calls */
	long failed_decisions;  /* calls that found no placement (job stays queued) */
	/* heavy placements over more than one group, and over more groups than
	 * the job would need alone on an empty cluster (g_min, see sim_bound.c):
	 * fragmentation, not the job's size, caused the latter */
	long multi_group_heavy, avoidable_multi_group;
	/* the empty-cluster reference of the same heavy jobs (the same in every
	 * policy's metrics of one trace and seed): each placed alone in g_min
	 * groups, the largest groups first */
	double bound_cross_leaf_bytes_heavy, bound_cross_group_bytes_heavy;
	long bound_multi_group_heavy; /* heavy jobs that need > 1 group even then */
	long lookahead_changed; /* lookahead: decisions that left the base policy's choice */
	long lookahead_started; /* of those: the engine deferred, the teacher started at once */
	long lookahead_held;    /* of those: the engine placed, the teacher held the job */
	long deferrals;         /* decisions that deferred a job for locality */
	int deferred_jobs;      /* jobs deferred at least once */
	double mean_defer_s;    /* of those: mean time from first deferral to start */
} sim_metrics;

/* Replay `trace` (hosts per job already mapped) on cluster `c` under
 * cfg->policy. Jobs wider than the cluster are dropped (m->dropped).
 * Returns 0, or -1 with err (engine or memory failure). */
int sim_run(const place_cluster *c, const topo_trace *trace, const sim_config *cfg,
		 sim_metrics *m, topo_error *err);

/* ---- inputs ---------------------------------------------------------------- */

/* Load the cluster graph: kind "ibnetdiscover" (a dump file), "graph" (our
 * JSON) or "fattree" (a topo_fattree spec string). NULL with err on error. */
topo_graph *sim_load_graph(const char *kind, const char *arg, topo_error *err);

/* Load the astra-sim profiles (ResNet-50 data parallel, hybrid Transformer)
 * from directory `dir` into out[max]. Returns the count or -1 with err. */
int sim_load_profiles(const char *dir, sim_comm_profile *out, int max, topo_error *err);

/* A workload: the first trace (its first `jobs` jobs, 0 = all) with
 * processors mapped to hosts (ceil(procs / procs_per_host) x scale), and
 * later traces filling its gaps: their submissions spread over the first's
 * period, jobs longer than its longest run left out. Jobs wider than
 * nhosts are left out. */
typedef struct sim_workload {
	const char *const *traces;
	int ntraces;
	int jobs, procs_per_host, scale, nhosts;
} sim_workload;

/* Load a workload into out. `notes` (may be NULL) receives one line per
 * trace that lost jobs. Returns 0 or -1 with err. */
int sim_load_workload(const sim_workload *w, topo_trace *out, char *notes,
			   size_t len, topo_error *err);

/* ---- output ---------------------------------------------------------------- */

/* A readable table of several runs; with `ratio_to` (a policy name) a second
 * block gives each metric as a ratio to that policy's. */
void sim_print_table(FILE *out, const sim_metrics *m, int n, const char *ratio_to);

/* One run's metrics as a JSON object (the keys docs/simulator.md lists),
 * and the empty-cluster reference ("bound") of m with the same keys where
 * they apply. New references (json_t *), NULL when memory runs out. */
struct json_t *sim_metrics_json(const sim_metrics *m);
struct json_t *sim_bound_json(const sim_metrics *m);

#endif
