/*
 * gnn_layers: the forward kernels of every layer kind.
 *
 * Each output element is accumulated in one fixed order (over the input
 * index, then over neighbours in CSR order), so results do not depend on how
 * the compiler vectorizes. Inner loops run over contiguous output columns in
 * blocks of GNN_BLOCK with a constant trip count, which compilers turn into
 * SIMD code at -O2 without any special flags.
 */
#include "gnn_internal.h"

#include <math.h>
#include <string.h>

#define GNN_BLOCK 16
#define SQRT1_2 0.70710678118654752440f     /* 1/sqrt(2) */
#define INV_SQRT_2PI 0.39894228040143267794f /* 1/sqrt(2 pi) */

float gnn_gelu(float x)
{
	return 0.5f * x * (1.0f + erff(x * SQRT1_2));
}

float gnn_gelu_grad(float x)
{
	const float cdf = 0.5f * (1.0f + erff(x * SQRT1_2));
	const float pdf = expf(-0.5f * x * x) * INV_SQRT_2PI;

	return cdf + x * pdf;
}

void gnn_act_forward(enum gnn_act act, const float *x, size_t count, float *y)
{
	size_t i;

	if (act == GNN_ACT_RELU) {
		for (i = 0; i < count; i++)
			y[i] = x[i] > 0.0f ? x[i] : 0.0f;
	} else if (act == GNN_ACT_GELU) {
		for (i = 0; i < count; i++)
			y[i] = gnn_gelu(x[i]);
	} else if (y != x) {
		memcpy(y, x, count * sizeof(*y));
	}
}

/* y[0..out) = b + x[0..in) W, W row-major in x out; b may be NULL. The
 * accumulators for a block of outputs stay in registers across k. */
static void row_times_matrix(const float *restrict x, size_t in, size_t out,
			     const float *restrict w, const float *restrict b, float *restrict y)
{
	size_t o = 0, k, j;

	for (; o + GNN_BLOCK <= out; o += GNN_BLOCK) {
		float acc[GNN_BLOCK];

		for (j = 0; j < GNN_BLOCK; j++)
			acc[j] = b ? b[o + j] : 0.0f;
		for (k = 0; k < in; k++) {
			const float xk = x[k];
			const float *wk = w + k * out + o;

			for (j = 0; j < GNN_BLOCK; j++)
				acc[j] += xk * wk[j];
		}
		for (j = 0; j < GNN_BLOCK; j++)
			y[o + j] = acc[j];
	}
	for (; o < out; o++) {
		float acc = b ? b[o] : 0.0f;

		for (k = 0; k < in; k++)
			acc += x[k] * w[k * out + o];
		y[o] = acc;
	}
}

void gnn_linear_forward(const float *x, size_t n, size_t in, size_t out, const float *w,
			const float *b, float *y, enum gnn_act act)
{
	size_t i;

	for (i = 0; i < n; i++) {
		row_times_matrix(x + i * in, in, out, w, b, y + i * out);
		gnn_act_forward(act, y + i * out, out, y + i * out);
	}
}

void gnn_layernorm_forward(const float *x, size_t n, size_t dim, const float *gamma,
			   const float *beta, float eps, float *y)
{
	size_t i, k;

	for (i = 0; i < n; i++) {
		const float *xi = x + i * dim;
		float *yi = y + i * dim;
		float mean = 0.0f, var = 0.0f, inv;

		for (k = 0; k < dim; k++)
			mean += xi[k];
		mean /= (float)dim;
		for (k = 0; k < dim; k++)
			var += (xi[k] - mean) * (xi[k] - mean);
		var /= (float)dim;
		inv = 1.0f / sqrtf(var + eps);
		for (k = 0; k < dim; k++)
			yi[k] = (xi[k] - mean) * inv * gamma[k] + beta[k];
	}
}

/* acc[k] += wt * xj[k] and mx[k] = max(mx[k], wt * xj[k]) over dim. */
static void accumulate_message(const float *restrict xj, float wt, size_t dim,
			       float *restrict acc, float *restrict mx)
{
	size_t k = 0, j;

	for (; k + GNN_BLOCK <= dim; k += GNN_BLOCK) {
		for (j = 0; j < GNN_BLOCK; j++) {
			const float v = wt * xj[k + j];

			acc[k + j] += v;
			mx[k + j] = v > mx[k + j] ? v : mx[k + j];
		}
	}
	for (; k < dim; k++) {
		const float v = wt * xj[k];

		acc[k] += v;
		mx[k] = v > mx[k] ? v : mx[k];
	}
}

void gnn_aggregate_row(const gnn_graph *g, const float *x, size_t dim, size_t i,
		       float *mean, float *max)
{
	const int32_t lo = g->offsets[i], hi = g->offsets[i + 1];
	int32_t e;
	size_t k;

	for (k = 0; k < dim; k++) {
		mean[k] = 0.0f;
		max[k] = -INFINITY;
	}
	for (e = lo; e < hi; e++)
		accumulate_message(x + (size_t)g->neighbours[e] * dim,
				   g->edge_weights ? g->edge_weights[e] : 1.0f, dim, mean, max);
	if (hi == lo) {
		for (k = 0; k < dim; k++)
			max[k] = 0.0f;
		return;
	}
	for (k = 0; k < dim; k++)
		mean[k] /= (float)(hi - lo);
}

