/*
 * gnn_train: the training loop — input checks, minibatches of one graph's
 * samples in a seeded shuffled order, and Adam updates of the model's
 * parameters from the gradients of gnn_backprop.c. A run that diverges stops
 * at the first minibatch whose loss is not finite (or, after the last step,
 * at the first parameter that is not), so no NaN weights reach a model file.
 */
#include "gnn_internal.h"
#include "gnn_train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gnn_train_opts_default(gnn_train_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->epochs = 50;
	o->batch = 32;
	o->lr = 1e-3f;
	o->beta1 = 0.9f;
	o->beta2 = 0.999f;
	o->adam_eps = 1e-8f;
	o->loss = GNN_LOSS_MSE;
	o->seed = 1;
}

/* A minibatch: samples order[first .. first+count) of graph `graph`. */
struct batch {
	size_t graph, first, count;
};

struct adam {
	double *m, *v, *grad;
	size_t step;
};

static void adam_step(struct adam *a, float *params, size_t n, const gnn_train_opts *o)
{
	const double b1 = o->beta1, b2 = o->beta2;
	double c1, c2;
	size_t i;

	a->step++;
	c1 = 1.0 - pow(b1, (double)a->step);
	c2 = 1.0 - pow(b2, (double)a->step);
	for (i = 0; i < n; i++) {
		const double g = a->grad[i];

		a->m[i] = b1 * a->m[i] + (1.0 - b1) * g;
		a->v[i] = b2 * a->v[i] + (1.0 - b2) * g * g;
		params[i] -= (float)(o->lr * (a->m[i] / c1) / (sqrt(a->v[i] / c2) + o->adam_eps));
	}
}

/* Fisher-Yates with the library's seeded generator. */
static void shuffle(void *base, size_t n, size_t size, uint64_t *rng)
{
	unsigned char *p = base, tmp[sizeof(struct batch)];
	size_t i;

	for (i = n; i > 1; i--) {
		const size_t j = (size_t)(gnn_rng_next(rng) % i);

		memcpy(tmp, p + (i - 1) * size, size);
		memcpy(p + (i - 1) * size, p + j * size, size);
		memcpy(p + j * size, tmp, size);
	}
}

static int check_graphs(const gnn_model *m, const gnn_train_graph *gs, size_t n, gnn_error *err,
			size_t *max_v, size_t *n_batches, size_t batch)
{
	size_t i;

	*max_v = 0;
	*n_batches = 0;
	for (i = 0; i < n; i++) {
		gnn_sets sets = {gs[i].n_samples, gs[i].set_offsets, gs[i].set_members,
				 gs[i].graph.n_vertices};

		if (gnn_graph_check(&gs[i].graph, SIZE_MAX, SIZE_MAX, err) ||
		    gnn_sets_check(&sets, SIZE_MAX, err)) {
			gnn_error inner = *err;
			char where[GNN_ERROR_PATH_LEN + 32];

			snprintf(where, sizeof(where), "graphs[%zu].%s", i, inner.path);
			gnn_error_set(err, NULL, where, "%s", inner.text);
			return -1;
		}
		if (gs[i].graph.n_vertices > *max_v)
			*max_v = gs[i].graph.n_vertices;
		*n_batches += (gs[i].n_samples + batch - 1) / batch;
	}
	if (gnn_model_embed_dim(m) == 0 || m->readout >= m->n_layers) {
		gnn_error_set(err, NULL, NULL, "the model has no readout layer");
		return -1;
	}
	return 0;
}

/* -1 with err set when a minibatch's loss is NaN or infinite. */
static int check_loss(double loss, size_t epoch, size_t b, size_t n_batches, gnn_error *err)
{
	if (isfinite(loss))
		return 0;
	gnn_error_set(err, NULL, NULL,
		      "training diverged: the loss is %s at epoch %zu, minibatch %zu of %zu "
		      "(lower the step size)",
		      isnan(loss) ? "NaN" : "infinite", epoch, b + 1, n_batches);
	return -1;
}

/* -1 with err set when the last Adam step left a parameter NaN or infinite. */
static int check_params(const gnn_model *m, gnn_error *err)
{
	size_t i;

	for (i = 0; i < m->n_params; i++)
		if (!isfinite(m->params[i])) {
			gnn_error_set(err, NULL, NULL,
				      "training diverged: parameter %zu is not finite after the "
				      "last step (lower the step size)", i);
			return -1;
		}
	return 0;
}

int gnn_train(gnn_model *m, const gnn_train_graph *gs, size_t n_graphs, const gnn_train_opts *o,
	      gnn_error *err)
{
	struct adam a = {0};
	struct batch *batches = NULL;
	size_t **order = NULL, max_v, n_batches, i, j, epoch, b;
	uint64_t rng = o->seed;
	gnn_trainer *t = NULL;
	int rc = -1;

	if (o->batch == 0) {
		gnn_error_set(err, NULL, NULL, "the batch size must be at least 1");
		return -1;
	}
	if (check_graphs(m, gs, n_graphs, err, &max_v, &n_batches, o->batch))
		return -1;
	a.m = calloc(m->n_params + 1, sizeof(double));
	a.v = calloc(m->n_params + 1, sizeof(double));
	a.grad = calloc(m->n_params + 1, sizeof(double));
	batches = calloc(n_batches + 1, sizeof(*batches));
	order = calloc(n_graphs + 1, sizeof(*order));
	t = gnn_trainer_create(m, max_v, o->batch, err);
	if (!a.m || !a.v || !a.grad || !batches || !order || !t)
		goto out;
	for (i = 0; i < n_graphs; i++) {
		if (!(order[i] = calloc(gs[i].n_samples + 1, sizeof(size_t))))
			goto out;
		for (j = 0; j < gs[i].n_samples; j++)
			order[i][j] = j;
	}
	for (epoch = 1; epoch <= o->epochs; epoch++) {
		double sum = 0.0;
		size_t seen = 0;

		for (i = 0, b = 0; i < n_graphs; i++) {
			shuffle(order[i], gs[i].n_samples, sizeof(size_t), &rng);
			for (j = 0; j < gs[i].n_samples; j += o->batch)
				batches[b++] = (struct batch){i, j,
					gs[i].n_samples - j < o->batch ? gs[i].n_samples - j : o->batch};
		}
		shuffle(batches, n_batches, sizeof(*batches), &rng);
		for (b = 0; b < n_batches; b++) {
			const struct batch *bt = &batches[b];
			double loss;

			memset(a.grad, 0, m->n_params * sizeof(double));
			loss = gnn_trainer_loss(t, &gs[bt->graph], order[bt->graph] + bt->first,
						bt->count, o->loss, a.grad);
			if (check_loss(loss, epoch, b, n_batches, err))
				goto out;
			sum += loss * (double)bt->count;
			seen += bt->count;
			adam_step(&a, m->params, m->n_params, o);
			if (o->on_batch)
				o->on_batch(o->arg, epoch, b + 1, n_batches);
		}
		if (o->on_epoch)
			o->on_epoch(o->arg, epoch, seen ? sum / (double)seen : 0.0);
	}
	if (check_params(m, err))
		goto out;
	rc = 0;
out:
	if (rc && err && !err->text[0])
		gnn_error_set(err, NULL, NULL, "out of memory while training");
	for (i = 0; order && i < n_graphs; i++)
		free(order[i]);
	free(order);
	free(batches);
	free(a.m);
	free(a.v);
	free(a.grad);
	gnn_trainer_free(t);
	return rc;
}
