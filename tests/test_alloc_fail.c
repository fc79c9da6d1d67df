/*
 * Allocation failures, SQLite style: every in-memory loader and the
 * engine's constructor is run with its 1st, 2nd, 3rd, ... allocation
 * failing, until a run needs no more allocations than it was allowed. Each
 * failed run must return a clean error (-1 or NULL, with a message) and
 * leave nothing allocated (LeakSanitizer checks that in the sanitizer build)
 * and nothing crashed; the final run must succeed with the same result as an
 * unhindered one. Inputs are the real fixtures (SuperPOD dump, topology.conf,
 * hwloc XML of a GPU node, the KTH SP2 trace head, a GNN model).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "malloc_fail.h"

#include "gnn_model.h"
#include "place.h"
#include "topo_fattree.h"
#include "topo_graph.h"
#include "topo_hwloc.h"
#include "topo_ibnetdiscover.h"
#include "topo_io.h"
#include "topo_json.h"
#include "topo_topology_conf.h"
#include "trace.h"

/* A loader under test: 0 on success, -1 on failure with `why` filled. */
typedef int (*loader)(const char *text, size_t len, char *why, size_t whylen, long *result);

/* Run f with the 1st, 2nd, ... allocation failing until it succeeds.
 * Returns the number of failure points exercised. */
static long exhaust(const char *name, loader f, const char *text, size_t len)
{
	char why[512];
	long want = -1, got = -1, n;

	fail_nth(0);
	if (f(text, len, why, sizeof(why), &want) != 0)
		fail_msg("%s: fails without any injected failure: %s", name, why);
	for (n = 1;; n++) {
		int rc;

		why[0] = '\0';
		fail_nth(n);
		rc = f(text, len, why, sizeof(why), &got);
		fail_nth(0);
		if (rc == 0 && allocs < n)
			break; /* needed fewer than n allocations: all paths done */
		if (rc == 0)
			continue; /* the failure hit an allocation whose failure is tolerated */
		if (!why[0])
			fail_msg("%s: allocation %ld failed without a message", name, n);
	}
	if (got != want)
		fail_msg("%s: result %ld after the failure loop, %ld before", name, got, want);
	printf("# %s: %ld allocation failures, each a clean error\n", name, n - 1);
	return n - 1;
}

static int graph_result(topo_graph *g, int rc, const topo_error *err, char *why, size_t whylen,
			long *result)
{
	if (rc == 0)
		*result = (long)(topo_graph_nvertices(g) * 100000 + topo_graph_nedges(g));
	else
		snprintf(why, whylen, "%s", err->text);
	topo_graph_free(g);
	return rc;
}

static int load_ibnd(const char *text, size_t len, char *why, size_t wl, long *res)
{
	topo_graph *g = topo_graph_new();
	topo_error err;

	if (!g)
		return snprintf(why, wl, "no graph"), -1;
	return graph_result(g, topo_load_ibnetdiscover_mem(g, text, len, "superpod", NULL, &err), &err,
			    why, wl, res);
}

static int load_conf(const char *text, size_t len, char *why, size_t wl, long *res)
{
	topo_graph *g = topo_graph_new();
	topo_error err;

	if (!g)
		return snprintf(why, wl, "no graph"), -1;
	return graph_result(g, topo_load_topology_conf_mem(g, text, len, "tree.conf", &err), &err, why, wl,
			    res);
}

static int load_hwloc(const char *text, size_t len, char *why, size_t wl, long *res)
{
	topo_graph *g = topo_graph_new();
	topo_error err;

	if (!g)
		return snprintf(why, wl, "no graph"), -1;
	return graph_result(g, topo_load_hwloc_xml_mem(g, text, len, "node.xml", "n1", &err), &err,
			    why, wl, res);
}

static int load_json(const char *text, size_t len, char *why, size_t wl, long *res)
{
	topo_graph *g = topo_graph_new();
	topo_error err;

	if (!g)
		return snprintf(why, wl, "no graph"), -1;
	return graph_result(g, topo_load_json_mem(g, text, len, "graph.json", &err), &err, why, wl, res);
}

static int load_trace(const char *text, size_t len, char *why, size_t wl, long *res)
{
	FILE *f = fmemopen((void *)text, len, "r");
	topo_trace t;
	topo_error err;
	int rc;

	if (!f)
		return snprintf(why, wl, "fmemopen: out of memory"), -1;
	trace_init(&t);
	rc = trace_load_swf(&t, f, "kth.swf", &err);
	fclose(f);
	if (rc == 0)
		*res = t.njobs;
	else
		snprintf(why, wl, "%s", err.text);
	trace_free(&t);
	return rc;
}

