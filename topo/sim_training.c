/*
 * sim_training: the simulator's training samples for topognn-train.
 *
 * Written as one "topognn-samples" JSON document (the format topognn-train
 * --samples reads; docs/gnn.md and docs/simulator.md): per sampled decision
 * a graph of the cluster state (hosts, leaves, pods), and per candidate
 * placement a sample {set, set_features, target} whose target is what the
 * simulation measured after re-running the moment with that candidate.
 */
#include "sim_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const vertex_feature[SIM_VERTEX_FEATURES] = {
	"is_host", "is_leaf", "is_pod", "idle_share", "leaf_uplink_util", "down"};
static const char *const set_feature[SIM_SET_FEATURES] = {
	"log2_hosts", "cross_leaf_flow_share", "cross_group_flow_share",
	"groups_spanned", "bytes_per_iter_gb", "compute_s_per_iter"};

struct topo_sim_training {
	sim_sample_set **sets;
	int n, cap, nsamples;
};

topo_sim_training *topo_sim_training_new(void)
{
	return calloc(1, sizeof(topo_sim_training));
}

void sim_sample_set_free(sim_sample_set *s)
{
	if (!s)
		return;
	for (int c = 0; s->sets && c < s->ncands; c++)
		free(s->sets[c]);
	free(s->sets);
	free(s->set_len);
	free(s->set_features);
	free(s->targets);
	free(s->features);
	free(s->edges);
	free(s);
}

void topo_sim_training_free(topo_sim_training *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->n; i++)
		sim_sample_set_free(t->sets[i]);
	free(t->sets);
	free(t);
}

int sim_training_add(topo_sim_training *t, sim_sample_set *s)
{
	if (t->n == t->cap) {
		int cap = t->cap ? 2 * t->cap : 16;
		sim_sample_set **n = realloc(t->sets, (size_t)cap * sizeof(*n));

		if (!n) {
			sim_sample_set_free(s);
			return -1;
		}
		t->sets = n;
		t->cap = cap;
	}
	t->sets[t->n++] = s;
	t->nsamples += s->ncands;
	return 0;
}

int topo_sim_training_nsamples(const topo_sim_training *t)
{
	return t->nsamples;
}

int topo_sim_training_ngraphs(const topo_sim_training *t)
{
	return t->n;
}

/* The state as a graph: hosts, then leaves, then pods; edges host-leaf (per
 * rail) and leaf-pod (the leaf's pod). Features per vertex:
 * is_host, is_leaf, is_pod, idle share (host: free GPUs share, leaf/pod:
 * idle hosts share), leaf up-link utilisation, down flag (0). The simulator
 * and placement-report's history export build their graphs here. */
void sim_state_graph(sim_net *n, int H, int G, const int *gpus_used, const int *njobs,
		     sim_sample_set *ss, int *npods_out)
{
	int L = sim_net_nleaves(n), R = sim_net_nrails(n), P = 0, ne = 0;
	int *leaf_hosts = calloc((size_t)L + 1, sizeof(int)), *leaf_idle = calloc((size_t)L + 1, sizeof(int));

	for (int l = 0; l < L; l++)
		if (sim_net_leaf_pod(n, l) + 1 > P)
			P = sim_net_leaf_pod(n, l) + 1;
	*npods_out = P;
	ss->nvertices = H + L + P;
	ss->features = calloc((size_t)ss->nvertices * SIM_VERTEX_FEATURES + 1, sizeof(float));
	ss->edges = calloc((size_t)2 * (H * R + L) + 2, sizeof(int));
	if (!ss->features || !ss->edges || !leaf_hosts || !leaf_idle) {
		free(ss->features);
		ss->features = NULL;
		free(leaf_hosts);
		free(leaf_idle);
		return;
	}
	for (int h = 0; h < H; h++) {
		float *f = &ss->features[h * SIM_VERTEX_FEATURES];

		f[0] = 1;
		f[3] = (float)(G > 0 ? (double)(G - gpus_used[h]) / G
					: njobs[h] == 0);
		for (int r = 0; r < R; r++) {
			int l = sim_net_host_leaf(n, h, r);

			if (l < 0)
				continue;
			ss->edges[2 * ne] = h;
			ss->edges[2 * ne + 1] = H + l;
			ne++;
			leaf_hosts[l]++;
			leaf_idle[l] += njobs[h] == 0;
		}
	}
	for (int l = 0; l < L; l++) {
		float *f = &ss->features[(H + l) * SIM_VERTEX_FEATURES];
		float *pf = &ss->features[(H + L + sim_net_leaf_pod(n, l)) * SIM_VERTEX_FEATURES];

		f[1] = 1;
		f[3] = leaf_hosts[l] ? (float)leaf_idle[l] / leaf_hosts[l] : 0;
		f[4] = (float)sim_net_leaf_util(n, l);
		pf[2] = 1;
		pf[3] += (float)leaf_idle[l]; /* normalised below */
		pf[4] += (float)leaf_hosts[l];
		ss->edges[2 * ne] = H + l;
		ss->edges[2 * ne + 1] = H + L + sim_net_leaf_pod(n, l);
		ne++;
	}
	for (int p = 0; p < P; p++) {
		float *pf = &ss->features[(H + L + p) * SIM_VERTEX_FEATURES];

		pf[3] = pf[4] > 0 ? pf[3] / pf[4] : 0;
		pf[4] = 0;
	}
	ss->nedges = ne;
	free(leaf_hosts);
	free(leaf_idle);
}


