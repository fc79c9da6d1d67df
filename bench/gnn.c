/*
 * bench/gnn: how fast the GNN kernel is, in numbers (never run by make check).
 *
 * One run measures: the memory bandwidth of this core (a STREAM-style
 * triad), a 2-layer, 32-wide GraphSAGE embedding pass on random graphs of
 * 10,000 and 100,000 vertices (average degree 10), and scoring 64 sets of
 * 32 vertices. For each it prints the time, the bytes the pass must move at
 * minimum, the achieved fraction of the triad bandwidth, and the speedup
 * over the straightforward reference implementation below, whose results
 * must agree within 1e-5. Times are the best of several runs, in thread CPU
 * time. For comparison it also times the same pass with
 * GIN layers (one weight matrix per layer instead of three). --json prints
 * one object instead.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gnn_infer.h"
#include "gnn_internal.h"
#include "gnn_model.h"

#define WIDTH 32      /* input features and embedding width */
#define DEGREE 10     /* average degree */
#define N_SETS 64
#define SET_SIZE 32
#define N_SET_FEATURES 4
#define TRIAD_N (16u << 20) /* doubles per triad array: 128 MiB each */

/* Seconds of this thread's CPU time: on a shared machine, time the scheduler
 * gives to other processes is not counted (on an idle one it equals wall
 * time). */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Best-of-reps STREAM triad a = b + s c, in bytes per second (3 arrays moved). */
static double triad_bandwidth(void)
{
	double *a = malloc(TRIAD_N * sizeof(double)), *b = malloc(TRIAD_N * sizeof(double));
	double *c = malloc(TRIAD_N * sizeof(double)), best = 1e30, s = 3.0;
	size_t i;
	int r;

	if (!a || !b || !c)
		exit(1);
	for (i = 0; i < TRIAD_N; i++) {
		a[i] = 0.0;
		b[i] = 1.0;
		c[i] = 2.0;
	}
	for (r = 0; r < 5; r++) {
		const double t0 = now();

		for (i = 0; i < TRIAD_N; i++)
			a[i] = b[i] + s * c[i];
		if (now() - t0 < best)
			best = now() - t0;
	}
	if (a[TRIAD_N / 2] != 7.0)
		exit(1);
	free(a);
	free(b);
	free(c);
	return 3.0 * sizeof(double) * TRIAD_N / best;
}

/* ---- the straightforward reference: textbook loops, one output at a time ---- */

static void ref_sage(const gnn_graph *g, const float *x, size_t in, size_t out, const float *w,
		     const float *b, float *y, float *mean, float *max)
{
	size_t i, k, o;
	int32_t e;

	for (i = 0; i < g->n_vertices; i++) {
		const int32_t deg = g->offsets[i + 1] - g->offsets[i];

		for (k = 0; k < in; k++) {
			mean[k] = 0.0f;
			max[k] = deg ? -INFINITY : 0.0f;
			for (e = g->offsets[i]; e < g->offsets[i + 1]; e++) {
				const float v = x[(size_t)g->neighbours[e] * in + k];

				mean[k] += v;
				if (v > max[k])
					max[k] = v;
			}
			if (deg)
				mean[k] /= (float)deg;
		}
		for (o = 0; o < out; o++) {
			float acc = b[o];

			for (k = 0; k < in; k++)
				acc += x[i * in + k] * w[k * out + o];
			for (k = 0; k < in; k++)
				acc += mean[k] * w[(in + k) * out + o];
			for (k = 0; k < in; k++)
				acc += max[k] * w[(2 * in + k) * out + o];
			y[i * out + o] = acc;
		}
	}
}

static void ref_relu(float *x, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (x[i] < 0.0f)
			x[i] = 0.0f;
}

