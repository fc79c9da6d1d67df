/*
 * test_gnn_samples: topognn-train's sample file reader (CSR and edge-list
 * graphs, located errors) and the tool end to end: the same seed writes the
 * same model file byte for byte, and that file loads; a diverging run fails
 * and leaves --out as it was.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "sim_samples.h"
#include "gnn_model.h"
#include "test_tmp.h"

#define SAMPLES FIXTURES_DIR "/gnn/samples_small.json"

static void test_load(void **state)
{
	sim_samples_file s;
	gnn_error err;
	const gnn_train_graph *g;

	assert_int_equal(sim_samples_load(SAMPLES, &s, &err), 0);
	assert_int_equal(s.n_graphs, 2);
	assert_int_equal(s.n_vertex_features, 3);
	assert_string_equal(s.vertex_names[2], "load");
	assert_string_equal(s.set_names[0], "job_nodes");
	g = &s.graphs[0];
	assert_int_equal(g->graph.n_vertices, 10);
	assert_int_equal(g->n_samples, 12);
	assert_non_null(g->graph.edge_weights);
	/* graph 1 is an edge list: every edge appears in both directions */
	g = &s.graphs[1];
	assert_int_equal(g->graph.n_vertices, 14);
	assert_int_equal(g->graph.offsets[14] % 2, 0);
	assert_non_null(g->graph.edge_weights);
	assert_int_equal(gnn_graph_check(&g->graph, 14, SIZE_MAX, &err), 0);
	sim_samples_file_free(&s);
}

static void expect_error(const char *json, const char *path, const char *text)
{
	char file[512];
	int fd = test_mkstemp(file, sizeof(file), "test_gnn_samples_XXXXXX");
	sim_samples_file s;
	gnn_error err;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, json, strlen(json)), (ssize_t)strlen(json));
	close(fd);
	assert_int_equal(sim_samples_load(file, &s, &err), -1);
	unlink(file);
	assert_string_equal(err.path, path);
	assert_string_equal(err.text, text);
}

#define HEAD "{\"format\":\"topognn-samples\",\"version\":1,\"vertex_features\":[\"a\"]," \
	"\"set_features\":[],\"graphs\":[{\"n_vertices\":2,"
#define SMP(set) "\"samples\":[{\"set\":" set ",\"set_features\":[],\"target\":1}]}]}"

static void test_errors(void **state)
{
	expect_error("{\"format\":\"x\"}", "format", "expected \"topognn-samples\"");
	expect_error(HEAD "\"edges\":[[0,2]],\"features\":[[1],[2]]," SMP("[0]"),
		     "graphs[0].edges[0]", "expected [u, v] or [u, v, weight] with vertex ids");
	expect_error(HEAD "\"edges\":[[0,1]],\"features\":[[1],[2,3]]," SMP("[0]"),
		     "graphs[0].features[1]", "expected one number per vertex feature");
	expect_error(HEAD "\"edges\":[[0,1]],\"features\":[[1],[2]]," SMP("[0,5]"),
		     "graphs[0].samples[0].set", "holds something that is not a vertex id");
	expect_error(HEAD "\"offsets\":[0,1,1],\"neighbours\":[1,0],\"features\":[[1],[2]],"
		     SMP("[0]"), "graphs[0].offsets[2]",
		     "offsets must start at 0, not decrease and end at the neighbour count");
}

/* Run topognn-train with a seed into `out`; its exit status. */
static int train(const char *out, int seed)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd),
		 "%s/tools/topognn-train --samples %s --out %s --epochs 3 --batch 5 --hidden 6 "
		 "--loss both --seed %d >/dev/null 2>&1",
		 BUILD_DIR, SAMPLES, out, seed);
	return system(cmd);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = calloc(1, 1 << 20);

	assert_non_null(f);
	assert_true(fread(buf, 1, (1 << 20) - 1, f) > 0);
	fclose(f);
	return buf;
}

