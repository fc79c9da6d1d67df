/*
 * test_gnn_layers: every layer kind on tiny graphs whose outputs were worked
 * out by hand (see the comments), through the public API: model JSON in,
 * gnn_embed / gnn_score_sets out.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gnn_infer.h"
#include "gnn_model.h"

#define EPS 1e-6

/* Model header with one vertex feature "x" (mean 0, std 1) and one set
 * feature "f" (mean 1, std 2), followed by the given layers. */
#define MODEL1(layers)                                                                    \
	"{\"format\":\"topognn-gnn\",\"version\":1,"                                        \
	"\"vertex_features\":[{\"name\":\"x\",\"mean\":0,\"std\":1}],"                     \
	"\"set_features\":[{\"name\":\"f\",\"mean\":1,\"std\":2}],\"layers\":[" layers "]}"

/* Path 0-1-2 plus an isolated vertex 3. */
static const int32_t path_off[] = {0, 1, 3, 4, 4};
static const int32_t path_nb[] = {1, 0, 2, 1};
static const float path_x[] = {1, 2, 4, 3};

static gnn_model *load(const char *json)
{
	gnn_error err;
	gnn_model *m = gnn_model_load_mem(json, "test", &err);

	if (!m)
		fail_msg("%s: %s: %s", err.file, err.path, err.text);
	return m;
}

/* Embed the path graph with `json` (1 output column per vertex expected
 * unless dim says otherwise) and compare with want. */
static void embed_and_check(const char *json, const float *weights, const float *x,
			    const float *want, size_t dim)
{
	gnn_model *m = load(json);
	gnn_ctx *ctx = gnn_ctx_create(m, 4, 4, 1, NULL);
	gnn_graph g = {4, path_off, path_nb, weights};
	float out[4 * 4];
	size_t i;

	assert_non_null(ctx);
	assert_int_equal(gnn_model_embed_dim(m), dim);
	assert_int_equal(gnn_embed(ctx, &g, x, out), 0);
	for (i = 0; i < 4 * dim; i++)
		assert_float_equal(out[i], want[i], EPS);
	gnn_ctx_free(ctx);
	gnn_model_free(m);
}

#define HEAD(d) "{\"type\":\"readout\"},{\"type\":\"linear\",\"in\":" #d ",\"out\":1," \
	"\"weight\":[[1],[1],[1]],\"bias\":[0]}"

static void test_linear(void **state)
{
	/* y = 2x - 1 */
	const float want[] = {1, 3, 7, 5};

	embed_and_check(MODEL1("{\"type\":\"linear\",\"in\":1,\"out\":1,\"weight\":[[2]],"
			       "\"bias\":[-1]}," HEAD(3)),
			NULL, path_x, want, 1);
}

static void test_relu_gelu(void **state)
{
	const float x[] = {-1, 1, 0, 2};
	const float relu[] = {0, 1, 0, 2};
	/* gelu(x) = x Phi(x): gelu(-1) = -0.158655254, gelu(1) = 0.841344746,
	 * gelu(2) = 1.954499736 */
	const float gelu[] = {-0.158655254f, 0.841344746f, 0, 1.954499736f};

	embed_and_check(MODEL1("{\"type\":\"relu\"}," HEAD(3)), NULL, x, relu, 1);
	embed_and_check(MODEL1("{\"type\":\"gelu\"}," HEAD(3)), NULL, x, gelu, 1);
}

