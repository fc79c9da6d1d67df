/*****************************************************************************\
 *  topognn_eval.c - topology_p_eval_nodes(): where a job's nodes go.
 *
 *  select/cons_tres offers the candidate nodes (node_map) with per-node
 *  resources (avail_res_array, avail_core). We translate them into the
 *  engine's state and request, let place_decide() choose the hosts, and then
 *  take nodes in that order through Slurm's own helpers (core selection,
 *  CPU counts, GRES), so every per-node rule of cons_tres still applies.
 *
 *  The engine's state (hosts' flags, running jobs and their traffic) is
 *  kept by topognn_jobs.c, the queue and the clock by topognn_queue.c;
 *  what this job may use is the node_map, passed as the request's allowed
 *  hosts.
 *
 *  Enforce mode installs _eval_enforce as the eval_nodes callback, shadow
 *  mode installs _eval_shadow (decides, remembers, and lets topology/tree
 *  allocate). The baseline is Slurm's topology/tree itself (topognn_tree.c
 *  runs Slurm's eval_nodes_tree on the same fabric): whenever the engine's
 *  choice is the tree choice, and for anything the engine cannot express
 *  (required nodes outside the graph, internal errors, hosts Slurm's
 *  per-node rules refuse), the allocation is exactly the one topology/tree
 *  makes from the same node map (--contiguous: as tree, Slurm's generic
 *  selection). Evaluations also come from test-only, will-run and
 *  preemption passes, so nothing here is final: the decision is only
 *  remembered, and prep/topognn commits it when the job really starts.
\*****************************************************************************/

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "src/common/slurm_xlator.h"

#include "src/common/bitstring.h"
#include "src/common/core_array.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "src/plugins/topology/common/eval_nodes.h"
#include "src/plugins/topology/common/gres_sched.h"

#include "topognn.h"

/*
 * Where an evaluation's time goes (the main and backfill cycles pay it per
 * pending job): summed per part, logged at verbose level every PROF_EVERY
 * evaluations ("eval profile"). clock_gettime costs ~25 ns; nothing else.
 */
enum { PROF_STATE, PROF_ENGINE, PROF_RECORD, PROF_SELECT, PROF_TREE, PROF_TOTAL, PROF_N };
#define PROF_EVERY 500
static const char *const prof_name[PROF_N] = {
	"state", "engine", "record", "select", "tree", "total"
};
static double prof_us[PROF_N];
static long prof_n[PROF_N]; /* calls timed per part */
static long prof_evals;

static double _now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Add the time since *t0 to part p; *t0 becomes now. */
static void _prof(int p, double *t0)
{
	double t = _now_us();

	prof_us[p] += t - *t0;
	prof_n[p]++;
	*t0 = t;
}

static void _prof_eval_done(double t_start)
{
	char line[256];
	int n = 0;

	prof_us[PROF_TOTAL] += _now_us() - t_start;
	prof_n[PROF_TOTAL]++;
	if (++prof_evals < PROF_EVERY)
		return;
	/* per part: mean us per call and calls */
	for (int p = 0; p < PROF_N && n < (int) sizeof(line); p++)
		n += snprintf(line + n, sizeof(line) - n, " %s %.1f/%ld",
			      prof_name[p], prof_n[p] ? prof_us[p] / prof_n[p] : 0.0,
			      prof_n[p]);
	verbose("topognn: eval profile over %ld evaluations (part us/call/calls):%s",
		prof_evals, line);
	memset(prof_us, 0, sizeof(prof_us));
	memset(prof_n, 0, sizeof(prof_n));
	prof_evals = 0;
}

/* The node count Slurm's own algorithms aim for. */
static uint32_t _target_nodes(topology_eval_t *topo_eval)
{
	uint32_t n = MAX(topo_eval->min_nodes, topo_eval->req_nodes);

	if (topo_eval->max_nodes && n > topo_eval->max_nodes)
		n = topo_eval->max_nodes;
	return MAX(n, 1);
}

/* --switches=N[@time]: the group limit while the job may still wait. */
static int _max_groups(job_record_t *job_ptr)
{
	if (!job_ptr->req_switch)
		return 0;
	if (job_ptr->wait4switch_start == 0)
		job_ptr->wait4switch_start = time(NULL);
	if (job_ptr->wait4switch &&
	    (time(NULL) - job_ptr->wait4switch_start) >=
	    job_ptr->wait4switch)
		return 0;
	return job_ptr->req_switch;
}

