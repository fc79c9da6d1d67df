/*****************************************************************************\
 *  topognn_record.c - decisions that became allocations.
 *
 *  An evaluation is not an allocation (test-only, will-run and preemption
 *  passes evaluate too), so eval only remembers a job's latest decision in
 *  a small table. When the job really starts, prep/topognn calls
 *  topognn_job_commit(): it writes one JSON line to the DecisionLog with the
 *  allocation Slurm really made next to what topognn chose and what the
 *  baseline would have chosen, logs the shadow-mode comparison, and hands
 *  the node side its plan through the job's spank_job_env
 *  (TOPOGNN_GROUPS, TOPOGNN_PLAN; SPANK_TOPOGNN_* in prolog/epilog).
\*****************************************************************************/

#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

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

static void _append_line(const char *path, const char *line)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	size_t len = strlen(line);

	if (fd < 0) {
		static time_t last;
		if (time(NULL) - last > 60) {
			error("DecisionLog %s: %m", path);
			last = time(NULL);
		}
		return;
	}
	if (write(fd, line, len) != (ssize_t) len)
		error("DecisionLog %s: short write: %m", path);
	close(fd);
}

static json_t *_choice_json(const char *policy, const char *nodes,
			    const char *kind, int groups, int leaves,
			    double cost)
{
	json_t *o = json_object();

	json_object_set_new(o, "policy", json_string(policy));
	json_object_set_new(o, "nodes", json_string(nodes ? nodes : ""));
	if (kind)
		json_object_set_new(o, "kind", json_string(kind));
	json_object_set_new(o, "groups", json_integer(groups));
	if (leaves >= 0)
		json_object_set_new(o, "leaves", json_integer(leaves));
	json_object_set_new(o, "cost", json_real(cost));
	return o;
}

