/*
 * gnn_layers: the forward kernels of every layer kind.
 *
 * Each output element is accumulated in one fixed order (over the input
 * index, then over neighbours in CSR order) and never contracted into fused
 * multiply-adds, so results do not depend on how the code is vectorized.
 * Inner loops run over contiguous output columns, in GCC vector types or in
 * blocks of GNN_BLOCK with a constant trip count, which compilers turn into
 * SIMD code at -O2 without special flags. On x86-64 with GCC, the hot
 * functions are also cloned for AVX2 and AVX-512 and picked at load time
 * (GNN_HOT), so one portable binary uses the wide registers where present.
 * The matrix kernels multiply four rows per weight load (GNN_ROWS). In
 * 16-float vectors that needs 32 registers of 512 bits; each kernel is
 * therefore built as a wide function (16-float vectors, for AVX-512) and a
 * narrow one (8-float vectors, which AVX2's sixteen registers hold), and
 * GNN_WIDE picks one per call. Both sum in the same order, so they give the
 * same bits (test_gnn_kernels_wide and _narrow check each on any CPU).
 */
#include "gnn_internal.h"

#include <math.h>
#include <string.h>

#define GNN_BLOCK 16

#if !defined(GNN_NO_CLONES) && defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
	defined(__GLIBC__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define GNN_HOT __attribute__((target_clones("avx512f", "avx2", "default")))
/* The clone runs on a CPU with 512-bit registers (checked at run time). */
#define GNN_WIDE() __builtin_cpu_supports("avx512f")
#endif
#endif
#ifndef GNN_HOT
#define GNN_HOT
#endif
/* GCC exports a target_clones function's resolver whatever -fvisibility
 * says; a library-private one must say hidden itself (test_exported_symbols). */
#define GNN_HOT_PRIVATE GNN_HOT __attribute__((visibility("hidden")))
/* Whether the 16-float kernels, whose accumulators need 32 vector
 * registers of 512 bits, run here; elsewhere (AVX2, SSE) compilers split
 * 16-float vectors and spill them to the stack, and the 8-float kernels are
 * faster. Both give the same bits. */
#ifndef GNN_WIDE
#if defined(__x86_64__) && !defined(__AVX512F__)
#define GNN_WIDE() 0
#else
#define GNN_WIDE() 1
#endif
#endif
/* Helpers inlined into each clone, so they get its instruction set. */
#define GNN_INLINE static inline __attribute__((always_inline))
/* How many neighbours ahead the aggregation prefetches rows (measured on
 * the 100,000-vertex bench: 16 and 32 beat 8 and 64; none is 30% slower). */
#define GNN_PREFETCH_AHEAD 16
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

GNN_INLINE void act_rows(enum gnn_act act, const float *x, size_t count, float *y)
{
	size_t i = 0, j;

	if (act == GNN_ACT_RELU) {
		for (; i + GNN_BLOCK <= count; i += GNN_BLOCK)
			for (j = 0; j < GNN_BLOCK; j++)
				y[i + j] = x[i + j] > 0.0f ? x[i + j] : 0.0f;
		for (; i < count; i++)
			y[i] = x[i] > 0.0f ? x[i] : 0.0f;
	} else if (act == GNN_ACT_GELU) {
		for (i = 0; i < count; i++)
			y[i] = gnn_gelu(x[i]);
	} else if (y != x) {
		memcpy(y, x, count * sizeof(*y));
	}
}

void gnn_act_forward(enum gnn_act act, const float *x, size_t count, float *y)
{
	act_rows(act, x, count, y);
}

/* Eight and sixteen floats as one value: GCC and clang map them to whatever
 * SIMD registers the target has (SSE, AVX, AVX-512, or plain scalars). */
typedef float v8 __attribute__((vector_size(32)));
typedef float v16 __attribute__((vector_size(64)));

/* Copy floats from p into the vector `v` (any alignment). */
#define LOAD(v, p) memcpy(&(v), (p), sizeof(v))

/* y[o0..out) = b + x[0..in) W, W row-major in x out; b may be NULL. Blocks of
 * 32 outputs keep their accumulators in registers across k; each output is
 * summed over k in order, so every code path gives the same bits. */
GNN_INLINE void row_times_matrix_from(const float *restrict x, size_t in, size_t out,
				      const float *restrict w, const float *restrict b,
				      float *restrict y, size_t o0)
{
	size_t o = o0, k;

	for (; o + 32 <= out; o += 32) {
		v8 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, w0, w1, w2, w3;

		if (b) {
			LOAD(a0, b + o);
			LOAD(a1, b + o + 8);
			LOAD(a2, b + o + 16);
			LOAD(a3, b + o + 24);
		}
		for (k = 0; k < in; k++) {
			const float *wk = w + k * out + o;

			LOAD(w0, wk);
			LOAD(w1, wk + 8);
			LOAD(w2, wk + 16);
			LOAD(w3, wk + 24);
			a0 += x[k] * w0;
			a1 += x[k] * w1;
			a2 += x[k] * w2;
			a3 += x[k] * w3;
		}
		memcpy(y + o, &a0, sizeof(a0));
		memcpy(y + o + 8, &a1, sizeof(a1));
		memcpy(y + o + 16, &a2, sizeof(a2));
		memcpy(y + o + 24, &a3, sizeof(a3));
	}
	for (; o + 16 <= out; o += 16) { /* two independent sums: twice the rate */
		v8 a0 = {0}, a1 = {0}, w0, w1;

		if (b) {
			LOAD(a0, b + o);
			LOAD(a1, b + o + 8);
		}
		for (k = 0; k < in; k++) {
			LOAD(w0, w + k * out + o);
			LOAD(w1, w + k * out + o + 8);
			a0 += x[k] * w0;
			a1 += x[k] * w1;
		}
		memcpy(y + o, &a0, sizeof(a0));
		memcpy(y + o + 8, &a1, sizeof(a1));
	}
	for (; o + 8 <= out; o += 8) {
		v8 a0 = {0}, w0;

		if (b)
			LOAD(a0, b + o);
		for (k = 0; k < in; k++) {
			LOAD(w0, w + k * out + o);
			a0 += x[k] * w0;
		}
		memcpy(y + o, &a0, sizeof(a0));
	}
	for (; o < out; o++) {
		float acc = b ? b[o] : 0.0f;

		for (k = 0; k < in; k++)
			acc += x[k] * w[k * out + o];
		y[o] = acc;
	}
}

GNN_INLINE void row_times_matrix(const float *restrict x, size_t in, size_t out,
				 const float *restrict w, const float *restrict b,
				 float *restrict y)
{
	row_times_matrix_from(x, in, out, w, b, y, 0);
}

/* The 2 * GNN_ROWS accumulators of GNN_ROWS rows times 32 outputs: row r's
 * outputs 0..15 in lo[r], 16..31 in hi[r]. Named fields rather than arrays,
 * and helpers inlined into each clone, so that all of them stay in
 * registers across the k loop. */
typedef struct rows32 {
	v16 lo0, hi0, lo1, hi1, lo2, hi2, lo3, hi3;
} rows32;
_Static_assert(GNN_ROWS == 4, "rows32 holds GNN_ROWS rows");

/* Every row starts from the bias b[0..32), or 0 when b is NULL. */
GNN_INLINE void rows32_init(rows32 *a, const float *restrict b)
{
	v16 lo = {0}, hi = {0};

	if (b) {
		LOAD(lo, b);
		LOAD(hi, b + 16);
	}
	a->lo0 = a->lo1 = a->lo2 = a->lo3 = lo;
	a->hi0 = a->hi1 = a->hi2 = a->hi3 = hi;
}

/* Add x_r[k] times the weight row wk[0..32) to every row r: one weight
 * load shared by GNN_ROWS rows, each output summed over k in order. */
GNN_INLINE void rows32_add(rows32 *a, const float *restrict x0, const float *restrict x1,
			   const float *restrict x2, const float *restrict x3, size_t k,
			   const float *restrict wk)
{
	v16 w0, w1;

	LOAD(w0, wk);
	LOAD(w1, wk + 16);
	a->lo0 += x0[k] * w0;
	a->hi0 += x0[k] * w1;
	a->lo1 += x1[k] * w0;
	a->hi1 += x1[k] * w1;
	a->lo2 += x2[k] * w0;
	a->hi2 += x2[k] * w1;
	a->lo3 += x3[k] * w0;
	a->hi3 += x3[k] * w1;
}

/* Store row r's 32 outputs at y[r] + o. */
GNN_INLINE void rows32_store(const rows32 *a, float *const y[GNN_ROWS], size_t o)
{
	memcpy(y[0] + o, &a->lo0, sizeof(a->lo0));
	memcpy(y[0] + o + 16, &a->hi0, sizeof(a->hi0));
	memcpy(y[1] + o, &a->lo1, sizeof(a->lo1));
	memcpy(y[1] + o + 16, &a->hi1, sizeof(a->hi1));
	memcpy(y[2] + o, &a->lo2, sizeof(a->lo2));
	memcpy(y[2] + o + 16, &a->hi2, sizeof(a->hi2));
	memcpy(y[3] + o, &a->lo3, sizeof(a->lo3));
	memcpy(y[3] + o + 16, &a->hi3, sizeof(a->hi3));
}

/* GNN_ROWS rows at once (row r at x[r], its output at y[r]), sharing each
 * weight load among 2 * GNN_ROWS accumulators: the weights are loaded once
 * per block instead of once per row, and the adder pipelines get enough
 * independent sums to run at full rate. Wide: blocks of 32 and 16 outputs
 * in 16-float vectors. Narrow: blocks of 16 outputs in 8-float vectors,
 * eight accumulators that AVX2's sixteen registers hold with the two
 * weight vectors. Same per-output summation order as row_times_matrix, so
 * the same bits. */
GNN_INLINE void rows_times_matrix(const float *const x[GNN_ROWS], size_t in, size_t out,
				  const float *restrict w, const float *restrict b,
				  float *const y[GNN_ROWS], int wide)
{
	const float *restrict x0 = x[0], *restrict x1 = x[1], *restrict x2 = x[2],
			      *restrict x3 = x[3];
	size_t o = 0, k, r;

	for (; wide && o + 32 <= out; o += 32) {
		rows32 a;

		rows32_init(&a, b ? b + o : NULL);
		for (k = 0; k < in; k++)
			rows32_add(&a, x0, x1, x2, x3, k, w + k * out + o);
		rows32_store(&a, y, o);
	}
	for (; wide && o + 16 <= out; o += 16) { /* e.g. topognn's 16-wide layers */
		v16 a0 = {0}, c0, d0, e0, w0;

		if (b)
			LOAD(a0, b + o);
		c0 = d0 = e0 = a0;
		for (k = 0; k < in; k++) {
			LOAD(w0, w + k * out + o);
			a0 += x0[k] * w0;
			c0 += x1[k] * w0;
			d0 += x2[k] * w0;
			e0 += x3[k] * w0;
		}
		memcpy(y[0] + o, &a0, sizeof(a0));
		memcpy(y[1] + o, &c0, sizeof(c0));
		memcpy(y[2] + o, &d0, sizeof(d0));
		memcpy(y[3] + o, &e0, sizeof(e0));
	}
	for (; !wide && o + 16 <= out; o += 16) {
		v8 a0 = {0}, a1 = {0}, c0, c1, d0, d1, e0, e1, w0, w1;

		if (b) {
			LOAD(a0, b + o);
			LOAD(a1, b + o + 8);
		}
		c0 = d0 = e0 = a0;
		c1 = d1 = e1 = a1;
		for (k = 0; k < in; k++) {
			LOAD(w0, w + k * out + o);
			LOAD(w1, w + k * out + o + 8);
			a0 += x0[k] * w0;
			a1 += x0[k] * w1;
			c0 += x1[k] * w0;
			c1 += x1[k] * w1;
			d0 += x2[k] * w0;
			d1 += x2[k] * w1;
			e0 += x3[k] * w0;
			e1 += x3[k] * w1;
		}
		memcpy(y[0] + o, &a0, sizeof(a0));
		memcpy(y[0] + o + 8, &a1, sizeof(a1));
		memcpy(y[1] + o, &c0, sizeof(c0));
		memcpy(y[1] + o + 8, &c1, sizeof(c1));
		memcpy(y[2] + o, &d0, sizeof(d0));
		memcpy(y[2] + o + 8, &d1, sizeof(d1));
		memcpy(y[3] + o, &e0, sizeof(e0));
		memcpy(y[3] + o + 8, &e1, sizeof(e1));
	}
	for (r = 0; o < out && r < GNN_ROWS; r++)
		row_times_matrix_from(x[r], in, out, w, b, y[r], o);
}

GNN_INLINE void linear_rows(const float *x, size_t n, size_t in, size_t out, const float *w,
			    const float *b, float *y, enum gnn_act act, int wide)
{
	const float *xr[GNN_ROWS];
	float *yr[GNN_ROWS];
	size_t i, r;

	for (i = 0; i + GNN_ROWS <= n; i += GNN_ROWS) {
		for (r = 0; r < GNN_ROWS; r++) {
			xr[r] = x + (i + r) * in;
			yr[r] = y + (i + r) * out;
		}
		rows_times_matrix(xr, in, out, w, b, yr, wide);
		act_rows(act, y + i * out, GNN_ROWS * out, y + i * out);
	}
	for (; i < n; i++) {
		row_times_matrix(x + i * in, in, out, w, b, y + i * out);
		act_rows(act, y + i * out, out, y + i * out);
	}
}

/* Each kernel is compiled twice, for CPUs with and without 512-bit
 * registers (see GNN_WIDE), as separate functions so that the register
 * allocation of the one does not suffer from the code of the other. */
static GNN_HOT __attribute__((noinline)) void linear_wide(const float *x, size_t n, size_t in,
							   size_t out, const float *w,
							   const float *b, float *y,
							   enum gnn_act act)
{
	linear_rows(x, n, in, out, w, b, y, act, 1);
}

static GNN_HOT __attribute__((noinline)) void linear_narrow(const float *x, size_t n, size_t in,
							     size_t out, const float *w,
							     const float *b, float *y,
							     enum gnn_act act)
{
	linear_rows(x, n, in, out, w, b, y, act, 0);
}

void gnn_linear_forward(const float *x, size_t n, size_t in, size_t out, const float *w,
			const float *b, float *y, enum gnn_act act)
{
	if (GNN_WIDE())
		linear_wide(x, n, in, out, w, b, y, act);
	else
		linear_narrow(x, n, in, out, w, b, y, act);
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
GNN_INLINE void accumulate_message(const float *restrict xj, float wt, size_t dim,
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

/* Bring the row of the neighbour GNN_PREFETCH_AHEAD entries on into cache:
 * the gathers are random, and this keeps several misses in flight. */
GNN_INLINE void prefetch_row(const gnn_graph *g, const float *x, size_t dim, int32_t e,
			     int32_t end)
{
	if (e + GNN_PREFETCH_AHEAD < end) {
		const float *row = x + (size_t)g->neighbours[e + GNN_PREFETCH_AHEAD] * dim;

		__builtin_prefetch(row);
		__builtin_prefetch(row + dim - 1);
	}
}

/* m = v > m ? v : m lane by lane (the scalar max of accumulate_message),
 * for vectors of any width (v8 or v16). Written per lane because compilers
 * turn exactly this form into one max instruction (x86 maxps has these
 * semantics, zeros and NaNs included). */
#define VMAX_INTO(m, v)                                                              \
	do {                                                                         \
		int l_;                                                              \
		for (l_ = 0; l_ < (int)(sizeof(m) / sizeof(float)); l_++)            \
			(m)[l_] = (v)[l_] > (m)[l_] ? (v)[l_] : (m)[l_];             \
	} while (0)

/* Add the message from row xj (scaled by *wt, or unscaled when wt is NULL:
 * a weight of 1 would change no bit) into the sums s and maxima m of 32
 * columns. */
GNN_INLINE void message32(const float *xj, const float *wt, v16 *s0, v16 *s1, v16 *m0, v16 *m1)
{
	v16 v0, v1;

	LOAD(v0, xj);
	LOAD(v1, xj + 16);
	if (wt) {
		v0 = *wt * v0;
		v1 = *wt * v1;
	}
	*s0 += v0;
	*s1 += v1;
	VMAX_INTO(*m0, v0);
	VMAX_INTO(*m1, v1);
}

/* Mean and max of the messages into columns [k, k+32) of row i, finished
 * (divided by the degree; max 0 without neighbours), with the four
 * accumulators in registers across the neighbours. */
GNN_INLINE void aggregate_block32(const gnn_graph *g, const float *x, size_t dim, size_t i,
				  size_t k, float *restrict mean, float *restrict max)
{
	const int32_t lo = g->offsets[i], hi = g->offsets[i + 1];
	const int32_t end = g->offsets[g->n_vertices];
	const v16 zero = {0};
	v16 s0 = zero, s1 = zero, m0 = zero - INFINITY, m1 = zero - INFINITY;
	int32_t e;

	if (g->edge_weights) {
		for (e = lo; e < hi; e++) {
			if (k == 0)
				prefetch_row(g, x, dim, e, end);
			message32(x + (size_t)g->neighbours[e] * dim + k, g->edge_weights + e, &s0,
				  &s1, &m0, &m1);
		}
	} else {
		for (e = lo; e < hi; e++) {
			if (k == 0)
				prefetch_row(g, x, dim, e, end);
			message32(x + (size_t)g->neighbours[e] * dim + k, NULL, &s0, &s1, &m0, &m1);
		}
	}
	if (hi > lo) {
		s0 /= (float)(hi - lo);
		s1 /= (float)(hi - lo);
	} else {
		m0 = m1 = zero;
	}
	memcpy(mean + k, &s0, sizeof(s0));
	memcpy(mean + k + 16, &s1, sizeof(s1));
	memcpy(max + k, &m0, sizeof(m0));
	memcpy(max + k + 16, &m1, sizeof(m1));
}

/* aggregate_block32 for the 16 columns [k, k+16) (rows narrower than 32
 * floats, e.g. the first layer's few features padded to 16). */
GNN_INLINE void aggregate_block16(const gnn_graph *g, const float *x, size_t dim, size_t i,
				  size_t k, float *restrict mean, float *restrict max)
{
	const int32_t lo = g->offsets[i], hi = g->offsets[i + 1];
	const int32_t end = g->offsets[g->n_vertices];
	const v16 zero = {0};
	v16 s = zero, m = zero - INFINITY, v;
	int32_t e;

	for (e = lo; e < hi; e++) {
		if (k == 0)
			prefetch_row(g, x, dim, e, end);
		LOAD(v, x + (size_t)g->neighbours[e] * dim + k);
		if (g->edge_weights)
			v = g->edge_weights[e] * v;
		s += v;
		VMAX_INTO(m, v);
	}
	if (hi > lo)
		s /= (float)(hi - lo);
	else
		m = zero;
	memcpy(mean + k, &s, sizeof(s));
	memcpy(max + k, &m, sizeof(m));
}

/* Add the message from row xj (scaled by *wt unless wt is NULL) into the
 * sums s[0..nv) and maxima m[0..nv) of nv * 8 columns. */
GNN_INLINE void message8(const float *xj, const float *wt, int nv, v8 *s, v8 *m)
{
	for (int q = 0; q < nv; q++) {
		v8 v;

		LOAD(v, xj + 8 * q);
		if (wt)
			v = *wt * v;
		s[q] += v;
		VMAX_INTO(m[q], v);
	}
}

/* aggregate_block32 (nv 4) or aggregate_block16 (nv 2) in 8-float
 * vectors, for the narrow kernels: without 512-bit registers GCC splits a
 * 16-float vector and keeps its pieces on the stack, and the aggregation
 * then runs at the speed of store-to-load forwarding (5x slower on AVX2).
 * Lanes are independent, so the bits are those of the 16-float code. */
GNN_INLINE void aggregate_block8(const gnn_graph *g, const float *x, size_t dim, size_t i,
				 size_t k, int nv, float *restrict mean, float *restrict max)
{
	const int32_t lo = g->offsets[i], hi = g->offsets[i + 1];
	const int32_t end = g->offsets[g->n_vertices];
	const v8 zero = {0};
	v8 s[4] = {zero, zero, zero, zero};
	v8 m[4] = {zero - INFINITY, zero - INFINITY, zero - INFINITY, zero - INFINITY};
	int32_t e;

	if (g->edge_weights) {
		for (e = lo; e < hi; e++) {
			if (k == 0)
				prefetch_row(g, x, dim, e, end);
			message8(x + (size_t)g->neighbours[e] * dim + k, g->edge_weights + e, nv, s,
				 m);
		}
	} else {
		for (e = lo; e < hi; e++) {
			if (k == 0)
				prefetch_row(g, x, dim, e, end);
			message8(x + (size_t)g->neighbours[e] * dim + k, NULL, nv, s, m);
		}
	}
	for (int q = 0; q < nv; q++) {
		if (hi > lo)
			s[q] /= (float)(hi - lo);
		else
			m[q] = zero;
		memcpy(mean + k + 8 * q, &s[q], sizeof(s[q]));
		memcpy(max + k + 8 * q, &m[q], sizeof(m[q]));
	}
}

GNN_INLINE void aggregate_row(const gnn_graph *g, const float *x, size_t dim, size_t i,
			      float *restrict mean, float *restrict max, int wide)
{
	const int32_t lo = g->offsets[i], hi = g->offsets[i + 1];
	const int32_t end = g->offsets[g->n_vertices];
	size_t k = 0, j, rest;
	int32_t e;

	for (; wide && k + 32 <= dim; k += 32)
		aggregate_block32(g, x, dim, i, k, mean, max);
	for (; wide && k + 16 <= dim; k += 16)
		aggregate_block16(g, x, dim, i, k, mean, max);
	for (; !wide && k + 32 <= dim; k += 32)
		aggregate_block8(g, x, dim, i, k, 4, mean, max);
	for (; !wide && k + 16 <= dim; k += 16)
		aggregate_block8(g, x, dim, i, k, 2, mean, max);
	rest = k;
	for (j = rest; j < dim; j++)
		mean[j] = 0.0f;
	for (j = rest; j < dim; j++)
		max[j] = -INFINITY;
	for (e = lo; e < hi && rest < dim; e++) {
		if (rest == 0)
			prefetch_row(g, x, dim, e, end);
		accumulate_message(x + (size_t)g->neighbours[e] * dim + rest,
				   g->edge_weights ? g->edge_weights[e] : 1.0f, dim - rest,
				   mean + rest, max + rest);
	}
	for (k = rest; k < dim; k++) {
		if (hi == lo)
			max[k] = 0.0f;
		else
			mean[k] /= (float)(hi - lo);
	}
}

void gnn_aggregate_row(const gnn_graph *g, const float *x, size_t dim, size_t i,
		       float *mean, float *max)
{
	aggregate_row(g, x, dim, i, mean, max, 0);
}

/* The row [x_i, mean_i, max_i] that sage multiplies by its stacked weights;
 * x's rows are `stride` floats apart, in of them used. Rows padded to a
 * multiple of 16 (the padding zero) are aggregated in whole vectors. */
GNN_INLINE void sage_row(const gnn_graph *g, const float *x, size_t stride, size_t in, size_t i,
			 float *cat, int wide)
{
	float mean[GNN_PADDED_MAX], max[GNN_PADDED_MAX];

	memcpy(cat, x + i * stride, in * sizeof(*cat));
	if (stride == in) {
		aggregate_row(g, x, in, i, cat + in, cat + 2 * in, wide);
		return;
	}
	aggregate_row(g, x, stride, i, mean, max, wide);
	memcpy(cat + in, mean, in * sizeof(*cat));
	memcpy(cat + 2 * in, max, in * sizeof(*cat));
}

/* sage_row for in a multiple of 32, in fixed-size pieces and without any
 * library call, so that the pipelined kernel's accumulators stay in
 * registers around it (a call would clobber them). */
GNN_INLINE void sage_row32(const gnn_graph *g, const float *x, size_t in, size_t i, float *cat)
{
	size_t k;
	v16 t;

	for (k = 0; k < in; k += 16) {
		LOAD(t, x + i * in + k);
		memcpy(cat + k, &t, sizeof(t));
	}
	for (k = 0; k < in; k += 32)
		aggregate_block32(g, x, in, i, k, cat + in, cat + 2 * in);
}

/* Sage with out = 32, in a multiple of 32 and a bias, on nblocks blocks of
 * GNN_ROWS vertices, software-pipelined: while block b is multiplied by
 * the weights, the neighbours of block b+1 are aggregated, one vertex after
 * each slice of the product, so the random row gathers run under the
 * arithmetic instead of after it.
 * `cat` holds two blocks of rows [x_i, mean, max] (2 * GNN_ROWS * 3 * in).
 * Each output is still summed over k in order, so the bits are those of
 * row_times_matrix. */
GNN_INLINE void sage_blocks32(const gnn_graph *g, const float *x, size_t in, size_t nblocks,
			      const float *restrict w, const float *restrict b, float *y,
			      float *cat, enum gnn_act act)
{
	const size_t kin = 3 * in, slice = (kin + GNN_ROWS - 1) / GNN_ROWS;
	size_t blk, r, k;

	for (r = 0; r < GNN_ROWS; r++)
		sage_row32(g, x, in, r, cat + r * kin);
	for (blk = 0; blk < nblocks; blk++) {
		const float *restrict x0 = cat + (blk & 1) * GNN_ROWS * kin;
		const float *restrict x1 = x0 + kin, *restrict x2 = x1 + kin, *restrict x3 = x2 + kin;
		float *next = cat + !(blk & 1) * GNN_ROWS * kin, *yb = y + blk * GNN_ROWS * 32;
		float *const yr[GNN_ROWS] = { yb, yb + 32, yb + 64, yb + 96 };
		rows32 a;

		rows32_init(&a, b);
		for (r = 0; r < GNN_ROWS; r++) {
			const size_t k1 = (r + 1) * slice < kin ? (r + 1) * slice : kin;

			for (k = r * slice; k < k1; k++)
				rows32_add(&a, x0, x1, x2, x3, k, w + k * 32);
			if (blk + 1 < nblocks)
				sage_row32(g, x, in, (blk + 1) * GNN_ROWS + r, next + r * kin);
		}
		rows32_store(&a, yr, 0);
		act_rows(act, yb, GNN_ROWS * 32, yb);
	}
}

/* Sage of several models reading the same x, on rows [i0, n): each block
 * of rows [x_i, mean, max] is built once, then multiplied by every model's
 * weights (o[m], see gnn_sage_out). Per model and output, the same sums in
 * the same order as a model on its own, so the same bits. */
GNN_INLINE void sage_shared_rows(const gnn_graph *g, size_t i0, size_t n, const float *x,
				 size_t stride, size_t in, const struct gnn_sage_out *o,
				 size_t n_models, float *scratch, int wide)
{
	const float *xr[GNN_ROWS];
	float *yr[GNN_ROWS];
	size_t i = i0, r, m;

	for (; i + GNN_ROWS <= n; i += GNN_ROWS) {
		for (r = 0; r < GNN_ROWS; r++) {
			sage_row(g, x, stride, in, i + r, scratch + r * 3 * in, wide);
			xr[r] = scratch + r * 3 * in;
		}
		for (m = 0; m < n_models; m++) {
			for (r = 0; r < GNN_ROWS; r++)
				yr[r] = o[m].y + (i + r) * o[m].out;
			rows_times_matrix(xr, 3 * in, o[m].out, o[m].w, o[m].b, yr, wide);
			act_rows(o[m].act, o[m].y + i * o[m].out, GNN_ROWS * o[m].out,
				 o[m].y + i * o[m].out);
		}
	}
	for (; i < n; i++) {
		sage_row(g, x, stride, in, i, scratch, wide);
		for (m = 0; m < n_models; m++) {
			float *y = o[m].y + i * o[m].out;

			row_times_matrix(scratch, 3 * in, o[m].out, o[m].w, o[m].b, y);
			act_rows(o[m].act, y, o[m].out, y);
		}
	}
}

GNN_INLINE void sage_rows(const gnn_graph *g, size_t n, const float *x, size_t stride,
			  size_t in, const struct gnn_sage_out *o, size_t n_models,
			  float *scratch, int wide)
{
	size_t i = 0;

	if (wide && n_models == 1 && stride == in && o->out == 32 && in % 32 == 0 && o->b &&
	    n >= GNN_ROWS) {
		sage_blocks32(g, x, in, n / GNN_ROWS, o->w, o->b, o->y, scratch, o->act);
		i = n - n % GNN_ROWS;
	}
	sage_shared_rows(g, i, n, x, stride, in, o, n_models, scratch, wide);
}

static GNN_HOT __attribute__((noinline)) void sage_wide(const gnn_graph *g, size_t n,
							 const float *x, size_t stride, size_t in,
							 const struct gnn_sage_out *o,
							 size_t n_models, float *scratch)
{
	sage_rows(g, n, x, stride, in, o, n_models, scratch, 1);
}

static GNN_HOT __attribute__((noinline)) void sage_narrow(const gnn_graph *g, size_t n,
							   const float *x, size_t stride, size_t in,
							   const struct gnn_sage_out *o,
							   size_t n_models, float *scratch)
{
	sage_rows(g, n, x, stride, in, o, n_models, scratch, 0);
}

size_t gnn_sage_stride(size_t in)
{
	return in < GNN_PADDED_MAX ? (in + 15) / 16 * 16 : in;
}

void gnn_sage_forward_shared(const gnn_graph *g, size_t n, const float *x, size_t stride,
			     size_t in, const struct gnn_sage_out *o, size_t n_models,
			     float *scratch)
{
	if (GNN_WIDE())
		sage_wide(g, n, x, stride, in, o, n_models, scratch);
	else
		sage_narrow(g, n, x, stride, in, o, n_models, scratch);
}

void gnn_sage_forward(const gnn_graph *g, size_t n, const float *x, size_t in, size_t out,
		      const float *w, const float *b, float *y, float *scratch, enum gnn_act act)
{
	const struct gnn_sage_out o = {out, w, b, y, act};

	gnn_sage_forward_shared(g, n, x, in, in, &o, 1, scratch);
}

/* z[k] += wt * xj[k] over dim. */
GNN_INLINE void add_scaled(const float *restrict xj, float wt, size_t dim, float *restrict z)
{
	size_t k = 0, j;

	for (; k + GNN_BLOCK <= dim; k += GNN_BLOCK)
		for (j = 0; j < GNN_BLOCK; j++)
			z[k + j] += wt * xj[k + j];
	for (; k < dim; k++)
		z[k] += wt * xj[k];
}

/* GIN's sum into columns [k, k+32) of z, accumulators in registers. */
GNN_INLINE void gin_sum_block32(const gnn_graph *g, const float *x, size_t dim, size_t i,
				size_t k, float eps, float *restrict z)
{
	const int32_t end = g->offsets[g->n_vertices];
	const v16 zero = {0};
	v16 s0 = zero, s1 = zero, v0, v1;
	int32_t e;

	LOAD(v0, x + i * dim + k);
	LOAD(v1, x + i * dim + k + 16);
	s0 += (1.0f + eps) * v0;
	s1 += (1.0f + eps) * v1;
	for (e = g->offsets[i]; e < g->offsets[i + 1]; e++) {
		const float *xj = x + (size_t)g->neighbours[e] * dim + k;
		const float wt = g->edge_weights ? g->edge_weights[e] : 1.0f;

		if (k == 0)
			prefetch_row(g, x, dim, e, end);
		LOAD(v0, xj);
		LOAD(v1, xj + 16);
		s0 += wt * v0;
		s1 += wt * v1;
	}
	memcpy(z + k, &s0, sizeof(s0));
	memcpy(z + k + 16, &s1, sizeof(s1));
}

GNN_INLINE void gin_sum_row(const gnn_graph *g, const float *x, size_t dim, size_t i, float eps,
			    float *z, int wide)
{
	const int32_t end = g->offsets[g->n_vertices];
	size_t k = 0, rest;
	int32_t e;

	for (; wide && k + 32 <= dim; k += 32)
		gin_sum_block32(g, x, dim, i, k, eps, z);
	rest = k;
	if (rest == dim)
		return;
	for (k = rest; k < dim; k++)
		z[k] = 0.0f;
	add_scaled(x + i * dim + rest, 1.0f + eps, dim - rest, z + rest);
	for (e = g->offsets[i]; e < g->offsets[i + 1]; e++) {
		if (rest == 0)
			prefetch_row(g, x, dim, e, end);
		add_scaled(x + (size_t)g->neighbours[e] * dim + rest,
			   g->edge_weights ? g->edge_weights[e] : 1.0f, dim - rest, z + rest);
	}
}

void gnn_gin_sum_row(const gnn_graph *g, const float *x, size_t dim, size_t i, float eps,
		     float *z)
{
	gin_sum_row(g, x, dim, i, eps, z, 0);
}

GNN_INLINE void gin_rows(const gnn_graph *g, size_t n, const float *x, size_t in, size_t out,
			 const float *w, const float *b, float eps, float *y, float *scratch,
			 enum gnn_act act, int wide)
{
	size_t i, k;

	if (out < in) {
		/* The sum is linear, so transform first and aggregate the narrower
		 * rows (every vertex is transformed: rows [0, n) may read any). */
		linear_rows(x, g->n_vertices, in, out, w, NULL, scratch, GNN_ACT_NONE, wide);
		for (i = 0; i < n; i++) {
			gin_sum_row(g, scratch, out, i, eps, y + i * out, wide);
			for (k = 0; k < out; k++)
				y[i * out + k] += b[k];
			act_rows(act, y + i * out, out, y + i * out);
		}
		return;
	}
	for (i = 0; wide && i + GNN_ROWS <= n; i += GNN_ROWS) {
		const float *xr[GNN_ROWS];
		float *yr[GNN_ROWS];

		for (k = 0; k < GNN_ROWS; k++) {
			gin_sum_row(g, x, in, i + k, eps, scratch + k * in, 1);
			xr[k] = scratch + k * in;
			yr[k] = y + (i + k) * out;
		}
		rows_times_matrix(xr, in, out, w, b, yr, 1);
		act_rows(act, y + i * out, GNN_ROWS * out, y + i * out);
	}
	for (; i < n; i++) {
		gin_sum_row(g, x, in, i, eps, scratch, wide);
		row_times_matrix(scratch, in, out, w, b, y + i * out);
		act_rows(act, y + i * out, out, y + i * out);
	}
}

static GNN_HOT __attribute__((noinline)) void gin_wide(const gnn_graph *g, size_t n,
							const float *x, size_t in, size_t out,
							const float *w, const float *b, float eps,
							float *y, float *scratch, enum gnn_act act)
{
	gin_rows(g, n, x, in, out, w, b, eps, y, scratch, act, 1);
}

static GNN_HOT __attribute__((noinline)) void gin_narrow(const gnn_graph *g, size_t n,
							  const float *x, size_t in, size_t out,
							  const float *w, const float *b, float eps,
							  float *y, float *scratch, enum gnn_act act)
{
	gin_rows(g, n, x, in, out, w, b, eps, y, scratch, act, 0);
}

void gnn_gin_forward(const gnn_graph *g, size_t n, const float *x, size_t in, size_t out,
		     const float *w, const float *b, float eps, float *y, float *scratch,
		     enum gnn_act act)
{
	if (GNN_WIDE())
		gin_wide(g, n, x, in, out, w, b, eps, y, scratch, act);
	else
		gin_narrow(g, n, x, in, out, w, b, eps, y, scratch, act);
}

GNN_HOT_PRIVATE void gnn_readout_forward(const float *emb, size_t dim, const gnn_sets *sets,
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

GNN_HOT_PRIVATE void gnn_normalise(const float *restrict x, size_t n, size_t dim,
			   const float *restrict mean, const float *restrict std,
			   float *restrict y, size_t y_stride)
{
	size_t i, k, j;

	for (i = 0; i < n; i++) {
		const float *xi = x + i * dim;
		float *yi = y + i * y_stride;

		for (k = dim; k < y_stride; k++)
			yi[k] = 0.0f;
		for (k = 0; k + GNN_BLOCK <= dim; k += GNN_BLOCK)
			for (j = 0; j < GNN_BLOCK; j++)
				yi[k + j] = (xi[k + j] - mean[k + j]) / std[k + j];
		for (; k < dim; k++)
			yi[k] = (xi[k] - mean[k]) / std[k];
	}
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
		gnn_sage_forward(g, n, src, l->in, l->out, p + l->w, p + l->b, dst, scratch, act);
		break;
	case GNN_GIN:
		gnn_gin_forward(g, n, src, l->in, l->out, p + l->w, p + l->b, l->eps, dst, scratch,
				act);
		break;
	case GNN_LAYERNORM:
		gnn_layernorm_forward(src, n, l->in, p + l->w, p + l->b, l->eps, dst);
		break;
	default:
		gnn_act_forward(gnn_act_of(l->kind), src, n * l->in, dst);
		break;
	}
}