/*
 * Waiting for locality (LocalityWait=): the job's time limit and how long
 * it has been deferred. As with --switches, the wait is counted from
 * wait4switch_start, set when the engine first defers the job; a job that
 * asked for --switches keeps Slurm's own rule and is never deferred.
 */
static void _locality_fields(topognn_ctx_t *ctx, job_record_t *job_ptr,
			     place_request *req)
{
	time_t now = time(NULL);
	bitstr_t *part = job_ptr->part_ptr ? job_ptr->part_ptr->node_bitmap : NULL;
	bitstr_t *exc = job_ptr->details->exc_node_bitmap;

	/* what it could use once busy nodes free: its partition, not -x */
	for (int i = 0; i < ctx->node_cnt; i++) {
		int h = ctx->node_host[i];

		if (h >= 0)
			ctx->eligible[h] = (!part || bit_test(part, i)) &&
					   (!exc || !bit_test(exc, i));
	}
	req->eligible = ctx->eligible;

	req->now_s = (double) now;
	if (job_ptr->time_limit && job_ptr->time_limit != NO_VAL &&
	    job_ptr->time_limit != INFINITE)
		req->time_limit_s = 60.0 * job_ptr->time_limit;
	if (!job_ptr->req_switch && job_ptr->wait4switch_start)
		req->deferred_s = difftime(now, job_ptr->wait4switch_start);
}

/*
 * Fill the engine state from what cons_tres offers this job and build the
 * request. Returns 0, or -1 when the engine cannot express the request
 * (the reason remembered for the decision log, topognn_record_fallback).
 */
static int _build_request(topognn_ctx_t *ctx, topology_eval_t *topo_eval,
			  int max_groups, place_request *req)
{
	job_record_t *job_ptr = topo_eval->job_ptr;
	bitstr_t *req_map = job_ptr->details->req_node_bitmap;
	uint32_t nodes = _target_nodes(topo_eval);
	uint16_t max_cpus = 0;
	double t0 = _now_us();
	int position;

	topognn_state_sync(ctx);
	position = topognn_state_queue(ctx, job_ptr);
	topognn_telem_apply(ctx);
	memset(ctx->allowed, 0, ctx->host_cnt);
	for (int i = 0; i < ctx->node_cnt; i++) {
		avail_res_t *res = topo_eval->avail_res_array[i];
		int h = ctx->node_host[i];

		if (h < 0 || !bit_test(topo_eval->node_map, i) || !res ||
		    !res->avail_cpus)
			continue;
		ctx->allowed[h] = 1;
		max_cpus = MAX(max_cpus, res->avail_cpus);
	}

	memset(req, 0, sizeof(*req));
	req->job_id = job_ptr->job_id;
	req->queue_position = position;
	/* Jobs sized by CPUs (-n without -N) need enough hosts for them. */
	if (max_cpus && job_ptr->details->min_cpus != NO_VAL) {
		uint32_t by_cpus = (job_ptr->details->min_cpus + max_cpus - 1) /
				   max_cpus;
		if (by_cpus > nodes)
			nodes = by_cpus;
		if (topo_eval->max_nodes && nodes > topo_eval->max_nodes)
			nodes = topo_eval->max_nodes;
	}
	req->min_hosts = req->max_hosts = nodes;
	req->cores_per_host = 1;
	req->allowed = ctx->allowed;
	req->max_groups = max_groups;

	if (req_map) {
		int n = 0;

		for (int i = 0; next_node_bitmap(req_map, &i); i++) {
			if (i >= ctx->node_cnt || ctx->node_host[i] < 0) {
				topognn_record_fallback(job_ptr,
					"it requires node %s, which the graph lacks",
					node_record_table_ptr[i]->name);
				return -1;
			}
			ctx->required[n++] = ctx->node_host[i];
		}
		req->required = ctx->required;
		req->nrequired = n;
	}
	topognn_classify(&ctx->conf, job_ptr, nodes, &req->comm, NULL);
	_locality_fields(ctx, job_ptr, req);
	_prof(PROF_STATE, &t0);
	return 0;
}

/* Is the engine's choice its baseline, the tree choice? */
static bool _is_baseline(const place_decision *dec)
{
	if (dec->chosen.nhosts != dec->baseline.nhosts)
		return false;
	/* both in ascending host index */
	return !memcmp(dec->chosen.hosts, dec->baseline.hosts,
		       sizeof(int) * (size_t) dec->chosen.nhosts);
}

