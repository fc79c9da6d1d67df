/*****************************************************************************\
 *  topognn.h - internal interfaces shared by the files of the
 *	topology/topognn and prep/topognn plugins.
 *
 *  The plugin is a thin adapter: Slurm's node table and job records on one
 *  side, topognn's graph and placement engine (topo/place.h, which knows
 *  nothing of Slurm) on the other. Everything Slurm-version specific lives
 *  in slurm-plugin/ so that a 25.05 adapter stays small.
 *
 *  Files:
 *	topognn_conf.c	  topognn.conf reader (key=value, like slurm.conf)
 *	topognn_class.c	  job record -> place_classify -> communication profile
 *	topognn_map.c	  graph <-> Slurm node table: hosts, groups, leaves,
 *			  spines as node bitmaps; scontrol show topology data
 *	topognn_eval.c	  the eval_nodes callback (enforce and shadow mode)
 *	topognn_record.c  per-job decision cache, decision log, job plan
 *	topognn_jobs.c	  running jobs and node states into the engine's state
 *	topognn_queue.c	  pending jobs (per partition) and the clock into it
 *	topognn_telem.c	  Prometheus telemetry thread -> the engine's state
 *	topology_topognn.c the topology_p_* entry points
 *	topognn_runtime.c the run-time predictor: learns ended jobs, predicts,
 *			  persists in StateSaveLocation
 *	topognn_shadow.c  shadow mode: model's and tree-switches' choices
 *	prep_topognn.c	  PrEp plugin: commits the decision of a started job
\*****************************************************************************/

#ifndef _TOPOGNN_H
#define _TOPOGNN_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "slurm/slurm.h"
#include "src/common/bitstring.h"
#include "src/common/hostlist.h"
#include "src/common/pack.h"
#include "src/interfaces/topology.h"
#include "src/plugins/topology/tree/switch_record.h"

#include "place.h"
#include "place_classify.h"
#include "telemetry.h"
#include "telemetry_feed.h"
#include "topo_graph.h"


typedef enum {
	TOPOGNN_MODE_OFF = 0,	/* topology/tree on the graph decides */
	TOPOGNN_MODE_SHADOW,	/* Slurm decides; topognn logs its choice */
	TOPOGNN_MODE_ENFORCE,	/* topognn decides */
} topognn_mode_t;

typedef struct {
	char *path;		/* the topognn.conf read */
	char *graph_file;	/* GraphFile= */
	char *model_file;	/* ModelFile=, or the shipped model for gnn */
	bool model_default;	/* model_file is the shipped default */
	char *decision_log;	/* DecisionLog= */
	topognn_mode_t mode;	/* Mode= */
	place_policy policy;	/* Policy= (enforce/shadow choice) */
	bool policy_set;	/* Policy= was given (else ModelFile= implies gnn) */
	/* the engine's configuration: Candidates= (candidates),
	 * FragWeight= (frag_weight), LocalityWait= (locality_wait_frac,
	 * locality_wait_cap_s); its model_path stays NULL: ModelFile= is
	 * model_file, registered with place_gnn_register */
	place_config place;
	bool fatal_on_error;	/* FatalOnError= */
	bool runtime_prediction; /* RuntimePrediction= */
	/* ClassRule= and Default*Class= lines, parsed by the engine's
	 * classifier (topo/place_classify.h, docs/job-classes.md). */
	place_classifier *classifier;
	double heavy_bytes;	/* HeavyBytesPerIter= */
	double light_bytes;	/* LightBytesPerIter= */
	telemetry_config telem;	/* Telemetry*= (docs/telemetry.md); url "": off */
	double telemetry_interval_s; /* TelemetryIntervalSec= */
} topognn_conf_t;

/* Everything built from topognn.conf and the graph file. One instance is
 * active at a time (swapped under topognn_lock on reconfigure). */