extern int topognn_job_commit(job_record_t *job_ptr)
{
	topognn_ctx_t *ctx;
	topognn_job_decision_t dec = { 0 };
	bool have_dec;
	hostlist_t *groups_hl = NULL;
	char *plan = NULL, *groups = NULL, *chosen = NULL, *baseline = NULL;
	const char *sharp;
	int ngroups = 0, nleaves = 0, others;
	json_t *rec, *arr;
	char *line;

	if (!job_ptr || !job_ptr->node_bitmap)
		return SLURM_SUCCESS;
	have_dec = _decision_take(job_ptr->job_id, &dec);

	slurm_rwlock_rdlock(&topognn_lock);
	ctx = topognn_ctx;
	if (!ctx || ctx->node_cnt != node_record_count) {
		slurm_rwlock_unlock(&topognn_lock);
		_decision_clear(&dec);
		return SLURM_SUCCESS;
	}

	/* The allocation Slurm really made, group by group. */
	groups_hl = hostlist_create(NULL);
	arr = json_array();
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
		json_array_append_new(arr, json_string(ctx->group_name[g]));
		ngroups++;
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
			nleaves++;
	}
	groups = hostlist_count(groups_hl) ?
		 hostlist_ranged_string_xmalloc(groups_hl) : xstrdup("");
	hostlist_destroy(groups_hl);

	rec = json_object();
	json_object_set_new(rec, "time", json_integer(time(NULL)));
	json_object_set_new(rec, "job_id", json_integer(job_ptr->job_id));
	json_object_set_new(rec, "name",
			    json_string(job_ptr->name ? job_ptr->name : ""));
	json_object_set_new(rec, "mode",
			    json_string(topognn_mode_name(ctx->conf.mode)));
	json_object_set_new(rec, "nodes",
			    json_string(job_ptr->nodes ? job_ptr->nodes : ""));
	json_object_set_new(rec, "node_count",
			    json_integer(bit_set_count(job_ptr->node_bitmap)));
	json_object_set_new(rec, "groups", arr);
	json_object_set_new(rec, "ngroups", json_integer(ngroups));
	json_object_set_new(rec, "leaves", json_integer(nleaves));
	/* Other jobs whose load the engine's state holds (after a restart:
	 * rebuilt from job_list); then this one joins them. */
	others = topognn_state_job_start(ctx, job_ptr) ? ctx->state_jobs - 1 :
							 ctx->state_jobs;
	json_object_set_new(rec, "running_jobs", json_integer(others));
	if (have_dec && dec.fallback[0]) {
		json_t *t = json_object();

		json_object_set_new(t, "policy", json_string(
			place_policy_name(ctx->conf.policy)));
		json_object_set_new(t, "fallback", json_string(dec.fallback));
		json_object_set_new(rec, "topognn", t);
	} else if (have_dec && dec.ctx == ctx) {
		/* a decision made on another context (reconfigured since)
		 * names hosts of another graph: not reported */
		const place_decision *d = &dec.dec;
		char *record = place_record_json(ctx->cluster, &dec.req, d,
						 place_policy_name(ctx->conf.policy), 0);

		chosen = _hosts_to_nodes(ctx, &d->chosen);
		json_object_set_new(rec, "class", json_string(
			place_comm_class_name(dec.req.comm.cls)));
		json_object_set_new(rec, "topognn", _choice_json(
			place_policy_name(ctx->conf.policy), chosen,
			dec.kind, d->chosen.groups, d->chosen.leaves,
			d->chosen.cost));
		baseline = _hosts_to_nodes(ctx, &d->baseline);
		json_object_set_new(rec, "baseline", _choice_json(
			place_policy_name(d->baseline_policy), baseline,
			NULL, d->baseline.groups, -1, d->baseline.cost));
		json_object_set_new(rec, "followed", json_boolean(
			!xstrcmp(chosen, job_ptr->nodes)));
		json_object_set_new(rec, "candidates",
				    json_integer(d->ncandidates));
		json_object_set_new(rec, "latency_us",
				    json_real(d->latency_us));
		/* The engine's own record (docs/decision-record.md) of the
		 * evaluation that became this allocation. */
		if (record) {
			json_t *r = json_loads(record, 0, NULL);
			if (r)
				json_object_set_new(rec, "decision", r);
			free(record);
		}
		if (ctx->conf.model_file &&
		    ctx->conf.policy == PLACE_POLICY_GNN)
			json_object_set_new(json_object_get(rec, "topognn"),
					    "model", json_string(
						    ctx->conf.model_file));
	} else {
		json_t *t = json_object();

		json_object_set_new(t, "policy", json_string(
			place_policy_name(ctx->conf.policy)));
		json_object_set_new(t, "fallback", json_string(
			"topognn has no evaluation of this job (not evaluated since slurmctld started, or overwritten in its table)"));
		json_object_set_new(rec, "topognn", t);
	}
	line = json_dumps(rec, JSON_COMPACT);
	json_decref(rec);

	if (ctx->conf.mode == TOPOGNN_MODE_SHADOW && chosen) {
		info("shadow %pJ: slurm chose %s (%d groups), topognn would choose %s (%d groups, cost %.4g; baseline cost %.4g)",
		     job_ptr, job_ptr->nodes, ngroups, chosen,
		     dec.dec.chosen.groups, dec.dec.chosen.cost,
		     dec.dec.baseline.cost);
	}
	if (ctx->conf.decision_log && line) {
		char *nl = xstrdup_printf("%s\n", line);
		_append_line(ctx->conf.decision_log, nl);
		xfree(nl);
	}
	slurm_rwlock_unlock(&topognn_lock);
	free(line);

	_job_setenv(job_ptr, "TOPOGNN_GROUPS", groups);
	if (plan)
		_job_setenv(job_ptr, "TOPOGNN_PLAN", plan);
	debug("%pJ committed: %s groups=%s", job_ptr,
	      job_ptr->nodes, groups);
	xfree(plan);
	xfree(groups);
	xfree(chosen);
	xfree(baseline);
	_decision_clear(&dec);
	return SLURM_SUCCESS;
}

extern int topognn_job_end(job_record_t *job_ptr)
{
	if (!job_ptr)
		return SLURM_SUCCESS;
	slurm_rwlock_rdlock(&topognn_lock);
	topognn_state_job_end(topognn_ctx, job_ptr);
	slurm_rwlock_unlock(&topognn_lock);
	return SLURM_SUCCESS;
}