/*
 * Run the engine; remember the decision for the commit. Returns 0 (use the
 * engine's hosts), 1 (the engine chose the tree choice: topology/tree
 * allocates), -1 (no placement: tree allocates) or -2 (none within the
 * --switches limit).
 */
static int _decide(topognn_ctx_t *ctx, topology_eval_t *topo_eval,
		   int max_groups, place_decision *dec)
{
	bool tree;
	place_request req;
	topognn_job_decision_t rec = { 0 };
	int rc;

	double t0;

	if (_build_request(ctx, topo_eval, max_groups, &req))
		return -1;
	/* RuntimePrediction=yes: holds weigh the predicted run time
	 * (topognn_runtime.c); shadow mode: the baselines' choices first */
	if (ctx->conf.runtime_prediction)
		req.predicted_runtime_s = topognn_runtime_predict(topo_eval->job_ptr);
	if (ctx->conf.mode == TOPOGNN_MODE_SHADOW)
		topognn_shadow_decide(ctx, topo_eval->job_ptr, &req, &rec);
	t0 = _now_us();
	rc = place_decide(ctx->engine, ctx->state, &req, ctx->conf.policy,
			  PLACE_POLICY_TREE, dec);
	if (rc || !dec->ok) {
		if (req.max_groups)	/* the caller retries without */
			return -2;
		topognn_record_fallback(topo_eval->job_ptr,
					"the engine found no placement: %s",
					dec->reason);
		return -1;
	}
	_prof(PROF_ENGINE, &t0);
	tree = _is_baseline(dec);
	if (dec->deferred) {
		job_record_t *job_ptr = topo_eval->job_ptr;

		/*
		 * The deferral clock, in shadow mode too: there it times the
		 * hold the policy would have made, so that its later decisions
		 * are those it would make enforcing. Slurm reads the field only
		 * for --switches jobs (topology/tree, job_submit.lua), which
		 * are never deferred.
		 */
		if (!job_ptr->wait4switch_start) {
			job_ptr->wait4switch_start = time(NULL);
			/* once per job, for the admin asking why it waits */
			if (ctx->conf.mode == TOPOGNN_MODE_ENFORCE)
				info("%pJ: held for locality: %s", job_ptr,
				     dec->defer_why);
			else
				info("shadow %pJ: topognn would hold it for locality: %s",
				     job_ptr, dec->defer_why);
		}
		log_flag(SELECT_TYPE, "%pJ deferred for locality: %s",
			 job_ptr, dec->defer_why);
	}
	rec.job_id = topo_eval->job_ptr->job_id;
	rec.mode = ctx->conf.mode;
	/* "slurm-tree": the allocation is topology/tree's own */
	strlcpy(rec.kind, tree && ctx->conf.mode == TOPOGNN_MODE_ENFORCE ? "slurm-tree" :
		dec->chosen.kind ? dec->chosen.kind : "", sizeof(rec.kind));
	rec.ctx = ctx;
	rec.req = req;
	rec.dec = *dec;
	topognn_record_remember(&rec);
	_prof(PROF_RECORD, &t0);
	return tree ? 1 : 0;
}

/* Slurm node order to try: the engine's hosts, the rest of their groups,
 * the other groups in ranking order, unmapped nodes last. */
static int _trial_order(topognn_ctx_t *ctx, bitstr_t *cand,
			const place_choice *choice)
{
	int n = 0, g;

	memset(ctx->group_used, 0, ctx->group_cnt + 1);
	for (int k = 0; k < choice->nhosts; k++) {
		int i = ctx->host_node[choice->hosts[k]];

		if (i < 0 || !bit_test(cand, i))
			continue;
		ctx->order[n++] = i;
		bit_clear(cand, i);
		ctx->group_used[place_cluster_host_group(ctx->cluster,
							 choice->hosts[k])] = 1;
	}
	for (int pass = 0; pass < 2; pass++) {
		for (int h = 0; h < ctx->host_cnt; h++) {
			int i = ctx->host_node[h];

			if (i < 0 || !bit_test(cand, i))
				continue;
			g = place_cluster_host_group(ctx->cluster, h);
			if ((pass == 0) != (ctx->group_used[g] != 0))
				continue;
			ctx->order[n++] = i;
			bit_clear(cand, i);
		}
	}
	for (int i = 0; next_node_bitmap(cand, &i); i++)
		ctx->order[n++] = i;
	return n;
}

