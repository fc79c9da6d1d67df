/*
 * test_gnn_infer: properties of whole-model inference on random graphs —
 * relabelling vertices leaves set scores unchanged (within 1e-6 relative), repeated
 * runs and concurrent contexts sharing one model give identical bytes, the
 * SIMD paths (wide blocks, pairs of rows, odd tails) give exactly the
 * bits of a naive loop, and embedding only the first vertices, or several
 * models at once, gives exactly the bits of a full pass per model.
 */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gnn_infer.h"
#include "gnn_internal.h"

#define NV 60
#define MAXE 600
#define NSETS 6
#define NF 3

struct problem {
	int32_t off[NV + 1], nb[MAXE];
	float w[MAXE], x[NV * NF];
	int32_t set_off[NSETS + 1], members[NSETS * 8];
	float set_f[NSETS];
	gnn_graph g;
	gnn_sets sets;
};

static uint32_t lcg(uint32_t *s)
{
	*s = *s * 1664525u + 1013904223u;
	return *s >> 8;
}

static float unit(uint32_t *s)
{
	return (float)lcg(s) / 16777216.0f;
}

/* A random graph: each vertex gets 0..9 random neighbours with weights. */
static void make_problem(struct problem *p, uint32_t seed)
{
	int32_t v, e = 0, s;

	p->off[0] = 0;
	for (v = 0; v < NV; v++) {
		int32_t k, deg = (int32_t)(lcg(&seed) % 10);

		for (k = 0; k < deg; k++, e++) {
			p->nb[e] = (int32_t)(lcg(&seed) % NV);
			p->w[e] = 0.5f + unit(&seed);
		}
		p->off[v + 1] = e;
	}
	for (v = 0; v < NV * NF; v++)
		p->x[v] = 10.0f * unit(&seed) - 3.0f;
	p->set_off[0] = 0;
	for (s = 0; s < NSETS; s++) {
		int32_t k;

		for (k = 0; k < 1 + s; k++)
			p->members[p->set_off[s] + k] = (int32_t)(lcg(&seed) % NV);
		p->set_off[s + 1] = p->set_off[s] + 1 + s;
		p->set_f[s] = (float)s;
	}
	p->g = (gnn_graph){NV, p->off, p->nb, p->w};
	p->sets = (gnn_sets){NSETS, p->set_off, p->members, NV};
}

/* q = p with vertex v renamed perm[v], and every neighbour list reversed. */
static void permute(const struct problem *p, const int32_t *perm, struct problem *q)
{
	int32_t inv[NV], u, e = 0, k;

	*q = *p;
	for (u = 0; u < NV; u++)
		inv[perm[u]] = u;
	q->off[0] = 0;
	for (u = 0; u < NV; u++) {
		const int32_t v = inv[u];

		for (k = p->off[v + 1] - 1; k >= p->off[v]; k--, e++) {
			q->nb[e] = perm[p->nb[k]];
			q->w[e] = p->w[k];
		}
		q->off[u + 1] = e;
		memcpy(q->x + u * NF, p->x + v * NF, NF * sizeof(float));
	}
	for (k = 0; k < p->set_off[NSETS]; k++)
		q->members[k] = perm[p->members[k]];
	q->g = (gnn_graph){NV, q->off, q->nb, q->w};
	q->sets = (gnn_sets){NSETS, q->set_off, q->members, NV};
}

static gnn_model *build(enum gnn_conv conv)
{
	const char *names[NF] = {"a", "b", "c"}, *set[] = {"s"};
	/* the normalisation the data calls for: features uniform in [-3, 7),
	 * set feature 0..5 */
	const float mean[NF] = {2, 2, 2}, std[NF] = {3, 3, 3}, set_mean = 2.5f, set_std = 1.7f;
	gnn_arch arch = {NF, names, mean, std, 1, set, &set_mean, &set_std, conv, 2, 8, 6};
	gnn_error err;
	gnn_model *m = gnn_model_build(&arch, 1234, &err);

	assert_non_null(m);
	return m;
}

