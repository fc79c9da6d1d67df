/*
 * place_state: what changes between decisions. Per host: free GPUs and
 * cores, down/drained flags, how many jobs run on it; the running jobs with
 * their communication; per fabric resource the number of background flows
 * the running heavy jobs put on it (kept incrementally, so a decision reads
 * them without recomputing); and a telemetry overlay of leaf up-link
 * utilisation. Every update bumps the version, which scorers use to cache
 * per-state work (GNN embeddings).
 */
#include "place_internal.h"

#include <stdlib.h>
#include <string.h>

place_state *place_state_new(const place_cluster *c)
{
	place_state *s = calloc(1, sizeof(*s));
	size_t N = (size_t)c->nhosts;

	if (!s)
		return NULL;
	s->c = c;
	s->total_gpus = calloc(N, sizeof(int));
	s->free_gpus = calloc(N, sizeof(int));
	s->total_cores = calloc(N, sizeof(int));
	s->free_cores = calloc(N, sizeof(int));
	s->flags = calloc(N, sizeof(unsigned));
	s->njobs = calloc(N, sizeof(int));
	s->bg_flows = calloc((size_t)c->nres + 1, sizeof(double));
	s->leaf_util = calloc((size_t)c->nleaves + 1, sizeof(double));
	if (!s->total_gpus || !s->free_gpus || !s->total_cores || !s->free_cores || !s->flags ||
	    !s->njobs || !s->bg_flows || !s->leaf_util) {
		place_state_free(s);
		return NULL;
	}
	for (size_t h = 0; h < N; h++)
		s->total_gpus[h] = s->free_gpus[h] = c->host_gpus[h];
	s->version = 1;
	return s;
}

void place_state_free(place_state *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->njobs_running; i++)
		free(s->jobs[i].hosts);
	free(s->jobs);
	free(s->total_gpus);
	free(s->free_gpus);
	free(s->total_cores);
	free(s->free_cores);
	free(s->flags);
	free(s->njobs);
	free(s->bg_flows);
	free(s->leaf_util);
	free(s);
}

void place_state_set_host(place_state *s, int host, int total_gpus, int free_gpus,
			  int total_cores, int free_cores, unsigned flags)
{
	if (host < 0 || host >= s->c->nhosts)
		return;
	s->total_gpus[host] = total_gpus;
	s->free_gpus[host] = free_gpus;
	s->total_cores[host] = total_cores;
	s->free_cores[host] = free_cores;
	s->flags[host] = flags;
	s->version++;
}

static int find_job(const place_state *s, uint32_t id)
{
	for (int i = 0; i < s->njobs_running; i++)
		if (s->jobs[i].id == id)
			return i;
	return -1;
}

/* Take (sign 1) or give back (sign -1) a job's hosts and fabric load. */
static void apply_job(place_state *s, const place_job *j, int sign)
{
	for (int i = 0; i < j->nhosts; i++) {
		int h = j->hosts[i];

		s->njobs[h] += sign;
		if (j->exclusive) {
			s->free_gpus[h] = sign > 0 ? 0 : s->total_gpus[h];
			s->free_cores[h] = sign > 0 ? 0 : s->total_cores[h];
		} else {
			s->free_gpus[h] -= sign * j->gpus;
			s->free_cores[h] -= sign * j->cores;
		}
	}
	if (j->loads)
		place_ring_flows(s->c, j->hosts, j->nhosts, j->comm.pattern != PLACE_PATTERN_PIPELINE,
				 s->bg_flows, sign, NULL, NULL);
}

int place_state_add_job(place_state *s, uint32_t job_id, const int *hosts, int nhosts,
			int gpus_per_host, int cores_per_host, const place_comm *comm)
{
	place_job j = { 0 };

	if (nhosts <= 0 || !hosts || find_job(s, job_id) >= 0)
		return -1;
	for (int i = 0; i < nhosts; i++)
		if (hosts[i] < 0 || hosts[i] >= s->c->nhosts)
			return -1;
	if (s->njobs_running == s->jobs_cap) {
		int cap = s->jobs_cap ? 2 * s->jobs_cap : 16;
		place_job *nj = realloc(s->jobs, (size_t)cap * sizeof(*nj));

		if (!nj)
			return -1;
		s->jobs = nj;
		s->jobs_cap = cap;
	}
	j.id = job_id;
	j.hosts = malloc((size_t)nhosts * sizeof(int));
	if (!j.hosts)
		return -1;
	memcpy(j.hosts, hosts, (size_t)nhosts * sizeof(int));
	place_sort_ints(j.hosts, nhosts); /* ring order is host order */
	j.nhosts = nhosts;
	j.gpus = gpus_per_host;
	j.cores = cores_per_host;
	j.exclusive = gpus_per_host <= 0 && cores_per_host <= 0;
	if (comm)
		j.comm = *comm;
	j.loads = comm && comm->cls == PLACE_COMM_HEAVY && nhosts > 1;
	apply_job(s, &j, 1);
	s->jobs[s->njobs_running++] = j;
	s->version++;
	return 0;
}

int place_state_remove_job(place_state *s, uint32_t job_id)
{
	int i = find_job(s, job_id);

	if (i < 0)
		return -1;
	apply_job(s, &s->jobs[i], -1);
	free(s->jobs[i].hosts);
	s->jobs[i] = s->jobs[--s->njobs_running];
	s->version++;
	return 0;
}

int place_state_set_job_end(place_state *s, uint32_t job_id, double end_s)
{
	int i = find_job(s, job_id);

	if (i < 0)
		return -1;
	s->jobs[i].end_s = end_s > 0 ? end_s : 0;
	s->version++; /* the model's packing reads end times */
	return 0;
}

int place_state_set_leaf_uplink_util(place_state *s, const char *leaf, double util)
{
	int v = topo_graph_find(s->c->g, TOPO_V_SWITCH, leaf);
	int l = v >= 0 ? s->c->vid_leaf[v] : -1;

	if (l < 0) {
		s->unknown_leaves++;
		return 1;
	}
	s->leaf_util[l] = util < 0 ? 0 : util > 0.99 ? 0.99 : util;
	s->version++;
	return 0;
}

int place_state_unknown_leaves(const place_state *s)
{
	return s->unknown_leaves;
}

uint64_t place_state_version(const place_state *s)
{
	return s->version;
}
