/*
 * sim_samples: the GNN's training sample file ("topognn-samples", version
 * 1; docs/gnn.md, "Sample file"), written by the simulator and
 * placement-report and read by topognn-train. Both ends live in this one
 * module so the format has one definition.
 *
 * A file holds the feature names and one or more graphs (cluster states,
 * one per sampled decision), each in CSR or as an undirected edge list,
 * with vertex features and samples (vertex set, set features, target
 * score, higher is better).
 */
#ifndef SIM_SAMPLES_H
#define SIM_SAMPLES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gnn_error.h"
#include "gnn_train.h"
#include "place.h"
#include "place_features.h"
#include "topo_error.h"

#define SIM_SAMPLES_FORMAT "topognn-samples"
#define SIM_SAMPLES_VERSION 1

/* ---- writing ------------------------------------------------------------------ */

/* One decision: the state as a graph (place_features), and per candidate
 * the host set as vertex ids, its set features and its target. */
typedef struct sim_sample_set {
	int nvertices, nentries;
	int32_t *offsets, *neighbours; /* CSR, from place_features */
	float *weights;
	float *features; /* nvertices x PLACE_FEAT_VERTEX */
	int ncands;
	int **sets;      /* vertex ids */
	int *set_len;
	float *set_features; /* ncands x PLACE_FEAT_SET */
	float *targets;  /* higher is better */
} sim_sample_set;

void sim_sample_set_free(sim_sample_set *s);

/* The state as the gnn scorer sees it (place_features): this state's CSR
 * graph and vertex features into ss. Returns 0, or -1 when memory runs out. */
int sim_sample_graph(place_features *feat, const place_state *st, sim_sample_set *ss);

/* The sample sets collected for one file. */
typedef struct sim_samples sim_samples;

sim_samples *sim_samples_new(void);
void sim_samples_free(sim_samples *t);
/* Takes ownership of s (freed on failure too). Returns 0 or -1. */
int sim_samples_add(sim_samples *t, sim_sample_set *s);
int sim_samples_nsamples(const sim_samples *t);
int sim_samples_ngraphs(const sim_samples *t);
/* Write the collected sets as one document. 0, or -1 with err. */
int sim_samples_write(const sim_samples *t, const char *path, topo_error *err);

/* ---- reading ------------------------------------------------------------------ */

/* The arrays one graph owns; the gnn_train_graph points into them. */
struct sim_samples_graph_store {
	int32_t *offsets, *neighbours, *set_offsets, *set_members;
	float *weights, *features, *set_features, *targets;
};

typedef struct sim_samples_file {
	size_t n_vertex_features, n_set_features;
	char **vertex_names, **set_names;
	size_t n_graphs;
	gnn_train_graph *graphs;
	struct sim_samples_graph_store *store;
} sim_samples_file;

/* Read and check a sample file. 0, or -1 with `err` (file, JSON path, text). */
int sim_samples_load(const char *path, sim_samples_file *s, gnn_error *err);

void sim_samples_file_free(sim_samples_file *s);

/* Move the graphs of `from` (read from `path`) to the end of `into`; the
 * feature names must be the same. `from` is freed either way. 0, or -1
 * with `err`. */
int sim_samples_append(sim_samples_file *into, sim_samples_file *from, const char *path,
		       gnn_error *err);

/* Mean and standard deviation (population; 1 when 0) of each vertex or set
 * feature over the whole file, for the model's input normalisation. */
void sim_samples_feature_stats(const sim_samples_file *s, int set, float *mean, float *std);

#endif