typedef struct {
	topognn_conf_t conf;
	topo_graph *graph;
	place_cluster *cluster;
	place_engine *engine;
	place_state *state;

	/* Slurm node index <-> cluster host index; -1 when unmapped. */
	int node_cnt;
	int *node_host;
	int host_cnt;
	int *host_node;
	bitstr_t *unmapped_bitmap;	/* Slurm nodes absent from the graph */

	/* Groups in the engine's order: names and Slurm node bitmaps. */
	int group_cnt;
	char **group_name;
	bitstr_t **group_bitmap;

	/* Fabric switches (leaves, spines, cores) seen by Slurm nodes. */
	int switch_cnt;
	char **switch_name;
	uint16_t *switch_level;		/* 0 leaf, 1 spine, 2 core */
	bitstr_t **switch_bitmap;	/* Slurm nodes under the switch */
	char **switch_children;		/* lower switches, ranged list */
	uint32_t *switch_speed;		/* link speed of its fastest cable, Gb/s */

	/* Engine state mirror (topognn_jobs.c): what each host's entry in
	 * state was last set from, so only changes bump the state version. */
	unsigned *host_flags_set;	/* PLACE_HOST_* last set; ~0u: never */
	int *host_cpus_set;
	int *host_gpus_set;
	bool jobs_synced;	/* running jobs walked into state once */
	int state_jobs;		/* jobs in state (decision log: running_jobs) */
	int *job_hosts;		/* host_cnt: hosts of one job */
	telemetry_feed *telem;	/* live leaf utilisation; NULL: no telemetry */

	/* Scratch for eval: preallocated so an evaluation allocates little. */
	uint8_t *allowed;
	uint8_t *eligible;	/* host_cnt: in the job's partition, not excluded */
	int *required;
	int *order;		/* node_cnt: Slurm nodes in trial order */
	uint8_t *group_used;	/* group_cnt + 1 */
} topognn_ctx_t;

/* The active context (NULL when none is loaded) and its lock. The lock is
 * held for reading by every evaluation and for writing on (re)build. */
extern topognn_ctx_t *topognn_ctx;
extern pthread_rwlock_t topognn_lock;

/* ---- topognn_conf.c ---- */

/* Read topognn.conf at path into conf (defaults for absent keys). Each
 * problem is logged as "file:line: reason". Returns SLURM_SUCCESS, or
 * SLURM_ERROR when the file cannot be read or a line is invalid. */
extern int topognn_conf_read(const char *path, topognn_conf_t *conf);
extern void topognn_conf_init(topognn_conf_t *conf);
extern void topognn_conf_free(topognn_conf_t *conf);
extern const char *topognn_mode_name(topognn_mode_t mode);

/* ---- topognn_class.c ---- */

/* The communication profile of a job on `nodes` nodes: its class from the
 * configured rules (place_classify), ring all-reduce of HeavyBytesPerIter or
 * LightBytesPerIter bytes per host and iteration. *why (if not NULL) says
 * which rule or default decided. */
extern void topognn_classify(const topognn_conf_t *conf, job_record_t *job_ptr,
			     uint32_t nodes, place_comm *comm,
			     const char **why);
/* The job plan's SHARP item for a started job: "sharp=1" when it is a SHARP
 * user whose allocation lies under one SHARP aggregation tree, "sharp=0"
 * for a SHARP user whose allocation does not, NULL otherwise (no SHARP in
 * the graph, or not a SHARP user). Static strings. */
extern const char *topognn_plan_sharp(const topognn_ctx_t *ctx,
				      job_record_t *job_ptr);

/* ---- topognn_map.c ---- */

/* Load the graph named by conf and build the engine and the node maps.
 * Needs the node table (slurmctld) when with_nodes is set; without it only
 * the graph and engine are built (get_node_addr in other daemons). Takes
 * ownership of conf. Returns NULL (logged, file and reason) on failure. */
