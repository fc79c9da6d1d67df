/*****************************************************************************\
 *  topognn_record.c - decisions that became allocations.
 *
 *  An evaluation is not an allocation (test-only, will-run and preemption
 *  passes evaluate too), so eval only remembers a job's latest decision in
 *  a small table. When the job really starts, prep/topognn calls
 *  topognn_job_commit(): it writes the commit line to the DecisionLog
 *  (place_record_write_commit(), the one writer of decision logs) with the
 *  allocation Slurm really made next to what topognn chose and what the
 *  baseline would have chosen, logs the shadow-mode comparison, and hands
 *  the node side its plan through the job's spank_job_env
 *  (TOPOGNN_GROUPS, TOPOGNN_PLAN; SPANK_TOPOGNN_* in prolog/epilog).
\*****************************************************************************/

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "src/common/slurm_xlator.h"

#include "src/common/bitstring.h"
#include "src/common/hostlist.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "place_record.h"
#include "topognn.h"

#define DECISION_SLOTS 1024

static topognn_job_decision_t decisions[DECISION_SLOTS];
static pthread_mutex_t decisions_lock = PTHREAD_MUTEX_INITIALIZER;

static void _decision_clear(topognn_job_decision_t *d)
{
	xfree(d->hosts);
	memset(d, 0, sizeof(*d));
}

/* Point *arr at the next n ints of *p, holding a copy of src. */
static void _take_hosts(int **p, const int **arr, const int *src, int n)
{
	if (n > 0 && src)
		memcpy(*p, src, sizeof(int) * (size_t) n);
	*arr = n > 0 ? *p : NULL;
	*p += MAX(n, 0);
}

static void _take_choice(int **p, place_choice *c)
{
	if (c->nhosts > 0 && c->hosts)
		memcpy(*p, c->hosts, sizeof(int) * (size_t) c->nhosts);
	c->hosts = c->nhosts > 0 ? *p : NULL;
	*p += MAX(c->nhosts, 0);
}

extern void topognn_record_remember(const topognn_job_decision_t *d)
{
	topognn_job_decision_t *slot = &decisions[d->job_id % DECISION_SLOTS];
	const place_decision *dc = &d->dec;
	int need = d->req.nrequired + d->req.nexcluded + dc->chosen.nhosts +
		   dc->baseline.nhosts, *hosts, cap, *p;

	for (int a = 0; a < dc->nalternatives; a++)
		need += dc->alternatives[a].nhosts;
	for (int i = 0; i < d->nshadow; i++)
		need += d->shadow[i].nhosts;
	slurm_mutex_lock(&decisions_lock);
	hosts = slot->hosts;
	cap = slot->hosts_cap;
	if (need > cap) {
		cap = MAX(need, 2 * cap);
		xrecalloc(hosts, cap, sizeof(int));
	}
	*slot = *d; /* the pointers still point at the engine's arrays */
	slot->hosts = hosts;
	slot->hosts_cap = cap;
	slot->req.allowed = NULL;
	p = hosts;
	_take_hosts(&p, &slot->req.required, d->req.required, d->req.nrequired);
	_take_hosts(&p, &slot->req.excluded, d->req.excluded, d->req.nexcluded);
	_take_choice(&p, &slot->dec.chosen);
	_take_choice(&p, &slot->dec.baseline);
	for (int a = 0; a < dc->nalternatives; a++)
		_take_choice(&p, &slot->dec.alternatives[a]);
	for (int i = 0; i < d->nshadow; i++)
		_take_choice(&p, &slot->shadow[i]);
	slurm_mutex_unlock(&decisions_lock);
}

/* Ranged Slurm node names of a choice's hosts. */
static char *_hosts_to_nodes(const topognn_ctx_t *ctx, const place_choice *c)
{
	bitstr_t *bm = bit_alloc(MAX(ctx->node_cnt, 1));
	char *names;

	for (int k = 0; k < c->nhosts; k++) {
		int n = ctx->host_node[c->hosts[k]];

		if (n >= 0)
			bit_set(bm, n);
	}
	names = bitmap2node_name(bm);
	FREE_NULL_BITMAP(bm);
	return names;
}

