/*
 * bind_irq_enforce: who may enforce on which CPUs (bind_enforce_scope) and
 * the spreading of a set's IRQs over candidate cores, saved first in the
 * state journal (bind_irq_state.c); see bind_irq.h.
 */
#define _GNU_SOURCE
#include "bind_irq_internal.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int bind_enforce_scope(const bind_roots *roots, const char *oversubscribe, char **job_cpus,
		       char *why, size_t whylen, topo_error *err)
{
	char path[PATH_MAX];
	char *text;
	bind_cpuset all;

	*job_cpus = NULL;
	topo_error_clear(err);
	if (!oversubscribe || strcmp(oversubscribe, "NO") != 0) {
		snprintf(why, whylen,
			 "the job may share the node (SLURM_JOB_OVERSUBSCRIBE=%s): IRQs are only audited",
			 oversubscribe ? oversubscribe : "unset");
		return 0;
	}
	if (bind_irq_path_fmt(path, sizeof(path), err, "%s/devices/system/cpu/online", bind_irq_sys_root(roots)))
		return -1;
	text = bind_irq_read_all(path, NULL, NULL, err);
	if (!text)
		return -1;
	bind_cpuset_init(&all);
	if (bind_cpuset_parse(&all, text, path, 1, err) < 0) {
		free(text);
		return -1;
	}
	free(text);
	*job_cpus = bind_cpuset_format(&all);
	bind_cpuset_free(&all);
	if (!*job_cpus) {
		topo_error_set(err, path, 0, "out of memory");
		return -1;
	}
	return 1;
}

/* Each adapter's candidate cores (see bind_irq_enforce). */
static int candidates(const bind_irq_set *set, const bind_cpuset *job, const bind_cpuset *hk,
		      int have_hk, bind_cpuset *cand)
{
	for (size_t k = 0; k < set->nnics; k++) {
		const bind_nic_info *nic = &set->nics[k];

		if (have_hk) {
			if (bind_cpuset_copy(&cand[k], hk) < 0)
				return -1;
			bind_cpuset_intersect(&cand[k], &nic->local);
			if (!bind_cpuset_count(&cand[k]) && bind_cpuset_copy(&cand[k], hk) < 0)
				return -1;
		} else {
			if (bind_cpuset_copy(&cand[k], &nic->local) < 0)
				return -1;
			bind_cpuset_subtract(&cand[k], job);
		}
	}
	return 0;
}

/* Split candidate cores so no two adapters share one when avoidable: each
 * core goes to the adapter wanting it that has fewest cores so far (then the
 * one with fewer candidates). An adapter left with none shares its candidates. */
static int split_cores(const bind_irq_set *set, const bind_cpuset *cand, bind_cpuset *mine)
{
	bind_cpuset all;
	int rc = 0;

	bind_cpuset_init(&all);
	for (size_t k = 0; k < set->nnics; k++)
		for (int c = bind_cpuset_next(&cand[k], -1); c >= 0; c = bind_cpuset_next(&cand[k], c))
			rc |= bind_cpuset_add(&all, c);
	for (int c = bind_cpuset_next(&all, -1); rc == 0 && c >= 0; c = bind_cpuset_next(&all, c)) {
		size_t best = set->nnics;

		for (size_t k = 0; k < set->nnics; k++) {
			if (!bind_cpuset_has(&cand[k], c) || !set->nics[k].nirqs)
				continue;
			if (best == set->nnics ||
			    bind_cpuset_count(&mine[k]) < bind_cpuset_count(&mine[best]) ||
			    (bind_cpuset_count(&mine[k]) == bind_cpuset_count(&mine[best]) &&
			     bind_cpuset_count(&cand[k]) < bind_cpuset_count(&cand[best])))
				best = k;
		}
		if (best < set->nnics)
			rc |= bind_cpuset_add(&mine[best], c);
	}
	for (size_t k = 0; rc == 0 && k < set->nnics; k++)
		if (!bind_cpuset_count(&mine[k]))
			rc |= bind_cpuset_copy(&mine[k], &cand[k]);
	bind_cpuset_free(&all);
	return rc ? -1 : 0;
}

/* The files to change: IRQ i of an adapter goes to its (i mod n)-th core;
 * an IRQ already allowed exactly there is left as it is. */
static int make_plan(const bind_roots *roots, const bind_irq_set *set, const bind_cpuset *mine,
		     saved_list *plan, const bind_log *log, topo_error *err)
{
	for (size_t k = 0; k < set->nnics; k++) {
		const bind_nic_info *nic = &set->nics[k];
		int ncores = bind_cpuset_count(&mine[k]), c = -1;

		if (nic->nirqs && !ncores) {
			bind_irq_say(log, "%s: no core to move its IRQs to (no local CPU free of the job); left alone",
			    nic->name);
			continue;
		}
		for (size_t i = nic->first; i < nic->first + nic->nirqs; i++) {
			const bind_irq_info *q = &set->irqs[i];
			char path[PATH_MAX];
			saved_file *f;

			c = bind_cpuset_next(&mine[k], c);
			if (c < 0)
				c = bind_cpuset_next(&mine[k], -1);
			if (bind_cpuset_count(&q->affinity) == 1 && bind_cpuset_has(&q->affinity, c))
				continue;
			if (bind_irq_file_path(path, sizeof(path), roots, q->irq, err) < 0)
				return -1;
			f = bind_irq_saved_add(plan);
			if (!f || !(f->path = strdup(path))) {
				topo_error_set(err, "", 0, "out of memory");
				return -1;
			}
			f->irq = q->irq;
			f->cpu = c;
			snprintf(f->hca, sizeof(f->hca), "%s", nic->name);
			f->orig = bind_irq_read_all(path, &f->origlen, NULL, err);
			if (!f->orig)
				return -1;
		}
	}
	return 0;
}

