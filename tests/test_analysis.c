/* Unit tests for topo_analysis: hop distances, oversubscription, levels and
 * connected components, on hand-built fabrics (and the real SuperPOD fabric
 * when its loader is built). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo_analysis.h"
#include "topo_graph.h"
#include "topo_ibnetdiscover.h"

/* ---- building blocks for hand-made fabrics ---- */

static int add_switch(topo_graph *g, const char *name, topo_level level)
{
	int s = topo_graph_add_vertex(g, TOPO_V_SWITCH, name);

	assert_true(s >= 0);
	topo_graph_vertex_mut(g, s)->level = level;
	return s;
}

static int cable(topo_graph *g, int a, int b, const char *speed)
{
	int e = topo_graph_add_edge(g, TOPO_E_FABRIC, a, b);

	assert_true(e >= 0);
	topo_edge_set_rate(topo_graph_edge_mut(g, e), 4, speed);
	topo_graph_edge_mut(g, e)->state = TOPO_LINK_ACTIVE;
	return e;
}

/* A host named `name` with one HCA per leaf in `leaves` (n of them). */
static int add_host(topo_graph *g, const char *name, const int *leaves, int n)
{
	int h = topo_graph_add_vertex(g, TOPO_V_HOST, name);

	assert_true(h >= 0);
	for (int i = 0; i < n; i++) {
		char local[16];
		int hca;

		snprintf(local, sizeof(local), "mlx5_%d", i);
		hca = topo_graph_add_part(g, h, TOPO_V_HCA, local);
		assert_true(hca >= 0);
		topo_graph_vertex_mut(g, hca)->rail = i;
		cable(g, hca, leaves[i], "NDR");
	}
	return h;
}

static int host(const topo_graph *g, const char *name)
{
	int h = topo_graph_find(g, TOPO_V_HOST, name);

	assert_true(h >= 0);
	return h;
}

static int count_anomalies(const topo_graph *g, const char *kind, const char *subject)
{
	int n = 0;

	for (size_t i = 0; i < topo_graph_nanomalies(g); i++) {
		const topo_anomaly *a = topo_graph_anomaly(g, i);

		if (strcmp(a->kind, kind) == 0 && (!subject || strcmp(a->subject, subject) == 0))
			n++;
	}
	return n;
}

/* leaf1 {h1, h2} and leaf2 {h3} under one spine: the smallest fat tree. */
static topo_graph *two_leaves_one_spine(void)
{
	topo_graph *g = topo_graph_new();
	int l1, l2, sp;

	assert_non_null(g);
	l1 = add_switch(g, "leaf1", TOPO_LEVEL_LEAF);
	l2 = add_switch(g, "leaf2", TOPO_LEVEL_LEAF);
	sp = add_switch(g, "spine1", TOPO_LEVEL_SPINE);
	cable(g, l1, sp, "NDR");
	cable(g, l2, sp, "NDR");
	add_host(g, "h1", &l1, 1);
	add_host(g, "h2", &l1, 1);
	add_host(g, "h3", &l2, 1);
	return g;
}

/* ---- hop distances ---- */

static void check_two_leaves(const topo_analysis_index *ix, const topo_graph *g)
{
	int h1 = host(g, "h1"), h2 = host(g, "h2"), h3 = host(g, "h3");

	assert_int_equal(topo_analysis_index_nleaves(ix), 2);
	assert_int_equal(topo_analysis_host_hops(ix, h1, h1), 0);
	assert_int_equal(topo_analysis_host_hops(ix, h1, h2), 2);
	assert_int_equal(topo_analysis_host_hops(ix, h2, h1), 2);
	assert_int_equal(topo_analysis_host_hops(ix, h1, h3), 4);
	assert_int_equal(topo_analysis_host_hops(ix, h3, h2), 4);
	/* not hosts, out of range */
	assert_int_equal(topo_analysis_host_hops(ix, topo_graph_find(g, TOPO_V_SWITCH, "leaf1"), h1), -1);
	assert_int_equal(topo_analysis_host_hops(ix, topo_graph_find(g, TOPO_V_HCA, "h1/mlx5_0"), h2), -1);
	assert_int_equal(topo_analysis_host_hops(ix, -1, h1), -1);
	assert_int_equal(topo_analysis_host_hops(ix, h1, 100000), -1);
}

