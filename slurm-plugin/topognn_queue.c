/*****************************************************************************\
 *  topognn_queue.c - the pending queue and the clock in the engine's state.
 *
 *  With a run-time prediction (RuntimePrediction=yes) a locality hold may
 *  last as long as the queue is predicted to wait anyway, once at least
 *  PLACE_HOLD_QUEUE_JOBS jobs wait (topo/place/place_defer.c); the GNN's
 *  features read the queue and the time left to running jobs too. The
 *  engine learns both from place_state_set_queue (jobs waiting, the nodes
 *  they ask for) and place_state_set_clock, which topognn-sim sets before
 *  every scheduling pass (topo/sim/sim.c, tell_queue) and this file before
 *  every evaluation.
 *
 *  A job's queue: the pending jobs that may run in its partition (their
 *  partition, or one of a -p list) and that Slurm could start if nodes
 *  were free: not held (priority 0), not waiting for a dependency or a
 *  --begin time. Each asks for its minimum node count (a job array for
 *  that of each pending task). The job being placed is one of them, as in
 *  the simulator, which counts every queued job, held for locality or not.
 *
 *  The job's place in that queue goes into its decision record
 *  (queue_position; placement-report history splits holds by it: only the
 *  head has a backfill reservation). Its place is the order of Slurm's
 *  schedulers within one partition (sort_job_queue2): priority, higher
 *  first, then submit time, then job id; a job array's pending tasks count
 *  one each. Across partitions of different PriorityTier, and for a job
 *  whose priority differs per partition (a priority array), it is that
 *  order by the job's own priority: an approximation, recorded only.
 *
 *  Cost: job_list is walked once per second (and when jobs are added or
 *  purged), counting every partition at once, and its waiting jobs sorted
 *  by partition and place; an evaluation looks its partition up and finds
 *  its place by binary search. A backfill pass over thousands of pending
 *  jobs walks the list once per second of the pass, not once per job. As
 *  in the simulator's snapshot per pass, a job that starts within that
 *  second is still counted until the next walk.
 *
 *  Runs in slurmctld under the locks an evaluation holds: the job and node
 *  write locks (main and backfill scheduler, will-run), or the job read and
 *  node write locks (a reservation's node test). job_list is read only, and
 *  the node write lock serialises evaluations: the counts below need no
 *  lock of their own.
\*****************************************************************************/

#include <limits.h>
#include <time.h>

#include "src/common/slurm_xlator.h"

#include "src/common/list.h"
#include "src/common/xmalloc.h"
#include "src/slurmctld/slurmctld.h"

#include "topognn.h"

typedef struct {
	const part_record_t *part;	/* compared, never dereferenced */
	int64_t jobs, hosts;
} queue_part_t;

/* A waiting job in one partition's queue (part NULL: the queue of all) */
typedef struct {
	const part_record_t *part;	/* compared, never dereferenced */
	uint32_t priority;
	time_t submit;
	uint32_t job_id;
	int64_t ahead;	/* after the sort: jobs before it in the array */
	int64_t jobs;	/* it counts as (an array's pending tasks) */
} queue_ent_t;

static queue_part_t *parts;	/* one per partition with a pending job */
static int part_cnt, part_cap;
static queue_part_t all;	/* every partition (a job without one) */
static queue_ent_t *ents;	/* sorted by _ent_cmp after a walk */
static int ent_cnt, ent_cap;
static time_t counted_at;	/* the second of the last walk; 0 never */
static int counted_len = -1;	/* job_list's length at the last walk */

/* Would Slurm start the pending job if nodes were free? */
static bool _waits(job_record_t *job_ptr, time_t now)
{
	job_details_t *details = job_ptr->details;

	if (!IS_JOB_PENDING(job_ptr) || IS_JOB_COMPLETING(job_ptr) || !details)
		return false;
	if (!job_ptr->priority || details->begin_time > now)
		return false;	/* held, or --begin in the future */
	return job_ptr->state_reason != WAIT_DEPENDENCY &&
	       job_ptr->state_reason != WAIT_DEP_INVALID;
}

static void _add(const part_record_t *part, int64_t jobs, int64_t hosts)
{
	int i;

	for (i = 0; i < part_cnt && parts[i].part != part; i++)
		;
	if (i == part_cnt) {
		if (part_cnt == part_cap) {
			part_cap = part_cap ? 2 * part_cap : 8;
			xrecalloc(parts, part_cap, sizeof(*parts));
		}
		parts[part_cnt++] = (queue_part_t) { .part = part };
	}
	parts[i].jobs += jobs;
	parts[i].hosts += hosts;
}

static void _add_ent(const part_record_t *part, job_record_t *job_ptr,
		     int64_t jobs)
{
	if (ent_cnt == ent_cap) {
		ent_cap = ent_cap ? 2 * ent_cap : 64;
		xrecalloc(ents, ent_cap, sizeof(*ents));
	}
	ents[ent_cnt++] = (queue_ent_t) {
		.part = part, .priority = job_ptr->priority,
		.submit = job_ptr->details ? job_ptr->details->submit_time : 0,
		.job_id = job_ptr->job_id, .jobs = jobs,
	};
}