/* What the job still needs while nodes are taken (eval_nodes.c's rem_*). */
typedef struct {
	int cpus;		/* rem_cpus */
	int nodes;		/* rem_nodes */
	int min_nodes;		/* min_rem_nodes */
	int64_t max_cpus;	/* rem_max_cpus */
} need_t;

/* Node i joins the allocation with topo_eval->avail_cpus CPUs. */
static void _take_node(topology_eval_t *topo_eval, need_t *need, int i)
{
	need->cpus -= topo_eval->avail_cpus;
	need->max_cpus -= topo_eval->avail_cpus;
	need->nodes--;
	need->min_nodes--;
	topo_eval->max_nodes--;
	bit_set(topo_eval->node_map, i);
}

/*
 * Take nodes in trial order through Slurm's per-node helpers until the job
 * is satisfied; honour the group limit. Same bookkeeping as the generic
 * algorithms in src/plugins/topology/common/eval_nodes.c.
 */
static int _select_nodes(topognn_ctx_t *ctx, topology_eval_t *topo_eval,
			 const place_choice *choice, int max_groups)
{
	job_record_t *job_ptr = topo_eval->job_ptr;
	job_details_t *details_ptr = job_ptr->details;
	bitstr_t *req_map = details_ptr->req_node_bitmap;
	avail_res_t **avail_res_array = topo_eval->avail_res_array;
	bitstr_t *cand = bit_copy(topo_eval->node_map);
	need_t need;
	int used_groups = 0;
	uint64_t maxtasks;
	int n, rc = SLURM_ERROR;
	uint32_t min_nodes = topo_eval->min_nodes;
	uint32_t req_nodes = topo_eval->req_nodes;

	topo_eval->avail_cpus = 0;
	need.cpus = details_ptr->min_cpus;
	need.min_nodes = min_nodes;
	if ((topo_eval->gres_per_job = gres_sched_init(job_ptr->gres_list_req)))
		need.nodes = MIN(min_nodes, req_nodes);
	else
		need.nodes = MAX(min_nodes, req_nodes);
	need.max_cpus = eval_nodes_get_rem_max_cpus(details_ptr, need.nodes);
	maxtasks = eval_nodes_set_max_tasks(job_ptr, need.max_cpus,
					    topo_eval->max_nodes);

	bit_clear_all(topo_eval->node_map);
	memset(ctx->group_used, 0, ctx->group_cnt + 1);

	/* Required nodes (-w) first. */
	for (int i = 0; req_map && next_node_bitmap(req_map, &i); i++) {
		int g = topognn_node_group(ctx, i);

		if (!bit_test(cand, i) || !avail_res_array[i] ||
		    !avail_res_array[i]->avail_cpus ||
		    topo_eval->max_nodes <= 0)
			goto fini;
		eval_nodes_select_cores(topo_eval, i, need.min_nodes);
		(void) eval_nodes_cpus_to_use(topo_eval, i, need.max_cpus,
					      need.min_nodes, &maxtasks, true);
		if (topo_eval->avail_cpus <= 0)
			goto fini;
		_take_node(topo_eval, &need, i);
		bit_clear(cand, i);
		g = (g < 0) ? ctx->group_cnt : g;
		if (!ctx->group_used[g]++)
			used_groups++;
	}

	n = _trial_order(ctx, cand, choice);
	memset(ctx->group_used, 0, ctx->group_cnt + 1);
	for (int i = 0; next_node_bitmap(topo_eval->node_map, &i); i++) {
		int g = topognn_node_group(ctx, i);
		ctx->group_used[(g < 0) ? ctx->group_cnt : g] = 1;
	}

	for (int k = 0; k < n; k++) {
		int i = ctx->order[k], g;
		node_record_t *node_ptr = node_record_table_ptr[i];

		if ((need.nodes <= 0) && (need.cpus <= 0) &&
		    gres_sched_test(job_ptr->gres_list_req, job_ptr->job_id))
			break;
		if (topo_eval->max_nodes <= 0)
			break;
		g = topognn_node_group(ctx, i);
		g = (g < 0) ? ctx->group_cnt : g;
		if (max_groups && !ctx->group_used[g] &&
		    used_groups >= max_groups)
			continue;
		if (!avail_res_array[i] || !avail_res_array[i]->avail_cpus)
			continue;
		eval_nodes_select_cores(topo_eval, i, need.min_nodes);
		(void) eval_nodes_cpus_to_use(topo_eval, i, need.max_cpus,
					      need.min_nodes, NULL, false);
		if (topo_eval->avail_cpus == 0)
			continue;
		if (job_ptr->gres_list_req &&
		    !eval_nodes_gres(topo_eval, &maxtasks, job_ptr, node_ptr,
				     need.min_nodes, i, 0))
			continue;
		_take_node(topo_eval, &need, i);
		if (!ctx->group_used[g]) {
			ctx->group_used[g] = 1;
			used_groups++;
		}
	}
	if ((need.cpus <= 0) && (need.min_nodes <= 0) &&
	    gres_sched_test(job_ptr->gres_list_req, job_ptr->job_id))
		rc = SLURM_SUCCESS;

fini:
	if (rc == SLURM_SUCCESS)
		eval_nodes_clip_socket_cores(topo_eval);
	FREE_NULL_BITMAP(cand);
	return rc;
}