extern void topognn_record_fallback(job_record_t *job_ptr, const char *fmt, ...)
{
	static uint32_t last_job;
	static char last_reason[sizeof(((topognn_job_decision_t *) 0)->fallback)];
	topognn_job_decision_t d = { 0 };
	bool again;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d.fallback, sizeof(d.fallback), fmt, ap);
	va_end(ap);
	d.job_id = job_ptr->job_id;
	topognn_record_remember(&d);

	slurm_mutex_lock(&decisions_lock);
	again = last_job == d.job_id && !xstrcmp(last_reason, d.fallback);
	last_job = d.job_id;
	strlcpy(last_reason, d.fallback, sizeof(last_reason));
	slurm_mutex_unlock(&decisions_lock);
	if (again)
		debug("%pJ: Slurm's generic selection: %s", job_ptr, d.fallback);
	else
		info("%pJ: Slurm's generic selection: %s", job_ptr, d.fallback);
}

/* Move a job's decision out of the table; false if none is remembered. */
static bool _decision_take(uint32_t job_id, topognn_job_decision_t *out)
{
	topognn_job_decision_t *slot = &decisions[job_id % DECISION_SLOTS];
	bool found = false;

	slurm_mutex_lock(&decisions_lock);
	if (slot->job_id == job_id && job_id) {
		*out = *slot;
		memset(slot, 0, sizeof(*slot));
		found = true;
	}
	slurm_mutex_unlock(&decisions_lock);
	return found;
}

extern void topognn_record_fini(void)
{
	slurm_mutex_lock(&decisions_lock);
	for (int i = 0; i < DECISION_SLOTS; i++)
		_decision_clear(&decisions[i]);
	slurm_mutex_unlock(&decisions_lock);
}

/* Set (replacing) NAME=value in the job's spank_job_env. */
static void _job_setenv(job_record_t *job_ptr, const char *name,
			const char *value)
{
	size_t len = strlen(name);
	char *entry = xstrdup_printf("%s=%s", name, value);

	for (uint32_t i = 0; i < job_ptr->spank_job_env_size; i++) {
		char *e = job_ptr->spank_job_env[i];

		if (e && !strncmp(e, name, len) && e[len] == '=') {
			xfree(job_ptr->spank_job_env[i]);
			job_ptr->spank_job_env[i] = entry;
			return;
		}
	}
	xrecalloc(job_ptr->spank_job_env, job_ptr->spank_job_env_size + 1,
		  sizeof(char *));
	job_ptr->spank_job_env[job_ptr->spank_job_env_size++] = entry;
}

/* Write the commit line; a log that cannot be written is reported at most
 * once a minute (every job start would repeat it). */
static void _write_commit(const char *path, const place_commit *cm)
{
	static time_t last;
	topo_error err;
	char buf[512];

	if (!place_record_write_commit(path, cm, &err))
		return;
	if (time(NULL) - last > 60) {
		error("DecisionLog %s", topo_error_format(&err, buf, sizeof(buf)));
		last = time(NULL);
	}
}

/* Shadow mode: the baselines' choices as the commit line names them
 * (nodes[i] xmalloc'd, the caller frees). Returns how many. */
static int _shadow_choices(const topognn_ctx_t *ctx, const topognn_job_decision_t *dec,
			   place_shadow_choice *out, char **nodes)
{
	for (int i = 0; i < dec->nshadow && i < TOPOGNN_SHADOW_MAX; i++) {
		out[i].policy = topognn_shadow_policy[i];
		out[i].hold = dec->shadow_hold[i];
		out[i].groups = dec->shadow[i].groups;
		out[i].expected_wait_s = dec->shadow_wait[i];
		nodes[i] = dec->shadow_hold[i] ? NULL : _hosts_to_nodes(ctx, &dec->shadow[i]);
		out[i].nodes = nodes[i];
	}
	return dec->nshadow;
}

