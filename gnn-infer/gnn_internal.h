/*
 * gnn_internal: the inside of a gnn_model and the layer kernels, shared by
 * the library's own files (model I/O, inference, training). Not installed:
 * callers see only gnn_model.h, gnn_infer.h and gnn_train.h.
 *
 * All trainable floats of a model live in one 64-byte-aligned array, each
 * tensor starting on a 16-float boundary; a layer holds offsets into it. The
 * trainer keeps gradients and Adam moments at the same offsets.
 */
#ifndef GNN_INTERNAL_H
#define GNN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "gnn_infer.h"
#include "gnn_model.h"

#define GNN_ALIGN 64
#define GNN_NO_PARAM ((size_t)-1)
/* Rows the matrix kernels multiply at once (each weight load feeds them all). */
#define GNN_ROWS 4
/* Fewest rows of layer scratch: sage builds two blocks of GNN_ROWS rows
 * [x_i, mean, max] (one multiplied while the next is aggregated). */
#define GNN_SCRATCH_ROWS (6 * GNN_ROWS)

enum gnn_layer_kind {
	GNN_LINEAR,
	GNN_RELU,
	GNN_GELU,
	GNN_LAYERNORM,
	GNN_SAGE,
	GNN_GIN,
	GNN_READOUT
};

struct gnn_layer {
	enum gnn_layer_kind kind;
	size_t in, out; /* row widths consumed and produced */
	float eps;      /* layernorm: variance epsilon; gin: self weight is 1 + eps */
	/* Offsets into model->params, GNN_NO_PARAM when absent.
	 * linear, gin: w is in x out; sage: w is 3*in x out (self, mean, max rows);
	 * layernorm: w is gamma, b is beta (dim each). */
	size_t w, b;
};

struct gnn_feature_spec {
	size_t n;
	char **names;
	float *mean;
	float *std;
};

struct gnn_model {
	struct gnn_feature_spec vertex, set;
	size_t n_layers;
	size_t readout; /* index of the readout layer */
	struct gnn_layer *layers;
	size_t n_params;
	float *params;
};

/* Aligned zeroed allocation of n floats (NULL on failure or n too large). */
float *gnn_alloc_floats(size_t n);

/* Name of a layer kind as written in the model file. */
const char *gnn_layer_kind_name(enum gnn_layer_kind kind);

/* Widest row any layer reads or writes in [first, last). */
size_t gnn_model_max_width(const gnn_model *m, size_t first, size_t last);

/* Allocate a model with the given layers (copied) and feature specs (moved
 * in), assigning parameter offsets; params are zero. NULL on failure. */
gnn_model *gnn_model_assemble(const struct gnn_layer *layers, size_t n_layers,
			      struct gnn_feature_spec vertex, struct gnn_feature_spec set);

void gnn_feature_spec_free(struct gnn_feature_spec *s);

/* Size in floats of a layer's weight and bias tensors (0 when absent). */
size_t gnn_layer_w_size(const struct gnn_layer *l);
size_t gnn_layer_b_size(const struct gnn_layer *l);

/* splitmix64: a tiny, portable, seedable generator (same stream everywhere). */
uint64_t gnn_rng_next(uint64_t *state);
/* Uniform float in [0, 1) with 24 random bits. */
float gnn_rng_uniform(uint64_t *state);

/* ---- forward kernels (gnn_layers.c); rows are contiguous, n rows ---- */

/* Activation applied to the output rows of a kernel (fused), or none. */
enum gnn_act { GNN_ACT_NONE, GNN_ACT_RELU, GNN_ACT_GELU };

/* y = act(x W + b), x is n x in, W in x out, y n x out. */
void gnn_linear_forward(const float *x, size_t n, size_t in, size_t out, const float *w,
			const float *b, float *y, enum gnn_act act);

/* y = act(x) elementwise over count floats (y may equal x). */
void gnn_act_forward(enum gnn_act act, const float *x, size_t count, float *y);