/* Embed with the reference loops (model: sage, relu, sage, relu, readout...). */
static void ref_embed(const gnn_model *m, const gnn_graph *g, const float *features, float *tmp,
		      float *out, float *scratch)
{
	const struct gnn_layer *l0 = &m->layers[0], *l2 = &m->layers[2];
	size_t i, k;

	for (i = 0; i < g->n_vertices; i++)
		for (k = 0; k < m->vertex.n; k++)
			out[i * m->vertex.n + k] = (features[i * m->vertex.n + k] - m->vertex.mean[k]) /
						   m->vertex.std[k];
	ref_sage(g, out, l0->in, l0->out, m->params + l0->w, m->params + l0->b, tmp, scratch,
		 scratch + l0->in);
	ref_relu(tmp, g->n_vertices * l0->out);
	ref_sage(g, tmp, l2->in, l2->out, m->params + l2->w, m->params + l2->b, out, scratch,
		 scratch + l2->in);
	ref_relu(out, g->n_vertices * l2->out);
}

/* Score with the reference loops (head: linear, relu, linear). */
static void ref_score(const gnn_model *m, const float *emb, const gnn_sets *s, const float *f,
		      float *out)
{
	const size_t d = gnn_model_embed_dim(m), rw = 2 * d + m->set.n;
	const struct gnn_layer *h0 = &m->layers[m->readout + 1], *h2 = &m->layers[m->readout + 3];
	float r[2 * WIDTH + N_SET_FEATURES], hid[64];
	size_t i, k, o;
	int32_t e;

	for (i = 0; i < s->n_sets; i++) {
		const int32_t lo = s->offsets[i], hi = s->offsets[i + 1];
		float acc;

		for (k = 0; k < d; k++) {
			r[k] = 0.0f;
			r[d + k] = -INFINITY;
			for (e = lo; e < hi; e++) {
				const float v = emb[(size_t)s->members[e] * d + k];

				r[k] += v;
				r[d + k] = v > r[d + k] ? v : r[d + k];
			}
			r[k] /= (float)(hi - lo);
		}
		for (k = 0; k < m->set.n; k++)
			r[2 * d + k] = (f[i * m->set.n + k] - m->set.mean[k]) / m->set.std[k];
		for (o = 0; o < h0->out; o++) {
			acc = m->params[h0->b + o];
			for (k = 0; k < rw; k++)
				acc += r[k] * m->params[h0->w + k * h0->out + o];
			hid[o] = acc > 0.0f ? acc : 0.0f;
		}
		acc = m->params[h2->b];
		for (k = 0; k < h2->in; k++)
			acc += hid[k] * m->params[h2->w + k];
		out[i] = acc;
	}
}

/* ---- inputs ---- */

static uint64_t rng_state = 12345;

static uint32_t rnd(uint32_t n)
{
	return (uint32_t)(gnn_rng_next(&rng_state) % n);
}

/* A random directed graph with n*DEGREE neighbour entries, as CSR. */
static gnn_graph random_graph(size_t n)
{
	int32_t *off = calloc(n + 1, sizeof(int32_t)), *nb = malloc(n * DEGREE * sizeof(int32_t));
	int32_t *src = malloc(n * DEGREE * sizeof(int32_t)), *fill = calloc(n, sizeof(int32_t));
	size_t e, i;

	if (!off || !nb || !src || !fill)
		exit(1);
	for (e = 0; e < n * DEGREE; e++) {
		src[e] = (int32_t)rnd((uint32_t)n);
		off[src[e] + 1]++;
	}
	for (i = 0; i < n; i++)
		off[i + 1] += off[i];
	for (e = 0; e < n * DEGREE; e++)
		nb[off[src[e]] + fill[src[e]]++] = (int32_t)rnd((uint32_t)n);
	free(src);
	free(fill);
	return (gnn_graph){n, off, nb, NULL};
}

static gnn_model *bench_model(enum gnn_conv conv)
{
	static char names[WIDTH][8], set_names[N_SET_FEATURES][8];
	const char *vn[WIDTH], *sn[N_SET_FEATURES];
	gnn_arch arch = {WIDTH, vn, NULL, NULL, N_SET_FEATURES, sn, NULL, NULL, conv, 2, WIDTH,
			 WIDTH};
	gnn_error err;
	gnn_model *m;
	int i;

	for (i = 0; i < WIDTH; i++) {
		snprintf(names[i], sizeof(names[i]), "f%d", i);
		vn[i] = names[i];
	}
	for (i = 0; i < N_SET_FEATURES; i++) {
		snprintf(set_names[i], sizeof(set_names[i]), "s%d", i);
		sn[i] = set_names[i];
	}
	m = gnn_model_build(&arch, 7, &err);
	if (!m) {
		fprintf(stderr, "bench/gnn: %s\n", err.text);
		exit(1);
	}
	return m;
}