/* topology/tree's own evaluation (topognn_tree.c), timed. */
static int _tree(topology_eval_t *topo_eval)
{
	double t0 = _now_us();
	int rc = topognn_tree_eval(topo_eval);

	_prof(PROF_TREE, &t0);
	return rc;
}

static int _shadow(topology_eval_t *topo_eval)
{
	topognn_ctx_t *ctx = topognn_ctx;
	place_decision dec;

	if (ctx)
		(void) _decide(ctx, topo_eval, 0, &dec);
	return _tree(topo_eval);
}

static int _enforce(topology_eval_t *topo_eval)
{
	topognn_ctx_t *ctx = topognn_ctx;
	job_record_t *job_ptr = topo_eval->job_ptr;
	place_decision dec;
	bitstr_t *orig_node_map;
	bitstr_t **orig_core;
	uint32_t orig_max_nodes = topo_eval->max_nodes;
	uint16_t orig_avail_cpus = topo_eval->avail_cpus;
	int rc, max_groups;

	double t0;

	if (!ctx)
		return _tree(topo_eval);
	if (job_ptr->details->contiguous) {
		topognn_record_fallback(job_ptr, "contiguous jobs are placed by Slurm");
		return _tree(topo_eval);
	}

	/*
	 * --switches=N[@time]: as topology/tree does, an allocation over more
	 * groups than asked is still returned, but with best_switch false, so
	 * that cons_tres keeps the job waiting (and the submission is valid).
	 */
	max_groups = _max_groups(job_ptr);
	if (!job_ptr->req_switch)
		job_ptr->best_switch = true; /* unless deferred below */
	rc = _decide(ctx, topo_eval, max_groups, &dec);
	if (rc == -2) {
		max_groups = 0;
		rc = _decide(ctx, topo_eval, 0, &dec);
		job_ptr->best_switch = false;
	} else if (job_ptr->req_switch) {
		job_ptr->best_switch = true;
	} else if (rc >= 0 && dec.deferred) {
		/*
		 * LocalityWait: the same answer as topology/tree gives a
		 * --switches job still within its wait: the allocation, with
		 * best_switch false, so cons_tres keeps the job pending.
		 */
		job_ptr->best_switch = false;
	}
	if (rc) /* 1: the tree choice; -1: no placement */
		return _tree(topo_eval);

	t0 = _now_us();
	orig_node_map = bit_copy(topo_eval->node_map);
	orig_core = copy_core_array(topo_eval->avail_core);
	rc = _select_nodes(ctx, topo_eval, &dec.chosen, max_groups);
	_prof(PROF_SELECT, &t0);
	if (rc == SLURM_SUCCESS) {
		if (slurm_conf.debug_flags & DEBUG_FLAG_SELECT_TYPE) {
			char *names = bitmap2node_name(topo_eval->node_map);
			info("%pJ: %s (%s, %d groups, cost %.3g)",
			     job_ptr, names, dec.chosen.kind,
			     dec.chosen.groups, dec.chosen.cost);
			xfree(names);
		}
	} else {
		topognn_record_fallback(job_ptr,
			"the engine's %s choice is not usable under Slurm's per-node rules (cores, memory, GRES)",
			dec.chosen.kind ? dec.chosen.kind : "");
		/* Hand Slurm back what it offered. */
		bit_copybits(topo_eval->node_map, orig_node_map);
		for (int i = 0; i < node_record_count; i++) {
			if (!topo_eval->avail_core[i] || !orig_core[i])
				continue;
			bit_copybits(topo_eval->avail_core[i], orig_core[i]);
		}
		topo_eval->max_nodes = orig_max_nodes;
		topo_eval->avail_cpus = orig_avail_cpus;
		rc = _tree(topo_eval);
	}
	FREE_NULL_BITMAP(orig_node_map);
	free_core_array(&orig_core);
	return rc;
}