static void test_hops_two_leaves_table(void **state)
{
	topo_graph *g = two_leaves_one_spine();
	topo_analysis_index *ix = topo_analysis_index_new(g, NULL);

	(void)state;
	assert_non_null(ix);
	assert_int_equal(topo_analysis_index_has_table(ix), 1);
	check_two_leaves(ix, g);
	assert_true(topo_analysis_index_bytes(ix) > 0);
	topo_analysis_index_free(ix);
	topo_graph_free(g);
}

static void test_hops_two_leaves_bfs(void **state)
{
	topo_graph *g = two_leaves_one_spine();
	topo_analysis_index *ix = topo_analysis_index_new_capped(g, 0, NULL);

	(void)state;
	assert_non_null(ix);
	assert_int_equal(topo_analysis_index_has_table(ix), 0);
	check_two_leaves(ix, g);
	/* repeated queries reuse the scratch: answers do not drift */
	for (int i = 0; i < 1000; i++)
		assert_int_equal(topo_analysis_host_hops(ix, host(g, "h1"), host(g, "h3")), 4);
	topo_analysis_index_free(ix);
	topo_graph_free(g);
}

/* The index keeps nothing pointing into the graph. */
static void test_index_outlives_graph(void **state)
{
	topo_graph *g = two_leaves_one_spine();
	int h1 = host(g, "h1"), h3 = host(g, "h3");
	topo_analysis_index *ix = topo_analysis_index_new_capped(g, 0, NULL);

	(void)state;
	topo_graph_free(g);
	assert_int_equal(topo_analysis_host_hops(ix, h1, h3), 4);
	topo_analysis_index_free(ix);
}

/* Two rails: the distance is the minimum over the hosts' leaves; odd
 * distances (leaf-to-leaf cable) and a three-level path are counted exactly. */
static void test_hops_min_over_rails(void **state)
{
	topo_graph *g = topo_graph_new();
	int l[6], sp0, sp1, core, a, b, c, d, e, f;

	(void)state;
	for (int i = 0; i < 6; i++) {
		char name[16];

		snprintf(name, sizeof(name), "leaf%d", i);
		l[i] = add_switch(g, name, TOPO_LEVEL_LEAF);
	}
	sp0 = add_switch(g, "spine0", TOPO_LEVEL_SPINE);
	sp1 = add_switch(g, "spine1", TOPO_LEVEL_SPINE);
	core = add_switch(g, "core", TOPO_LEVEL_CORE);
	cable(g, l[0], sp0, "NDR");
	cable(g, l[1], sp0, "NDR");
	cable(g, l[2], sp1, "NDR");
	cable(g, sp0, core, "NDR");
	cable(g, sp1, core, "NDR");
	cable(g, l[3], l[4], "NDR"); /* a side cable, outside the tree */
	cable(g, l[4], sp1, "NDR");
	a = add_host(g, "a", (int[]){ l[0], l[1] }, 2);
	b = add_host(g, "b", (int[]){ l[1], l[2] }, 2);  /* shares leaf1 with a */
	c = add_host(g, "c", (int[]){ l[2] }, 1);        /* a->c: leaf0 spine0 core spine1 leaf2 */
	d = add_host(g, "d", (int[]){ l[3] }, 1);
	e = add_host(g, "e", (int[]){ l[4] }, 1);
	f = add_host(g, "f", (int[]){ l[5] }, 1);        /* leaf5 has no up-link */
	for (int cap = 0; cap <= 128; cap += 128) {
		topo_analysis_index *ix = topo_analysis_index_new_capped(g, cap, NULL);

		assert_non_null(ix);
		assert_int_equal(topo_analysis_index_nleaves(ix), 6);
		assert_int_equal(topo_analysis_host_hops(ix, a, b), 2);
		assert_int_equal(topo_analysis_host_hops(ix, a, c), 6);
		assert_int_equal(topo_analysis_host_hops(ix, b, c), 2);
		assert_int_equal(topo_analysis_host_hops(ix, d, e), 3);
		assert_int_equal(topo_analysis_host_hops(ix, c, e), 4);
		assert_int_equal(topo_analysis_host_hops(ix, d, c), 5);
		assert_int_equal(topo_analysis_host_hops(ix, a, d), 7);
		assert_int_equal(topo_analysis_host_hops(ix, a, f), -1);
		assert_int_equal(topo_analysis_host_hops(ix, f, f), 0);
		topo_analysis_index_free(ix);
	}
	topo_graph_free(g);
}