/* By partition (address order), then the schedulers' order. */
static int _ent_cmp(const void *x, const void *y)
{
	const queue_ent_t *a = x, *b = y;
	uintptr_t pa = (uintptr_t) a->part, pb = (uintptr_t) b->part;

	if (pa != pb)
		return pa < pb ? -1 : 1;
	if (a->priority != b->priority)
		return a->priority > b->priority ? -1 : 1;
	if (a->submit != b->submit)
		return a->submit < b->submit ? -1 : 1;
	if (a->job_id != b->job_id)
		return a->job_id < b->job_id ? -1 : 1;
	return 0;
}

/* The first entry not before key (ents sorted) */
static int _lower_bound(const queue_ent_t *key)
{
	int lo = 0, hi = ent_cnt;

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (_ent_cmp(&ents[mid], key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int _count_job(void *x, void *arg)
{
	job_record_t *job_ptr = x;
	time_t *now = arg;
	int64_t jobs = 1, nodes;

	if (!_waits(job_ptr, *now))
		return 0;
	if (job_ptr->array_recs && job_ptr->array_recs->task_cnt)
		jobs = job_ptr->array_recs->task_cnt;
	nodes = job_ptr->details->min_nodes;
	if (nodes < 1 || nodes == NO_VAL)
		nodes = 1;
	all.jobs += jobs;
	all.hosts += jobs * nodes;
	_add_ent(NULL, job_ptr, jobs);
	if (job_ptr->part_ptr_list) {
		list_itr_t *it = list_iterator_create(job_ptr->part_ptr_list);
		part_record_t *part;

		while ((part = list_next(it))) {
			_add(part, jobs, jobs * nodes);
			_add_ent(part, job_ptr, jobs);
		}
		list_iterator_destroy(it);
	} else if (job_ptr->part_ptr) {
		_add(job_ptr->part_ptr, jobs, jobs * nodes);
		_add_ent(job_ptr->part_ptr, job_ptr, jobs);
	}
	return 0;
}

/* Count again when a second has passed or job_list grew or shrank. */
static void _recount(time_t now)
{
	list_t *jobs = topognn_job_list();
	int len = jobs ? list_count(jobs) : 0;
	int64_t ahead;

	if (now == counted_at && len == counted_len)
		return;
	counted_at = now;
	counted_len = len;
	part_cnt = ent_cnt = 0;
	all = (queue_part_t) { 0 };
	if (jobs)
		list_for_each(jobs, _count_job, &now);
	if (ent_cnt)
		qsort(ents, ent_cnt, sizeof(*ents), _ent_cmp);
	ahead = 0;
	for (int i = 0; i < ent_cnt; i++) {
		if (i && ents[i].part != ents[i - 1].part)
			ahead = 0;
		ents[i].ahead = ahead;
		ahead += ents[i].jobs;
	}
}

/* The job's place in its partition's queue (of all, part NULL): 1 + the
 * waiting jobs that sort before it. */
static int _position(const part_record_t *part, job_record_t *job_ptr)
{
	queue_ent_t key = {
		.part = part, .priority = job_ptr->priority,
		.submit = job_ptr->details ? job_ptr->details->submit_time : 0,
		.job_id = job_ptr->job_id,
	};
	int i = _lower_bound(&key);
	int64_t ahead = 0;

	if (i < ent_cnt && ents[i].part == part)
		ahead = ents[i].ahead;
	else if (i > 0 && ents[i - 1].part == part)	/* after the last */
		ahead = ents[i - 1].ahead + ents[i - 1].jobs;
	return ahead >= INT_MAX ? INT_MAX : (int) ahead + 1;
}

static int _clamp(int64_t v)
{
	return v > INT_MAX ? INT_MAX : (int) v;
}

extern int topognn_state_queue(topognn_ctx_t *ctx, job_record_t *job_ptr)
{
	time_t now = time(NULL);
	const queue_part_t *q = &all;

	if (!ctx || !ctx->state)
		return 0;
	_recount(now);
	if (job_ptr && job_ptr->part_ptr) {
		static const queue_part_t none;

		q = &none;
		for (int i = 0; i < part_cnt; i++)
			if (parts[i].part == job_ptr->part_ptr)
				q = &parts[i];
	}
	place_state_set_clock(ctx->state, (double) now);
	place_state_set_queue(ctx->state, _clamp(q->jobs), _clamp(q->hosts));
	return job_ptr ? _position(job_ptr->part_ptr, job_ptr) : 0;
}

extern void topognn_queue_fini(void)
{
	xfree(parts);
	xfree(ents);
	part_cnt = part_cap = ent_cnt = ent_cap = 0;
	counted_at = 0;
	counted_len = -1;
}