/* How long the job waited: start - the time it became eligible (Slurm keeps
 * that in begin_time), else its submit time. */
static void _commit_wait(job_record_t *job_ptr, place_commit *cm)
{
	time_t from = 0;

	if (job_ptr->details)
		from = job_ptr->details->begin_time ? job_ptr->details->begin_time :
						      job_ptr->details->submit_time;
	if (!from || !job_ptr->start_time || job_ptr->start_time < from)
		return;
	cm->has_wait = 1;
	cm->wait_s = difftime(job_ptr->start_time, from);
}

extern int topognn_job_commit(job_record_t *job_ptr)
{
	topognn_ctx_t *ctx;
	topognn_job_decision_t dec = { 0 };
	bool have_dec;
	hostlist_t *groups_hl = NULL;
	char *plan = NULL, *groups = NULL, *chosen = NULL, *baseline = NULL;
	char *shadow_nodes[TOPOGNN_SHADOW_MAX] = { NULL };
	place_shadow_choice shadow[TOPOGNN_SHADOW_MAX];
	const char **group_names, *sharp;
	place_commit cm = { 0 };

	if (!job_ptr || !job_ptr->node_bitmap)
		return SLURM_SUCCESS;
	have_dec = _decision_take(job_ptr->job_id, &dec);

	slurm_rwlock_rdlock(&topognn_lock);
	ctx = topognn_ctx;
	if (!ctx || ctx->node_cnt != node_record_count ||
	    ctx->conf.mode == TOPOGNN_MODE_OFF) {
		slurm_rwlock_unlock(&topognn_lock);
		_decision_clear(&dec);
		return SLURM_SUCCESS;
	}

	/* The allocation Slurm really made, group by group. */
	groups_hl = hostlist_create(NULL);
	group_names = xcalloc(ctx->group_cnt + 1, sizeof(*group_names));
	for (int g = 0; g < ctx->group_cnt; g++) {
		bitstr_t *bm;
		char *names;

		if (!bit_overlap_any(ctx->group_bitmap[g], job_ptr->node_bitmap))
			continue;
		bm = bit_copy(ctx->group_bitmap[g]);
		bit_and(bm, job_ptr->node_bitmap);
		names = bitmap2node_name(bm);
		xstrfmtcat(plan, "%s%s:%s", plan ? ";" : "", ctx->group_name[g],
			   names);
		hostlist_push_host(groups_hl, ctx->group_name[g]);
		group_names[cm.ngroups++] = ctx->group_name[g];
		xfree(names);
		FREE_NULL_BITMAP(bm);
	}
	if (bit_overlap_any(ctx->unmapped_bitmap, job_ptr->node_bitmap)) {
		bitstr_t *bm = bit_copy(ctx->unmapped_bitmap);
		char *names;

		bit_and(bm, job_ptr->node_bitmap);
		names = bitmap2node_name(bm);
		xstrfmtcat(plan, "%sunmapped:%s", plan ? ";" : "", names);
		xfree(names);
		FREE_NULL_BITMAP(bm);
	}
	if ((sharp = topognn_plan_sharp(ctx, job_ptr)))
		xstrfmtcat(plan, "%s%s", plan ? ";" : "", sharp);
	for (int s = 0; s < ctx->switch_cnt; s++) {
		if (ctx->switch_level[s] == 0 &&
		    bit_overlap_any(ctx->switch_bitmap[s],
				    job_ptr->node_bitmap))
			cm.leaves++;
	}
	groups = hostlist_count(groups_hl) ?
		 hostlist_ranged_string_xmalloc(groups_hl) : xstrdup("");
	hostlist_destroy(groups_hl);

	/* The decision log's commit line (place_record.h) */
	cm.job_id = job_ptr->job_id;
	cm.name = job_ptr->name;
	cm.mode = topognn_mode_name(ctx->conf.mode);
	cm.nodes = job_ptr->nodes;
	cm.node_count = bit_set_count(job_ptr->node_bitmap);
	cm.groups = group_names;
	/* Other jobs whose load the engine's state holds (after a restart:
	 * rebuilt from job_list); then this one joins them. */
	cm.running_jobs = topognn_state_job_start(ctx, job_ptr) ?
			  ctx->state_jobs - 1 : ctx->state_jobs;
	cm.policy = place_policy_name(ctx->conf.policy);
	_commit_wait(job_ptr, &cm);
	if (have_dec && dec.fallback[0]) {
		cm.fallback = dec.fallback;
	} else if (have_dec && dec.ctx == ctx) {
		/* a decision made on another context (reconfigured since)
		 * names hosts of another graph: not reported */
		chosen = _hosts_to_nodes(ctx, &dec.dec.chosen);
		baseline = _hosts_to_nodes(ctx, &dec.dec.baseline);
		cm.cluster = ctx->cluster;
		cm.req = &dec.req;
		cm.dec = &dec.dec;
		cm.scorer = cm.policy;
		cm.kind = dec.kind;
		cm.chosen_nodes = chosen;
		cm.baseline_nodes = baseline;
		if (ctx->conf.policy == PLACE_POLICY_GNN)
			cm.model = ctx->conf.model_file;
		cm.nshadow = _shadow_choices(ctx, &dec, shadow, shadow_nodes);
		cm.shadow = shadow;
	} else {
		cm.fallback = "topognn has no evaluation of this job (not evaluated since slurmctld started, or overwritten in its table)";
	}

	if (ctx->conf.mode == TOPOGNN_MODE_SHADOW && chosen) {
		info("shadow %pJ: slurm chose %s (%d groups), topognn would choose %s (%d groups, cost %.4g; baseline cost %.4g)",
		     job_ptr, job_ptr->nodes, cm.ngroups, chosen,
		     dec.dec.chosen.groups, dec.dec.chosen.cost,
		     dec.dec.baseline.cost);
	}
	if (ctx->conf.decision_log)
		_write_commit(ctx->conf.decision_log, &cm);
	slurm_rwlock_unlock(&topognn_lock);

	_job_setenv(job_ptr, "TOPOGNN_GROUPS", groups);
	if (plan)
		_job_setenv(job_ptr, "TOPOGNN_PLAN", plan);
	debug("%pJ committed: %s groups=%s", job_ptr,
	      job_ptr->nodes, groups);
	xfree(group_names);
	xfree(plan);
	xfree(groups);
	xfree(chosen);
	xfree(baseline);
	for (int i = 0; i < TOPOGNN_SHADOW_MAX; i++)
		xfree(shadow_nodes[i]);
	_decision_clear(&dec);
	return SLURM_SUCCESS;
}

