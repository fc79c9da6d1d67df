/* Unit tests for the fat-tree generator and the ibsim netlist writer:
 * exact counts per spec, up-links per oversubscription, spec parse errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo_fattree.h"
#include "topo_ibsim.h"

static topo_graph *build(const char *text)
{
	topo_fattree_spec s;
	topo_error err;
	topo_graph *g = topo_graph_new();

	assert_non_null(g);
	topo_fattree_spec_init(&s);
	assert_int_equal(topo_fattree_parse(text, &s, &err), 0);
	if (topo_fattree_build(g, &s, &err) != 0)
		fail_msg("build %s: %s", text, err.text);
	return g;
}

/* Fabric edges from switch `name` to other switches. */
static int uplinks(const topo_graph *g, const char *name)
{
	int v = topo_graph_find(g, TOPO_V_SWITCH, name), n, up = 0;
	const int *inc;

	assert_true(v >= 0);
	inc = topo_graph_incident(g, v, &n);
	for (int i = 0; i < n; i++) {
		const topo_edge *e = topo_graph_edge(g, inc[i]);

		if (e->kind == TOPO_E_FABRIC &&
		    topo_graph_vertex(g, topo_edge_other(e, v))->kind == TOPO_V_SWITCH)
			up++;
	}
	return up;
}

static void test_small(void **state)
{
	topo_graph *g = build("groups=2,hosts=4,rails=2,spines=2");
	const topo_vertex *leaf, *hca;

	assert_int_equal(topo_graph_count(g, TOPO_V_HOST), 8);
	assert_int_equal(topo_graph_count(g, TOPO_V_HCA), 16);
	assert_int_equal(topo_graph_count(g, TOPO_V_SWITCH), 6);
	assert_int_equal(topo_graph_count_switches(g, TOPO_LEVEL_LEAF), 4);
	assert_int_equal(topo_graph_count_switches(g, TOPO_LEVEL_SPINE), 2);
	assert_int_equal(topo_graph_count(g, TOPO_V_GROUP), 2);
	assert_int_equal(topo_graph_count_edges(g, TOPO_E_FABRIC), 16 + 4 * 4);
	assert_int_equal(topo_graph_nanomalies(g), 0);
	assert_int_equal(uplinks(g, "SU1-LEAF-R0"), 4);
	assert_int_equal(uplinks(g, "SPINE-02"), 8);
	leaf = topo_graph_vertex(g, topo_graph_find(g, TOPO_V_SWITCH, "SU2-LEAF-R1"));
	assert_string_equal(leaf->desc, "MF0;SU2-LEAF-R1:MQM9700/U1");
	assert_int_equal(leaf->nports, 64);
	hca = topo_graph_vertex(g, topo_graph_find(g, TOPO_V_HCA, "node0008/mlx5_1"));
	assert_non_null(hca);
	assert_int_equal(hca->rail, 1);
	/* deterministic GUIDs: node GUID 0x946dae0300000000 + 2 * (7 * 2 + 1), port 1 */
	assert_true(hca->guid == 0x946dae030000001full);
	topo_graph_free(g);
}

static void test_oversub_and_gpus(void **state)
{
	topo_graph *g = build("groups=4,hosts=32,rails=8,oversub=2,spines=8,gpus=8");

	assert_int_equal(topo_graph_count(g, TOPO_V_HOST), 128);
	assert_int_equal(topo_graph_count(g, TOPO_V_HCA), 1024);
	assert_int_equal(topo_graph_count(g, TOPO_V_GPU), 1024);
	assert_int_equal(topo_graph_count_switches(g, TOPO_LEVEL_LEAF), 32);
	assert_int_equal(topo_graph_count_switches(g, TOPO_LEVEL_SPINE), 8);
	assert_int_equal(topo_graph_count(g, TOPO_V_GROUP), 4);
	/* 1024 host cables + 32 leaves x 16 up-links */
	assert_int_equal(topo_graph_count_edges(g, TOPO_E_FABRIC), 1024 + 32 * 16);
	assert_int_equal(topo_graph_count_edges(g, TOPO_E_PCIE), 1024);
	assert_int_equal(uplinks(g, "SU3-LEAF-R7"), 16);
	assert_int_equal(uplinks(g, "SPINE-08"), 64);
	topo_graph_free(g);

	/* oversub 3 over 10 hosts: ceil(10 / 3) = 4 up-links, default spines = 4 */
	g = build("hosts=10,oversub=3");
	assert_int_equal(uplinks(g, "SU1-LEAF-R0"), 4);
	assert_int_equal(topo_graph_count_switches(g, TOPO_LEVEL_SPINE), 4);
	topo_graph_free(g);
}

