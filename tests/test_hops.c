/*
 * The two hop distances agree (issue 11): the engine's tree model
 * (place_cluster_hops: 2 under one leaf, 4 through a shared spine, 6 through
 * the core, per rail) and the analysis index's shortest path over the switch
 * graph (topo_analysis_host_hops, igraph or BFS). The engine's is the fast one for
 * slurmctld's hot path, the analysis one is the general one for tools; on the
 * fat trees and rail-optimized fabrics the engine is built for, they must give
 * the same number for every pair of hosts. Checked on the DGX H100 SuperPOD
 * dump, on generated fat trees with and without a core level, and on one
 * with more host classes than the engine tabulates (PLACE_CLASS_HOPS_MAX).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "place.h"
#include "place_internal.h"
#include "topo_analysis.h"
#include "topo_fattree.h"
#include "topo_graph.h"
#include "topo_ibnetdiscover.h"

/* Compare every pair; returns the number of pairs compared and fills the
 * histogram of distances (0, 2, 4, 6, other). */
static long compare_all(const topo_graph *g, int hist[5])
{
	topo_error err;
	place_cluster *c = place_cluster_new(g, &err);
	topo_analysis_index *ix = topo_analysis_index_new(g, &err);
	int H;
	int *vid;
	long pairs = 0;

	assert_non_null(c);
	assert_non_null(ix);
	/* the class table is there exactly when the classes fit in it */
	assert_int_equal(c->class_hops != NULL, c->nclasses <= PLACE_CLASS_HOPS_MAX);
	printf("# %d host classes%s\n", c->nclasses, c->class_hops ? ", hops tabulated" : "");
	H = place_cluster_nhosts(c);
	vid = malloc((size_t)H * sizeof(*vid));
	assert_non_null(vid);
	for (int h = 0; h < H; h++) {
		vid[h] = topo_graph_find(g, TOPO_V_HOST, place_cluster_host_name(c, h));
		assert_true(vid[h] >= 0);
	}
	memset(hist, 0, 5 * sizeof(int));
	printf("# %d hosts\n", H);
	for (int a = 0; a < H; a++)
		for (int b = 0; b < H; b++) {
			int engine = place_cluster_hops(c, a, b);
			int general = topo_analysis_host_hops(ix, vid[a], vid[b]);

			if (engine != general)
				fail_msg("%s - %s: engine %d hops, analysis %d",
					 place_cluster_host_name(c, a), place_cluster_host_name(c, b),
					 engine, general);
			hist[engine == 0 ? 0 : engine == 2 ? 1 : engine == 4 ? 2 : engine == 6 ? 3 : 4]++;
			pairs++;
		}
	printf("# pairs at 0/2/4/6/other hops: %d %d %d %d %d\n", hist[0], hist[1], hist[2], hist[3],
	       hist[4]);
	free(vid);
	topo_analysis_index_free(ix);
	place_cluster_free(c);
	return pairs;
}

static void test_superpod(void **state)
{
	topo_graph *g = topo_graph_new();
	topo_error err;
	int hist[5];
	long pairs;

	(void)state;
	if (topo_load_ibnetdiscover(g, FIXTURES_DIR "/fabrics/dgx-h100-superpod.ibnetdiscover", NULL,
				    &err) != 0)
		fail_msg("%s", err.text);
	pairs = compare_all(g, hist);
	/* the 119 cabled DGX nodes: 1716 ordered pairs under a shared leaf, the
	 * rest through a spine; no core level */
	assert_int_equal(pairs, 119L * 119);
	assert_int_equal(hist[0], 119);
	assert_int_equal(hist[1], 1716);
	assert_int_equal(hist[2], 12326);
	assert_int_equal(hist[3] + hist[4], 0);
	topo_graph_free(g);
}

static void fattree(const char *spec_text, const int want[5])
{
	topo_graph *g = topo_graph_new();
	topo_fattree_spec spec;
	topo_error err;
	int hist[5];

	topo_fattree_spec_init(&spec);
	if (topo_fattree_parse(spec_text, &spec, &err) || topo_fattree_build(g, &spec, &err))
		fail_msg("%s: %s", spec_text, err.text);
	compare_all(g, hist);
	for (int i = 0; i < 5; i++)
		assert_int_equal(hist[i], want[i]);
	topo_graph_free(g);
}

