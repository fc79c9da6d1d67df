/*
 * gnn_model: a trained graph neural network, as read from (or written to) a
 * model file, plus the feature spec it was trained with.
 *
 * A model is an ordered list of layers split by one "readout" layer: the
 * layers before it turn per-vertex features into per-vertex embeddings
 * (linear, relu, gelu, layernorm, sage, gin); the readout pools the
 * embeddings of a vertex set (mean and max) and appends the set's own
 * features; the layers after it (linear, relu, gelu, layernorm) map that to
 * one score. docs/gnn.md gives the exact maths and the JSON schema.
 *
 * A loaded model is never modified: one model may be shared read-only by
 * any number of contexts (gnn_infer.h) on any number of threads.
 */
#ifndef GNN_MODEL_H
#define GNN_MODEL_H

#include "gnn_export.h"

#include <stddef.h>
#include <stdint.h>

#include "gnn_error.h"

#define GNN_MODEL_FORMAT "topognn-gnn"
#define GNN_MODEL_VERSION 1

typedef struct gnn_model gnn_model;

/* Which inputs a feature spec describes. */
enum gnn_feature_kind {
	GNN_VERTEX_FEATURES, /* one row per vertex, input of gnn_embed */
	GNN_SET_FEATURES     /* one row per vertex set, input of gnn_score_sets */
};

/* Message-passing kind used by gnn_model_build. */
enum gnn_conv { GNN_CONV_SAGE, GNN_CONV_GIN };

/* An architecture for gnn_model_build: names and normalisation of the inputs
 * and the sizes of the layers. */
typedef struct gnn_arch {
	size_t n_vertex_features;
	const char *const *vertex_names; /* n_vertex_features names */
	const float *vertex_mean;        /* NULL: all 0 */
	const float *vertex_std;         /* NULL: all 1 */
	size_t n_set_features;
	const char *const *set_names;
	const float *set_mean;
	const float *set_std;
	enum gnn_conv conv; /* message passing kind of every embedding layer */
	size_t layers;      /* number of message-passing layers, each followed by relu */
	size_t hidden;      /* width of the embedding layers */
	size_t head_hidden; /* width of the head's hidden layer (0: no hidden layer) */
} gnn_arch;

/* Read and validate a model file. NULL on error with `err` filled in. */
GNN_EXPORT gnn_model *gnn_model_load(const char *path, gnn_error *err);

/* Same from a string holding the JSON; `name` is used as the file in errors. */
GNN_EXPORT gnn_model *gnn_model_load_mem(const char *json, const char *name, gnn_error *err);

/* Write the model as JSON; float weights survive a write/load round trip
 * exactly. 0 on success, -1 with `err` filled in. */
GNN_EXPORT int gnn_model_write(const gnn_model *model, const char *path, gnn_error *err);

/* Same into a newly allocated string (free() it); NULL on error. */
GNN_EXPORT char *gnn_model_write_mem(const gnn_model *model, gnn_error *err);

/* A fresh model of architecture `arch`, weights drawn from `seed`
 * (Glorot-uniform weights, zero biases). NULL on error. */
GNN_EXPORT gnn_model *gnn_model_build(const gnn_arch *arch, uint64_t seed, gnn_error *err);

GNN_EXPORT void gnn_model_free(gnn_model *model);

/* Number of inputs of the given kind (vertex or set features). */
GNN_EXPORT size_t gnn_model_n_features(const gnn_model *model, enum gnn_feature_kind kind);

/* Name, mean and std of input `i` of the given kind; NULL/0 if out of range. */
GNN_EXPORT const char *gnn_model_feature_name(const gnn_model *model, enum gnn_feature_kind kind,
					      size_t i);
GNN_EXPORT float gnn_model_feature_mean(const gnn_model *model, enum gnn_feature_kind kind,
					size_t i);
GNN_EXPORT float gnn_model_feature_std(const gnn_model *model, enum gnn_feature_kind kind,
				       size_t i);

/* Check that the caller's features are exactly the model's, in order, so a
 * mismatch between the code that fills the features and the model is caught
 * at load time. 0 if they match, -1 with `err` naming the first difference. */
GNN_EXPORT int gnn_model_check_features(const gnn_model *model, enum gnn_feature_kind kind,
			     const char *const *names, size_t n, gnn_error *err);

/* Width of a vertex embedding (columns of gnn_embed's output). */
GNN_EXPORT size_t gnn_model_embed_dim(const gnn_model *model);

/* Graph layers (GraphSAGE, GIN) before the readout: a vertex's embedding
 * depends on the vertices at most this many edges away, and on no other
 * (so embedding some vertices needs only that neighbourhood). */
GNN_EXPORT size_t gnn_model_hops(const gnn_model *model);

/* Number of layers (readout included) and of trainable floats. */
GNN_EXPORT size_t gnn_model_n_layers(const gnn_model *model);
GNN_EXPORT size_t gnn_model_n_params(const gnn_model *model);

#endif
