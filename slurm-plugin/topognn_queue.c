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
 *  Cost: job_list is walked once per second (and when jobs are added or
 *  purged), counting every partition at once; an evaluation looks its
 *  partition up. A backfill pass over thousands of pending jobs walks the
 *  list once per second of the pass, not once per job. As in the
 *  simulator's snapshot per pass, a job that starts within that second is
 *  still counted until the next walk.
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

static queue_part_t *parts;	/* one per partition with a pending job */
static int part_cnt, part_cap;
static queue_part_t all;	/* every partition (a job without one) */
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
	if (job_ptr->part_ptr_list) {
		list_itr_t *it = list_iterator_create(job_ptr->part_ptr_list);
		part_record_t *part;

		while ((part = list_next(it)))
			_add(part, jobs, jobs * nodes);
		list_iterator_destroy(it);
	} else if (job_ptr->part_ptr) {
		_add(job_ptr->part_ptr, jobs, jobs * nodes);
	}
	return 0;
}

/* Count again when a second has passed or job_list grew or shrank. */
static void _recount(time_t now)
{
	list_t *jobs = topognn_job_list();
	int len = jobs ? list_count(jobs) : 0;

	if (now == counted_at && len == counted_len)
		return;
	counted_at = now;
	counted_len = len;
	part_cnt = 0;
	all = (queue_part_t) { 0 };
	if (jobs)
		list_for_each(jobs, _count_job, &now);
}

static int _clamp(int64_t v)
{
	return v > INT_MAX ? INT_MAX : (int) v;
}

extern void topognn_state_queue(topognn_ctx_t *ctx, job_record_t *job_ptr)
{
	time_t now = time(NULL);
	const queue_part_t *q = &all;

	if (!ctx || !ctx->state)
		return;
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
}

extern void topognn_queue_fini(void)
{
	xfree(parts);
	part_cnt = part_cap = 0;
	counted_at = 0;
	counted_len = -1;
}
