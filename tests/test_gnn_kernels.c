/*
 * test_gnn_kernels: the fast sage and linear kernels (several vertices per
 * weight load, the next block aggregated inside this block's product) give
 * exactly the bits of textbook loops that sum each output in the documented
 * order: bias, then self, mean and max rows over k. The graph has a vertex
 * count that leaves a partial block, vertices without neighbours, repeated
 * neighbours and edge weights, and the widths hit the 32-wide pipelined path
 * as well as the generic one.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gnn_infer.h"
#include "gnn_internal.h"

#define N 103 /* 25 blocks of 4 and 3 vertices left over */
#define NF 6

/* Textbook sage + relu: one output at a time, in the documented order. */
static void ref_sage(const gnn_graph *g, const float *x, size_t in, size_t out, const float *w,
		     const float *b, float *y)
{
	float mean[64], max[64];
	size_t i, k, o;
	int32_t e;

	for (i = 0; i < g->n_vertices; i++) {
		const int32_t deg = g->offsets[i + 1] - g->offsets[i];

		for (k = 0; k < in; k++) {
			mean[k] = 0.0f;
			max[k] = -INFINITY;
			for (e = g->offsets[i]; e < g->offsets[i + 1]; e++) {
				const float v = g->edge_weights[e] * x[(size_t)g->neighbours[e] * in + k];

				mean[k] += v;
				max[k] = v > max[k] ? v : max[k];
			}
			if (deg)
				mean[k] /= (float)deg;
			else
				max[k] = 0.0f;
		}
		for (o = 0; o < out; o++) {
			float acc = b[o];

			for (k = 0; k < in; k++)
				acc += x[i * in + k] * w[k * out + o];
			for (k = 0; k < in; k++)
				acc += mean[k] * w[(in + k) * out + o];
			for (k = 0; k < in; k++)
				acc += max[k] * w[(2 * in + k) * out + o];
			y[i * out + o] = acc > 0.0f ? acc : 0.0f;
		}
	}
}

/* Embed a random graph with a 2-layer sage model of width `hidden` and
 * compare with the textbook loops bit for bit. */
static void check_width(size_t hidden, uint64_t seed)
{
	static const char *names[NF] = {"a", "b", "c", "d", "e", "f"}, *set[] = {"s"};
	gnn_arch arch = {NF, names, NULL, NULL, 1, set, NULL, NULL, GNN_CONV_SAGE, 2, hidden, 8};
	gnn_model *m = gnn_model_build(&arch, seed, NULL);
	int32_t off[N + 1], nb[N * 12];
	float wt[N * 12], x[N * NF], emb[N * 64], a[N * 64], c[N * 64];
	gnn_graph g = {N, off, nb, wt};
	uint64_t rng = seed;
	gnn_ctx *ctx;
	size_t i, l, k;

	assert_non_null(m);
	assert_int_equal(m->layers[0].kind, GNN_SAGE);
	assert_int_equal(m->layers[2].kind, GNN_SAGE);
	for (l = 0; l < 3; l += 2) /* built models have zero biases: make them count */
		for (k = 0; k < hidden; k++)
			m->params[m->layers[l].b + k] = gnn_rng_uniform(&rng) - 0.5f;
	off[0] = 0;
	for (i = 0; i < N; i++) /* degrees 0..11; every 7th vertex has none */
		off[i + 1] = off[i] + (i % 7 == 0 ? 0 : (int32_t)(gnn_rng_next(&rng) % 12));
	for (i = 0; i < (size_t)off[N]; i++) {
		nb[i] = i % 5 == 4 ? nb[i - 1] : (int32_t)(gnn_rng_next(&rng) % N);
		wt[i] = 0.25f + gnn_rng_uniform(&rng);
	}
	for (i = 0; i < N * NF; i++)
		x[i] = 4.0f * gnn_rng_uniform(&rng) - 2.0f;
	ctx = gnn_ctx_create(m, N, (size_t)off[N], 1, NULL);
	assert_non_null(ctx);
	assert_int_equal(gnn_embed(ctx, &g, x, emb), 0);
	ref_sage(&g, x, NF, hidden, m->params + m->layers[0].w, m->params + m->layers[0].b, a);
	ref_sage(&g, a, hidden, hidden, m->params + m->layers[2].w, m->params + m->layers[2].b, c);
	assert_memory_equal(emb, c, N * hidden * sizeof(float));
	/* and the values are not trivially zero */
	for (k = 0, i = 0; i < N * hidden; i++)
		k += emb[i] > 0.0f;
	assert_true(k > N * hidden / 8);
	gnn_ctx_free(ctx);
	gnn_model_free(m);
}

static void test_sage_32_pipelined(void **state)
{
	(void)state;
	check_width(32, 11);
}

static void test_sage_other_widths(void **state)
{
	(void)state;
	check_width(16, 12); /* the shipped model's width: one 16 block */
	check_width(24, 15); /* one 16 block, then 8 */
	check_width(40, 13); /* one 32 block, then 8 */
	check_width(56, 16); /* 32, 16 and 8 blocks */
	check_width(64, 14); /* two 32 blocks, generic path */
}

/* gnn_linear_forward on 4-row blocks and a leftover row equals row-by-row
 * sums, for widths of 32 + 3 and 32 + 16 + 8 + 3 outputs. */
static void check_linear_blocks(size_t out)
{
	enum { R = 7, IN = 9, MAXOUT = 59 };
	float x[R * IN], w[IN * MAXOUT], b[MAXOUT], y[R * MAXOUT], want[R * MAXOUT];
	uint64_t rng = 5 + out;
	size_t i, k, o;

	for (i = 0; i < R * IN; i++)
		x[i] = gnn_rng_uniform(&rng) - 0.5f;
	for (i = 0; i < IN * out; i++)
		w[i] = gnn_rng_uniform(&rng) - 0.5f;
	for (i = 0; i < out; i++)
		b[i] = gnn_rng_uniform(&rng);
	for (i = 0; i < R; i++)
		for (o = 0; o < out; o++) {
			float acc = b[o];

			for (k = 0; k < IN; k++)
				acc += x[i * IN + k] * w[k * out + o];
			want[i * out + o] = acc;
		}
	gnn_linear_forward(x, R, IN, out, w, b, y, GNN_ACT_NONE);
	assert_memory_equal(y, want, R * out * sizeof(float));
}

static void test_linear_blocks(void **state)
{
	(void)state;
	check_linear_blocks(35);
	check_linear_blocks(59);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sage_32_pipelined),
		cmocka_unit_test(test_sage_other_widths),
		cmocka_unit_test(test_linear_blocks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