/* 16,384 hosts x 8 rails: 2 levels would need 4096-port spines, so a core
 * level appears: 4096 leaves, 128 pods x 32 spines, 1024 cores. */
static void test_large_three_level(void **state)
{
	topo_graph *g = build("groups=512,hosts=32,rails=8");

	assert_int_equal(topo_graph_count(g, TOPO_V_HOST), 16384);
	assert_int_equal(topo_graph_count(g, TOPO_V_HCA), 131072);
	assert_int_equal(topo_graph_count_switches(g, TOPO_LEVEL_LEAF), 4096);
	assert_int_equal(topo_graph_count_switches(g, TOPO_LEVEL_SPINE), 4096);
	assert_int_equal(topo_graph_count_switches(g, TOPO_LEVEL_CORE), 1024);
	assert_int_equal(topo_graph_count_edges(g, TOPO_E_FABRIC), 131072 * 3);
	assert_int_equal(topo_graph_count(g, TOPO_V_GROUP), 512);
	assert_int_equal(uplinks(g, "CORE-0001"), 128);
	topo_graph_free(g);
}

static void expect_parse_error(const char *text, const char *fragment)
{
	topo_fattree_spec s;
	topo_error err;

	topo_fattree_spec_init(&s);
	assert_int_equal(topo_fattree_parse(text, &s, &err), -1);
	if (!strstr(err.text, fragment))
		fail_msg("\"%s\": error \"%s\" lacks \"%s\"", text, err.text, fragment);
}

static void test_parse(void **state)
{
	topo_fattree_spec s;
	topo_error err;

	topo_fattree_spec_init(&s);
	assert_int_equal(topo_fattree_parse("gpus=8,oversub=1.5,rails=8,hosts=32,groups=4,spines=6,"
					    "width=8,speed=hdr,prefix=dgx-",
					    &s, &err), 0);
	assert_int_equal(s.groups, 4);
	assert_int_equal(s.hosts_per_group, 32);
	assert_int_equal(s.rails, 8);
	assert_int_equal(s.spines, 6);
	assert_int_equal(s.gpus_per_host, 8);
	assert_int_equal(s.width, 8);
	assert_true(s.oversub == 1.5);
	assert_string_equal(s.speed, "HDR");
	assert_string_equal(s.host_prefix, "dgx-");

	expect_parse_error("", "empty fat-tree spec");
	expect_parse_error("foo=1", "unknown key \"foo\"");
	expect_parse_error("groups=abc", "bad value \"abc\" for groups");
	expect_parse_error("groups=-2", "bad value \"-2\" for groups");
	expect_parse_error("groups", "\"groups\" is not key=value");
	expect_parse_error("=4", "\"=4\" is not key=value");
	expect_parse_error("groups=2,,hosts=3", "empty item");
	expect_parse_error("groups=2,", "empty item");
	expect_parse_error("groups=0", "at least 1");
	expect_parse_error("width=3", "width 3 is not an InfiniBand link width");
	expect_parse_error("speed=ZDR", "bad value \"ZDR\" for speed");
	expect_parse_error("oversub=0.5", "oversub must be between 1 and 1024");
	expect_parse_error("prefix=a b", "host prefix");
	expect_parse_error("groups=99999999999", "bad value");
	expect_parse_error("groups=4096,hosts=1024,rails=8", "fabric too large");
	expect_parse_error("groups=1,hosts=2,digits=0", "digits must be 1 to 9, not 0");
}

