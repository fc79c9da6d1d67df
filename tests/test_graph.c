/* Unit tests for the topo_graph store: ids, lookups, parts, rates, canonical order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "topo_graph.h"

/* A two-host, one-leaf graph built in a given insertion order. */
static topo_graph *small_graph(int reversed)
{
	topo_graph *g = topo_graph_new();
	const char *hosts[2] = { "n1", "n2" };
	int leaf, h;

	assert_non_null(g);
	if (reversed) {
		hosts[0] = "n2";
		hosts[1] = "n1";
	}
	leaf = topo_graph_add_vertex(g, TOPO_V_SWITCH, "leaf1");
	topo_graph_vertex_mut(g, leaf)->level = TOPO_LEVEL_LEAF;
	for (int i = 0; i < 2; i++) {
		int hca, e;

		h = topo_graph_add_vertex(g, TOPO_V_HOST, hosts[i]);
		hca = topo_graph_add_part(g, h, TOPO_V_HCA, "mlx5_0");
		assert_true(hca >= 0);
		topo_set_str(&topo_graph_vertex_mut(g, hca)->device, "mlx5_0");
		/* link the cable from alternating ends: canonical order must not care */
		e = (i ^ reversed) ? topo_graph_add_edge(g, TOPO_E_FABRIC, hca, leaf)
				   : topo_graph_add_edge(g, TOPO_E_FABRIC, leaf, hca);
		topo_graph_edge_mut(g, e)->port_a = (i ^ reversed) ? 1 : 3 + (hosts[i][1] - '0');
		topo_graph_edge_mut(g, e)->port_b = (i ^ reversed) ? 3 + (hosts[i][1] - '0') : 1;
		topo_edge_set_rate(topo_graph_edge_mut(g, e), 4, "NDR");
		topo_graph_set_attr(g, h, "rack", "r1");
	}
	topo_graph_add_anomaly(g, "generic-hostname", "ubuntu", "a host is named %s", "ubuntu");
	return g;
}

static void test_add_and_find(void **state)
{
	topo_graph *g = small_graph(0);
	int h = topo_graph_find(g, TOPO_V_HOST, "n2");
	int hca = topo_graph_find(g, TOPO_V_HCA, "n2/mlx5_0");

	(void)state;
	assert_true(h >= 0);
	assert_true(hca >= 0);
	assert_int_equal(topo_graph_vertex(g, hca)->host, h);
	assert_int_equal(topo_graph_find(g, TOPO_V_SWITCH, "n2"), -1);
	assert_int_equal(topo_graph_add_vertex(g, TOPO_V_HOST, "n2"), -1);
	assert_int_equal(topo_graph_count(g, TOPO_V_HOST), 2);
	assert_int_equal(topo_graph_count_switches(g, TOPO_LEVEL_LEAF), 1);
	assert_int_equal(topo_graph_count_edges(g, TOPO_E_FABRIC), 2);
	assert_int_equal(topo_graph_count_edges(g, TOPO_E_MEMBER), 2);
	assert_string_equal(topo_graph_get_attr(g, h, "rack"), "r1");
	assert_null(topo_graph_get_attr(g, h, "row"));
	topo_graph_free(g);
}

static void test_many_vertices_hash(void **state)
{
	topo_graph *g = topo_graph_new();
	char name[32];

	(void)state;
	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "node%05d", i);
		assert_int_equal(topo_graph_add_vertex(g, TOPO_V_HOST, name), i);
	}
	assert_int_equal(topo_graph_find(g, TOPO_V_HOST, "node04321"), 4321);
	assert_int_equal(topo_graph_find(g, TOPO_V_GPU, "node04321"), -1);
	topo_graph_free(g);
}

static void test_rates(void **state)
{
	(void)state;
	assert_true(topo_lane_gbps("NDR") == 100.0);
	assert_true(topo_lane_gbps("HDR") == 50.0);
	assert_true(topo_lane_gbps("FDR") == 14.0);
	assert_true(topo_lane_gbps("100G") == 100.0);
	assert_true(topo_lane_gbps("bogus") == 0.0);
	assert_true(topo_lane_gbps("") == 0.0);
}

static void test_incidence(void **state)
{
	topo_graph *g = small_graph(0);
	int leaf = topo_graph_find(g, TOPO_V_SWITCH, "leaf1"), n;
	const int *inc = topo_graph_incident(g, leaf, &n);

	(void)state;
	assert_int_equal(n, 2);
	for (int i = 0; i < n; i++)
		assert_int_equal(topo_graph_edge(g, inc[i])->kind, TOPO_E_FABRIC);
	topo_graph_free(g);
}

static void test_canonical_equal(void **state)
{
	topo_graph *a = small_graph(0), *b = small_graph(1);
	char why[256] = "";

	(void)state;
	assert_int_equal(topo_graph_canonicalize(a), 0);
	assert_int_equal(topo_graph_canonicalize(b), 0);
	assert_int_equal(topo_graph_equal(a, b, why, sizeof(why)), 1);
	/* lookups survive the renumbering */
	assert_string_equal(topo_graph_vertex(a, topo_graph_find(a, TOPO_V_HCA, "n1/mlx5_0"))->name,
			    "n1/mlx5_0");
	topo_graph_vertex_mut(b, topo_graph_find(b, TOPO_V_HCA, "n1/mlx5_0"))->lid = 7;
	assert_int_equal(topo_graph_equal(a, b, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "n1/mlx5_0"));
	topo_graph_free(a);
	topo_graph_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_and_find),
		cmocka_unit_test(test_many_vertices_hash),
		cmocka_unit_test(test_rates),
		cmocka_unit_test(test_incidence),
		cmocka_unit_test(test_canonical_equal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