int sim_set_features(sim_net *n, const int *hosts, int nhosts, int groups,
		     const place_comm *comm, float *sf)
{
	sim_flows fl = {0};

	if (sim_net_ring(n, hosts, nhosts, &fl)) {
		sim_flows_free(&fl);
		return -1;
	}
	sf[0] = (float)log2((double)nhosts);
	sf[1] = (float)(fl.flows > 0 ? fl.cross_leaf / fl.flows : 0);
	sf[2] = (float)(fl.flows > 0 ? fl.cross_group / fl.flows : 0);
	sf[3] = (float)groups;
	sf[4] = (float)(comm->bytes_per_iter / 1e9);
	sf[5] = (float)comm->compute_s_per_iter;
	sim_flows_free(&fl);
	return 0;
}

static void names(FILE *f, const char *key, const char *const *v, int n)
{
	fprintf(f, "\"%s\":[", key);
	for (int i = 0; i < n; i++)
		fprintf(f, "%s\"%s\"", i ? "," : "", v[i]);
	fprintf(f, "]");
}

static void floats(FILE *f, const float *v, int n)
{
	fputc('[', f);
	for (int i = 0; i < n; i++)
		fprintf(f, "%s%.6g", i ? "," : "", (double)v[i]);
	fputc(']', f);
}

static void graph(FILE *f, const sim_sample_set *s)
{
	fprintf(f, "{\"n_vertices\":%d,\"edges\":[", s->nvertices);
	for (int e = 0; e < s->nedges; e++)
		fprintf(f, "%s[%d,%d]", e ? "," : "", s->edges[2 * e], s->edges[2 * e + 1]);
	fprintf(f, "],\n\"features\":[");
	for (int v = 0; v < s->nvertices; v++) {
		fputs(v ? "," : "", f);
		floats(f, &s->features[v * SIM_VERTEX_FEATURES], SIM_VERTEX_FEATURES);
	}
	fprintf(f, "],\n\"samples\":[");
	for (int c = 0; c < s->ncands; c++) {
		fprintf(f, "%s{\"set\":[", c ? ",\n" : "");
		for (int i = 0; i < s->set_len[c]; i++)
			fprintf(f, "%s%d", i ? "," : "", s->sets[c][i]);
		fprintf(f, "],\"set_features\":");
		floats(f, &s->set_features[c * SIM_SET_FEATURES], SIM_SET_FEATURES);
		fprintf(f, ",\"target\":%.6g}", (double)s->targets[c]);
	}
	fprintf(f, "]}");
}

int topo_sim_training_write(const topo_sim_training *t, const char *path, topo_error *err)
{
	FILE *f;

	if (t->n == 0) {
		topo_error_set(err, path, 0,
			       "no training samples were collected (no decision had two candidates)");
		return -1;
	}
	f = fopen(path, "w");
	if (!f) {
		topo_error_set(err, path, 0, "cannot write: %s", strerror(errno));
		return -1;
	}
	fprintf(f, "{\"format\":\"topognn-samples\",\"version\":1,\n");
	names(f, "vertex_features", vertex_feature, SIM_VERTEX_FEATURES);
	fprintf(f, ",\n");
	names(f, "set_features", set_feature, SIM_SET_FEATURES);
	fprintf(f, ",\n\"graphs\":[\n");
	for (int i = 0; i < t->n; i++) {
		fputs(i ? ",\n" : "", f);
		graph(f, t->sets[i]);
	}
	fprintf(f, "]}\n");
	if (ferror(f) | fclose(f)) {
		topo_error_set(err, path, 0, "error writing the samples");
		return -1;
	}
	return 0;
}