/* One scalable unit: every pair shares its rail leaves (16 x 15 at 2 hops). */
static void test_fattree_one_group(void **state)
{
	static const int want[5] = { 16, 240, 0, 0, 0 };

	(void)state;
	fattree("groups=1,hosts=16,rails=2,spines=4", want);
}

/* Four units of 8, 2:1 oversubscribed: 4 x 8 x 7 pairs inside a unit, the
 * 32 x 24 others through a spine. */
static void test_fattree_four_groups(void **state)
{
	static const int want[5] = { 32, 224, 768, 0, 0 };

	(void)state;
	fattree("groups=4,hosts=8,rails=2,oversub=2,spines=4", want);
}

/* More host classes than the engine tabulates (PLACE_CLASS_HOPS_MAX): 1,040
 * units of one host each are 1,040 classes, so the engine walks each pair's
 * rails as it comes, and still agrees with the analysis. */
static void test_fattree_untabulated(void **state)
{
	topo_graph *g = topo_graph_new();
	topo_fattree_spec spec;
	topo_error err;
	int hist[5];

	(void)state;
	topo_fattree_spec_init(&spec);
	if (topo_fattree_parse("groups=1040,hosts=1,rails=1", &spec, &err) ||
	    topo_fattree_build(g, &spec, &err))
		fail_msg("%s", err.text);
	assert_int_equal(compare_all(g, hist), 1040L * 1040);
	assert_int_equal(hist[0], 1040);
	assert_int_equal(hist[1], 0); /* no two hosts share a leaf */
	assert_int_equal(hist[2] + hist[3], 1040L * 1039);
	topo_graph_free(g);
}

/* A three-level tree the generator does not make: two pods (leaf + spine)
 * joined by a core switch. Across pods both say 6 hops; inside a leaf 2. */
static void test_three_levels(void **state)
{
	static const char *const sw[5] = { "leaf1", "leaf2", "spine1", "spine2", "core1" };
	static const topo_level lv[5] = { TOPO_LEVEL_LEAF, TOPO_LEVEL_LEAF, TOPO_LEVEL_SPINE,
					  TOPO_LEVEL_SPINE, TOPO_LEVEL_CORE };
	static const int links[4][2] = { { 0, 2 }, { 1, 3 }, { 2, 4 }, { 3, 4 } };
	static const int want[5] = { 4, 4, 0, 8, 0 };
	topo_graph *g = topo_graph_new();
	int id[5], hist[5];

	(void)state;
	for (int i = 0; i < 5; i++) {
		id[i] = topo_graph_add_vertex(g, TOPO_V_SWITCH, sw[i]);
		topo_graph_vertex_mut(g, id[i])->level = lv[i];
	}
	for (int i = 0; i < 4; i++) {
		int e = topo_graph_add_edge(g, TOPO_E_FABRIC, id[links[i][0]], id[links[i][1]]);

		topo_edge_set_rate(topo_graph_edge_mut(g, e), 4, "NDR");
	}
	for (int i = 0; i < 4; i++) {
		char name[8];
		int h, hca, e;

		snprintf(name, sizeof(name), "n%d", i + 1);
		h = topo_graph_add_vertex(g, TOPO_V_HOST, name);
		hca = topo_graph_add_part(g, h, TOPO_V_HCA, "mlx5_0");
		e = topo_graph_add_edge(g, TOPO_E_FABRIC, hca, id[i / 2]);
		topo_edge_set_rate(topo_graph_edge_mut(g, e), 4, "NDR");
	}
	compare_all(g, hist);
	for (int i = 0; i < 5; i++)
		assert_int_equal(hist[i], want[i]);
	topo_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_superpod),
		cmocka_unit_test(test_fattree_one_group),
		cmocka_unit_test(test_fattree_four_groups),
		cmocka_unit_test(test_three_levels),
		cmocka_unit_test(test_fattree_untabulated),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