/* BFS and table agree on every pair of a random irregular fabric. */
static void test_hops_bfs_matches_table(void **state)
{
	enum { NSW = 60, NHOSTS = 50 };
	topo_graph *g = topo_graph_new();
	topo_analysis_index *t, *b;
	int sw[NSW], hosts[NHOSTS], unreachable = 0, far = 0;
	unsigned seed = 12345;

	(void)state;
	for (int i = 0; i < NSW; i++) {
		char name[16];

		snprintf(name, sizeof(name), "sw%02d", i);
		sw[i] = add_switch(g, name, TOPO_LEVEL_UNKNOWN);
	}
	/* a sparse random graph: a long path-like spine plus random chords, and
	 * the last 5 switches left in their own island */
	for (int i = 1; i < NSW - 5; i++)
		cable(g, sw[i], sw[rand_r(&seed) % i], "HDR");
	for (int i = 0; i < 10; i++)
		cable(g, sw[rand_r(&seed) % (NSW - 5)], sw[rand_r(&seed) % (NSW - 5)], "HDR");
	cable(g, sw[NSW - 5], sw[NSW - 4], "HDR");
	for (int i = 0; i < NHOSTS; i++) {
		int leaves[3], n = 1 + rand_r(&seed) % 3;
		char name[16];

		for (int k = 0; k < n; k++)
			leaves[k] = sw[rand_r(&seed) % NSW];
		snprintf(name, sizeof(name), "h%02d", i);
		hosts[i] = add_host(g, name, leaves, n);
	}
	t = topo_analysis_index_new_capped(g, NSW, NULL);
	b = topo_analysis_index_new_capped(g, 0, NULL);
	assert_non_null(t);
	assert_non_null(b);
	assert_int_equal(topo_analysis_index_has_table(t), 1);
	assert_int_equal(topo_analysis_index_has_table(b), 0);
	for (int i = 0; i < NHOSTS; i++)
		for (int j = 0; j < NHOSTS; j++) {
			int x = topo_analysis_host_hops(t, hosts[i], hosts[j]);

			assert_int_equal(topo_analysis_host_hops(b, hosts[i], hosts[j]), x);
			unreachable += x < 0;
			far += x >= 6;
		}
	/* the fabric is irregular enough to exercise both outcomes */
	assert_true(unreachable > 0);
	assert_true(far > 0);
	topo_analysis_index_free(t);
	topo_analysis_index_free(b);
	topo_graph_free(g);
}

/* ---- oversubscription ---- */

/* leaf1: 4 hosts x 400 down, 2 x 400 up: 2:1. leaf2: 1 host x 400, 2 x 200 up: 1:1.
 * A down cable counts for nothing; a leaf-to-leaf cable neither up nor down. */