/* digits=3, prefix=n names hosts as a slurm.conf does: n001 .. n032. */
static void test_digits(void **state)
{
	topo_fattree_spec s;
	topo_error err;
	topo_graph *g = topo_graph_new();

	topo_fattree_spec_init(&s);
	assert_int_equal(s.digits, 4);
	assert_int_equal(topo_fattree_parse("groups=4,hosts=8,rails=2,prefix=n,digits=3", &s, &err), 0);
	assert_int_equal(s.digits, 3);
	assert_int_equal(topo_fattree_build(g, &s, &err), 0);
	assert_int_equal(topo_graph_count(g, TOPO_V_HOST), 32);
	assert_true(topo_graph_find(g, TOPO_V_HOST, "n001") >= 0);
	assert_true(topo_graph_find(g, TOPO_V_HOST, "n032") >= 0);
	assert_int_equal(topo_graph_find(g, TOPO_V_HOST, "n0001"), -1);
	assert_true(topo_graph_find(g, TOPO_V_HCA, "n017/mlx5_1") >= 0);
	topo_graph_free(g);
}

static void test_build_errors(void **state)
{
	topo_fattree_spec s;
	topo_error err;
	topo_graph *g = topo_graph_new();

	/* 2 spines for 512 leaves x 32 up-links: 8192 ports each */
	topo_fattree_spec_init(&s);
	assert_int_equal(topo_fattree_parse("groups=64,hosts=32,rails=8,spines=2", &s, &err), 0);
	assert_int_equal(topo_fattree_build(g, &s, &err), -1);
	assert_non_null(strstr(err.text, "a spine would need 8192 ports"));
	topo_graph_free(g);
}

/* The netlist: GUID lines, ibnetdiscover-style port lines with LIDs and rates. */
static void test_netlist(void **state)
{
	topo_graph *g = build("groups=1,hosts=2,rails=1,spines=1,speed=HDR");
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	topo_error err;

	assert_non_null(f);
	assert_int_equal(topo_write_ibsim_netlist(g, f, &err), 0);
	fclose(f);
	assert_non_null(strstr(buf, "# ibsim netlist written by topognn: 2 switches, 2 CAs, 4 cables."));
	assert_non_null(strstr(buf, "switchguid=0xfc6a1c0300000001\n"
				    "Switch\t64 \"S-fc6a1c0300000001\"\t\t# \"MF0;SU1-LEAF-R0:MQM9700/U1\" "
				    "enhanced port 0 lid 1 lmc 0\n"
				    "[1]\t\"H-946dae0300000000\"[1](946dae0300000001) \t\t# \"node0001 mlx5_0\" "
				    "lid 3 4xHDR\n"));
	assert_non_null(strstr(buf, "caguid=0x946dae0300000002\n"
				    "Ca\t1 \"H-946dae0300000002\"\t\t# \"node0002 mlx5_0\"\n"
				    "[1](946dae0300000003) \t\"S-fc6a1c0300000001\"[2]\t\t# lid 4 lmc 0 "
				    "\"MF0;SU1-LEAF-R0:MQM9700/U1\" lid 1 4xHDR\n"));
	assert_non_null(strstr(buf, "[3]\t\"S-fc6a1c0310000001\"[1] \t\t# \"MF0;SPINE-01:MQM9700/U1\" "
				    "lid 2 4xHDR\n"));
	free(buf);
	topo_graph_free(g);
}

static void test_netlist_errors(void **state)
{
	topo_graph *g = topo_graph_new();
	topo_error err;
	FILE *f = fopen("/dev/null", "w");
	int sw = topo_graph_add_vertex(g, TOPO_V_SWITCH, "sw1");

	assert_non_null(f);
	topo_set_str(&topo_graph_vertex_mut(g, sw)->desc,
		     "a node description that is much longer than sixty-three characters in all");
	assert_int_equal(topo_write_ibsim_netlist(g, f, &err), -1);
	assert_non_null(strstr(err.text, "longer than ibsim's 63 characters"));
	topo_set_str(&topo_graph_vertex_mut(g, sw)->desc, "bad \"quote\"");
	assert_int_equal(topo_write_ibsim_netlist(g, f, &err), -1);
	assert_non_null(strstr(err.text, "holds a quote"));
	fclose(f);
	topo_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small),
		cmocka_unit_test(test_oversub_and_gpus),
		cmocka_unit_test(test_large_three_level),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_digits),
		cmocka_unit_test(test_build_errors),
		cmocka_unit_test(test_netlist),
		cmocka_unit_test(test_netlist_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
