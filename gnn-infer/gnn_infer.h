/*
 * gnn_infer: running a gnn_model on a graph — vertex embeddings, then scores
 * of vertex sets (candidate placements).
 *
 * A gnn_ctx holds every scratch buffer, sized once by gnn_ctx_create for the
 * largest graph and batch of sets it will see, so gnn_embed and
 * gnn_score_sets never allocate: they can run inside a scheduler's hot loop.
 * A context belongs to one thread; the model it points to may be shared.
 *
 * The graph is plain CSR: the neighbours of vertex i are
 * neighbours[offsets[i] .. offsets[i+1]-1], with an optional weight per
 * entry. Matrices are float32, row-major, one row per vertex (or set).
 */
#ifndef GNN_INFER_H
#define GNN_INFER_H

#include "gnn_export.h"

#include <stddef.h>
#include <stdint.h>

#include "gnn_error.h"
#include "gnn_model.h"

typedef struct gnn_graph {
	size_t n_vertices;
	const int32_t *offsets;    /* n_vertices + 1 entries, offsets[0] == 0, non-decreasing */
	const int32_t *neighbours; /* offsets[n_vertices] vertex ids in [0, n_vertices) */
	const float *edge_weights; /* one per neighbour entry, or NULL for all 1 */
} gnn_graph;

/* Vertex sets, CSR again: set s is members[offsets[s] .. offsets[s+1]-1],
 * each a row of the embedding matrix (which has n_vertices rows). */
typedef struct gnn_sets {
	size_t n_sets;
	const int32_t *offsets;
	const int32_t *members;
	size_t n_vertices;
} gnn_sets;

typedef struct gnn_ctx gnn_ctx;

/* A context for `model` accepting graphs up to max_vertices vertices and
 * max_edges neighbour entries, and up to max_sets sets per scoring call.
 * The model must outlive the context. NULL on error with `err` filled. */
GNN_EXPORT gnn_ctx *gnn_ctx_create(const gnn_model *model, size_t max_vertices, size_t max_edges,
			size_t max_sets, gnn_error *err);

GNN_EXPORT void gnn_ctx_free(gnn_ctx *ctx);

/* Embed every vertex: features is n_vertices x (model's vertex features),
 * raw (the model normalises them); out is n_vertices x gnn_model_embed_dim.
 * 0 on success, -1 on a bad graph (see gnn_ctx_error). Allocates nothing. */
GNN_EXPORT int gnn_embed(gnn_ctx *ctx, const gnn_graph *graph, const float *features, float *out);

/* gnn_embed for the first n_out vertices only: each layer computes only
 * the rows that later layers read (the wanted rows and, before a graph
 * layer, their neighbours), so a caller that needs few vertices' embeddings
 * should number them first. The rows [0, n_out) of out are bit for bit
 * those of gnn_embed; out has room for n_vertices rows, and rows from
 * n_out on are left unspecified. Allocates nothing. */
GNN_EXPORT int gnn_embed_first(gnn_ctx *ctx, const gnn_graph *graph, const float *features,
			       size_t n_out, float *out);

/* Most contexts one gnn_embed_ensemble call takes. */
#define GNN_ENSEMBLE_MAX 16

/* gnn_embed_first of each of n contexts (an ensemble: several models) on
 * one graph and one feature matrix, into outs[i]. When the models
 * normalise features alike and start with a GraphSAGE layer of the same
 * width, that layer's neighbour aggregation, the same for all, is done
 * once. Each outs[i] is bit for bit what gnn_embed_first would give.
 * On failure every context carries the error. Allocates nothing. */
GNN_EXPORT int gnn_embed_ensemble(gnn_ctx *const *ctxs, size_t n, const gnn_graph *graph,
		       const float *features, size_t n_out, float *const *outs);

/* Score each set: embeddings as produced by gnn_embed, set_features is
 * n_sets x (model's set features), raw; out gets n_sets scores.
 * 0 on success, -1 on bad sets (see gnn_ctx_error). Allocates nothing. */
GNN_EXPORT int gnn_score_sets(gnn_ctx *ctx, const float *embeddings, const gnn_sets *sets,
		   const float *set_features, float *out);

/* The report of the last failed gnn_embed / gnn_score_sets on ctx. */
GNN_EXPORT const gnn_error *gnn_ctx_error(const gnn_ctx *ctx);

/* Check a CSR graph: offsets, neighbour ids, finite weights, and the
 * limits (SIZE_MAX: none). 0 if sound, -1 with `err` filled. */
GNN_EXPORT int gnn_graph_check(const gnn_graph *g, size_t max_vertices, size_t max_edges,
			       gnn_error *err);

/* Check sets against their embedding rows and max_sets (SIZE_MAX: none). */
GNN_EXPORT int gnn_sets_check(const gnn_sets *s, size_t max_sets, gnn_error *err);

#endif