static double max_abs_diff(const float *a, const float *b, size_t n)
{
	double d = 0.0;
	size_t i;

	for (i = 0; i < n; i++)
		if (fabs((double)a[i] - b[i]) > d)
			d = fabs((double)a[i] - b[i]);
	return d;
}

struct embed_result {
	size_t n, edges;
	double ms, ref_ms, bytes, diff;
};

/* Time the optimized and (for sage) the reference embedding passes on a
 * random graph. */
static struct embed_result bench_embed(const gnn_model *m, size_t n, int reps, float **emb_out,
				       gnn_graph *g_out)
{
	struct embed_result r = {n, n * DEGREE, 1e30, 1e30, 0, 0};
	gnn_graph g = random_graph(n);
	float *x = gnn_alloc_floats(n * WIDTH), *emb = gnn_alloc_floats(n * WIDTH);
	float *ref = gnn_alloc_floats(n * WIDTH), *tmp = gnn_alloc_floats(n * WIDTH);
	float scratch[2 * WIDTH];
	gnn_ctx *ctx = gnn_ctx_create(m, n, n * DEGREE, N_SETS, NULL);
	size_t i;
	int rep;

	if (!x || !emb || !ref || !tmp || !ctx)
		exit(1);
	for (i = 0; i < n * WIDTH; i++)
		x[i] = 4.0f * gnn_rng_uniform(&rng_state) - 2.0f;
	for (rep = 0; rep < reps; rep++) {
		double t0 = now();

		gnn_embed(ctx, &g, x, emb);
		if (now() - t0 < r.ms / 1e3)
			r.ms = (now() - t0) * 1e3;
		if (m->layers[0].kind != GNN_SAGE)
			continue;
		t0 = now();
		ref_embed(m, &g, x, tmp, ref, scratch);
		if (now() - t0 < r.ref_ms / 1e3)
			r.ref_ms = (now() - t0) * 1e3;
	}
	if (m->layers[0].kind == GNN_SAGE)
		r.diff = max_abs_diff(emb, ref, n * WIDTH);
	/* each layer reads its input rows and the CSR once and writes its output once */
	r.bytes = 2.0 * (4.0 * n * WIDTH * 2 + 4.0 * (n + 1) + 4.0 * r.edges) +
		  4.0 * gnn_model_n_params(m);
	gnn_ctx_free(ctx);
	free(x);
	free(ref);
	free(tmp);
	*emb_out = emb;
	*g_out = g;
	return r;
}

