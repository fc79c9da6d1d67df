/*****************************************************************************\
 *  topognn_jobs.c - slurmctld's nodes and running jobs in the engine's state.
 *
 *  The scorer (place_model, the GNN) prices a candidate by the traffic
 *  already on the fabric and by how many idle hosts each group keeps. That
 *  needs the running jobs: prep/topognn calls topognn_state_job_start()
 *  when a job starts (prolog_slurmctld, the allocation Slurm really made)
 *  and topognn_state_job_end() when it ends (epilog_slurmctld). A fresh
 *  context (slurmctld start or restart, scontrol reconfigure) has missed
 *  the starts, so the first evaluation or commit walks job_list once.
 *
 *  Hosts are set from the node table (flags, CPUs, GPUs) and only when one
 *  of those changed, so the state version (which scorers cache on) moves
 *  with real state changes, not with every evaluation. What one job may use
 *  is Slurm's node_map, passed to the engine as place_request.allowed.
\*****************************************************************************/

#define _GNU_SOURCE
#include <dlfcn.h>
#include <time.h>

#include "src/common/slurm_xlator.h"

#include "src/common/bitstring.h"
#include "src/common/job_resources.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/interfaces/gres.h"
#include "src/slurmctld/slurmctld.h"

#include "topognn.h"

/*
 * slurmctld's job_list. It is a variable of the slurmctld binary, not of
 * libslurm, and slurmd, slurmstepd and the clients load this plugin too: a
 * direct reference (a data relocation, resolved at dlopen even with lazy
 * binding) would make the plugin fail to load there. So it is looked up at
 * run time, in slurmctld only.
 */
extern list_t *topognn_job_list(void)
{
	list_t **jl;

	if (!running_in_slurmctld())
		return NULL;
	jl = dlsym(RTLD_DEFAULT, "job_list");
	return jl ? *jl : NULL;
}

static unsigned _node_flags(node_record_t *node_ptr)
{
	unsigned flags = 0;

	if (IS_NODE_DOWN(node_ptr) || IS_NODE_NO_RESPOND(node_ptr) ||
	    IS_NODE_FUTURE(node_ptr))
		flags |= PLACE_HOST_DOWN;
	if (IS_NODE_DRAIN(node_ptr))
		flags |= PLACE_HOST_DRAIN;
	return flags;
}

/* Set host h from its node; "free" is its capacity: running jobs are
 * counted by place_state_add_job, and what is free for one job is Slurm's
 * node_map. */
static void _set_host(topognn_ctx_t *ctx, int h, bool force)
{
	int i = ctx->host_node[h];
	node_record_t *node_ptr = (i >= 0) ? node_record_table_ptr[i] : NULL;
	unsigned flags = node_ptr ? _node_flags(node_ptr) : PLACE_HOST_DOWN;
	int cpus = node_ptr ? node_ptr->cpus : 0;
	int gpus = 0;

	if (node_ptr && node_ptr->gres_list)
		gpus = (int) gres_node_config_cnt(node_ptr->gres_list, "gpu");
	if (!force && flags == ctx->host_flags_set[h] &&
	    cpus == ctx->host_cpus_set[h] && gpus == ctx->host_gpus_set[h])
		return;
	place_state_set_host(ctx->state, h, gpus, gpus, cpus, cpus, flags);
	ctx->host_flags_set[h] = flags;
	ctx->host_cpus_set[h] = cpus;
	ctx->host_gpus_set[h] = gpus;
}

/* The job's mapped hosts into ctx->job_hosts; returns their count. */
static int _job_hosts(topognn_ctx_t *ctx, job_record_t *job_ptr)
{
	int n = 0;

	if (!job_ptr->node_bitmap)
		return 0;
	for (int i = 0; next_node_bitmap(job_ptr->node_bitmap, &i); i++) {
		if (i < ctx->node_cnt && ctx->node_host[i] >= 0)
			ctx->job_hosts[n++] = ctx->node_host[i];
	}
	return n;
}

/* Add a job's hosts and traffic; replaces an earlier entry (requeue,
 * resize). Its hosts' capacity is set back afterwards (see _set_host). */
