/*
 * gnn_backprop: loss and exact gradient of a model on a minibatch — a
 * forward pass that keeps every layer's input, the loss, then the
 * hand-written backward pass of each layer kind in reverse order.
 *
 * Aggregations (neighbour mean/max, set readout) are recomputed in the
 * backward pass from the stored inputs rather than stored, and a max sends
 * its gradient to the first entry (in CSR order) that attains it. Parameter
 * gradients are accumulated in double; activation gradients are float.
 */
#include "gnn_internal.h"
#include "gnn_train.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct gnn_trainer {
	const gnn_model *m;
	size_t max_vertices, max_sets;
	float **acts;     /* acts[i] is the input of layer i; acts[n_layers] the scores */
	float *dv[2];     /* vertex-row gradients, ping-pong */
	float *ds[2];     /* set-row gradients, ping-pong */
	float *scratch;   /* forward scratch, max_vertices x vertex width */
	float *row;       /* one row of backward scratch */
	float *set_norm;  /* normalised set features of the batch */
	double *dscore;   /* d loss / d score per sample */
};

void gnn_trainer_free(gnn_trainer *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; t->acts && i <= t->m->n_layers; i++)
		free(t->acts[i]);
	free(t->acts);
	free(t->dv[0]);
	free(t->dv[1]);
	free(t->ds[0]);
	free(t->ds[1]);
	free(t->scratch);
	free(t->row);
	free(t->set_norm);
	free(t->dscore);
	free(t);
}

gnn_trainer *gnn_trainer_create(const gnn_model *m, size_t max_vertices, size_t max_sets,
				gnn_error *err)
{
	gnn_trainer *t = calloc(1, sizeof(*t));
	const size_t vw = gnn_model_max_width(m, 0, m->readout + 1);
	const size_t sw = gnn_model_max_width(m, m->readout, m->n_layers);
	const size_t nv = max_vertices + GNN_SCRATCH_ROWS, ns = max_sets + 1;
	size_t i;
	int bad;

	if (!t || !(t->acts = calloc(m->n_layers + 1, sizeof(*t->acts))))
		goto fail;
	t->m = m;
	t->max_vertices = max_vertices;
	t->max_sets = max_sets;
	bad = 0;
	for (i = 0; i <= m->n_layers; i++)
		bad |= !(t->acts[i] = gnn_alloc_floats(i <= m->readout ? nv * vw : ns * sw));
	t->dv[0] = gnn_alloc_floats(nv * vw);
	t->dv[1] = gnn_alloc_floats(nv * vw);
	t->ds[0] = gnn_alloc_floats(ns * sw);
	t->ds[1] = gnn_alloc_floats(ns * sw);
	t->scratch = gnn_alloc_floats(nv * vw);
	t->row = gnn_alloc_floats(6 * vw + sw);
	t->set_norm = gnn_alloc_floats(ns * (m->set.n + 1));
	t->dscore = calloc(ns, sizeof(*t->dscore));
	if (bad || !t->dv[0] || !t->dv[1] || !t->ds[0] || !t->ds[1] || !t->scratch || !t->row ||
	    !t->set_norm || !t->dscore)
		goto fail;
	return t;
fail:
	gnn_trainer_free(t);
	gnn_error_set(err, NULL, NULL, "cannot allocate training buffers for %zu vertices",
		      max_vertices);
	return NULL;
}

/* The one-set view of sample s of g, for the readout kernel. */
static gnn_sets sample_set(const gnn_train_graph *g, size_t s, int32_t off[2])
{
	off[0] = 0;
	off[1] = g->set_offsets[s + 1] - g->set_offsets[s];
	return (gnn_sets){1, off, g->set_members + g->set_offsets[s], g->graph.n_vertices};
}

