/*
 * report_cluster: occupancy of the cluster's groups by running jobs, and
 * the engine state rebuilt from it. See report_cluster.h.
 */
#include "report_cluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "place_view.h"
#include "report_history.h"
#include "topo_num.h"

int report_occupancy_init(report_occupancy *o, const place_cluster *c)
{
	memset(o, 0, sizeof(*o));
	o->c = c;
	o->nhosts = place_cluster_nhosts(c);
	o->ngroups = place_cluster_ngroups(c) + 1;
	o->host_job = malloc(((size_t)o->nhosts + 1) * sizeof(int));
	o->host_njobs = calloc((size_t)o->nhosts + 1, sizeof(int));
	o->host_flags = calloc((size_t)o->nhosts + 1, sizeof(unsigned));
	o->group_hosts = calloc((size_t)o->ngroups, sizeof(int));
	o->group_busy = calloc((size_t)o->ngroups, sizeof(int));
	o->group_idle = calloc((size_t)o->ngroups, sizeof(int));
	if (!o->host_job || !o->host_njobs || !o->host_flags || !o->group_hosts ||
	    !o->group_busy || !o->group_idle) {
		report_occupancy_free(o);
		return -1;
	}
	for (int h = 0; h < o->nhosts; h++)
		o->host_job[h] = -1;
	report_occupancy_finish(o);
	return 0;
}

void report_occupancy_free(report_occupancy *o)
{
	for (int j = 0; j < o->njobs; j++)
		free(o->jobs[j].hosts);
	free(o->jobs);
	free(o->host_job);
	free(o->host_njobs);
	free(o->host_flags);
	free(o->group_hosts);
	free(o->group_busy);
	free(o->group_idle);
	memset(o, 0, sizeof(*o));
}

/* Groups and leaves spanned by ascending host indices. */
static void span(const place_cluster *c, const int *h, int n, int *groups, int *leaves)
{
	uint8_t *seen = calloc((size_t)place_cluster_nleaves(c) + 1, 1);

	*groups = *leaves = 0;
	for (int i = 0; i < n; i++)
		if (i == 0 || place_cluster_host_group(c, h[i]) != place_cluster_host_group(c, h[i - 1]))
			++*groups; /* hosts are in group order, so groups are runs */
	if (!seen)
		return;
	for (int i = 0; i < n; i++)
		for (int r = 0; r < place_cluster_nrails(c); r++) {
			int l = place_cluster_host_leaf(c, h[i], r);

			if (l >= 0 && !seen[l]) {
				seen[l] = 1;
				++*leaves;
			}
		}
	free(seen);
}

int report_occupancy_add(report_occupancy *o, uint32_t job, const char *const *hosts,
			 int nhosts, int gpus_per_host, int cores_per_host,
			 const place_comm *comm, const char *policy)
{
	report_job *j;

	if (o->njobs == o->cap) {
		int cap = o->cap ? 2 * o->cap : 32;
		report_job *n = realloc(o->jobs, (size_t)cap * sizeof(*n));

		if (!n)
			return -1;
		o->jobs = n;
		o->cap = cap;
	}
	j = &o->jobs[o->njobs];
	memset(j, 0, sizeof(*j));
	j->hosts = malloc(((size_t)nhosts + 1) * sizeof(int));
	if (!j->hosts)
		return -1;
	for (int i = 0; i < nhosts; i++) {
		int h = place_cluster_find_host(o->c, hosts[i]);

		if (h < 0)
			j->unknown_hosts++;
		else
			j->hosts[j->nhosts++] = h;
	}
	qsort(j->hosts, (size_t)j->nhosts, sizeof(int), topo_cmp_int);
	j->job = job;
	j->gpus_per_host = gpus_per_host;
	j->cores_per_host = cores_per_host;
	if (comm)
		j->comm = *comm;
	j->heavy = j->comm.cls == PLACE_COMM_HEAVY;
	snprintf(j->policy, sizeof(j->policy), "%s", policy ? policy : "");
	span(o->c, j->hosts, j->nhosts, &j->groups, &j->leaves);
	j->colour = o->njobs;
	for (int i = 0; i < j->nhosts; i++) {
		if (o->host_job[j->hosts[i]] < 0)
			o->host_job[j->hosts[i]] = o->njobs;
		o->host_njobs[j->hosts[i]]++;
	}
	o->njobs++;
	return 0;
}

int report_occupancy_add_running(report_occupancy *o, const report_log *log, double at)
{
	int n, *run = report_log_running(log, at, &n), rc = 0;

	if (!run)
		return -1;
	for (int i = 0; i < n && rc == 0; i++) {
		const report_decision *d = &log->d[run[i]];
		place_comm m = report_decision_comm(d);

		rc = report_occupancy_add(o, d->job, (const char *const *)d->allocated, d->nallocated,
					  d->gpus_per_host, d->cores_per_host, &m, d->policy);
	}
	free(run);
	return rc;
}