static void test_oversubscription_exact(void **state)
{
	topo_graph *g = topo_graph_new();
	topo_analysis a;
	int l1, l2, sp1, sp2, dead;

	(void)state;
	l1 = add_switch(g, "leaf1", TOPO_LEVEL_LEAF);
	l2 = add_switch(g, "leaf2", TOPO_LEVEL_LEAF);
	sp1 = add_switch(g, "spine1", TOPO_LEVEL_SPINE);
	sp2 = add_switch(g, "spine2", TOPO_LEVEL_SPINE);
	cable(g, l1, sp1, "NDR");
	cable(g, sp2, l1, "NDR");
	dead = cable(g, l1, sp2, "NDR");
	topo_graph_edge_mut(g, dead)->state = TOPO_LINK_DOWN;
	cable(g, l1, l2, "NDR");
	cable(g, l2, sp1, "HDR"); /* 4xHDR = 200 */
	cable(g, l2, sp2, "HDR");
	for (int i = 0; i < 4; i++) {
		char name[8];

		snprintf(name, sizeof(name), "n%d", i);
		add_host(g, name, &l1, 1);
	}
	add_host(g, "m0", &l2, 1);
	assert_int_equal(topo_analysis_run_summary(g, &a, NULL), 0);
	assert_int_equal(a.nleaves, 2);
	assert_int_equal(a.leaves[0].leaf, l1);
	assert_true(a.leaves[0].down_gbps == 1600.0);
	assert_true(a.leaves[0].up_gbps == 800.0);
	assert_true(a.leaves[0].ratio == 2.0);
	assert_int_equal(a.leaves[1].leaf, l2);
	assert_true(a.leaves[1].down_gbps == 400.0);
	assert_true(a.leaves[1].up_gbps == 400.0);
	assert_true(a.leaves[1].ratio == 1.0);
	assert_true(a.min_oversub == 1.0);
	assert_true(a.max_oversub == 2.0);
	assert_string_equal(topo_graph_get_attr(g, l1, "down_gbps"), "1600");
	assert_string_equal(topo_graph_get_attr(g, l1, "up_gbps"), "800");
	assert_string_equal(topo_graph_get_attr(g, l1, "oversubscription"), "2");
	assert_string_equal(topo_graph_get_attr(g, l2, "oversubscription"), "1");
	assert_null(topo_graph_get_attr(g, sp1, "oversubscription"));
	assert_int_equal(a.components, 1);
	assert_int_equal(a.main_component_hosts, 5);
	assert_int_equal(a.disconnected_hosts, 0);
	assert_int_equal(a.level_mismatches, 0);
	assert_int_equal(a.unknown_level_switches, 0);
	assert_int_equal(topo_graph_nanomalies(g), 0);
	topo_analysis_free(&a);
	topo_graph_free(g);
}

/* With no levels at all, leaves are the switches cabled to HCAs. A leaf
 * without an up-link gets no ratio. */
static void test_oversubscription_without_levels(void **state)
{
	topo_graph *g = topo_graph_new();
	topo_analysis a;
	int l1, l2, sp;

	(void)state;
	l1 = add_switch(g, "l1", TOPO_LEVEL_UNKNOWN);
	l2 = add_switch(g, "l2", TOPO_LEVEL_UNKNOWN);
	sp = add_switch(g, "s", TOPO_LEVEL_UNKNOWN);
	cable(g, l1, sp, "NDR");
	add_host(g, "x", &l1, 1);
	add_host(g, "y", &l1, 1);
	add_host(g, "z", &l1, 1);
	add_host(g, "w", &l2, 1);
	assert_int_equal(topo_analysis_run_summary(g, &a, NULL), 0);
	assert_int_equal(a.unknown_level_switches, 3);
	assert_int_equal(a.nleaves, 2);
	assert_true(a.leaves[0].ratio == 3.0);
	assert_true(a.leaves[1].up_gbps == 0.0);
	assert_true(a.leaves[1].ratio == 0.0);
	assert_string_equal(topo_graph_get_attr(g, l1, "oversubscription"), "3");
	assert_string_equal(topo_graph_get_attr(g, l2, "down_gbps"), "400");
	assert_string_equal(topo_graph_get_attr(g, l2, "up_gbps"), "0");
	assert_null(topo_graph_get_attr(g, l2, "oversubscription"));
	assert_null(topo_graph_get_attr(g, sp, "down_gbps"));
	assert_true(a.min_oversub == 3.0 && a.max_oversub == 3.0);
	/* l2 with w is an island: the main component holds x, y, z */
	assert_int_equal(a.components, 2);
	assert_int_equal(a.main_component_hosts, 3);
	assert_int_equal(a.disconnected_hosts, 1);
	assert_int_equal(count_anomalies(g, "disconnected-host", "w"), 1);
	topo_analysis_free(&a);
	topo_graph_free(g);
}

