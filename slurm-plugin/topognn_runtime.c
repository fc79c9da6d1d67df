/*****************************************************************************\
 *  topognn_runtime.c - the online run-time predictor (topo/place_runtime.h)
 *  in slurmctld.
 *
 *  Learning: a topology plugin has no job-completion hook, but prep/topognn
 *  (PrEpPlugins=prep/topognn, needed already for the decision log's commit
 *  lines) gets epilog_slurmctld for every job that ran, and calls
 *  topognn_end_job() -> topognn_job_end() -> topognn_runtime_job_end().
 *  At that point the job record holds its real start and end times, so the
 *  predictor learns each ended job once, with what slurmctld knew at submit
 *  (user, group, job name, time limit, node count, submit time). Jobs that
 *  never started (cancelled while pending) are not learned from.
 *
 *  Use: with RuntimePrediction=on in topognn.conf, each evaluation tells
 *  the engine the job's predicted run time (place_request.
 *  predicted_runtime_s: a locality hold must be short next to it), and the
 *  engine's state gets running jobs' predicted ends instead of their limits
 *  (when groups free); a prediction is capped at the limit, and never
 *  shortens a limit: Slurm still enforces the limit as before.
 *
 *  Persistence: <StateSaveLocation>/topognn_runtime.state, the predictor's
 *  own versioned text format (place_runtime_save). Loaded once, when the
 *  plugin loads in slurmctld (init); a missing file starts empty, a corrupt or
 *  unreadable one is logged and ignored (never fatal). Saved when it
 *  changed, at most every RT_SAVE_EVERY seconds (at the first change at
 *  once), at fini and at exit: written to a temporary file (O_CREAT|O_EXCL|
 *  O_NOFOLLOW, 0600), fsync'd, then renamed over the old one, so a crash
 *  leaves either the old or the new state, never a torn one.
\*****************************************************************************/

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "src/common/slurm_xlator.h"

#include "src/common/log.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "place_runtime.h"
#include "topognn.h"

#define RT_FILE "topognn_runtime.state"
#define RT_SAVE_EVERY 60 /* seconds between saves of a changed state */

static pthread_mutex_t rt_lock = PTHREAD_MUTEX_INITIALIZER;
static place_runtime *rt;
static bool rt_tried;	/* load attempted (once per slurmctld) */
static bool rt_dirty;	/* learned since the last save */
static time_t rt_saved;	/* last save; 0 never */

/* <StateSaveLocation>/name, xmalloc'd; NULL when not configured. */
static char *_state_path(const char *name)
{
	if (!slurm_conf.state_save_location || !slurm_conf.state_save_location[0])
		return NULL;
	return xstrdup_printf("%s/%s", slurm_conf.state_save_location, name);
}

/* Read the saved state into rt (empty on any problem, which is logged). */
static void _load(void)
{
	char *path = _state_path(RT_FILE);
	topo_error err;
	char buf[512];
	FILE *f;
	int fd;

	if (!path)
		return;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			info("topognn: no saved run-time predictor state at %s: it starts empty",
			     path);
		else
			error("topognn: cannot read the run-time predictor state %s: %m; it starts empty",
			      path);
		xfree(path);
		return;
	}
	if (!(f = fdopen(fd, "r"))) {
		close(fd);
		error("topognn: cannot read %s: %m; the run-time predictor starts empty", path);
	} else if (place_runtime_load(rt, f, path, &err)) {
		error("topognn: ignoring the run-time predictor state: %s; it starts empty",
		      topo_error_format(&err, buf, sizeof(buf)));
	} else {
		info("topognn: run-time predictor state loaded from %s: %ld jobs learned",
		     path, place_runtime_observed(rt));
	}
	if (f)
		fclose(f);
	xfree(path);
}

/* The predictor, loaded at the first use; NULL outside slurmctld or when
 * memory runs out. Called with rt_lock held. */
static place_runtime *_get(void)
{
	if (rt_tried)
		return rt;
	rt_tried = true;
	if (!running_in_slurmctld())
		return NULL;
	if (!(rt = place_runtime_new())) {
		error("topognn: out of memory for the run-time predictor");
		return NULL;
	}
	_load();
	return rt;
}

/* Write the state atomically (temp + fsync + rename). Called with rt_lock
 * held. 0, or -1 (logged). */
