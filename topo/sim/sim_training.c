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

#include "place_features.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>


struct sim_training {
	sim_sample_set **sets;
	int n, cap, nsamples;
};

sim_training *sim_training_new(void)
{
	return calloc(1, sizeof(sim_training));
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
	free(s->offsets);
	free(s->neighbours);
	free(s->weights);
	free(s);
}

void sim_training_free(sim_training *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->n; i++)
		sim_sample_set_free(t->sets[i]);
	free(t->sets);
	free(t);
}

/* The state as the gnn scorer sees it (place_features): the static CSR
 * graph and the vertex features of the engine's state at this moment. */
int sim_sample_graph(place_features *feat, const place_state *st, sim_sample_set *ss)
{
	int nv, ne;

	ss->features = malloc(((size_t)place_features_max_vertices(feat) * PLACE_FEAT_VERTEX +
			       1) * sizeof(float));
	if (!ss->features)
		return -1;
	/* builds this state's graph (host types, see place_features.h) */
	place_features_vertices(feat, st, ss->features);
	nv = place_features_nvertices(feat);
	ne = place_features_nedges(feat);
	ss->nvertices = nv;
	ss->nentries = ne;
	ss->offsets = malloc(((size_t)nv + 1) * sizeof(int32_t));
	ss->neighbours = malloc(((size_t)ne + 1) * sizeof(int32_t));
	ss->weights = malloc(((size_t)ne + 1) * sizeof(float));
	if (!ss->offsets || !ss->neighbours || !ss->weights)
		return -1;
	memcpy(ss->offsets, place_features_offsets(feat), ((size_t)nv + 1) * sizeof(int32_t));
	memcpy(ss->neighbours, place_features_neighbours(feat), (size_t)ne * sizeof(int32_t));
	memcpy(ss->weights, place_features_weights(feat), (size_t)ne * sizeof(float));
	return 0;
}

int sim_training_add(sim_training *t, sim_sample_set *s)
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

int sim_training_nsamples(const sim_training *t)
{
	return t->nsamples;
}

int sim_training_ngraphs(const sim_training *t)
{
	return t->n;
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
	fprintf(f, "{\"n_vertices\":%d,\"offsets\":[", s->nvertices);
	for (int v = 0; v <= s->nvertices; v++)
		fprintf(f, "%s%d", v ? "," : "", (int)s->offsets[v]);
	fprintf(f, "],\n\"neighbours\":[");
	for (int e = 0; e < s->nentries; e++)
		fprintf(f, "%s%d", e ? "," : "", (int)s->neighbours[e]);
	fprintf(f, "],\n\"weights\":");
	floats(f, s->weights, s->nentries);
	fprintf(f, ",\n\"features\":[");
	for (int v = 0; v < s->nvertices; v++) {
		fputs(v ? "," : "", f);
		floats(f, &s->features[v * PLACE_FEAT_VERTEX], PLACE_FEAT_VERTEX);
	}
	fprintf(f, "],\n\"samples\":[");
	for (int c = 0; c < s->ncands; c++) {
		fprintf(f, "%s{\"set\":[", c ? ",\n" : "");
		for (int i = 0; i < s->set_len[c]; i++)
			fprintf(f, "%s%d", i ? "," : "", s->sets[c][i]);
		fprintf(f, "],\"set_features\":");
		floats(f, &s->set_features[c * PLACE_FEAT_SET], PLACE_FEAT_SET);
		fprintf(f, ",\"target\":%.6g}", (double)s->targets[c]);
	}
	fprintf(f, "]}");
}

int sim_training_write(const sim_training *t, const char *path, topo_error *err)
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
	names(f, "vertex_features", place_feature_vertex_names, PLACE_FEAT_VERTEX);
	fprintf(f, ",\n");
	names(f, "set_features", place_feature_set_names, PLACE_FEAT_SET);
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