static int load_model(const char *text, size_t len, char *why, size_t wl, long *res)
{
	gnn_error err;
	gnn_model *m = gnn_model_load_mem(text, "tiny.json", &err);

	(void)len;
	if (!m) {
		snprintf(why, wl, "%s", err.text);
		return -1;
	}
	*res = (long)gnn_model_n_features(m, GNN_VERTEX_FEATURES);
	gnn_model_free(m);
	return 0;
}

/* The engine's constructor on a graph loaded before the loop. */
static const topo_graph *engine_graph;

static int make_engine(const char *text, size_t len, char *why, size_t wl, long *res)
{
	topo_error err;
	place_config cfg;
	place_cluster *c;
	place_engine *e;

	(void)text;
	(void)len;
	place_config_init(&cfg);
	if (!(c = place_cluster_new(engine_graph, &err)))
		return snprintf(why, wl, "%s", err.text), -1;
	if (!(e = place_engine_new(c, &cfg, &err))) {
		snprintf(why, wl, "%s", err.text);
		place_cluster_free(c);
		return -1;
	}
	*res = place_cluster_nhosts(c);
	place_engine_free(e);
	place_cluster_free(c);
	return 0;
}

static char *fixture(const char *rel, size_t *len)
{
	char path[1024];
	topo_error err;
	char *text;

	snprintf(path, sizeof(path), "%s/%s", FIXTURES_DIR, rel);
	text = topo_read_file(path, TOPO_IO_MAX_BYTES, len, &err);
	if (!text)
		fail_msg("%s: %s", path, err.text);
	return text;
}

/* At least `min` failure points: the loader really allocates as it goes. */
static void run_on(const char *name, loader f, const char *rel, long min)
{
	size_t len;
	char *text = fixture(rel, &len);

	assert_true(exhaust(name, f, text, len) >= min);
	free(text);
}

static void test_ibnetdiscover(void **s) { (void)s; run_on("ibnetdiscover", load_ibnd, "fabrics/dgx-h100-superpod.ibnetdiscover", 1000); }
/* 88 failure points in a plain build, 49 under ASan (whose interceptors
 * serve some string copies without the hook) */
static void test_topology_conf(void **s) { (void)s; run_on("topology.conf", load_conf, "topology/tree.conf", 40); }

static void test_hwloc_xml(void **s)
{
	(void)s;
#ifdef __SANITIZE_ADDRESS__
	/* Under ASan the hook also fails libhwloc's own allocations, and hwloc
	 * then asserts or crashes inside the library (hwloc 2.9): our loader's
	 * failure paths are covered by the plain build. */
	skip();
#endif
	run_on("hwloc XML", load_hwloc, "hwloc/hwloc-test-2n8c2t-pci-cuda-mlx5.xml", 5);
}

static void test_trace(void **s) { (void)s; run_on("SWF trace", load_trace, "traces/kth-sp2-head100.swf", 3); }
static void test_model(void **s) { (void)s; run_on("GNN model", load_model, "gnn/tiny.json", 10); }

static void test_graph_json(void **state)
{
	topo_graph *g = topo_graph_new();
	topo_fattree_spec spec;
	topo_error err;
	char *text;

	(void)state;
	topo_fattree_spec_init(&spec);
	spec.groups = 2;
	spec.hosts_per_group = 4;
	spec.rails = 2;
	spec.gpus_per_host = 2;
	assert_int_equal(topo_fattree_build(g, &spec, &err), 0);
	{
		size_t size;
		FILE *mem = open_memstream(&text, &size);

		assert_non_null(mem);
		assert_int_equal(topo_write_json(g, mem, &err), 0);
		fclose(mem);
	}
	assert_true(exhaust("graph JSON", load_json, text, strlen(text)) > 10);
	free(text);
	topo_graph_free(g);
}

static void test_engine(void **state)
{
	topo_graph *g = topo_graph_new();
	topo_fattree_spec spec;
	topo_error err;

	(void)state;
	topo_fattree_spec_init(&spec);
	spec.groups = 2;
	spec.hosts_per_group = 8;
	spec.rails = 2;
	assert_int_equal(topo_fattree_build(g, &spec, &err), 0);
	engine_graph = g;
	assert_true(exhaust("place engine", make_engine, "", 0) > 10);
	topo_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ibnetdiscover), cmocka_unit_test(test_topology_conf),
		cmocka_unit_test(test_hwloc_xml),     cmocka_unit_test(test_graph_json),
		cmocka_unit_test(test_trace),         cmocka_unit_test(test_model),
		cmocka_unit_test(test_engine),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