extern topognn_ctx_t *topognn_ctx_build(topognn_conf_t *conf, bool with_nodes);
/* Add the node maps to a context built without them, once the node table is
 * final (slurmctld; a no-op when they are there already). */
extern void topognn_ctx_map_nodes(topognn_ctx_t *ctx);
extern void topognn_ctx_free(topognn_ctx_t *ctx);

/* Group index of a Slurm node, or -1 (unmapped). */
extern int topognn_node_group(const topognn_ctx_t *ctx, int node_inx);

/* SLURM_TOPOLOGY_ADDR and its pattern for a node, as topology/tree gives
 * them ("spine.leaf.node", "switch.switch.node"); false: not in the graph. */
extern bool topognn_node_addr(const topognn_ctx_t *ctx, const char *node,
			      char **addr, char **pattern);

/* The topoinfo records scontrol shows: groups, then switches by level. */
typedef struct {
	char *name;
	char *kind;		/* "group", "leaf", "spine", "core" */
	uint16_t level;
	uint32_t link_speed;
	char *nodes;
	char *switches;
} topognn_topo_rec_t;

extern topognn_topo_rec_t *topognn_topo_recs(const topognn_ctx_t *ctx,
					     uint32_t *count);

/* ---- topology_topognn.c: the bodies of the topology_p_* entry points ----
 * Slurm's topology interface changed in 25.05 (a topology_ctx_t on most
 * calls, topology_p_topology_* renamed topology_p_topoinfo_*, new entry
 * points). The bodies below are the same for every release; the symbols
 * Slurm looks up are defined per release by topognn_compat_2411.c or
 * topognn_compat_tctx.c (+ topognn_compat_2605.c), chosen by configure from
 * the Slurm tree's slurm_version.h. unit is NULL before 25.05. */
extern int topognn_p_build_config(void);
extern int topognn_p_whole_topo(bitstr_t *node_mask);
extern bitstr_t *topognn_p_get_bitmap(char *name);
extern bool topognn_p_generate_node_ranking(void);
extern int topognn_p_get_node_addr(char *node_name, char **paddr,
				   char **ppattern);
extern int topognn_p_split_hostlist(hostlist_t *hl, hostlist_t ***sp_hl,
				    int *count, uint16_t tree_width);
extern int topognn_p_get(topology_data_t type, void *data);
extern int topognn_p_topoinfo_free(void *topoinfo_ptr);
extern int topognn_p_topoinfo_pack(void *topoinfo_ptr, buf_t *buffer,
				   uint16_t protocol_version);
extern int topognn_p_topoinfo_print(void *topoinfo_ptr, char *nodes_list,
				    char *unit, char **out);
extern int topognn_p_topoinfo_unpack(void **topoinfo_pptr, buf_t *buffer,
				     uint16_t protocol_version);
extern uint32_t topognn_p_get_fragmentation(bitstr_t *node_mask);
/* The topoinfo entry points whose arguments are the same in every release,
 * under the release's names: PFX is topology_p_topology_ (24.11) or
 * topology_p_topoinfo_ (25.05+). */
#define TOPOGNN_TOPOINFO_WRAPPERS(PFX)					\
	extern int PFX##free(void *topoinfo_ptr)			\
	{								\
		return topognn_p_topoinfo_free(topoinfo_ptr);		\
	}								\
	extern int PFX##pack(void *topoinfo_ptr, buf_t *buffer,	\
			     uint16_t protocol_version)			\
	{								\
		return topognn_p_topoinfo_pack(topoinfo_ptr, buffer,	\
					       protocol_version);	\
	}								\
	extern int PFX##unpack(void **topoinfo_pptr, buf_t *buffer,	\
			       uint16_t protocol_version)		\
	{								\
		return topognn_p_topoinfo_unpack(topoinfo_pptr, buffer,	\
						 protocol_version);	\
	}
/* Free the active context (slurmctld's destroy_config, fini). */
extern void topognn_p_destroy_config(void);