static int _save(void)
{
	char *path = _state_path(RT_FILE), *tmp = NULL;
	int fd = -1, rc = -1;
	FILE *f = NULL;

	if (!path || !rt)
		goto out;
	tmp = xstrdup_printf("%s.new", path);
	(void) unlink(tmp); /* a leftover of a crash between write and rename */
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		error("topognn: cannot write %s: %m", tmp);
		goto out;
	}
	fd = -1; /* f owns it */
	if (place_runtime_save(rt, f) || fflush(f) || fsync(fileno(f))) {
		error("topognn: writing %s failed: %m", tmp);
		goto out;
	}
	if (fclose(f)) {
		f = NULL;
		error("topognn: writing %s failed: %m", tmp);
		goto out;
	}
	f = NULL;
	if (rename(tmp, path)) {
		error("topognn: cannot rename %s to %s: %m", tmp, path);
		goto out;
	}
	rc = 0;
	rt_dirty = false;
	rt_saved = time(NULL);
	debug("topognn: run-time predictor state saved to %s (%ld jobs learned)",
	      path, place_runtime_observed(rt));
out:
	if (f)
		fclose(f);
	if (fd >= 0)
		close(fd);
	if (rc && tmp)
		(void) unlink(tmp);
	xfree(tmp);
	xfree(path);
	return rc;
}

/* Save when changed and due. Called with rt_lock held. */
static void _save_if_due(void)
{
	if (rt_dirty && (!rt_saved || time(NULL) - rt_saved >= RT_SAVE_EVERY))
		(void) _save();
}

/* What slurmctld knew of the job at submit time. */
static void _job(job_record_t *job_ptr, place_runtime_job *j)
{
	memset(j, 0, sizeof(*j));
	j->user = (int) job_ptr->user_id;
	j->group = (int) job_ptr->group_id;
	j->app = place_runtime_app_hash(job_ptr->name);
	if (job_ptr->time_limit && job_ptr->time_limit != NO_VAL &&
	    job_ptr->time_limit != INFINITE)
		j->limit_s = 60.0 * job_ptr->time_limit;
	if (job_ptr->node_cnt)
		j->size = (int) job_ptr->node_cnt;
	else if (job_ptr->details && job_ptr->details->min_nodes != NO_VAL)
		j->size = (int) job_ptr->details->min_nodes;
	if (job_ptr->details)
		j->submit_s = (double) job_ptr->details->submit_time;
}

extern void topognn_runtime_init(void)
{
	slurm_mutex_lock(&rt_lock);
	(void) _get();
	slurm_mutex_unlock(&rt_lock);
}

extern double topognn_runtime_predict(job_record_t *job_ptr)
{
	place_runtime_job j;
	double p = 0;

	if (!job_ptr)
		return 0;
	_job(job_ptr, &j);
	slurm_mutex_lock(&rt_lock);
	if (_get())
		p = place_runtime_predict(rt, &j);
	_save_if_due();
	slurm_mutex_unlock(&rt_lock);
	return p > 0 ? p : 0;
}

extern double topognn_runtime_expected_end(job_record_t *job_ptr, time_t now)
{
	double limit_end = (double) job_ptr->end_time, pred, e;

	if (!job_ptr->start_time || !limit_end)
		return limit_end;
	if ((pred = topognn_runtime_predict(job_ptr)) <= 0)
		return limit_end;
	/* as topognn-sim (sim_expected_end): past its prediction, a job is
	 * expected to run as long again as it has run */
	e = (double) job_ptr->start_time + pred;
	if (e < (double) now)
		e = (double) now + difftime(now, job_ptr->start_time);
	return e < limit_end ? e : limit_end;
}

extern void topognn_runtime_job_end(job_record_t *job_ptr)
{
	place_runtime_job j;
	double run_s;

	if (!job_ptr || !job_ptr->start_time ||
	    job_ptr->end_time < job_ptr->start_time)
		return;	/* never ran */
	run_s = difftime(job_ptr->end_time, job_ptr->start_time);
	if (run_s < 1)
		run_s = 1;
	_job(job_ptr, &j);
	slurm_mutex_lock(&rt_lock);
	if (_get()) {
		if (place_runtime_observe(rt, &j, run_s))
			error("topognn: out of memory learning the run time of %pJ",
			      job_ptr);
		rt_dirty = true;
		_save_if_due();
	}
	slurm_mutex_unlock(&rt_lock);
}

/*
 * slurmctld calls the plugins' fini only when built with
 * MEMORY_LEAK_DEBUG: at a normal exit (scontrol shutdown, SIGTERM) this
 * saves what was learned since the last periodic save.
 */
__attribute__((destructor)) static void _runtime_at_exit(void)
{
	if (rt && rt_dirty)
		(void) _save();
}

extern void topognn_runtime_fini(void)
{
	slurm_mutex_lock(&rt_lock);
	if (rt && rt_dirty)
		(void) _save();
	place_runtime_free(rt);
	rt = NULL;
	rt_tried = false;
	rt_dirty = false;
	rt_saved = 0;
	slurm_mutex_unlock(&rt_lock);
}