void gnn_sage_forward(const gnn_graph *g, const float *x, size_t in, size_t out,
		      const float *w, const float *b, float *y, float *scratch, enum gnn_act act)
{
	size_t i;

	for (i = 0; i < g->n_vertices; i++) {
		memcpy(scratch, x + i * in, in * sizeof(*scratch));
		gnn_aggregate_row(g, x, in, i, scratch + in, scratch + 2 * in);
		row_times_matrix(scratch, 3 * in, out, w, b, y + i * out);
		gnn_act_forward(act, y + i * out, out, y + i * out);
	}
}

/* z[k] += wt * xj[k] over dim. */
static void add_scaled(const float *restrict xj, float wt, size_t dim, float *restrict z)
{
	size_t k = 0, j;

	for (; k + GNN_BLOCK <= dim; k += GNN_BLOCK)
		for (j = 0; j < GNN_BLOCK; j++)
			z[k + j] += wt * xj[k + j];
	for (; k < dim; k++)
		z[k] += wt * xj[k];
}

void gnn_gin_sum_row(const gnn_graph *g, const float *x, size_t dim, size_t i, float eps,
		     float *z)
{
	int32_t e;
	size_t k;

	for (k = 0; k < dim; k++)
		z[k] = 0.0f;
	add_scaled(x + i * dim, 1.0f + eps, dim, z);
	for (e = g->offsets[i]; e < g->offsets[i + 1]; e++)
		add_scaled(x + (size_t)g->neighbours[e] * dim,
			   g->edge_weights ? g->edge_weights[e] : 1.0f, dim, z);
}

void gnn_gin_forward(const gnn_graph *g, const float *x, size_t in, size_t out,
		     const float *w, const float *b, float eps, float *y, float *scratch,
		     enum gnn_act act)
{
	size_t i, k;

	if (out < in) {
		/* The sum is linear, so transform first and aggregate the narrower rows. */
		gnn_linear_forward(x, g->n_vertices, in, out, w, NULL, scratch, GNN_ACT_NONE);
		for (i = 0; i < g->n_vertices; i++) {
			gnn_gin_sum_row(g, scratch, out, i, eps, y + i * out);
			for (k = 0; k < out; k++)
				y[i * out + k] += b[k];
			gnn_act_forward(act, y + i * out, out, y + i * out);
		}
		return;
	}
	for (i = 0; i < g->n_vertices; i++) {
		gnn_gin_sum_row(g, x, in, i, eps, scratch);
		row_times_matrix(scratch, in, out, w, b, y + i * out);
		gnn_act_forward(act, y + i * out, out, y + i * out);
	}
}

void gnn_readout_forward(const float *emb, size_t dim, const gnn_sets *sets,
			 const float *f, size_t nf, float *y)
{
	const size_t width = 2 * dim + nf;
	size_t s, k;

	for (s = 0; s < sets->n_sets; s++) {
		float *ys = y + s * width;
		const int32_t lo = sets->offsets[s], hi = sets->offsets[s + 1];
		int32_t e;

		for (k = 0; k < dim; k++) {
			ys[k] = 0.0f;
			ys[dim + k] = hi > lo ? -INFINITY : 0.0f;
		}
		for (e = lo; e < hi; e++)
			accumulate_message(emb + (size_t)sets->members[e] * dim, 1.0f, dim, ys,
					   ys + dim);
		for (k = 0; hi > lo && k < dim; k++)
			ys[k] /= (float)(hi - lo);
		for (k = 0; k < nf; k++)
			ys[2 * dim + k] = f[s * nf + k];
	}
}

void gnn_normalise(const float *x, size_t n, size_t dim, const float *mean, const float *std,
		   float *y)
{
	size_t i, k;

	for (i = 0; i < n; i++)
		for (k = 0; k < dim; k++)
			y[i * dim + k] = (x[i * dim + k] - mean[k]) / std[k];
}

enum gnn_act gnn_act_of(enum gnn_layer_kind kind)
{
	return kind == GNN_RELU ? GNN_ACT_RELU : kind == GNN_GELU ? GNN_ACT_GELU : GNN_ACT_NONE;
}

void gnn_layer_forward(const gnn_model *m, const struct gnn_layer *l, enum gnn_act act,
		       const gnn_graph *g, size_t n, const float *src, float *dst, float *scratch)
{
	const float *p = m->params;

	switch (l->kind) {
	case GNN_LINEAR:
		gnn_linear_forward(src, n, l->in, l->out, p + l->w, p + l->b, dst, act);
		break;
	case GNN_SAGE:
		gnn_sage_forward(g, src, l->in, l->out, p + l->w, p + l->b, dst, scratch, act);
		break;
	case GNN_GIN:
		gnn_gin_forward(g, src, l->in, l->out, p + l->w, p + l->b, l->eps, dst, scratch, act);
		break;
	case GNN_LAYERNORM:
		gnn_layernorm_forward(src, n, l->in, p + l->w, p + l->b, l->eps, dst);
		break;
	default:
		gnn_act_forward(gnn_act_of(l->kind), src, n * l->in, dst);
		break;
	}
}