static void test_tool_deterministic(void **state)
{
	char a[512], b[512];
	int fa = test_mkstemp(a, sizeof(a), "test_gnn_train_a_XXXXXX");
	int fb = test_mkstemp(b, sizeof(b), "test_gnn_train_b_XXXXXX");
	char *ta, *tb;
	gnn_error err;
	gnn_model *m;

	close(fa);
	close(fb);
	assert_int_equal(train(a, 9), 0);
	assert_int_equal(train(b, 9), 0);
	ta = slurp(a);
	tb = slurp(b);
	assert_string_equal(ta, tb);
	assert_int_equal(train(b, 10), 0);
	free(tb);
	tb = slurp(b);
	assert_string_not_equal(ta, tb);
	m = gnn_model_load(a, &err);
	assert_non_null(m);
	assert_int_equal(gnn_model_embed_dim(m), 6);
	gnn_model_free(m);
	unlink(a);
	unlink(b);
	free(ta);
	free(tb);
}

/* Run topognn-train with --lr lr into dir/model.json, stderr to dir/err;
 * its exit code. */
static int train_lr(const char *dir, const char *lr)
{
	char cmd[2048];
	int st;

	snprintf(cmd, sizeof(cmd),
		 "%s/tools/topognn-train --samples %s --out %s/model.json --epochs 3 --batch 5 "
		 "--hidden 6 --lr %s >/dev/null 2>%s/err",
		 BUILD_DIR, SAMPLES, dir, lr, dir);
	st = system(cmd);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

/* The names in dir, sorted, joined by spaces. */
static void list_dir(const char *dir, char *out, size_t size)
{
	char cmd[1024];
	FILE *p;
	size_t n;

	snprintf(cmd, sizeof(cmd), "ls %s | tr '\\n' ' '", dir);
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(out, 1, size - 1, p);
	out[n] = 0;
	pclose(p);
}

static void test_tool_diverges(void **state)
{
	char dir[128], path[256], names[256], *text;
	FILE *f;

	assert_non_null(test_mkdtemp(dir, sizeof(dir), "test_gnn_diverge_XXXXXX"));
	/* the loss turns infinite in the first epoch: exit 1, no model file */
	assert_int_equal(train_lr(dir, "1e30"), 1);
	snprintf(path, sizeof(path), "%s/err", dir);
	text = slurp(path);
	assert_non_null(strstr(text, "topognn-train: training diverged: the loss is "));
	assert_non_null(strstr(text, " at epoch 1, minibatch "));
	free(text);
	list_dir(dir, names, sizeof(names));
	assert_string_equal(names, "err ");
	/* an existing model is left as it was, with no temporary file beside it */
	snprintf(path, sizeof(path), "%s/model.json", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("old model\n", f);
	fclose(f);
	assert_int_equal(train_lr(dir, "1e30"), 1);
	text = slurp(path);
	assert_string_equal(text, "old model\n");
	free(text);
	list_dir(dir, names, sizeof(names));
	assert_string_equal(names, "err model.json ");
	/* a step size beyond float range is refused before training */
	assert_int_equal(train_lr(dir, "1e308"), 2);
	snprintf(path, sizeof(path), "%s/err", dir);
	text = slurp(path);
	assert_string_equal(text, "topognn-train: --lr needs a positive number below 3.4e+38, "
				  "not \"1e308\"\n");
	free(text);
	/* a sane step size writes the model in place of the old one */
	assert_int_equal(train_lr(dir, "0.001"), 0);
	list_dir(dir, names, sizeof(names));
	assert_string_equal(names, "err model.json ");
	snprintf(path, sizeof(path), "%s/model.json", dir);
	text = slurp(path);
	assert_non_null(strstr(text, "\"format\": \"topognn-gnn\""));
	free(text);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	assert_int_equal(system(path), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_tool_deterministic),
		cmocka_unit_test(test_tool_diverges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
