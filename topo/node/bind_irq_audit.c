/*
 * bind_irq_audit: findings about where a set's IRQs fire (shared cores,
 * remote NUMA, the job's cores, all on one core); see bind_irq.h. Reads only
 * the loaded set.
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

static int add_finding(bind_audit *a, const char *kind, int irq, const char *hca,
		       const bind_cpuset *cpus, topo_error *err, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));
static int add_finding(bind_audit *a, const char *kind, int irq, const char *hca,
		       const bind_cpuset *cpus, topo_error *err, const char *fmt, ...)
{
	bind_finding *f, *bigger = realloc(a->v, (a->n + 1) * sizeof(*bigger));
	char text[512];
	va_list ap;

	if (!bigger)
		goto oom;
	a->v = bigger;
	f = &a->v[a->n];
	f->kind = kind;
	f->irq = irq;
	f->hca = hca;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	f->cpus = bind_cpuset_format(cpus);
	f->text = strdup(text);
	a->n++;
	if (!f->cpus || !f->text)
		goto oom;
	return 0;
oom:
	topo_error_set(err, "", 0, "out of memory");
	return -1;
}

void bind_audit_free(bind_audit *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n; i++) {
		free(a->v[i].cpus);
		free(a->v[i].text);
	}
	free(a->v);
	a->v = NULL;
	a->n = 0;
}

/* The IRQs of adapters other than q's that fire on one of q's cores; their
 * cores are collected into `shared`. Returns how many, naming one of them. */
static size_t others_on_cores(const bind_irq_set *set, const bind_irq_info *q, bind_cpuset *shared,
			      size_t *other_nic)
{
	size_t n = 0;
	bind_cpuset tmp;

	bind_cpuset_init(&tmp);
	bind_cpuset_clear(shared);
	for (size_t j = 0; j < set->nirqs; j++) {
		const bind_irq_info *o = &set->irqs[j];

		if (o->nic == q->nic || !bind_cpuset_intersects(&q->used, &o->used))
			continue;
		if (bind_cpuset_copy(&tmp, &q->used) == 0) {
			bind_cpuset_intersect(&tmp, &o->used);
			for (int c = bind_cpuset_next(&tmp, -1); c >= 0; c = bind_cpuset_next(&tmp, c))
				bind_cpuset_add(shared, c);
		}
		if (n++ == 0)
			*other_nic = o->nic;
	}
	bind_cpuset_free(&tmp);
	return n;
}

static int audit_irq(const bind_irq_set *set, const bind_irq_info *q, const bind_cpuset *job,
		     bind_cpuset *scratch, bind_audit *out, topo_error *err)
{
	const bind_nic_info *nic = &set->nics[q->nic];
	size_t other = 0, nothers = others_on_cores(set, q, scratch, &other);
	char *cores = bind_cpuset_format(&q->used);
	int rc = -1;

	if (!cores) {
		topo_error_set(err, "", 0, "out of memory");
		return -1;
	}
	if (nothers && add_finding(out, BIND_SHARED_CORE, q->irq, nic->name, scratch, err,
				   "irq %d (%s) shares core(s) %s with %zu IRQ(s) of another adapter (%s)",
				   q->irq, nic->name, cores, nothers, set->nics[other].name) < 0)
		goto done;
	if (bind_cpuset_count(&nic->local) && bind_cpuset_count(&q->used) &&
	    !bind_cpuset_intersects(&q->used, &nic->local)) {
		char *local = bind_cpuset_format(&nic->local);

		rc = add_finding(out, BIND_REMOTE_NUMA, q->irq, nic->name, &q->used, err,
				 "irq %d (%s) fires on core(s) %s, none of them local to %s (NUMA %d, CPUs %s)",
				 q->irq, nic->name, cores, nic->name, nic->numa, local ? local : "?");
		free(local);
		if (rc < 0)
			goto done;
		rc = -1;
	}
	if (bind_cpuset_intersects(&q->used, job)) {
		if (bind_cpuset_copy(scratch, &q->used) < 0) {
			topo_error_set(err, "", 0, "out of memory");
			goto done;
		}
		bind_cpuset_intersect(scratch, job);
		if (add_finding(out, BIND_ON_JOB_CORES, q->irq, nic->name, scratch, err,
				"irq %d (%s) fires on core(s) %s where the job computes", q->irq,
				nic->name, cores) < 0)
			goto done;
	}
	rc = 0;
done:
	free(cores);
	return rc;
}

/* all-on-one-core: 2+ completion IRQs whose cores together are one core. */
static int audit_nic(const bind_irq_set *set, size_t k, bind_cpuset *scratch, bind_audit *out,
		     topo_error *err)
{
	const bind_nic_info *nic = &set->nics[k];
	size_t ncomp = 0;

	bind_cpuset_clear(scratch);
	for (size_t i = nic->first; i < nic->first + nic->nirqs; i++) {
		const bind_irq_info *q = &set->irqs[i];

		if (!q->completion)
			continue;
		ncomp++;
		for (int c = bind_cpuset_next(&q->used, -1); c >= 0; c = bind_cpuset_next(&q->used, c))
			if (bind_cpuset_add(scratch, c) < 0) {
				topo_error_set(err, "", 0, "out of memory");
				return -1;
			}
	}
	if (ncomp < 2 || bind_cpuset_count(scratch) != 1)
		return 0;
	return add_finding(out, BIND_ALL_ON_ONE_CORE, -1, nic->name, scratch, err,
			   "all %zu completion IRQs of %s fire on core %d", ncomp, nic->name,
			   bind_cpuset_next(scratch, -1));
}

int bind_irq_audit(const bind_irq_set *set, const char *job_cpus, bind_audit *out,
		   topo_error *err)
{
	bind_cpuset job, scratch;
	int rc = -1;

	out->v = NULL;
	out->n = 0;
	topo_error_clear(err);
	bind_cpuset_init(&job);
	bind_cpuset_init(&scratch);
	if (job_cpus && bind_cpuset_parse(&job, job_cpus, "job CPUs", 0, err) < 0)
		goto done;
	for (size_t i = 0; i < set->nirqs; i++)
		if (audit_irq(set, &set->irqs[i], &job, &scratch, out, err) < 0)
			goto done;
	for (size_t k = 0; k < set->nnics; k++)
		if (audit_nic(set, k, &scratch, out, err) < 0)
			goto done;
	rc = 0;
done:
	bind_cpuset_free(&job);
	bind_cpuset_free(&scratch);
	if (rc < 0)
		bind_audit_free(out);
	return rc;
}