static bool _add_job(topognn_ctx_t *ctx, job_record_t *job_ptr)
{
	job_resources_t *res = job_ptr->job_resrcs;
	uint32_t nodes;
	place_comm comm;
	int n, cpus;

	if (!place_state_remove_job(ctx->state, job_ptr->job_id))
		ctx->state_jobs--;
	if (!(n = _job_hosts(ctx, job_ptr)))
		return false;
	nodes = bit_set_count(job_ptr->node_bitmap);
	topognn_classify(&ctx->conf, job_ptr, nodes, &comm, NULL);
	cpus = (res && res->cpus && res->nhosts) ? res->cpus[0] : 1;
	if (place_state_add_job(ctx->state, job_ptr->job_id, ctx->job_hosts,
				n, 0, MAX(cpus, 1), &comm)) {
		debug("%pJ: not added to the engine's state", job_ptr);
		return false;
	}
	ctx->state_jobs++;
	/* its time limit (RuntimePrediction=yes: its predicted end): when a
	 * deferred heavy job may expect its hosts */
	if (job_ptr->end_time)
		(void) place_state_set_job_end(ctx->state, job_ptr->job_id,
					       ctx->conf.runtime_prediction ?
					       topognn_runtime_expected_end(job_ptr, time(NULL)) :
					       (double) job_ptr->end_time);
	for (int k = 0; k < n; k++)
		_set_host(ctx, ctx->job_hosts[k], true);
	debug2("%pJ in the engine's state: %d hosts, class %s",
	       job_ptr, n, place_comm_class_name(comm.cls));
	return true;
}

static int _sync_job(void *x, void *arg)
{
	job_record_t *job_ptr = x;
	int *added = arg;

	if ((IS_JOB_RUNNING(job_ptr) || IS_JOB_SUSPENDED(job_ptr)) &&
	    job_ptr->node_bitmap) {
		if (_add_job(topognn_ctx, job_ptr))
			(*added)++;
	}
	return 0;
}

static int _refresh_end(void *x, void *arg)
{
	job_record_t *job_ptr = x;
	time_t *now = arg;

	if (IS_JOB_RUNNING(job_ptr) && job_ptr->node_bitmap && job_ptr->end_time)
		(void) place_state_set_job_end(topognn_ctx->state, job_ptr->job_id,
					       topognn_runtime_expected_end(job_ptr, *now));
	return 0;
}

/*
 * RuntimePrediction=yes: a running job's expected end is its start plus
 * its predicted run time; one that outlives its prediction is expected to
 * run as long again as it has run (as topognn-sim does). Brought up to date
 * every few seconds, not at every evaluation.
 */
static void _refresh_ends(topognn_ctx_t *ctx)
{
	static time_t last;
	time_t now = time(NULL);
	list_t *jobs;

	if (!ctx->conf.runtime_prediction || ctx != topognn_ctx || now - last < 5 ||
	    !(jobs = topognn_job_list()))
		return;
	last = now;
	list_for_each(jobs, _refresh_end, &now);
}

extern void topognn_state_sync(topognn_ctx_t *ctx)
{
	if (!ctx || !ctx->state || ctx->node_cnt != node_record_count)
		return;
	_refresh_ends(ctx);
	for (int h = 0; h < ctx->host_cnt; h++)
		_set_host(ctx, h, false);
	if (!ctx->jobs_synced && ctx == topognn_ctx) {
		list_t *jobs = topognn_job_list();
		int added = 0;

		ctx->jobs_synced = true;
		if (!jobs) {
			error("slurmctld's job_list not found: the engine state starts without the running jobs");
			return;
		}
		list_for_each(jobs, _sync_job, &added);
		info("engine state rebuilt from slurmctld: %d running jobs",
		     added);
	}
}

extern bool topognn_state_job_start(topognn_ctx_t *ctx, job_record_t *job_ptr)
{
	if (!ctx || !ctx->state || ctx->node_cnt != node_record_count)
		return false;
	if (!ctx->jobs_synced)
		topognn_state_sync(ctx);
	return _add_job(ctx, job_ptr);
}

extern void topognn_state_job_end(topognn_ctx_t *ctx, job_record_t *job_ptr)
{
	int n;

	if (!ctx || !ctx->state || ctx->node_cnt != node_record_count)
		return;
	if (place_state_remove_job(ctx->state, job_ptr->job_id))
		return;
	ctx->state_jobs--;
	n = _job_hosts(ctx, job_ptr);
	for (int k = 0; k < n; k++)
		_set_host(ctx, ctx->job_hosts[k], true);
	debug2("%pJ left the engine's state", job_ptr);
}
