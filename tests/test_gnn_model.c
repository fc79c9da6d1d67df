/*
 * test_gnn_model: the model file — a valid file loads with its feature spec,
 * write/load round-trips every float bit for bit, and every corrupt file or
 * string is rejected with its exact error (file, JSON path, sentence) and no
 * leak (the suite runs under ASan with --enable-sanitizers).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "gnn_internal.h"
#include "test_tmp.h"

#define FIX FIXTURES_DIR "/gnn/"

static void expect_load_error(const char *name, const char *want)
{
	char path[1024], buf[1024];
	gnn_error err;
	gnn_model *m;

	snprintf(path, sizeof(path), "%s%s", FIX, name);
	m = gnn_model_load(path, &err);
	assert_null(m);
	assert_string_equal(err.file, path);
	assert_string_equal(gnn_error_format(&err, buf, sizeof(buf)) + strlen(FIX), want);
}

static void test_corrupt_files(void **state)
{
	expect_load_error("bad_json.json",
			  "bad_json.json: invalid JSON at line 17, column 0: unexpected token near end of file");
	expect_load_error("nan_weight.json",
			  "nan_weight.json: invalid JSON at line 108, column 7: invalid token near 'NaN'");
	expect_load_error("inf_weight.json",
			  "inf_weight.json: layers[6].weight[2][1]: 1e+39 is not a finite float32");
	expect_load_error("wrong_shape.json",
			  "wrong_shape.json: layers[3].weight[1]: expected a row of 2 numbers (out)");
	expect_load_error("missing_readout.json",
			  "missing_readout.json: layers: has no readout layer; a model needs exactly one");
	expect_load_error("missing_layer.json",
			  "missing_layer.json: layers[5].in: is 5 but the layer before produces 7");
	expect_load_error("bad_version.json",
			  "bad_version.json: version: unsupported version 2 (this build reads version 1)");
	expect_load_error("no_such_file.json",
			  "no_such_file.json: cannot open: No such file or directory");
}

/* A FIFO as ModelFile is refused at once (it would block slurmctld). */
static void test_fifo_model(void **state)
{
	char dir[512], fifo[600];
	gnn_error err;

	(void)state;
	assert_non_null(test_mkdtemp(dir, sizeof(dir), "test_gnn_model.XXXXXX"));
	snprintf(fifo, sizeof(fifo), "%s/model.json", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_null(gnn_model_load(fifo, &err));
	assert_string_equal(err.file, fifo);
	assert_string_equal(err.text, "is not a regular file");
	unlink(fifo);
	rmdir(dir);
}

#define HDR "{\"format\":\"topognn-gnn\",\"version\":1,"                      \
	"\"vertex_features\":[{\"name\":\"x\",\"mean\":0,\"std\":1}],"     \
	"\"set_features\":[],"
#define RO "{\"type\":\"readout\"}"
#define OUT "{\"type\":\"linear\",\"in\":2,\"out\":1,\"weight\":[[1],[1]],\"bias\":[0]}"

static void expect_string_error(const char *json, const char *path, const char *text)
{
	gnn_error err;
	gnn_model *m = gnn_model_load_mem(json, "s.json", &err);

	assert_null(m);
	assert_string_equal(err.file, "s.json");
	assert_string_equal(err.path, path);
	assert_string_equal(err.text, text);
}

static void test_corrupt_strings(void **state)
{
	expect_string_error("[1]", "", "expected a JSON object at the top level");
	expect_string_error("{\"format\":\"other\"}", "format", "expected \"topognn-gnn\"");
	expect_string_error("{\"format\":\"topognn-gnn\",\"version\":\"1\"}", "version",
			    "expected a whole number");
	expect_string_error(HDR "\"layers\":[]}", "layers", "expected an array of 1 to 1024 layers");
	expect_string_error("{\"format\":\"topognn-gnn\",\"version\":1,\"set_features\":[]}",
			    "vertex_features", "is missing");
	expect_string_error("{\"format\":\"topognn-gnn\",\"version\":1,\"vertex_features\":["
			    "{\"name\":\"x\",\"mean\":0,\"std\":0}],\"set_features\":[]}",
			    "vertex_features[0].std", "must be greater than 0");
	expect_string_error("{\"format\":\"topognn-gnn\",\"version\":1,\"vertex_features\":["
			    "{\"name\":\"x\",\"mean\":0,\"std\":1},{\"name\":\"x\",\"mean\":0,"
			    "\"std\":1}],\"set_features\":[]}",
			    "vertex_features[1]", "feature \"x\" appears twice");
	expect_string_error(HDR "\"layers\":[{\"type\":\"conv\"}]}", "layers[0].type",
			    "expected one of linear, relu, gelu, layernorm, sage, gin, readout");
	expect_string_error(HDR "\"layers\":[" RO ",{\"type\":\"sage\"}]}", "layers[1].type",
			    "a sage layer cannot come after the readout");
	expect_string_error(HDR "\"layers\":[" RO "," RO "]}", "layers[1].type",
			    "a readout layer cannot come after the readout");
	expect_string_error(HDR "\"layers\":[{\"type\":\"relu\",\"slope\":1}," RO "," OUT "]}",
			    "layers[0]", "unknown key \"slope\" for a relu layer");
	expect_string_error(HDR "\"layers\":[" RO ",{\"type\":\"linear\",\"in\":2,\"out\":3,"
			    "\"weight\":[[1,1,1],[1,1,1]],\"bias\":[0,0,0]}]}",
			    "layers[1]", "the last layer must produce 1 score, not 3");
	expect_string_error(HDR "\"layers\":[" RO ",{\"type\":\"linear\",\"in\":2,\"out\":1,"
			    "\"bias\":[0]}]}", "layers[1].weight", "is missing");
	expect_string_error(HDR "\"layers\":[" RO ",{\"type\":\"linear\",\"in\":2,\"out\":1,"
			    "\"weight\":[[1],[\"a\"]],\"bias\":[0]}]}", "layers[1].weight[1][0]",
			    "expected a number");
	expect_string_error(HDR "\"layers\":[" RO ",{\"type\":\"linear\",\"in\":2,\"out\":1,"
			    "\"weight\":[[1],[1]],\"bias\":[0,0]}]}", "layers[1].bias",
			    "expected an array of 1 numbers");
	expect_string_error(HDR "\"layers\":[" RO ",{\"type\":\"linear\",\"in\":0,\"out\":1}]}",
			    "layers[1].in", "expected a whole number from 1 to 65536");
	expect_string_error(HDR "\"layers\":[{\"type\":\"layernorm\",\"dim\":1,\"eps\":0,"
			    "\"gamma\":[1],\"beta\":[0]}," RO "," OUT "]}", "layers[0].eps",
			    "must be greater than 0");
	expect_string_error(HDR "\"layers\":[{\"type\":\"sage\",\"in\":1,\"out\":1,\"self\":[[1]],"
			    "\"mean\":[[1]],\"bias\":[0]}," RO "," OUT "]}", "layers[0].max",
			    "is missing");
}

static gnn_model *load_tiny(void)
{
	gnn_error err;
	gnn_model *m = gnn_model_load(FIX "tiny.json", &err);

	if (!m)
		fail_msg("%s: %s: %s", err.file, err.path, err.text);
	return m;
}

static void test_feature_spec(void **state)
{
	gnn_model *m = load_tiny();
	const char *good[] = {"free_cores", "hops"}, *swapped[] = {"hops", "free_cores"};
	const char *set[] = {"job_size"};
	gnn_error err;

	assert_int_equal(gnn_model_n_features(m, GNN_VERTEX_FEATURES), 2);
	assert_string_equal(gnn_model_feature_name(m, GNN_VERTEX_FEATURES, 1), "hops");
	assert_float_equal(gnn_model_feature_mean(m, GNN_VERTEX_FEATURES, 0), 16.0f, 0);
	assert_float_equal(gnn_model_feature_std(m, GNN_VERTEX_FEATURES, 0), 8.0f, 0);
	assert_null(gnn_model_feature_name(m, GNN_VERTEX_FEATURES, 2));
	assert_string_equal(gnn_model_feature_name(m, GNN_SET_FEATURES, 0),
			    "job_size");
	assert_int_equal(gnn_model_embed_dim(m), 2);
	assert_int_equal(gnn_model_n_layers(m), 9);
	assert_int_equal(gnn_model_hops(m), 2); /* sage, gin */
	assert_int_equal(gnn_model_check_features(m, GNN_VERTEX_FEATURES, good, 2, &err), 0);
	assert_int_equal(gnn_model_check_features(m, GNN_SET_FEATURES, set, 1, &err), 0);
	assert_int_equal(gnn_model_check_features(m, GNN_VERTEX_FEATURES, swapped, 2, &err), -1);
	assert_string_equal(err.text,
			    "vertex feature 0 is \"hops\" but the model expects \"free_cores\"");
	assert_int_equal(gnn_model_check_features(m, GNN_VERTEX_FEATURES, good, 1, &err), -1);
	assert_string_equal(err.text, "1 vertex features given but the model expects 2");
	assert_int_equal(gnn_model_check_features(m, GNN_SET_FEATURES, good, 2, &err), -1);
	assert_string_equal(err.text,
			    "set feature 0 is \"free_cores\" but the model expects \"job_size\"");
	gnn_model_free(m);
}

/* save -> load keeps every parameter bit and every other field. */
static void assert_round_trip(const gnn_model *m)
{
	char path[512];
	int fd = test_mkstemp(path, sizeof(path), "test_gnn_model_XXXXXX");
	gnn_error err;
	gnn_model *back;
	char *a, *b;

	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(gnn_model_write(m, path, &err), 0);
	back = gnn_model_load(path, &err);
	unlink(path);
	assert_non_null(back);
	assert_int_equal(back->n_params, m->n_params);
	assert_memory_equal(back->params, m->params, m->n_params * sizeof(float));
	a = gnn_model_write_mem(m, &err);
	b = gnn_model_write_mem(back, &err);
	assert_string_equal(a, b);
	free(a);
	free(b);
	gnn_model_free(back);
}

static void test_round_trip(void **state)
{
	const char *names[] = {"a", "b", "c"}, *set[] = {"s"};
	const float mean[] = {0.1f, 1e-7f, 3.0e5f}, std[] = {1.0f / 3.0f, 2.0f, 7.0f};
	gnn_arch arch = {3, names, mean, std, 1, set, NULL, NULL, GNN_CONV_SAGE, 2, 5, 4};
	gnn_model *m = load_tiny();
	gnn_error err;

	assert_round_trip(m);
	gnn_model_free(m);
	m = gnn_model_build(&arch, 42, &err);
	assert_round_trip(m);
	gnn_model_free(m);
	arch.conv = GNN_CONV_GIN;
	m = gnn_model_build(&arch, 7, &err);
	assert_round_trip(m);
	gnn_model_free(m);
}

static void test_save_error(void **state)
{
	gnn_model *m = load_tiny();
	gnn_error err;

	assert_int_equal(gnn_model_write(m, "/nonexistent-dir/m.json", &err), -1);
	assert_string_equal(err.file, "/nonexistent-dir/m.json");
	assert_string_equal(err.text, "cannot write: No such file or directory");
	gnn_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corrupt_files),
		cmocka_unit_test(test_fifo_model),
		cmocka_unit_test(test_corrupt_strings),
		cmocka_unit_test(test_feature_spec),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_save_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