/* ---- levels and components ---- */

static void test_level_mismatch(void **state)
{
	topo_graph *g = two_leaves_one_spine();
	int sp = topo_graph_find(g, TOPO_V_SWITCH, "spine1");
	topo_analysis a;
	const topo_anomaly *an;

	(void)state;
	add_host(g, "odd", &sp, 1); /* a host on the spine */
	assert_int_equal(topo_analysis_run_summary(g, &a, NULL), 0);
	assert_int_equal(a.level_mismatches, 1);
	assert_int_equal(count_anomalies(g, "level-mismatch", "spine1"), 1);
	an = topo_graph_anomaly(g, 0);
	assert_non_null(strstr(an->text, "its level is spine, not leaf"));
	assert_int_equal(a.nleaves, 2); /* levels are known: the spine stays a spine */
	topo_analysis_free(&a);
	topo_graph_free(g);
}

static void test_disconnected_host(void **state)
{
	topo_graph *g = two_leaves_one_spine();
	int lone = add_switch(g, "leaf9", TOPO_LEVEL_LEAF);
	int l1 = topo_graph_find(g, TOPO_V_SWITCH, "leaf1"), h4, h5, h6;
	topo_analysis_index *ix;
	topo_analysis a;
	const topo_anomaly *an = NULL;

	(void)state;
	h4 = add_host(g, "h4", &lone, 1);
	h5 = add_host(g, "h5", (int[]){ lone, l1 }, 2); /* one rail reaches the fabric */
	h6 = topo_graph_add_vertex(g, TOPO_V_HOST, "h6");  /* known only from hwloc */
	assert_int_equal(topo_graph_add_part(g, h6, TOPO_V_HCA, "mlx5_0") >= 0, 1);
	assert_int_equal(topo_analysis_run_summary(g, &a, NULL), 0);
	assert_int_equal(a.components, 2);
	assert_int_equal(a.main_component_hosts, 4);
	assert_int_equal(a.disconnected_hosts, 1);
	assert_int_equal(topo_graph_nanomalies(g), 1);
	an = topo_graph_anomaly(g, 0);
	assert_string_equal(an->kind, "disconnected-host");
	assert_string_equal(an->subject, "h4");
	assert_string_equal(an->text, "host h4 is cabled to the fabric but has no path to its "
				      "main component (4 hosts)");
	topo_analysis_free(&a);

	/* topo_analysis_run() is the same pass without the summary */
	assert_int_equal(topo_analysis_run(g, NULL), 0);
	assert_int_equal(count_anomalies(g, "disconnected-host", "h4"), 2);

	ix = topo_analysis_index_new(g, NULL);
	assert_int_equal(topo_analysis_host_hops(ix, host(g, "h1"), h4), -1);
	assert_int_equal(topo_analysis_host_hops(ix, h4, h5), 2);
	assert_int_equal(topo_analysis_host_hops(ix, h5, host(g, "h3")), 4);
	assert_int_equal(topo_analysis_host_hops(ix, h6, h5), -1);
	assert_int_equal(topo_analysis_host_hops(ix, h6, h6), 0);
	topo_analysis_index_free(ix);
	topo_graph_free(g);
}

