/* Tests for the graph JSON file: lossless round trip and strict, located errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "topo_json.h"
#include "test_tmp.h"

static topo_graph *sample_graph(void)
{
	topo_graph *g = topo_graph_new();
	int h = topo_graph_add_vertex(g, TOPO_V_HOST, "dgx-01");
	int sw = topo_graph_add_vertex(g, TOPO_V_SWITCH, "LEAF-1");
	int grp = topo_graph_add_vertex(g, TOPO_V_GROUP, "su1");
	int hca = topo_graph_add_part(g, h, TOPO_V_HCA, "mlx5_0");
	int gpu = topo_graph_add_part(g, h, TOPO_V_GPU, "gpu0");
	int numa = topo_graph_add_part(g, h, TOPO_V_NUMA, "numa1");
	topo_vertex *v;
	int e;

	v = topo_graph_vertex_mut(g, sw);
	v->level = TOPO_LEVEL_LEAF;
	v->caps = TOPO_CAP_SHARP;
	v->guid = 0x2c5eab0300b87b40ull;
	v->nports = 65;
	topo_set_str(&v->desc, "MF0;LEAF-1:MQM9701/U1");
	v = topo_graph_vertex_mut(g, hca);
	v->guid = 0xe09d7303007a4bd8ull;
	v->lid = 647;
	v->port = 1;
	v->rail = 0;
	v->numa = 1;
	v->link_layer = TOPO_LL_IB;
	topo_set_str(&v->device, "mlx5_0");
	topo_set_str(&v->netdev, "ib0");
	v = topo_graph_vertex_mut(g, gpu);
	v->index = 0;
	v->numa = 1;
	topo_set_str(&v->pci_busid, "0000:44:00.0");
	topo_graph_vertex_mut(g, numa)->index = 1;
	topo_set_str(&topo_graph_vertex_mut(g, numa)->cpuset, "16-31,48-63");
	e = topo_graph_add_edge(g, TOPO_E_FABRIC, hca, sw);
	topo_graph_edge_mut(g, e)->port_b = 17;
	topo_graph_edge_mut(g, e)->state = TOPO_LINK_ACTIVE;
	topo_edge_set_rate(topo_graph_edge_mut(g, e), 4, "NDR");
	e = topo_graph_add_edge(g, TOPO_E_PCIE, gpu, hca);
	topo_graph_edge_mut(g, e)->distance = 3;
	topo_graph_add_edge(g, TOPO_E_MEMBER, grp, h);
	topo_graph_set_attr(g, sw, "oversubscription", "1.00");
	topo_graph_add_anomaly(g, "unnamed-hca", "0xe09d730300000001", "an HCA has no host name");
	return g;
}

static char *save_to_string(const topo_graph *g)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	topo_error err;

	assert_int_equal(topo_write_json(g, f, &err), 0);
	fclose(f);
	return buf;
}

static void test_round_trip(void **state)
{
	topo_graph *a = sample_graph(), *b = topo_graph_new();
	char *text, *text2, why[256] = "";
	topo_error err;

	(void)state;
	topo_graph_canonicalize(a);
	text = save_to_string(a);
	assert_non_null(strstr(text, "\"guid\": \"0x2c5eab0300b87b40\""));
	assert_non_null(strstr(text, "\"a\": \"hca:dgx-01/mlx5_0\""));
	assert_int_equal(topo_load_json_mem(b, text, strlen(text), "mem", &err), 0);
	topo_graph_canonicalize(b);
	assert_int_equal(topo_graph_equal(a, b, why, sizeof(why)), 1);
	text2 = save_to_string(b);
	assert_string_equal(text, text2); /* byte-identical re-save */
	free(text);
	free(text2);
	topo_graph_free(a);
	topo_graph_free(b);
}

/* Each broken file gives its own located, specific message. */
static void expect_error(const char *text, int line, const char *fragment)
{
	topo_graph *g = topo_graph_new();
	topo_error err;

	topo_error_clear(&err);
	assert_int_equal(topo_load_json_mem(g, text, strlen(text), "bad.json", &err), -1);
	assert_string_equal(err.source, "bad.json");
	assert_int_equal(err.line, line);
	if (!strstr(err.text, fragment))
		fail_msg("error \"%s\" lacks \"%s\"", err.text, fragment);
	topo_graph_free(g);
}

#define HEAD "{\"format\": \"topognn-graph\", \"version\": 1, "

static void test_errors(void **state)
{
	(void)state;
	expect_error("{\"format\": \"topognn-graph\",\n \"version\": 1,\n \"vertices\": [", 3,
		     "");
	expect_error("{\"format\": \"other\", \"version\": 1}", 0, "not a topognn graph file");
	expect_error("{\"format\": \"topognn-graph\", \"version\": 9}", 0, "unsupported \"version\"");
	expect_error(HEAD "\"vertices\": [{\"kind\": \"router\", \"name\": \"x\"}], \"edges\": []}", 0,
		     "vertices[0].kind");
	expect_error(HEAD "\"vertices\": [{\"kind\": \"host\", \"name\": \"x\"},"
			  "{\"kind\": \"host\", \"name\": \"x\"}], \"edges\": []}",
		     0, "vertices[1]: host \"x\" appears twice");
	expect_error(HEAD "\"vertices\": [{\"kind\": \"host\", \"name\": \"x\", \"rial\": 1}],"
			  " \"edges\": []}",
		     0, "unknown key \"rial\"");
	expect_error(HEAD "\"vertices\": [{\"kind\": \"switch\", \"name\": \"s\", \"guid\": \"zz\"}],"
			  " \"edges\": []}",
		     0, "not a hexadecimal GUID");
	expect_error(HEAD "\"vertices\": [{\"kind\": \"host\", \"name\": \"x\"}],"
			  " \"edges\": [{\"kind\": \"fabric\", \"a\": \"host:x\", \"b\": \"switch:y\"}]}",
		     0, "edges[0].b: no vertex \"switch:y\"");
	expect_error(HEAD "\"vertices\": [{\"kind\": \"gpu\", \"name\": \"x/gpu0\", \"host\": \"x\"}],"
			  " \"edges\": []}",
		     0, "no host named \"x\"");
}