/* ---- topognn_compat_*.c: topology/tree's switch table, per release ----
 * Build it from a topology.conf file (Slurm's switch_record_validate), free
 * it, and run eval_nodes_tree on it. load returns whether it has switches. */
extern bool topognn_compat_tree_load(char *topology_conf);
extern void topognn_compat_tree_free(void);
extern int topognn_compat_tree_eval(topology_eval_t *topo_eval);
/* The table as tree's split_hostlist walks it (NULL, 0 when none), and
 * whether a top-level leaf relays its own nodes as one list (26.05 does;
 * 24.11 and 25.11 send each of them a message of its own). */
extern switch_record_t *topognn_compat_tree_table(int *count, int *levels);
extern bool topognn_compat_tree_relay_top_leaf(void);
/* --segment's size (25.05+); 0 when none or before 25.05. */
extern uint16_t topognn_compat_segment(job_record_t *job_ptr);

/* ---- topognn_eval.c ---- */

/* topology_p_eval_nodes() body. */
extern int topognn_eval(topology_eval_t *topo_eval);

/* ---- topognn_tree.c: Slurm's topology/tree as baseline and fallback ---- */

/* Build topology/tree's switch table for ctx's fabric (NULL: none); call
 * with topognn_lock held for writing. */
extern void topognn_tree_build(const topognn_ctx_t *ctx);
extern void topognn_tree_free(void);
/* eval_nodes_tree() on the table; ESLURM_NOT_SUPPORTED when there is none
 * (Slurm's generic selection then decides). */
extern int topognn_tree_eval(topology_eval_t *topo_eval);
/* TopologyParam=RouteTree: topology/tree's split of hl on the table (its
 * code, ported per release); the depth, or -1 when there is no table. */
extern int topognn_tree_split(hostlist_t *hl, hostlist_t ***sp_hl,
			      int *count, uint16_t tree_width);

/* ---- topognn_jobs.c ----
 * The engine's place_state mirrors slurmctld: host flags (down, drained)
 * and capacity from the node table, and every running job with its hosts
 * and communication profile, so the scorer sees background traffic. Which
 * nodes one job may use is Slurm's node_map (place_request.allowed), not
 * the state. All of these run in slurmctld with the job write lock held,
 * which serialises them with evaluations. */

/* Node table -> state, touching only hosts whose flags or capacity
 * changed; and, once per context (first evaluation after a start, restart
 * or reconfigure), every running or suspended job from job_list. */
extern void topognn_state_sync(topognn_ctx_t *ctx);
/* A job started (prolog) or ended (epilog): add or remove its load. Start
 * returns whether the job is in the state (false: no host in the graph). */
extern bool topognn_state_job_start(topognn_ctx_t *ctx, job_record_t *job_ptr);
extern void topognn_state_job_end(topognn_ctx_t *ctx, job_record_t *job_ptr);
/* slurmctld's job_list (looked up at run time); NULL outside slurmctld. */
extern list_t *topognn_job_list(void);

/* ---- topognn_queue.c ----
 * Before an evaluation: the time now and the queue of the job's partition
 * (pending jobs Slurm could start, and the nodes they ask for) into the
 * state, as topognn-sim tells them before each scheduling pass. Counted
 * once per second for all partitions. Returns the job's place in that
 * queue (1: its head; 0 without a state), for its decision record. */
extern int topognn_state_queue(topognn_ctx_t *ctx, job_record_t *job_ptr);
extern void topognn_queue_fini(void);

/* ---- topognn_telem.c ---- */

/* Start the telemetry thread when TelemetryURL is set (slurmctld only); a
 * bad setting or credentials file is logged and telemetry stays off. */
extern void topognn_telem_start(topognn_ctx_t *ctx);
/* In an evaluation: apply the latest snapshot if it changed. */
extern void topognn_telem_apply(topognn_ctx_t *ctx);