/* fn, its time counted in the eval profile */
static int _timed(int (*fn)(topology_eval_t *), topology_eval_t *topo_eval)
{
	double t0 = _now_us();
	int rc = fn(topo_eval);

	_prof_eval_done(t0);
	return rc;
}

static int _eval_enforce(topology_eval_t *topo_eval)
{
	return _timed(_enforce, topo_eval);
}

/* Mode=off: topology/tree's evaluation on the graph's fabric, nothing else
 * (--switches is honoured as under topology/tree). */
static int _eval_tree(topology_eval_t *topo_eval)
{
	return _tree(topo_eval);
}

static int _eval_shadow(topology_eval_t *topo_eval)
{
	return _timed(_shadow, topo_eval);
}

/* --segment (25.05+): topology/topognn, as topology/tree, has no segments;
 * said once per job in slurmctld's log. */
static void _segment_note(job_record_t *job_ptr)
{
	static uint32_t logged_job; /* evaluations are serialised */
	uint16_t seg = topognn_compat_segment(job_ptr);

	if (!seg || logged_job == job_ptr->job_id)
		return;
	logged_job = job_ptr->job_id;
	info("%pJ: --segment=%u ignored: topology/topognn, as topology/tree, has no segments (topology/block's)",
	     job_ptr, seg);
}

extern int topognn_eval(topology_eval_t *topo_eval)
{
	topognn_ctx_t *ctx = topognn_ctx;
	topognn_mode_t mode;

	if (ctx && ctx->node_cnt != node_record_count) {
		/* The node table changed under us (scontrol reconfigure with
		 * new nodes): generic selection until build_config runs. */
		ctx = NULL;
	}
	mode = ctx ? ctx->conf.mode : TOPOGNN_MODE_OFF;
	/*
	 * No graph (it failed to load, Mode=off without GraphFile=, or a stale
	 * node table): no switch is known, so a --switches limit cannot be
	 * checked. As topology/tree does for an allocation over too many
	 * switches, the generic selection's allocation is returned with
	 * best_switch false: cons_tres keeps the job waiting (the submission
	 * stays valid) until its @time runs out.
	 */
	if (!ctx && topo_eval->job_ptr->req_switch) {
		static uint32_t logged_job; /* evaluations are serialised */
		job_record_t *job_ptr = topo_eval->job_ptr;
		bool wait = _max_groups(job_ptr) != 0;

		if (wait && logged_job != job_ptr->job_id)
			info("%pJ: --switches=%u cannot be checked without the graph: the job waits for its switch limit's time",
			     job_ptr, job_ptr->req_switch);
		if (wait)
			logged_job = job_ptr->job_id;
		job_ptr->best_switch = !wait;
	}
	_segment_note(topo_eval->job_ptr);
	/* TopologyParam=TopoOptional: topology only for --switches jobs;
	 * tree's evaluation then gives the others Slurm's selection. */
	if (ctx && !topo_eval->job_ptr->req_switch &&
	    xstrcasestr(slurm_conf.topology_param, "TopoOptional"))
		mode = TOPOGNN_MODE_OFF;
	switch (mode) {
	case TOPOGNN_MODE_ENFORCE:
		topo_eval->eval_nodes = _eval_enforce;
		break;
	case TOPOGNN_MODE_SHADOW:
		topo_eval->eval_nodes = _eval_shadow;
		break;
	case TOPOGNN_MODE_OFF:
		topo_eval->eval_nodes = ctx ? _eval_tree : NULL;
		break;
	default:
		topo_eval->eval_nodes = NULL;
		break;
	}
	topo_eval->trump_others = false;
	return common_topo_choose_nodes(topo_eval);
}
