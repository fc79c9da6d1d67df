/*****************************************************************************\
 *  topognn_shadow.c - shadow mode: what the baselines would do.
 *
 *  In Mode=shadow topology/tree allocates and the engine's choice (Policy=)
 *  is only logged. To promote a learned policy on evidence, the commit line
 *  also records, for the same request at the same moment, the choice of
 *    model          the engine's analytic policy (with LocalityWait, as
 *                   Policy=model would have it);
 *    tree-switches  topology/tree as a careful site configures it: every
 *                   heavy job with --switches=<g_min>@<budget> (a job_submit
 *                   rule), g_min the fewest groups that hold the job on the
 *                   empty cluster, budget LocalityWait's share of its limit
 *                   (at most the cap), counted from when it became eligible.
 *                   Within the budget it takes tree's choice over at most
 *                   g_min groups, or holds when there is none; after it,
 *                   tree's choice (Slurm then drops the switch limit).
 *  placement-report shadow compares them (docs/admin-guide.md).
 *  Evaluations are serialised (slurmctld's job write lock), so one scratch
 *  buffer serves; the caller remembers the decision before the next call.
\*****************************************************************************/

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "src/common/slurm_xlator.h"

#include "src/common/log.h"
#include "src/common/xmalloc.h"
#include "src/slurmctld/slurmctld.h"

#include "topognn.h"

const char *const topognn_shadow_policy[TOPOGNN_SHADOW_MAX] = {
	"model", "tree-switches"
};

static int *scratch;	/* TOPOGNN_SHADOW_MAX x scratch_cap hosts */
static int scratch_cap;

static int _cmp_desc(const void *a, const void *b)
{
	return *(const int *) b - *(const int *) a;
}

/* The fewest groups that hold n hosts on the empty cluster. */
static int _gmin(const topognn_ctx_t *ctx, int n)
{
	int *size = xcalloc(ctx->group_cnt + 1, sizeof(int)), k = 0, got = 0;

	for (int g = 0; g < ctx->group_cnt; g++)
		size[g] = bit_set_count(ctx->group_bitmap[g]);
	qsort(size, ctx->group_cnt, sizeof(int), _cmp_desc);
	while (got < n && k < ctx->group_cnt && size[k] > 0)
		got += size[k++];
	xfree(size);
	return k;
}

/* tree-switches' wait budget for the job: LocalityWait of its limit. */
static double _budget(const topognn_ctx_t *ctx, const place_request *req)
{
	double b = ctx->conf.place.locality_wait_frac * req->time_limit_s;
	double cap = ctx->conf.place.locality_wait_cap_s;

	return cap > 0 && b > cap ? cap : b;
}

/* Decide with policy p (max_groups limit) into slot i of rec. */
static void _one(topognn_ctx_t *ctx, const place_request *req, place_policy p,
		 int max_groups, topognn_job_decision_t *rec, int i)
{
	place_request r = *req;
	place_decision d;
	place_choice *c = &rec->shadow[i];

	r.max_groups = max_groups;
	memset(c, 0, sizeof(*c));
	c->groups = -1;
	rec->shadow_hold[i] = true;
	rec->shadow_wait[i] = -1;
	if (place_decide(ctx->engine, ctx->state, &r, p, p, &d) || !d.ok)
		return; /* none now (within the switch limit): it holds */
	if (d.deferred) {
		rec->shadow_wait[i] = d.defer_wait_s;
		return;
	}
	rec->shadow_hold[i] = false;
	*c = d.chosen;
	c->hosts = scratch + (size_t) i * scratch_cap;
	memcpy(c->hosts, d.chosen.hosts, sizeof(int) * (size_t) d.chosen.nhosts);
}

extern void topognn_shadow_decide(topognn_ctx_t *ctx, job_record_t *job_ptr,
				  const place_request *req,
				  topognn_job_decision_t *rec)
{
	int limit = 0;
	time_t eligible = job_ptr->details ? job_ptr->details->begin_time : 0;

	if (scratch_cap < ctx->host_cnt) {
		xrecalloc(scratch, (size_t) TOPOGNN_SHADOW_MAX * ctx->host_cnt,
			  sizeof(int));
		scratch_cap = ctx->host_cnt;
	}
	rec->nshadow = TOPOGNN_SHADOW_MAX;
	_one(ctx, req, PLACE_POLICY_MODEL, req->max_groups, rec, 0);
	/* tree-switches: heavy jobs within their budget keep to g_min */
	if (req->comm.cls == PLACE_COMM_HEAVY && req->time_limit_s > 0 &&
	    (!eligible || difftime(time(NULL), eligible) < _budget(ctx, req)))
		limit = _gmin(ctx, req->min_hosts);
	if (req->max_groups && (!limit || req->max_groups < limit))
		limit = req->max_groups; /* the job's own --switches */
	_one(ctx, req, PLACE_POLICY_TREE, limit, rec, 1);
}

extern void topognn_shadow_fini(void)
{
	xfree(scratch);
	scratch_cap = 0;
}