/* A graph with no cable at all (hosts from hwloc only): nothing to judge. */
static void test_no_fabric(void **state)
{
	topo_graph *g = topo_graph_new();
	topo_analysis_index *ix;
	topo_analysis a;
	int h;

	(void)state;
	h = topo_graph_add_vertex(g, TOPO_V_HOST, "solo");
	topo_graph_add_part(g, h, TOPO_V_HCA, "mlx5_0");
	assert_int_equal(topo_analysis_run_summary(g, &a, NULL), 0);
	assert_int_equal(a.components, 0);
	assert_int_equal(a.nleaves, 0);
	assert_int_equal(a.disconnected_hosts, 0);
	assert_int_equal(topo_graph_nanomalies(g), 0);
	topo_analysis_free(&a);
	ix = topo_analysis_index_new(g, NULL);
	assert_non_null(ix);
	assert_int_equal(topo_analysis_index_nleaves(ix), 0);
	assert_int_equal(topo_analysis_host_hops(ix, h, h), 0);
	topo_analysis_index_free(ix);
	topo_graph_free(g);
}

/* ---- the real DGX H100 SuperPOD fabric ---- */

#define SUPERPOD FIXTURES_DIR "/fabrics/dgx-h100-superpod.ibnetdiscover"

static topo_graph *load_superpod(void)
{
	topo_graph *g = topo_graph_new();
	topo_error err;

	assert_non_null(g);
	if (topo_load_ibnetdiscover(g, SUPERPOD, NULL, &err) < 0)
		fail_msg("loading %s: %s", SUPERPOD, err.text);
	return g;
}

static const topo_leaf_oversub *find_leaf(const topo_analysis *a, int leaf)
{
	for (int i = 0; i < a->nleaves; i++)
		if (a->leaves[i].leaf == leaf)
			return &a->leaves[i];
	return NULL;
}

static void test_superpod_analysis(void **state)
{
	topo_graph *g = load_superpod();
	size_t before = topo_graph_nanomalies(g);
	int l44 = topo_graph_find(g, TOPO_V_SWITCH, "A09-P1-IBLEAF-04-04");
	int l21 = topo_graph_find(g, TOPO_V_SWITCH, "A09-P1-IBLEAF-02-01");
	const topo_leaf_oversub *o;
	topo_analysis a;

	(void)state;
	assert_true(l44 >= 0 && l21 >= 0);
	assert_int_equal(topo_analysis_run_summary(g, &a, NULL), 0);
	assert_int_equal(a.components, 1);
	assert_int_equal(a.main_component_hosts, 119);
	assert_int_equal(a.disconnected_hosts, 0);
	assert_int_equal(a.level_mismatches, 0);
	assert_int_equal(a.unknown_level_switches, 0);
	assert_int_equal(topo_graph_nanomalies(g), before); /* a healthy fabric: nothing new */
	assert_int_equal(a.nleaves, 31);
	/* leaf 04-04: hosts c01..c17 on ports 1-17, spines on ports 35-50, all 4xNDR */
	o = find_leaf(&a, l44);
	assert_non_null(o);
	assert_true(o->down_gbps == 17 * 400.0);
	assert_true(o->up_gbps == 16 * 400.0);
	assert_true(o->ratio == 17.0 / 16.0);
	assert_string_equal(topo_graph_get_attr(g, l44, "down_gbps"), "6800");
	assert_string_equal(topo_graph_get_attr(g, l44, "up_gbps"), "6400");
	assert_string_equal(topo_graph_get_attr(g, l44, "oversubscription"), "1.0625");
	/* the least loaded leaf: 10 hosts, 18 up-links */
	o = find_leaf(&a, l21);
	assert_true(o->down_gbps == 4000.0 && o->up_gbps == 7200.0);
	assert_true(a.min_oversub == 4000.0 / 7200.0);
	assert_true(a.max_oversub == 7200.0 / 6000.0);
	assert_null(topo_graph_get_attr(g, topo_graph_find(g, TOPO_V_SWITCH, "A10-P1-IBSPINE-01"),
					"oversubscription"));
	topo_analysis_free(&a);
	topo_graph_free(g);
}

