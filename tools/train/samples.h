/*
 * samples: the training sample file of topognn-train (docs/gnn.md,
 * "Sample file") read into gnn_train_graph views over owned arrays.
 *
 * A file holds the feature names and one or more graphs (cluster states),
 * each in CSR or as an undirected edge list, with vertex features and
 * samples (vertex set, set features, target score).
 */
#ifndef TRAIN_SAMPLES_H
#define TRAIN_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

#include "gnn_error.h"
#include "gnn_train.h"

#define SAMPLES_FORMAT "topognn-samples"
#define SAMPLES_VERSION 1

/* The arrays one graph owns; the gnn_train_graph points into them. */
struct samples_graph_store {
	int32_t *offsets, *neighbours, *set_offsets, *set_members;
	float *weights, *features, *set_features, *targets;
};

struct samples {
	size_t n_vertex_features, n_set_features;
	char **vertex_names, **set_names;
	size_t n_graphs;
	gnn_train_graph *graphs;
	struct samples_graph_store *store;
};

/* Read and check a sample file. 0, or -1 with `err` (file, JSON path, text). */
int samples_load(const char *path, struct samples *s, gnn_error *err);

void samples_free(struct samples *s);

/* Move the graphs of `from` (read from `path`) to the end of `into`; the
 * feature names must be the same. `from` is freed either way. 0, or -1
 * with `err`. */
int samples_append(struct samples *into, struct samples *from, const char *path,
		   gnn_error *err);

/* Mean and standard deviation (population; 1 when 0) of each vertex or set
 * feature over the whole file, for the model's input normalisation. */
void samples_feature_stats(const struct samples *s, int set, float *mean, float *std);

#endif