int main(int argc, char **argv)
{
	const int json = argc > 1 && strcmp(argv[1], "--json") == 0;
	gnn_model *m = bench_model(GNN_CONV_SAGE), *gin = bench_model(GNN_CONV_GIN);
	const double bw = triad_bandwidth();
	struct embed_result small, big, gin_big;
	float *emb, sf[N_SETS * N_SET_FEATURES], scores[N_SETS], ref_scores[N_SETS];
	int32_t set_off[N_SETS + 1], members[N_SETS * SET_SIZE];
	gnn_graph g;
	gnn_ctx *ctx;
	gnn_sets sets;
	double score_us = 1e30, ref_score_us = 1e30, diff, score_diff;
	int i, rep;

	small = bench_embed(m, 10000, 20, &emb, &g);
	free(emb);
	free((void *)g.offsets);
	free((void *)g.neighbours);
	gin_big = bench_embed(gin, 100000, 5, &emb, &g);
	free(emb);
	free((void *)g.offsets);
	free((void *)g.neighbours);
	big = bench_embed(m, 100000, 5, &emb, &g);
	for (i = 0; i < N_SETS; i++) {
		int k;

		set_off[i] = i * SET_SIZE;
		for (k = 0; k < SET_SIZE; k++)
			members[i * SET_SIZE + k] = (int32_t)rnd(100000);
		for (k = 0; k < N_SET_FEATURES; k++)
			sf[i * N_SET_FEATURES + k] = gnn_rng_uniform(&rng_state);
	}
	set_off[N_SETS] = N_SETS * SET_SIZE;
	sets = (gnn_sets){N_SETS, set_off, members, 100000};
	ctx = gnn_ctx_create(m, 1, 0, N_SETS, NULL);
	for (rep = 0; rep < 200; rep++) {
		double t0 = now();

		gnn_score_sets(ctx, emb, &sets, sf, scores);
		if ((now() - t0) * 1e6 < score_us)
			score_us = (now() - t0) * 1e6;
		t0 = now();
		ref_score(m, emb, &sets, sf, ref_scores);
		if ((now() - t0) * 1e6 < ref_score_us)
			ref_score_us = (now() - t0) * 1e6;
	}
	score_diff = max_abs_diff(scores, ref_scores, N_SETS);
	diff = fmax(fmax(small.diff, big.diff), score_diff);
	if (json) {
		printf("{\"triad_gb_per_s\": %.3f, \"embed_10k_ms\": %.3f, \"embed_10k_ref_ms\": %.3f, "
		       "\"embed_100k_ms\": %.3f, \"embed_100k_ref_ms\": %.3f, "
		       "\"embed_100k_min_bytes\": %.0f, \"bandwidth_fraction\": %.3f, "
		       "\"reference_speedup\": %.2f, \"max_abs_diff\": %.3g, "
		       "\"score_us_per_set\": %.4f, \"score_ref_us_per_set\": %.4f, "
		       "\"gin_100k_ms\": %.3f, \"gin_bandwidth_fraction\": %.3f}\n",
		       bw / 1e9, small.ms, small.ref_ms, big.ms, big.ref_ms, big.bytes,
		       big.bytes / (big.ms / 1e3) / bw, big.ref_ms / big.ms, diff, score_us / N_SETS,
		       ref_score_us / N_SETS, gin_big.ms, gin_big.bytes / (gin_big.ms / 1e3) / bw);
	} else {
		const struct embed_result *rs[2] = {&small, &big};

		printf("triad bandwidth: %.2f GB/s (3 arrays of %u MiB, best of 5)\n", bw / 1e9,
		       (unsigned)(TRIAD_N * sizeof(double) >> 20));
		for (i = 0; i < 2; i++)
			printf("embed %6zu vertices, %7zu edges, 2 sage layers x %d: %8.3f ms "
			       "(min %.1f MB, %.2f GB/s = %.2f of triad), reference %8.3f ms, "
			       "speedup %.1fx, max abs diff %.2g\n",
			       rs[i]->n, rs[i]->edges, WIDTH, rs[i]->ms, rs[i]->bytes / 1e6,
			       rs[i]->bytes / (rs[i]->ms / 1e3) / 1e9,
			       rs[i]->bytes / (rs[i]->ms / 1e3) / bw, rs[i]->ref_ms,
			       rs[i]->ref_ms / rs[i]->ms, rs[i]->diff);
		printf("embed %6zu vertices, %7zu edges, 2 gin layers x %d:  %8.3f ms "
		       "(min %.1f MB, %.2f GB/s = %.2f of triad), for comparison: one matrix per layer\n",
		       gin_big.n, gin_big.edges, WIDTH, gin_big.ms, gin_big.bytes / 1e6,
		       gin_big.bytes / (gin_big.ms / 1e3) / 1e9, gin_big.bytes / (gin_big.ms / 1e3) / bw);
		printf("score %d sets of %d vertices: %.2f us (%.3f us/set, min %.1f KB), "
		       "reference %.2f us, speedup %.1fx, max abs diff %.2g\n",
		       N_SETS, SET_SIZE, score_us, score_us / N_SETS,
		       (N_SETS * SET_SIZE * WIDTH * 4.0 + sizeof(sf)) / 1e3, ref_score_us,
		       ref_score_us / score_us, score_diff);
	}
	gnn_ctx_free(ctx);
	free(emb);
	free((void *)g.offsets);
	free((void *)g.neighbours);
	gnn_model_free(m);
	gnn_model_free(gin);
	return diff <= 1e-5 ? 0 : 1;
}