static void forward(gnn_trainer *t, const gnn_train_graph *g, const size_t *idx, size_t k)
{
	const gnn_model *m = t->m;
	const size_t d = gnn_model_embed_dim(m), rw = m->layers[m->readout].out;
	size_t i, s;

	gnn_normalise(g->features, g->graph.n_vertices, m->vertex.n, m->vertex.mean,
		      m->vertex.std, t->acts[0], m->vertex.n);
	for (i = 0; i < m->readout; i++)
		gnn_layer_forward(m, &m->layers[i], GNN_ACT_NONE, &g->graph, g->graph.n_vertices,
				  t->acts[i], t->acts[i + 1], t->scratch);
	for (s = 0; s < k; s++) {
		int32_t off[2];
		gnn_sets one = sample_set(g, idx[s], off);

		gnn_normalise(g->set_features + idx[s] * m->set.n, 1, m->set.n, m->set.mean,
			      m->set.std, t->set_norm, m->set.n);
		gnn_readout_forward(t->acts[m->readout], d, &one, t->set_norm, m->set.n,
				    t->acts[m->readout + 1] + s * rw);
	}
	for (i = m->readout + 1; i < m->n_layers; i++)
		gnn_layer_forward(m, &m->layers[i], GNN_ACT_NONE, NULL, k, t->acts[i],
				  t->acts[i + 1], t->scratch);
}

/* Loss of scores against targets; fills t->dscore with its gradient. */
static double loss_and_dscore(gnn_trainer *t, const gnn_train_graph *g, const size_t *idx,
			      size_t k, enum gnn_loss loss)
{
	const float *score = t->acts[t->m->n_layers];
	double total = 0.0;
	size_t i, j, pairs = 0;

	memset(t->dscore, 0, k * sizeof(*t->dscore));
	if (k == 0)
		return 0.0;
	if (loss & GNN_LOSS_MSE) {
		for (i = 0; i < k; i++) {
			const double r = (double)score[i] - g->targets[idx[i]];

			total += r * r / (double)k;
			t->dscore[i] += 2.0 * r / (double)k;
		}
	}
	if (!(loss & GNN_LOSS_RANK))
		return total;
	for (i = 0; i < k; i++)
		for (j = 0; j < k; j++)
			pairs += g->targets[idx[i]] > g->targets[idx[j]];
	for (i = 0; i < k && pairs; i++) {
		for (j = 0; j < k; j++) {
			double margin, sig;

			if (!(g->targets[idx[i]] > g->targets[idx[j]]))
				continue;
			/* log(1 + exp(-margin)), computed without overflow */
			margin = (double)score[i] - (double)score[j];
			total += (margin > 0 ? log1p(exp(-margin)) : -margin + log1p(exp(margin))) /
				 (double)pairs;
			sig = 1.0 / (1.0 + exp(margin)); /* d/dmargin = -sigmoid(-margin) */
			t->dscore[i] -= sig / (double)pairs;
			t->dscore[j] += sig / (double)pairs;
		}
	}
	return total;
}

/* dx = dy W^T, gW += x^T dy, gb += dy over n rows. */
static void linear_backward(const float *x, size_t n, size_t in, size_t out, const float *w,
			    const float *dy, float *dx, double *gw, double *gb)
{
	size_t i, k, o;

	for (i = 0; i < n; i++) {
		const float *xi = x + i * in, *dyi = dy + i * out;

		for (o = 0; o < out; o++)
			gb[o] += dyi[o];
		for (k = 0; k < in; k++) {
			float acc = 0.0f;

			for (o = 0; o < out; o++) {
				gw[k * out + o] += (double)xi[k] * dyi[o];
				acc += w[k * out + o] * dyi[o];
			}
			dx[i * in + k] = acc;
		}
	}
}