/* The scalable unit (group) a host belongs to, from the membership edges. */
static int host_group(const topo_graph *g, int h)
{
	int n;
	const int *inc = topo_graph_incident(g, h, &n);

	for (int i = 0; i < n; i++) {
		const topo_edge *e = topo_graph_edge(g, inc[i]);

		if (e->kind == TOPO_E_MEMBER && e->b == h &&
		    topo_graph_vertex(g, e->a)->kind == TOPO_V_GROUP)
			return e->a;
	}
	return -1;
}

static void test_superpod_hops(void **state)
{
	topo_graph *g = load_superpod();
	topo_analysis_index *t = topo_analysis_index_new(g, NULL);
	topo_analysis_index *b = topo_analysis_index_new_capped(g, 0, NULL);
	int su1a = host(g, "a05-p1-dgx-01-c01"), su1b = host(g, "a05-p1-dgx-01-c18");
	int su8 = host(g, "b08-p1-dgx-08-c18"), su4 = host(g, "a08-p1-dgx-04-c17");
	int hist[8] = { 0 };
	size_t nv = topo_graph_nvertices(g);

	(void)state;
	assert_non_null(t);
	assert_non_null(b);
	assert_int_equal(topo_analysis_index_nleaves(t), 31);
	assert_int_equal(topo_analysis_index_has_table(t), 1);
	/* same SU: the rail leaves are shared; different SU: up to a spine and down */
	assert_int_equal(topo_analysis_host_hops(t, su1a, su1b), 2);
	assert_int_equal(topo_analysis_host_hops(b, su1a, su1b), 2);
	assert_int_equal(topo_analysis_host_hops(t, su1a, su8), 4);
	assert_int_equal(topo_analysis_host_hops(b, su1a, su8), 4);
	assert_int_equal(topo_analysis_host_hops(t, su4, su8), 4);
	/* every pair: table and BFS agree, and 2 hops exactly when in one SU */
	for (size_t x = 0; x < nv; x++)
		for (size_t y = 0; y < nv; y++) {
			int d;

			if (topo_graph_vertex(g, (int)x)->kind != TOPO_V_HOST ||
			    topo_graph_vertex(g, (int)y)->kind != TOPO_V_HOST)
				continue;
			d = topo_analysis_host_hops(t, (int)x, (int)y);
			assert_int_equal(topo_analysis_host_hops(b, (int)x, (int)y), d);
			assert_true(d >= 0 && d < 8);
			hist[d]++;
			if (x != y)
				assert_int_equal(d == 2, host_group(g, (int)x) == host_group(g, (int)y));
		}
	assert_int_equal(hist[0], 119);
	assert_int_equal(hist[2], 1716);
	assert_int_equal(hist[4], 12326);
	assert_int_equal(hist[0] + hist[2] + hist[4], 119 * 119);
	topo_analysis_index_free(t);
	topo_analysis_index_free(b);
	topo_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hops_two_leaves_table),
		cmocka_unit_test(test_hops_two_leaves_bfs),
		cmocka_unit_test(test_index_outlives_graph),
		cmocka_unit_test(test_hops_min_over_rails),
		cmocka_unit_test(test_hops_bfs_matches_table),
		cmocka_unit_test(test_oversubscription_exact),
		cmocka_unit_test(test_oversubscription_without_levels),
		cmocka_unit_test(test_level_mismatch),
		cmocka_unit_test(test_disconnected_host),
		cmocka_unit_test(test_no_fabric),
		cmocka_unit_test(test_superpod_analysis),
		cmocka_unit_test(test_superpod_hops),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