void report_occupancy_finish(report_occupancy *o)
{
	const place_cluster *c = o->c;
	long idle_in_busy_groups = 0;

	memset(o->group_hosts, 0, (size_t)o->ngroups * sizeof(int));
	memset(o->group_busy, 0, (size_t)o->ngroups * sizeof(int));
	memset(o->group_idle, 0, (size_t)o->ngroups * sizeof(int));
	o->idle_hosts = o->busy_hosts = o->heavy_spanning = 0;
	for (int h = 0; h < o->nhosts; h++) {
		int g = place_cluster_host_group(c, h) >= 0 ? place_cluster_host_group(c, h) : o->ngroups - 1;
		int busy = o->host_njobs[h] > 0;

		o->group_hosts[g]++;
		o->group_busy[g] += busy;
		if (busy)
			o->busy_hosts++;
		else if (!(o->host_flags[h] & (PLACE_HOST_DOWN | PLACE_HOST_DRAIN))) {
			o->idle_hosts++;
			o->group_idle[g]++;
		}
	}
	for (int h = 0; h < o->nhosts; h++) {
		int g = place_cluster_host_group(c, h) >= 0 ? place_cluster_host_group(c, h) : o->ngroups - 1;

		if (o->host_njobs[h] == 0 &&
		    !(o->host_flags[h] & (PLACE_HOST_DOWN | PLACE_HOST_DRAIN)) &&
		    o->group_busy[g] > 0)
			idle_in_busy_groups++;
	}
	o->fragmentation = o->idle_hosts ? (double)idle_in_busy_groups / o->idle_hosts : 0;
	for (int j = 0; j < o->njobs; j++)
		o->heavy_spanning += o->jobs[j].heavy && o->jobs[j].groups > 1;
}

place_state *report_occupancy_state(const report_occupancy *o, int host_gpus, int host_cores)
{
	place_state *s = place_state_new(o->c);

	if (!s)
		return NULL;
	for (int h = 0; h < o->nhosts; h++) {
		int g = place_cluster_host_gpus(o->c, h) > 0 ? place_cluster_host_gpus(o->c, h) : host_gpus;

		place_state_set_host(s, h, g, g, host_cores, host_cores, o->host_flags[h]);
	}
	for (int j = 0; j < o->njobs; j++) {
		const report_job *jb = &o->jobs[j];

		if (jb->nhosts == 0)
			continue;
		/* fails only for a job id seen twice (two sources): keep the first */
		(void)place_state_add_job(s, jb->job, jb->hosts, jb->nhosts, jb->gpus_per_host,
					  jb->cores_per_host,
					  jb->comm.cls != PLACE_COMM_NONE ? &jb->comm : NULL);
	}
	return s;
}

/* Name of span item k (see report_span_names). */
static const char *span_name(const place_cluster *c, int which, int k)
{
	if (which == 1)
		return place_cluster_leaf_name(c, k);
	if (which == 2)
		return place_cluster_domain_name(c, k);
	return k < place_cluster_ngroups(c) ? place_cluster_group_name(c, k) : "(none)";
}

char *report_span_names(const place_cluster *c, const int *h, int n, int which, int *count)
{
	int N = which == 1 ? place_cluster_nleaves(c)
		: which == 2 ? place_cluster_ndomains(c) : place_cluster_ngroups(c) + 1;
	uint8_t *seen = calloc((size_t)N + 1, 1);
	size_t len = 1, pos = 0;
	char *out;

	*count = 0;
	if (!seen)
		return NULL;
	for (int i = 0; i < n; i++) {
		if (which == 1) {
			for (int r = 0; r < place_cluster_nrails(c); r++) {
				int l = place_cluster_host_leaf(c, h[i], r);

				if (l >= 0)
					seen[l] = 1;
			}
		} else if (which == 2) {
			if (place_cluster_host_domain(c, h[i]) >= 0)
				seen[place_cluster_host_domain(c, h[i])] = 1;
		} else {
			seen[place_cluster_host_group(c, h[i]) >= 0 ? place_cluster_host_group(c, h[i]) : N - 1] = 1;
		}
	}
	for (int k = 0; k < N; k++)
		if (seen[k])
			len += strlen(span_name(c, which, k)) + 1;
	out = malloc(len);
	if (!out) {
		free(seen);
		return NULL;
	}
	out[0] = '\0';
	for (int k = 0; k < N; k++)
		if (seen[k]) {
			pos += (size_t)snprintf(out + pos, len - pos, "%s%s", *count ? "," : "",
						span_name(c, which, k));
			++*count;
		}
	free(seen);
	return out;
}

int report_leaf_index(const place_cluster *c, const char *name)
{
	for (int l = 0; l < place_cluster_nleaves(c); l++)
		if (strcmp(place_cluster_leaf_name(c, l), name) == 0)
			return l;
	return -1;
}

int report_nleaves(const place_cluster *c)
{
	return place_cluster_nleaves(c);
}

const char *report_leaf_name(const place_cluster *c, int leaf)
{
	return place_cluster_leaf_name(c, leaf);
}