/* Refuse IRQs already held in another job's saved state (restoring in the
 * wrong order would leave one job's setting behind), and a second enforce
 * for the same job (it would save the changed values as the originals). */
static int check_other_states(const char *dir, const char *own, const saved_list *plan,
			      topo_error *err)
{
	struct dirent **ents = NULL;
	int n = scandir(dir, &ents, NULL, alphasort), rc = 0;

	if (n < 0) {
		topo_error_set(err, dir, 0, "cannot list the state directory: %s", strerror(errno));
		return -1;
	}
	for (int i = 0; i < n; i++) {
		char path[PATH_MAX], job[80], other[80];
		saved_list l = { 0 };

		if (rc == 0 && bind_irq_state_name_job(ents[i]->d_name, job, sizeof(job)) &&
		    bind_irq_path_fmt(path, sizeof(path), err, "%s/%s", dir, ents[i]->d_name) == 0) {
			if (strcmp(path, own) == 0) {
				topo_error_set(err, path, 0,
					       "job %s already has saved IRQ state; restore it before enforcing again",
					       job);
				rc = -1;
			} else if (bind_irq_state_load(path, NULL, other, sizeof(other), &l, err) < 0) {
				rc = -1;
			}
			for (size_t a = 0; rc == 0 && a < l.n; a++)
				for (size_t b = 0; rc == 0 && b < plan->n; b++)
					if (strcmp(l.v[a].path, plan->v[b].path) == 0) {
						topo_error_set(err, path, 0,
							       "irq %d is held by job %s's saved state; not changing it",
							       l.v[a].irq, other);
						rc = -1;
					}
			bind_irq_saved_free(&l);
		}
		free(ents[i]);
	}
	free(ents);
	return rc;
}

/* Write the plan; on a failure undo the writes made and remove the state file. */
static int apply_plan(const char *dir, const char *spath, const saved_list *plan,
		      const bind_log *log, topo_error *err)
{
	for (size_t i = 0; i < plan->n; i++) {
		const saved_file *f = &plan->v[i];
		char val[16], before[64];

		snprintf(val, sizeof(val), "%d\n", f->cpu);
		if (bind_irq_write_all(f->path, val, strlen(val), err) < 0) {
			topo_error e;

			for (size_t j = 0; j < i; j++)
				bind_irq_write_all(plan->v[j].path, plan->v[j].orig, plan->v[j].origlen, &e);
			unlink(spath);
			bind_irq_fsync_dir(dir, &e);
			bind_irq_say(log, "irq %d (%s): write failed, %zu earlier change(s) undone", f->irq,
			    f->hca, i);
			return -1;
		}
		bind_irq_first_line(f->orig, before, sizeof(before));
		bind_irq_say(log, "irq %d (%s) smp_affinity_list %s -> %d, saved in %s", f->irq, f->hca,
		    before, f->cpu, spath);
	}
	return 0;
}

int bind_irq_enforce(const bind_roots *roots, const bind_irq_set *set,
		     const bind_enforce_opts *opts, const bind_log *log, topo_error *err)
{
	char spath[PATH_MAX];
	bind_cpuset job, hk, *cand, *mine;
	saved_list plan = { 0 };
	int rc = -1;

	topo_error_clear(err);
	if (bind_irq_state_path(spath, sizeof(spath), opts->state_dir, opts->job_id, err) < 0 ||
	    bind_irq_check_root(roots, "IRQ enforce", err) < 0 || bind_irq_state_dir_ok(opts->state_dir, err) < 0)
		return -1;
	if (access(spath, F_OK) == 0) {
		topo_error_set(err, spath, 0,
			       "job %s already has saved IRQ state; restore it before enforcing again",
			       opts->job_id);
		return -1;
	}
	bind_cpuset_init(&job);
	bind_cpuset_init(&hk);
	cand = calloc(set->nnics + 1, sizeof(*cand));
	mine = calloc(set->nnics + 1, sizeof(*mine));
	if (!cand || !mine) {
		topo_error_set(err, "", 0, "out of memory");
		goto done;
	}
	if ((opts->job_cpus && bind_cpuset_parse(&job, opts->job_cpus, "job CPUs", 0, err) < 0) ||
	    (opts->housekeeping &&
	     bind_cpuset_parse(&hk, opts->housekeeping, "housekeeping CPUs", 0, err) < 0))
		goto done;
	if (candidates(set, &job, &hk, opts->housekeeping && bind_cpuset_count(&hk), cand) < 0 ||
	    split_cores(set, cand, mine) < 0) {
		topo_error_set(err, "", 0, "out of memory");
		goto done;
	}
	if (make_plan(roots, set, mine, &plan, log, err) < 0)
		goto done;
	if (plan.n == 0) {
		bind_irq_say(log, "job %s: every IRQ is already where it should be; nothing changed",
		    opts->job_id);
		rc = 0;
		goto done;
	}
	if (check_other_states(opts->state_dir, spath, &plan, err) < 0 ||
	    bind_irq_state_write(opts->state_dir, spath, opts->job_id, &plan, err) < 0 ||
	    apply_plan(opts->state_dir, spath, &plan, log, err) < 0)
		goto done;
	rc = (int)plan.n;
done:
	bind_irq_saved_free(&plan);
	for (size_t k = 0; cand && mine && k < set->nnics; k++) {
		bind_cpuset_free(&cand[k]);
		bind_cpuset_free(&mine[k]);
	}
	free(cand);
	free(mine);
	bind_cpuset_free(&job);
	bind_cpuset_free(&hk);
	return rc;
}