static void test_layernorm(void **state)
{
	/* Rows of a linear x -> [x, 2x, 3x]: mean 2x, var (2/3)x^2, so the row
	 * normalises to [-1.22474, 0, 1.22474] (eps 1e-5 is negligible for x=1..4
	 * at 1e-5 relative), scaled by gamma [1,2,1] and shifted by beta [0,0,1].
	 * For x = 1: var = 2/3, inv = 1/sqrt(2/3 + 1e-5) = 1.2247357. */
	gnn_model *m = load(MODEL1(
		"{\"type\":\"linear\",\"in\":1,\"out\":3,\"weight\":[[1,2,3]],\"bias\":[0,0,0]},"
		"{\"type\":\"layernorm\",\"dim\":3,\"eps\":1e-5,\"gamma\":[1,2,1],\"beta\":[0,0,1]},"
		"{\"type\":\"readout\"},{\"type\":\"linear\",\"in\":7,\"out\":1,"
		"\"weight\":[[0],[0],[0],[0],[0],[0],[0]],\"bias\":[0]}"));
	gnn_ctx *ctx = gnn_ctx_create(m, 4, 4, 1, NULL);
	gnn_graph g = {4, path_off, path_nb, NULL};
	float out[12];

	assert_int_equal(gnn_embed(ctx, &g, path_x, out), 0);
	assert_float_equal(out[0], -1.2247357f, EPS);
	assert_float_equal(out[1], 0.0f, EPS);
	assert_float_equal(out[2], 1.0f + 1.2247357f, EPS);
	gnn_ctx_free(ctx);
	gnn_model_free(m);
}

#define SAGE "{\"type\":\"sage\",\"in\":1,\"out\":1,\"self\":[[2]],\"mean\":[[3]]," \
	"\"max\":[[5]],\"bias\":[0.5]}"

static void test_sage(void **state)
{
	/* y_i = 2 x_i + 3 mean_j x_j + 5 max_j x_j + 0.5, x = [1, 2, 4, 3]:
	 * v0: 2 + 6 + 10 + .5 = 18.5; v1: 4 + 3*2.5 + 20 + .5 = 32;
	 * v2: 8 + 6 + 10 + .5 = 24.5; v3 (no neighbours): 6 + .5 = 6.5 */
	const float want[] = {18.5f, 32, 24.5f, 6.5f};
	/* weights [1, .5, 2, 1]: v1 messages .5*1 and 2*4: mean 4.25, max 8:
	 * 4 + 12.75 + 40 + .5 = 57.25; v0 and v2 see message 1*2 as before */
	const float w[] = {1, 0.5f, 2, 1};
	const float want_w[] = {18.5f, 57.25f, 24.5f, 6.5f};

	embed_and_check(MODEL1(SAGE "," HEAD(3)), NULL, path_x, want, 1);
	embed_and_check(MODEL1(SAGE "," HEAD(3)), w, path_x, want_w, 1);
}

static void test_sage_fused_relu(void **state)
{
	/* Same sage with bias -20 (20.5 less), then relu: [-2, 11.5, 4, -14] clipped. */
	const float want[] = {0, 11.5f, 4, 0};

	embed_and_check(MODEL1("{\"type\":\"sage\",\"in\":1,\"out\":1,\"self\":[[2]],"
			       "\"mean\":[[3]],\"max\":[[5]],\"bias\":[-20]},{\"type\":\"relu\"},"
			       HEAD(3)),
			NULL, path_x, want, 1);
}

static void test_gin(void **state)
{
	/* y_i = ((1 + .5) x_i + sum_j x_j) 2 + 1: v0 (1.5 + 2) 2 + 1 = 8;
	 * v1 (3 + 5) 2 + 1 = 17; v2 (6 + 2) 2 + 1 = 17; v3 4.5 * 2 + 1 = 10 */
	const float want[] = {8, 17, 17, 10};

	embed_and_check(MODEL1("{\"type\":\"gin\",\"in\":1,\"out\":1,\"eps\":0.5,\"weight\":[[2]],"
			       "\"bias\":[1]}," HEAD(3)),
			NULL, path_x, want, 1);
}

static void test_gin_transform_first(void **state)
{
	/* in 2 > out 1, so the kernel transforms first: x -> [x, 1 - x] is
	 * built by a linear, then t = 1*a + 2*b = 2 - x = [1, 0, -2, -1];
	 * y_i = t_i + sum_j t_j + 0.25: v0 1+0, v1 0+1-2, v2 -2+0, v3 -1. */
	const float want[] = {1.25f, -0.75f, -1.75f, -0.75f};

	embed_and_check(MODEL1("{\"type\":\"linear\",\"in\":1,\"out\":2,\"weight\":[[1,-1]],"
			       "\"bias\":[0,1]},"
			       "{\"type\":\"gin\",\"in\":2,\"out\":1,\"weight\":[[1],[2]],"
			       "\"bias\":[0.25]}," HEAD(3)),
			NULL, path_x, want, 1);
}