/* Self-loops, duplicated cables and odd switch loops are anomalies, not
 * "anomalies: 0" (issue 13). A fat tree's own even loops are not. */
static void test_fabric_anomalies(void **state)
{
	static const char text[] = HEAD "\"vertices\": ["
		"{\"kind\": \"switch\", \"name\": \"s1\"}, {\"kind\": \"switch\", \"name\": \"s2\"},"
		"{\"kind\": \"switch\", \"name\": \"s3\"}, {\"kind\": \"switch\", \"name\": \"s4\"}],"
		" \"edges\": ["
		"{\"kind\": \"fabric\", \"a\": \"switch:s1\", \"b\": \"switch:s1\", \"port_a\": 1, \"port_b\": 2},"
		"{\"kind\": \"fabric\", \"a\": \"switch:s1\", \"b\": \"switch:s2\", \"port_a\": 3, \"port_b\": 1},"
		"{\"kind\": \"fabric\", \"a\": \"switch:s1\", \"b\": \"switch:s2\", \"port_a\": 3, \"port_b\": 1},"
		"{\"kind\": \"fabric\", \"a\": \"switch:s2\", \"b\": \"switch:s3\", \"port_a\": 2, \"port_b\": 1},"
		"{\"kind\": \"fabric\", \"a\": \"switch:s3\", \"b\": \"switch:s1\", \"port_a\": 2, \"port_b\": 4}]}";
	static const char square[] = HEAD "\"vertices\": ["
		"{\"kind\": \"switch\", \"name\": \"l1\"}, {\"kind\": \"switch\", \"name\": \"l2\"},"
		"{\"kind\": \"switch\", \"name\": \"p1\"}, {\"kind\": \"switch\", \"name\": \"p2\"}],"
		" \"edges\": ["
		"{\"kind\": \"fabric\", \"a\": \"switch:l1\", \"b\": \"switch:p1\", \"port_a\": 1, \"port_b\": 1},"
		"{\"kind\": \"fabric\", \"a\": \"switch:l1\", \"b\": \"switch:p2\", \"port_a\": 2, \"port_b\": 1},"
		"{\"kind\": \"fabric\", \"a\": \"switch:l2\", \"b\": \"switch:p1\", \"port_a\": 1, \"port_b\": 2},"
		"{\"kind\": \"fabric\", \"a\": \"switch:l2\", \"b\": \"switch:p2\", \"port_a\": 2, \"port_b\": 2}]}";
	topo_graph *g = topo_graph_new();
	topo_error err;
	int loop = 0, dup = 0, cycle = 0;

	(void)state;
	assert_int_equal(topo_load_json_mem(g, text, strlen(text), "bad.json", &err), 0);
	for (size_t i = 0; i < topo_graph_nanomalies(g); i++) {
		const topo_anomaly *a = topo_graph_anomaly(g, i);

		loop += !strcmp(a->kind, "self-loop") && !strcmp(a->subject, "s1");
		dup += !strcmp(a->kind, "duplicate-edge") &&
		       !strcmp(a->text, "the cable s1 port 3 - s2 port 1 is listed twice");
		cycle += !strcmp(a->kind, "switch-cycle");
	}
	assert_int_equal(loop, 1);
	assert_int_equal(dup, 1);
	assert_int_equal(cycle, 1);
	assert_int_equal(topo_graph_nanomalies(g), 3);
	topo_graph_free(g);
	g = topo_graph_new();
	assert_int_equal(topo_load_json_mem(g, square, strlen(square), "ok.json", &err), 0);
	assert_int_equal(topo_graph_nanomalies(g), 0);
	topo_graph_free(g);
}

static void test_missing_file(void **state)
{
	topo_graph *g = topo_graph_new();
	topo_error err;
	char dir[512], fifo[600];

	(void)state;
	assert_int_equal(topo_load_json(g, "/nonexistent/graph.json", &err), -1);
	assert_string_equal(err.source, "/nonexistent/graph.json");
	assert_non_null(strstr(err.text, "cannot open: "));
	/* a FIFO as GraphFile (issue 21) is refused at once, not waited on */
	assert_non_null(test_mkdtemp(dir, sizeof(dir), "test_json.XXXXXX"));
	snprintf(fifo, sizeof(fifo), "%s/graph.json", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(topo_load_json(g, fifo, &err), -1);
	assert_string_equal(err.source, fifo);
	assert_string_equal(err.text, "is a FIFO, not a regular file");
	unlink(fifo);
	rmdir(dir);
	topo_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_fabric_anomalies),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