/* The decision log's end event of a job that ran (elapsed: end - start),
 * for placement-report's realised outcomes. */
static void _write_end(const topognn_ctx_t *ctx, job_record_t *job_ptr)
{
	static time_t last;
	topo_error err;
	char buf[512];

	if (!ctx || !ctx->conf.decision_log || ctx->conf.mode == TOPOGNN_MODE_OFF ||
	    !job_ptr->start_time || job_ptr->end_time < job_ptr->start_time)
		return;
	if (!place_record_write_end_path(ctx->conf.decision_log, job_ptr->job_id,
					 (double) job_ptr->end_time,
					 difftime(job_ptr->end_time, job_ptr->start_time),
					 NAN, &err))
		return;
	if (time(NULL) - last > 60) {
		error("DecisionLog %s", topo_error_format(&err, buf, sizeof(buf)));
		last = time(NULL);
	}
}

extern int topognn_job_end(job_record_t *job_ptr)
{
	if (!job_ptr)
		return SLURM_SUCCESS;
	slurm_rwlock_rdlock(&topognn_lock);
	topognn_state_job_end(topognn_ctx, job_ptr);
	_write_end(topognn_ctx, job_ptr);
	slurm_rwlock_unlock(&topognn_lock);
	topognn_runtime_job_end(job_ptr);
	return SLURM_SUCCESS;
}