/* Row-wise layer norm with scale gamma and shift beta (y may equal x). */
void gnn_layernorm_forward(const float *x, size_t n, size_t dim, const float *gamma,
			   const float *beta, float eps, float *y);

/* GraphSAGE on rows [0, n) (n <= g->n_vertices; they may read any vertex):
 * y_i = act(x_i Ws + mean_j m_ij Wm + max_j m_ij Wx + b), with messages
 * m_ij = w_ij x_j over the CSR neighbours j of i. `scratch` holds
 * GNN_SCRATCH_ROWS * in floats. */
void gnn_sage_forward(const gnn_graph *g, size_t n, const float *x, size_t in, size_t out,
		      const float *w, const float *b, float *y, float *scratch, enum gnn_act act);

/* One model's part of gnn_sage_forward_shared: its weights, output and
 * fused activation. */
struct gnn_sage_out {
	size_t out;
	const float *w, *b;
	float *y;
	enum gnn_act act;
};

/* Rows narrower than this are padded to a multiple of 16 floats for
 * gnn_sage_forward_shared, so that their aggregation runs in whole vectors. */
#define GNN_PADDED_MAX 32

/* The row stride gnn_sage_forward_shared wants for `in` input columns. */
size_t gnn_sage_stride(size_t in);

/* GraphSAGE layers of n_models models on the same input x, rows [0, n):
 * x has `in` columns in rows `stride` floats apart (in, or
 * gnn_sage_stride(in) with the padding zero, which aggregates in whole
 * vectors). The neighbour mean and max of each row are computed once for
 * all, then each model's o[m] as gnn_sage_forward would (the same bits). */
void gnn_sage_forward_shared(const gnn_graph *g, size_t n, const float *x, size_t stride,
			     size_t in, const struct gnn_sage_out *o, size_t n_models,
			     float *scratch);

/* GIN on rows [0, n): y_i = act(((1+eps) x_i + sum_j w_ij x_j) W + b).
 * `scratch` holds max(n_vertices x out, GNN_ROWS x in) floats
 * (n_vertices x out to transform before aggregating when out < in). */
void gnn_gin_forward(const gnn_graph *g, size_t n, const float *x, size_t in, size_t out,
		     const float *w, const float *b, float eps, float *y, float *scratch,
		     enum gnn_act act);

/* Neighbour mean and max of row i (messages w_ij x_j; both 0 without
 * neighbours) into mean[dim] and max[dim]. */
void gnn_aggregate_row(const gnn_graph *g, const float *x, size_t dim, size_t i,
		       float *mean, float *max);

/* GIN's pre-transform row: z = (1+eps) x_i + sum_j w_ij x_j over dim columns. */
void gnn_gin_sum_row(const gnn_graph *g, const float *x, size_t dim, size_t i, float eps,
		     float *z);

/* Readout: row s of y = [mean of emb over set s, max over set s, f_s]
 * where f holds nf already-normalised set features per set. */
void gnn_readout_forward(const float *emb, size_t dim, const gnn_sets *sets,
			 const float *f, size_t nf, float *y);

/* (x - mean) / std column-wise on an n x dim matrix, into rows y_stride
 * (>= dim) floats apart whose columns from dim on are zeroed. */
void gnn_normalise(const float *x, size_t n, size_t dim, const float *mean, const float *std,
		   float *y, size_t y_stride);

/* The activation a relu or gelu layer applies (none for other kinds). */
enum gnn_act gnn_act_of(enum gnn_layer_kind kind);

/* Any non-readout layer l of m on rows [0, n) of src into dst (a graph
 * layer reads src on its rows' neighbours too); `act` is an
 * activation fused after a linear, sage or gin layer (a relu or gelu layer
 * applies its own). `scratch` is n x (widest row) floats, at least
 * GNN_SCRATCH_ROWS rows. */
void gnn_layer_forward(const gnn_model *m, const struct gnn_layer *l, enum gnn_act act,
		       const gnn_graph *g, size_t n, const float *src, float *dst, float *scratch);

/* GELU (erf form) and its derivative. */
float gnn_gelu(float x);
float gnn_gelu_grad(float x);

#endif