static void score(const gnn_model *m, const struct problem *p, float *emb, float *out)
{
	gnn_ctx *ctx = gnn_ctx_create(m, NV, MAXE, NSETS, NULL);

	assert_non_null(ctx);
	assert_int_equal(gnn_embed(ctx, &p->g, p->x, emb), 0);
	assert_int_equal(gnn_score_sets(ctx, emb, &p->sets, p->set_f, out), 0);
	gnn_ctx_free(ctx);
}

static void check_permutation(enum gnn_conv conv)
{
	static struct problem p, q;
	gnn_model *m = build(conv);
	float emb[NV * 8], a[NSETS], b[NSETS];
	int32_t perm[NV], i;
	uint32_t seed = 99;

	make_problem(&p, 5);
	for (i = 0; i < NV; i++)
		perm[i] = i;
	for (i = NV - 1; i > 0; i--) {
		int32_t j = (int32_t)(lcg(&seed) % (uint32_t)(i + 1)), t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	permute(&p, perm, &q);
	score(m, &p, emb, a);
	score(m, &q, emb, b);
	/* Reversed neighbour lists change summation order, hence rounding: the
	 * tolerance is 1e-6 relative to the score (absolute below 1). */
	for (i = 0; i < NSETS; i++)
		assert_float_equal(a[i], b[i], 1e-6 * (fabsf(a[i]) > 1 ? fabsf(a[i]) : 1));
	gnn_model_free(m);
}

static void test_permutation_sage(void **state)
{
	check_permutation(GNN_CONV_SAGE);
}

static void test_permutation_gin(void **state)
{
	check_permutation(GNN_CONV_GIN);
}

struct run {
	const gnn_model *m;
	const struct problem *p;
	float emb[NV * 8], out[NSETS];
};

static void *run_thread(void *arg)
{
	struct run *r = arg;
	gnn_ctx *ctx = gnn_ctx_create(r->m, NV, MAXE, NSETS, NULL);
	int i;

	for (i = 0; i < 50; i++) {
		gnn_embed(ctx, &r->p->g, r->p->x, r->emb);
		gnn_score_sets(ctx, r->emb, &r->p->sets, r->p->set_f, r->out);
	}
	gnn_ctx_free(ctx);
	return NULL;
}

static void test_determinism_and_threads(void **state)
{
	static struct problem p;
	static struct run one, two, three;
	gnn_model *m = build(GNN_CONV_SAGE);
	pthread_t t1, t2;

	make_problem(&p, 17);
	one = (struct run){.m = m, .p = &p};
	two = one;
	three = one;
	run_thread(&one);
	assert_int_equal(pthread_create(&t1, NULL, run_thread, &two), 0);
	assert_int_equal(pthread_create(&t2, NULL, run_thread, &three), 0);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	assert_memory_equal(one.emb, two.emb, sizeof(one.emb));
	assert_memory_equal(one.out, two.out, sizeof(one.out));
	assert_memory_equal(one.out, three.out, sizeof(one.out));
	gnn_model_free(m);
}

/* Naive sage + relu on normalised features, summing in the documented order. */
static void naive_sage(const gnn_model *m, const struct problem *p, float *y)
{
	const struct gnn_layer *l = &m->layers[0];
	const float *w = m->params + l->w, *b = m->params + l->b;
	float x[NV * NF], mean[NF], max[NF];
	size_t i, k, o;
	int32_t e;

	for (i = 0; i < NV * NF; i++)
		x[i] = (p->x[i] - m->vertex.mean[i % NF]) / m->vertex.std[i % NF];
	for (i = 0; i < NV - 1; i++) { /* odd vertex count: the last one is left out */
		const int32_t deg = p->off[i + 1] - p->off[i];

		for (k = 0; k < NF; k++) {
			mean[k] = 0;
			max[k] = deg ? -INFINITY : 0;
			for (e = p->off[i]; e < p->off[i + 1]; e++) {
				const float v = p->w[e] * x[p->nb[e] * NF + k];

				mean[k] += v;
				max[k] = v > max[k] ? v : max[k];
			}
			if (deg)
				mean[k] /= (float)deg;
		}
		for (o = 0; o < l->out; o++) {
			float acc = b[o];

			for (k = 0; k < NF; k++)
				acc += x[i * NF + k] * w[k * l->out + o];
			for (k = 0; k < NF; k++)
				acc += mean[k] * w[(NF + k) * l->out + o];
			for (k = 0; k < NF; k++)
				acc += max[k] * w[(2 * NF + k) * l->out + o];
			y[i * l->out + o] = acc > 0 ? acc : 0;
		}
	}
}

static void test_simd_paths_match_naive(void **state)
{
	static struct problem p;
	static float got[NV * 45], want[NV * 45];
	const char *names[NF] = {"a", "b", "c"};
	const float mean[NF] = {2, 2, 2}, std[NF] = {3, 3, 3};
	/* 45 outputs: one 32-wide block, one 8-wide block, 5 scalar columns */
	gnn_arch arch = {NF, names, mean, std, 0, NULL, NULL, NULL, GNN_CONV_SAGE, 1, 45, 0};
	gnn_model *m = gnn_model_build(&arch, 3, NULL);
	gnn_ctx *ctx = gnn_ctx_create(m, NV, MAXE, 1, NULL);
	gnn_graph g;

	make_problem(&p, 23);
	g = p.g;
	g.n_vertices = NV - 1;
	g.offsets = p.off; /* the first NV-1 vertices; drop edges into the last one */
	for (int32_t e = 0; e < p.off[NV - 1]; e++)
		if (p.nb[e] == NV - 1)
			p.nb[e] = 0;
	assert_int_equal(gnn_embed(ctx, &g, p.x, got), 0);
	naive_sage(m, &p, want);
	assert_memory_equal(got, want, (NV - 1) * 45 * sizeof(float));
	gnn_ctx_free(ctx);
	gnn_model_free(m);
}

/* The register-blocked aggregations (32 columns at a time, then a tail)
 * against plain loops over 45 columns, bit for bit. */
static void test_aggregation_blocks_match_naive(void **state)
{
	enum { D = 45 };
	static struct problem p;
	static float x[NV * D];
	float mean[D], max[D], z[D], want_mean[D], want_max[D], want_z[D];
	uint32_t seed = 8;
	size_t i, k;
	int32_t e;

	make_problem(&p, 31);
	for (i = 0; i < NV * D; i++)
		x[i] = 2.0f * unit(&seed) - 1.0f;
	for (i = 0; i < NV; i++) {
		const int32_t deg = p.off[i + 1] - p.off[i];

		for (k = 0; k < D; k++) {
			want_mean[k] = 0;
			want_max[k] = deg ? -INFINITY : 0;
			want_z[k] = 0;
			want_z[k] += 1.25f * x[i * D + k];
			for (e = p.off[i]; e < p.off[i + 1]; e++) {
				const float v = p.w[e] * x[p.nb[e] * D + k];

				want_mean[k] += v;
				want_max[k] = v > want_max[k] ? v : want_max[k];
				want_z[k] += v;
			}
			if (deg)
				want_mean[k] /= (float)deg;
		}
		gnn_aggregate_row(&p.g, x, D, i, mean, max);
		gnn_gin_sum_row(&p.g, x, D, i, 0.25f, z);
		assert_memory_equal(mean, want_mean, sizeof(mean));
		assert_memory_equal(max, want_max, sizeof(max));
		assert_memory_equal(z, want_z, sizeof(z));
	}
}

/* The straightforward full pass: every layer on its own (activations not
 * fused) over every vertex, rows unpadded. */
static void full_pass(const gnn_model *m, const struct problem *p, float *out)
{
	static float a[NV * 64], b[NV * 64], scratch[NV * 64 + GNN_SCRATCH_ROWS * 64];
	float *src = a, *dst = b, *t;
	size_t i;

	gnn_normalise(p->x, NV, NF, m->vertex.mean, m->vertex.std, src, NF);
	for (i = 0; i < m->readout; i++) {
		gnn_layer_forward(m, &m->layers[i], GNN_ACT_NONE, &p->g, NV, src, dst, scratch);
		t = src;
		src = dst;
		dst = t;
	}
	memcpy(out, src, NV * gnn_model_embed_dim(m) * sizeof(float));
}

/* Three models of one architecture (alike normalisation: the first layer's
 * aggregation is shared) and one normalised otherwise (not shared), for
 * 1, some and all vertices wanted. */
static void check_first_and_ensemble(enum gnn_conv conv, size_t hidden)
{
	static struct problem p;
	static float want[4][NV * 64], got[4][NV * 64];
	const char *names[NF] = {"a", "b", "c"}, *set[] = {"s"};
	const float mean[NF] = {2, 2, 2}, std[NF] = {3, 3, 3}, other[NF] = {1, 2, 3};
	const float set_mean = 2.5f, set_std = 1.7f;
	gnn_arch arch = {NF, names, mean, std, 1, set, &set_mean, &set_std, conv, 2, hidden, 6};
	static const size_t wanted[] = {1, 7, NV / 2, NV};
	gnn_model *m[4];
	gnn_ctx *ctx[4];
	float *outs[4];
	size_t k, w, d = hidden;

	make_problem(&p, 77);
	for (k = 0; k < 4; k++) {
		arch.vertex_mean = k < 3 ? mean : other;
		m[k] = gnn_model_build(&arch, 100 + k, NULL);
		assert_non_null(m[k]);
		ctx[k] = gnn_ctx_create(m[k], NV, MAXE, NSETS, NULL);
		assert_non_null(ctx[k]);
		outs[k] = got[k];
		full_pass(m[k], &p, want[k]);
	}
	for (w = 0; w < sizeof(wanted) / sizeof(wanted[0]); w++) {
		const size_t n = wanted[w];

		for (k = 0; k < 4; k++) {
			memset(got[k], 0xff, sizeof(got[k]));
			assert_int_equal(gnn_embed_first(ctx[k], &p.g, p.x, n, got[k]), 0);
			assert_memory_equal(got[k], want[k], n * d * sizeof(float));
		}
		assert_int_equal(gnn_embed_ensemble(ctx, 3, &p.g, p.x, n, outs), 0);
		for (k = 0; k < 3; k++)
			assert_memory_equal(got[k], want[k], n * d * sizeof(float));
		assert_int_equal(gnn_embed_ensemble(ctx + 1, 3, &p.g, p.x, n, outs + 1), 0);
		for (k = 1; k < 4; k++)
			assert_memory_equal(got[k], want[k], n * d * sizeof(float));
	}
	assert_int_equal(gnn_embed_first(ctx[0], &p.g, p.x, NV + 1, got[0]), -1);
	assert_int_equal(gnn_embed_ensemble(ctx, 3, &p.g, p.x, NV + 1, outs), -1);
	assert_non_null(strstr(gnn_ctx_error(ctx[2])->text, "embeddings asked"));
	for (k = 0; k < 4; k++) {
		gnn_ctx_free(ctx[k]);
		gnn_model_free(m[k]);
	}
}

static void test_first_and_ensemble_sage(void **state)
{
	check_first_and_ensemble(GNN_CONV_SAGE, 8);
	check_first_and_ensemble(GNN_CONV_SAGE, 16);
	check_first_and_ensemble(GNN_CONV_SAGE, 32);
}

static void test_first_and_ensemble_gin(void **state)
{
	check_first_and_ensemble(GNN_CONV_GIN, 16);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_permutation_sage),
		cmocka_unit_test(test_permutation_gin),
		cmocka_unit_test(test_determinism_and_threads),
		cmocka_unit_test(test_simd_paths_match_naive),
		cmocka_unit_test(test_aggregation_blocks_match_naive),
		cmocka_unit_test(test_first_and_ensemble_sage),
		cmocka_unit_test(test_first_and_ensemble_gin),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