static void layernorm_backward(const float *x, size_t n, size_t dim, const float *gamma,
			       float eps, const float *dy, float *dx, double *gg, double *gb)
{
	size_t i, k;

	for (i = 0; i < n; i++) {
		const float *xi = x + i * dim, *dyi = dy + i * dim;
		double mean = 0, var = 0, inv, sum_dxh = 0, sum_dxh_xh = 0;

		for (k = 0; k < dim; k++)
			mean += xi[k];
		mean /= (double)dim;
		for (k = 0; k < dim; k++)
			var += (xi[k] - mean) * (xi[k] - mean);
		inv = 1.0 / sqrt(var / (double)dim + eps);
		for (k = 0; k < dim; k++) {
			const double xh = (xi[k] - mean) * inv, dxh = (double)dyi[k] * gamma[k];

			gg[k] += dyi[k] * xh;
			gb[k] += dyi[k];
			sum_dxh += dxh;
			sum_dxh_xh += dxh * xh;
		}
		for (k = 0; k < dim; k++) {
			const double xh = (xi[k] - mean) * inv, dxh = (double)dyi[k] * gamma[k];

			dx[i * dim + k] = (float)(inv * (dxh - sum_dxh / (double)dim -
							 xh * sum_dxh_xh / (double)dim));
		}
	}
}

/* Send dmax[k] to the first neighbour message that attains max[k]. */
static void max_backward(const gnn_graph *g, const float *x, size_t dim, size_t i,
			 const float *max, const float *dmax, float *dx)
{
	size_t k;
	int32_t e;

	for (k = 0; k < dim; k++) {
		for (e = g->offsets[i]; e < g->offsets[i + 1]; e++) {
			const size_t j = (size_t)g->neighbours[e];
			const float wt = g->edge_weights ? g->edge_weights[e] : 1.0f;

			if (wt * x[j * dim + k] == max[k]) {
				dx[j * dim + k] += wt * dmax[k];
				break;
			}
		}
	}
}

/* Shared by sage and gin: the row `cat` fed to the weights of vertex i,
 * gW += cat^T dy_i, gb += dy_i and dcat = W dy_i. */
static void row_backward(const float *cat, size_t in, size_t out, const float *w,
			 const float *dyi, float *dcat, double *gw, double *gb)
{
	linear_backward(cat, 1, in, out, w, dyi, dcat, gw, gb);
}

static void sage_backward(const gnn_graph *g, const float *x, size_t in, size_t out,
			  const float *w, const float *dy, float *dx, double *gw, double *gb,
			  float *row)
{
	float *cat = row, *dcat = row + 3 * in;
	size_t i, k;
	int32_t e;

	memset(dx, 0, g->n_vertices * in * sizeof(*dx));
	for (i = 0; i < g->n_vertices; i++) {
		const int32_t deg = g->offsets[i + 1] - g->offsets[i];

		memcpy(cat, x + i * in, in * sizeof(*cat));
		gnn_aggregate_row(g, x, in, i, cat + in, cat + 2 * in);
		row_backward(cat, 3 * in, out, w, dy + i * out, dcat, gw, gb);
		for (k = 0; k < in; k++)
			dx[i * in + k] += dcat[k];
		for (e = g->offsets[i]; e < g->offsets[i + 1]; e++) {
			const size_t j = (size_t)g->neighbours[e];
			const float wt = g->edge_weights ? g->edge_weights[e] : 1.0f;

			for (k = 0; k < in; k++)
				dx[j * in + k] += wt * dcat[in + k] / (float)deg;
		}
		max_backward(g, x, in, i, cat + 2 * in, dcat + 2 * in, dx);
	}
}

static void gin_backward(const gnn_graph *g, const float *x, size_t in, size_t out,
			 const float *w, float eps, const float *dy, float *dx, double *gw,
			 double *gb, float *row)
{
	float *z = row, *dz = row + in;
	size_t i, k;
	int32_t e;

	memset(dx, 0, g->n_vertices * in * sizeof(*dx));
	for (i = 0; i < g->n_vertices; i++) {
		gnn_gin_sum_row(g, x, in, i, eps, z);
		row_backward(z, in, out, w, dy + i * out, dz, gw, gb);
		for (k = 0; k < in; k++)
			dx[i * in + k] += (1.0f + eps) * dz[k];
		for (e = g->offsets[i]; e < g->offsets[i + 1]; e++) {
			const size_t j = (size_t)g->neighbours[e];
			const float wt = g->edge_weights ? g->edge_weights[e] : 1.0f;

			for (k = 0; k < in; k++)
				dx[j * in + k] += wt * dz[k];
		}
	}
}