static void test_readout_head(void **state)
{
	/* Embeddings are the 2-column input itself (no embedding layers).
	 * set {0,1}: mean [2, .5], max [3, 2], f (5-1)/2 = 2:
	 *   1*2 + 2*.5 + 3*3 + 4*2 + 5*2 + .25 = 30.25
	 * set {2}: mean = max = [0, 5], f (-1-1)/2 = -1: 10 + 20 - 5 + .25 = 25.25
	 * empty set: zeros, f (1-1)/2 = 0: .25 */
	gnn_model *m = load(
		"{\"format\":\"topognn-gnn\",\"version\":1,\"vertex_features\":["
		"{\"name\":\"a\",\"mean\":0,\"std\":1},{\"name\":\"b\",\"mean\":0,\"std\":1}],"
		"\"set_features\":[{\"name\":\"f\",\"mean\":1,\"std\":2}],\"layers\":["
		"{\"type\":\"readout\"},{\"type\":\"linear\",\"in\":5,\"out\":1,"
		"\"weight\":[[1],[2],[3],[4],[5]],\"bias\":[0.25]}]}");
	gnn_ctx *ctx = gnn_ctx_create(m, 3, 0, 3, NULL);
	const float emb[] = {1, 2, 3, -1, 0, 5};
	const int32_t off[] = {0, 2, 3, 3}, mem[] = {0, 1, 2};
	const float f[] = {5, -1, 1};
	gnn_sets sets = {3, off, mem, 3};
	float out[3];

	assert_int_equal(gnn_score_sets(ctx, emb, &sets, f, out), 0);
	assert_float_equal(out[0], 30.25f, EPS);
	assert_float_equal(out[1], 25.25f, EPS);
	assert_float_equal(out[2], 0.25f, EPS);
	gnn_ctx_free(ctx);
	gnn_model_free(m);
}

static void test_normalisation(void **state)
{
	/* vertex feature mean 1, std 2: x' = (x - 1) / 2 = [0, .5, 1.5, 1] */
	const float want[] = {0, 0.5f, 1.5f, 1};

	embed_and_check("{\"format\":\"topognn-gnn\",\"version\":1,\"vertex_features\":["
			"{\"name\":\"x\",\"mean\":1,\"std\":2}],\"set_features\":[],\"layers\":["
			"{\"type\":\"readout\"},{\"type\":\"linear\",\"in\":2,\"out\":1,"
			"\"weight\":[[1],[1]],\"bias\":[0]}]}",
			NULL, path_x, want, 1);
}

static void test_bad_graph_and_sets(void **state)
{
	gnn_model *m = load(MODEL1(SAGE "," HEAD(3)));
	gnn_ctx *ctx = gnn_ctx_create(m, 4, 4, 1, NULL);
	const int32_t bad_nb[] = {1, 0, 7, 1};
	gnn_graph g = {4, path_off, bad_nb, NULL};
	const int32_t off[] = {0, 1}, mem[] = {9};
	gnn_sets sets = {1, off, mem, 4};
	float out[4], f = 0;

	assert_int_equal(gnn_embed(ctx, &g, path_x, out), -1);
	assert_string_equal(gnn_ctx_error(ctx)->text, "neighbours[2] = 7 is not a vertex");
	g.n_vertices = 5;
	assert_int_equal(gnn_embed(ctx, &g, path_x, out), -1);
	assert_string_equal(gnn_ctx_error(ctx)->text, "5 vertices exceed the context's 4");
	assert_int_equal(gnn_score_sets(ctx, path_x, &sets, &f, out), -1);
	assert_string_equal(gnn_ctx_error(ctx)->text, "members[0] = 9 is not a vertex");
	gnn_ctx_free(ctx);
	gnn_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_linear),
		cmocka_unit_test(test_relu_gelu),
		cmocka_unit_test(test_layernorm),
		cmocka_unit_test(test_sage),
		cmocka_unit_test(test_sage_fused_relu),
		cmocka_unit_test(test_gin),
		cmocka_unit_test(test_gin_transform_first),
		cmocka_unit_test(test_readout_head),
		cmocka_unit_test(test_normalisation),
		cmocka_unit_test(test_bad_graph_and_sets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