/* ---- topognn_record.c ---- */

#define TOPOGNN_SHADOW_MAX 2
/* Shadow policy names, in the order of topognn_job_decision_t.shadow */
extern const char *const topognn_shadow_policy[TOPOGNN_SHADOW_MAX];

/*
 * What the last evaluation of a job decided; kept until the job starts.
 * Evaluations are many (every main and backfill pass, will-run tests) and
 * allocations few, so an evaluation only copies the engine's request and
 * decision (host indices) into the job's slot, reusing the slot's storage;
 * node names and the JSON record are built once, at the commit.
 */
typedef struct {
	uint32_t job_id;
	topognn_mode_t mode;
	char kind[32];		/* candidate kind of the choice ("slurm-tree":
				 * topology/tree allocated) */
	const void *ctx;	/* the context whose host indices these are */
	place_request req;	/* required/excluded point into hosts; allowed NULL */
	place_decision dec;	/* every choice's hosts point into hosts */
	int *hosts;		/* owned storage of the arrays above */
	int hosts_cap;
	char fallback[256];	/* non-empty: topognn did not place the job
				 * (Slurm's tree did), and this is why */
	/* shadow mode (topognn_shadow.c): model's and tree-switches' choices
	 * for the same request (hosts point into hosts, like dec's) */
	int nshadow;
	place_choice shadow[TOPOGNN_SHADOW_MAX];
	bool shadow_hold[TOPOGNN_SHADOW_MAX];
	double shadow_wait[TOPOGNN_SHADOW_MAX]; /* holding: predicted wait, < 0 unknown */
} topognn_job_decision_t;

/* Remember (replacing) a job's latest decision: d's request and decision
 * are copied (d->hosts is ignored); no allocation once the slot's storage
 * is large enough. */
extern void topognn_record_remember(const topognn_job_decision_t *d);
/* Remember that topognn left a job's evaluation to Slurm's generic
 * selection, and why; logged at info level once per job and reason. */
extern void topognn_record_fallback(job_record_t *job_ptr, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Commit a started job: write the decision log line for the allocation it
 * really got and set TOPOGNN_PLAN / TOPOGNN_GROUPS in its spank_job_env.
 * Called by prep/topognn in slurmctld with the job write lock held. */
extern int topognn_job_commit(job_record_t *job_ptr);
/* A job ended: its load leaves the engine's state (prep/topognn's epilog). */
extern int topognn_job_end(job_record_t *job_ptr);

/* ---- topognn_shadow.c ---- */

/* Shadow mode, before the engine's own decision for req: what `model` and
 * `tree-switches` (topology/tree with --switches=<fewest groups>@<the
 * LocalityWait budget>, as a job_submit rule would ask) would do now, into
 * rec->shadow (hosts in a scratch buffer valid until the next call; the
 * caller remembers rec before that). */
extern void topognn_shadow_decide(topognn_ctx_t *ctx, job_record_t *job_ptr,
				  const place_request *req,
				  topognn_job_decision_t *rec);
extern void topognn_shadow_fini(void);

/* ---- topognn_runtime.c ---- */

/* Load the saved predictor state (slurmctld only; logged). */
extern void topognn_runtime_init(void);
/* The job's predicted run time in seconds, at most its limit; 0 none. */
extern double topognn_runtime_predict(job_record_t *job_ptr);
/* When a running job is expected to end (seconds since the epoch): its
 * start + prediction, capped at its limit's end; a job past its prediction
 * runs as long again as it has run. */
extern double topognn_runtime_expected_end(job_record_t *job_ptr, time_t now);
/* A job ended (epilog_slurmctld): learn its run time; save when due. */
extern void topognn_runtime_job_end(job_record_t *job_ptr);
/* Save (if changed) and free. */
extern void topognn_runtime_fini(void);
extern void topognn_record_fini(void);

#endif