/* dx from dy for layer l over n rows whose input was x. */
static void layer_backward(gnn_trainer *t, const struct gnn_layer *l, const gnn_graph *g,
			   size_t n, const float *x, const float *dy, float *dx, double *grad)
{
	const float *p = t->m->params;
	size_t i;

	switch (l->kind) {
	case GNN_LINEAR:
		linear_backward(x, n, l->in, l->out, p + l->w, dy, dx, grad + l->w, grad + l->b);
		break;
	case GNN_RELU:
		for (i = 0; i < n * l->in; i++)
			dx[i] = x[i] > 0.0f ? dy[i] : 0.0f;
		break;
	case GNN_GELU:
		for (i = 0; i < n * l->in; i++)
			dx[i] = dy[i] * gnn_gelu_grad(x[i]);
		break;
	case GNN_LAYERNORM:
		layernorm_backward(x, n, l->in, p + l->w, l->eps, dy, dx, grad + l->w, grad + l->b);
		break;
	case GNN_SAGE:
		sage_backward(g, x, l->in, l->out, p + l->w, dy, dx, grad + l->w, grad + l->b, t->row);
		break;
	case GNN_GIN:
		gin_backward(g, x, l->in, l->out, p + l->w, l->eps, dy, dx, grad + l->w, grad + l->b,
			     t->row);
		break;
	default:
		break;
	}
}

/* Readout backward: set-row gradients dr into embedding gradients de. */
static void readout_backward(gnn_trainer *t, const gnn_train_graph *g, const size_t *idx,
			     size_t k, const float *dr, float *de)
{
	const gnn_model *m = t->m;
	const size_t d = gnn_model_embed_dim(m), rw = m->layers[m->readout].out;
	const float *emb = t->acts[m->readout], *r = t->acts[m->readout + 1];
	size_t s, c;
	int32_t e;

	memset(de, 0, g->graph.n_vertices * d * sizeof(*de));
	for (s = 0; s < k; s++) {
		const int32_t lo = g->set_offsets[idx[s]], hi = g->set_offsets[idx[s] + 1];
		const float *drs = dr + s * rw, *max = r + s * rw + d;

		for (e = lo; e < hi; e++)
			for (c = 0; c < d; c++)
				de[(size_t)g->set_members[e] * d + c] += drs[c] / (float)(hi - lo);
		for (c = 0; c < d; c++) {
			for (e = lo; e < hi; e++) {
				const size_t v = (size_t)g->set_members[e];

				if (emb[v * d + c] == max[c]) {
					de[v * d + c] += drs[d + c];
					break;
				}
			}
		}
	}
}

static void backward(gnn_trainer *t, const gnn_train_graph *g, const size_t *idx, size_t k,
		     double *grad)
{
	const gnn_model *m = t->m;
	size_t i, s;
	int cur = 0;

	for (s = 0; s < k; s++)
		t->ds[0][s] = (float)t->dscore[s];
	for (i = m->n_layers; i-- > m->readout + 1; cur = !cur)
		layer_backward(t, &m->layers[i], NULL, k, t->acts[i], t->ds[cur], t->ds[!cur], grad);
	readout_backward(t, g, idx, k, t->ds[cur], t->dv[0]);
	cur = 0;
	for (i = m->readout; i-- > 0; cur = !cur)
		layer_backward(t, &m->layers[i], &g->graph, g->graph.n_vertices, t->acts[i],
			       t->dv[cur], t->dv[!cur], grad);
}

double gnn_trainer_loss(gnn_trainer *t, const gnn_train_graph *g, const size_t *idx, size_t k,
			enum gnn_loss loss, double *grad)
{
	double total;

	forward(t, g, idx, k);
	total = loss_and_dscore(t, g, idx, k, loss);
	if (grad)
		backward(t, g, idx, k, grad);
	return total;
}
