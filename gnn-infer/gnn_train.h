/*
 * gnn_train: fitting a gnn_model's weights to scored examples — the part of
 * topognn-train that is maths rather than file handling.
 *
 * A training set is a list of graphs (cluster states). Each graph carries
 * vertex features and samples: a vertex set, the set's features and a target
 * score. Training minimises MSE and/or a pairwise ranking loss over
 * minibatches of samples of one graph with Adam; gradients come from
 * hand-written backpropagation, accumulated in double. Everything runs in a
 * fixed order on one thread, so a seed gives the same weights bit for bit.
 */
#ifndef GNN_TRAIN_H
#define GNN_TRAIN_H

#include "gnn_export.h"

#include <stddef.h>
#include <stdint.h>

#include "gnn_error.h"
#include "gnn_infer.h"
#include "gnn_model.h"

typedef struct gnn_train_graph {
	gnn_graph graph;
	const float *features;      /* n_vertices x vertex features, raw */
	size_t n_samples;
	const int32_t *set_offsets; /* n_samples + 1 */
	const int32_t *set_members;
	const float *set_features;  /* n_samples x set features, raw */
	const float *targets;       /* n_samples */
} gnn_train_graph;

enum gnn_loss {
	GNN_LOSS_MSE = 1,  /* mean of (score - target)^2 */
	GNN_LOSS_RANK = 2, /* mean over pairs with t_i > t_j of log(1 + exp(s_j - s_i)) */
	GNN_LOSS_BOTH = 3  /* their sum */
};

typedef struct gnn_train_opts {
	size_t epochs;
	size_t batch;      /* samples per minibatch (all of one graph) */
	float lr;          /* Adam step size */
	float beta1, beta2, adam_eps;
	enum gnn_loss loss;
	uint64_t seed;     /* shuffling */
	/* Called after each minibatch (done of total) and each epoch; may be NULL. */
	void (*on_batch)(void *arg, size_t epoch, size_t done, size_t total);
	void (*on_epoch)(void *arg, size_t epoch, double loss);
	void *arg;
} gnn_train_opts;

/* Defaults: 50 epochs, batch 32, lr 1e-3, Adam (0.9, 0.999, 1e-8), MSE, seed 1. */
GNN_EXPORT void gnn_train_opts_default(gnn_train_opts *o);

/* Train `model` in place. 0 on success, -1 with `err` filled (bad graph or
 * samples, feature count mismatch, no memory, or divergence: a minibatch loss
 * or a final parameter that is NaN or infinite; the weights are then garbage
 * and must not be saved). */
GNN_EXPORT int gnn_train(gnn_model *model, const gnn_train_graph *graphs, size_t n_graphs,
	      const gnn_train_opts *opts, gnn_error *err);

/* ---- the pieces, exposed for the gradient check ---- */

typedef struct gnn_trainer gnn_trainer;

/* Buffers to backpropagate `model` on graphs up to the given sizes. */
GNN_EXPORT gnn_trainer *gnn_trainer_create(const gnn_model *model, size_t max_vertices,
					   size_t max_sets, gnn_error *err);
GNN_EXPORT void gnn_trainer_free(gnn_trainer *t);

/* Loss of the samples idx[0..k) of g (all checked beforehand); when grad is
 * not NULL, adds d loss / d param to grad[0..gnn_model_n_params). */
GNN_EXPORT double gnn_trainer_loss(gnn_trainer *t, const gnn_train_graph *g, const size_t *idx,
				   size_t k, enum gnn_loss loss, double *grad);

#endif
