/* Unit tests for reading and writing Slurm's topology.conf (tree and block). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo_graph.h"
#include "topo_ibnetdiscover.h"
#include "topo_topology_conf.h"

static topo_graph *parse_ok(const char *text)
{
	topo_graph *g = topo_graph_new();
	topo_error err;

	assert_non_null(g);
	if (topo_load_topology_conf_mem(g, text, strlen(text), "topology.conf", &err) != 0)
		fail_msg("%s:%d: %s", err.source, err.line, err.text);
	return g;
}

/* Parsing text must fail on `line` with exactly `msg`, leaving the graph empty. */
static void expect_error(const char *text, int line, const char *msg)
{
	topo_graph *g = topo_graph_new();
	topo_error err;

	assert_int_equal(topo_load_topology_conf_mem(g, text, strlen(text), "topology.conf", &err), -1);
	assert_string_equal(err.source, "topology.conf");
	assert_string_equal(err.text, msg);
	assert_int_equal(err.line, line);
	assert_int_equal(topo_graph_nvertices(g), 0);
	assert_int_equal(topo_graph_nedges(g), 0);
	topo_graph_free(g);
}

/* Is there an edge of `kind` between vertices a and b (either way)? */
static int has_edge(const topo_graph *g, topo_ekind kind, int a, int b)
{
	for (size_t i = 0; i < topo_graph_nedges(g); i++) {
		const topo_edge *e = topo_graph_edge(g, (int)i);

		if (e->kind == kind && ((e->a == a && e->b == b) || (e->a == b && e->b == a)))
			return 1;
	}
	return 0;
}

static int sw(const topo_graph *g, const char *name)
{
	return topo_graph_find(g, TOPO_V_SWITCH, name);
}

static int host(const topo_graph *g, const char *name)
{
	return topo_graph_find(g, TOPO_V_HOST, name);
}

static const char tree_conf[] = "# A two-level tree\n"
				"SwitchName=s1 Nodes=n[01-04]\n"
				"switchname=s2 NODES=n[05-08]   # keys are case-insensitive\n"
				"\n"
				"SwitchName=s3 Switches=s[1-2] LinkSpeed=100\n"
				"SwitchName=core Switches=s3\n";

static void test_tree(void **state)
{
	topo_graph *g = parse_ok(tree_conf);
	const topo_edge *e;

	(void)state;
	assert_int_equal(topo_graph_count(g, TOPO_V_HOST), 8);
	assert_int_equal(topo_graph_count(g, TOPO_V_SWITCH), 4);
	assert_int_equal(topo_graph_count(g, TOPO_V_HCA), 0);
	assert_int_equal(topo_graph_count_switches(g, TOPO_LEVEL_LEAF), 2);
	assert_int_equal(topo_graph_count_switches(g, TOPO_LEVEL_SPINE), 1);
	assert_int_equal(topo_graph_count_switches(g, TOPO_LEVEL_CORE), 1);
	assert_int_equal(topo_graph_count_edges(g, TOPO_E_FABRIC), 11);
	assert_int_equal(topo_graph_nedges(g), 11);
	assert_int_equal(topo_graph_vertex(g, sw(g, "s3"))->level, TOPO_LEVEL_SPINE);
	assert_int_equal(topo_graph_vertex(g, sw(g, "core"))->level, TOPO_LEVEL_CORE);
	assert_string_equal(topo_graph_get_attr(g, sw(g, "s3"), "link_speed"), "100");
	assert_null(topo_graph_get_attr(g, sw(g, "s1"), "link_speed"));
	assert_true(has_edge(g, TOPO_E_FABRIC, host(g, "n03"), sw(g, "s1")));
	assert_true(has_edge(g, TOPO_E_FABRIC, host(g, "n05"), sw(g, "s2")));
	assert_false(has_edge(g, TOPO_E_FABRIC, host(g, "n05"), sw(g, "s1")));
	assert_true(has_edge(g, TOPO_E_FABRIC, sw(g, "s2"), sw(g, "s3")));
	assert_true(has_edge(g, TOPO_E_FABRIC, sw(g, "s3"), sw(g, "core")));
	/* no HCAs: the host itself is on the cable, port 0 at both ends */
	e = topo_graph_edge(g, 0);
	assert_int_equal(topo_graph_vertex(g, e->a)->kind, TOPO_V_HOST);
	assert_int_equal(e->port_a, 0);
	assert_int_equal(e->port_b, 0);
	topo_graph_free(g);
}

static void test_continuation_and_forward_refs(void **state)
{
	topo_graph *g = parse_ok("SwitchName=top \\\n"
				 "  Switches=leaf[1-2]\n"
				 "SwitchName=leaf1 Nodes=a[1-2],\\\n"
				 "b7\n"
				 "SwitchName=leaf2 Nodes=\"c1\"\r\n"
				 "SwitchName=empty\n");

	(void)state;
	assert_int_equal(topo_graph_count(g, TOPO_V_HOST), 4);
	assert_int_equal(topo_graph_count(g, TOPO_V_SWITCH), 4);
	assert_true(has_edge(g, TOPO_E_FABRIC, host(g, "b7"), sw(g, "leaf1")));
	assert_true(has_edge(g, TOPO_E_FABRIC, host(g, "c1"), sw(g, "leaf2")));
	assert_true(has_edge(g, TOPO_E_FABRIC, sw(g, "leaf1"), sw(g, "top")));
	assert_int_equal(topo_graph_vertex(g, sw(g, "top"))->level, TOPO_LEVEL_SPINE);
	assert_int_equal(topo_graph_vertex(g, sw(g, "empty"))->level, TOPO_LEVEL_LEAF);
	topo_graph_free(g);
}

static void test_block(void **state)
{
	topo_graph *g = parse_ok("BlockSizes=4,8\n"
				 "BlockName=b1 Nodes=n[1-4]\n"
				 "blockname=b2 Nodes=n[5-8],n9\n");
	int b1 = topo_graph_find(g, TOPO_V_GROUP, "b1"), b2 = topo_graph_find(g, TOPO_V_GROUP, "b2");

	(void)state;
	assert_int_equal(topo_graph_count(g, TOPO_V_GROUP), 2);
	assert_int_equal(topo_graph_count(g, TOPO_V_HOST), 9);
	assert_int_equal(topo_graph_count(g, TOPO_V_SWITCH), 0);
	assert_int_equal(topo_graph_count_edges(g, TOPO_E_MEMBER), 9);
	assert_int_equal(topo_graph_count_edges(g, TOPO_E_FABRIC), 0);
	assert_true(has_edge(g, TOPO_E_MEMBER, b2, host(g, "n9")));
	assert_string_equal(topo_graph_get_attr(g, b1, "block_sizes"), "4,8");
	assert_string_equal(topo_graph_get_attr(g, b2, "block_sizes"), "4,8");
	topo_graph_free(g);
}

static void test_tree_errors(void **state)
{
	(void)state;
	expect_error("SwitchName=s1 Nodes=n1\nSwitchName=s2 Foo=1\n", 2, "unknown key \"Foo\"");
	expect_error("SwitchName=s1 Nodes=n1\n# c\nSwitchName=s2 Nodes=n2\nSwitchName=s1 Nodes=n3\n",
		     4, "switch s1 is already defined at line 1");
	expect_error("SwitchName=s1 \\\n Nodes=n[1-2]\nSwitchName=s1 Nodes=n3\n", 3,
		     "switch s1 is already defined at line 1");
	expect_error("SwitchName=s1 Nodes=n1\nSwitchName=top Switches=s[1-2]\n", 2,
		     "switch top lists s2 in Switches=, but no SwitchName defines s2");
	expect_error("SwitchName=s1 Nodes=n1\nSwitchName=a Switches=b,s1\nSwitchName=b Switches=c\n"
		     "SwitchName=c Switches=b\n",
		     3, "switch b is its own ancestor (b -> c -> b)");
	expect_error("SwitchName=s1 Nodes=n1\nSwitchName=a Switches=a\n", 2,
		     "switch a is its own ancestor (a -> a)");
	expect_error("SwitchName=s1 Nodes=n[1-4]\nSwitchName=s2 Nodes=n[4-6]\n", 2,
		     "node n4 is already under leaf switch s1 (line 1)");
	expect_error("SwitchName=s1 Nodes=n1\nSwitchName=s2 Nodes=n[1-\n", 2,
		     "hostlist \"n[1-\" has a '[' that is never closed at column 2");
	expect_error("SwitchName=s1 Nodes=n1\nSwitchName=s2 Switches=s[3-1]\n", 2,
		     "hostlist \"s[3-1]\" has a decreasing range 3-1 at column 3");
	expect_error("SwitchName=s1 Nodes=n1\n\nBlockName=b1 Nodes=n2\n", 3,
		     "BlockName mixes block topology into a tree topology (line 1); a "
		     "topology.conf is either tree (SwitchName) or block (BlockName)");
	expect_error("SwitchName=s1 Nodes=n1\nNodes=n2\n", 2,
		     "line has Nodes but no SwitchName or BlockName");
	expect_error("SwitchName=s1 Nodes=n1 Switches=s2\n", 1,
		     "switch s1 has both Nodes= and Switches=; a switch holds either nodes or "
		     "switches");
	expect_error("SwitchName=s1 Nodes\n", 1, "expected Key=Value but found \"Nodes\"");
	expect_error("SwitchName=s1 Nodes=n1 nodes=n2\n", 1, "key Nodes appears twice on one line");
	expect_error("SwitchName=s[1-2] Nodes=n1\n", 1,
		     "SwitchName \"s[1-2]\" must be a single name, not a hostlist");
	expect_error("SwitchName=s1 Nodes=n1 LinkSpeed=fast\n", 1,
		     "LinkSpeed \"fast\" of switch s1 is not a whole number");
	expect_error("SwitchName=s1 Nodes=\"n1\n", 1, "value of Nodes has no closing '\"'");
	expect_error("SwitchName=s1 Nodes=\n", 1, "hostlist is empty");
	expect_error("SwitchName=s1 Nodes=n1,a\"b\n", 1,
		     "node name \"a\"b\" holds a character topology.conf cannot carry");
	expect_error("SwitchName=s\\x Nodes=n1\n", 1,
		     "SwitchName \"s\\x\" holds a character topology.conf cannot carry");
	expect_error("# nothing\n\n", 0, "no SwitchName or BlockName line: the file defines no topology");
}

static void test_block_errors(void **state)
{
	(void)state;
	expect_error("BlockName=b1 Nodes=n[1-2]\nBlockName=b1 Nodes=n[3-4]\n", 2,
		     "block b1 is already defined at line 1");
	expect_error("BlockName=b1 Nodes=n[1-2]\nBlockName=b2 Nodes=n[2-3]\n", 2,
		     "node n2 is already in block b1 (line 1)");
	expect_error("BlockName=b1 Nodes=n[1-2]\nSwitchName=s1 Nodes=n3\n", 2,
		     "SwitchName mixes tree topology into a block topology (line 1); a "
		     "topology.conf is either tree (SwitchName) or block (BlockName)");
	expect_error("BlockName=b1\n", 1, "block b1 has no Nodes=");
	expect_error("BlockName=b1 Nodes=n1 Switches=s1\n", 1,
		     "key Switches does not belong on a BlockName line");
	expect_error("BlockName=b1 Nodes=n1 BlockSizes=1\n", 1, "BlockSizes must be on a line of its own");
	expect_error("BlockSizes=4,12\nBlockName=b1 Nodes=n[1-4]\n", 1,
		     "BlockSizes 12 is not a power-of-two multiple (at most 2^15) of the base block "
		     "size 4");
	expect_error("BlockSizes=4,x\n", 1,
		     "BlockSizes \"4,x\" is not a comma-separated list of positive whole numbers");
	expect_error("BlockSizes=4\nBlockSizes=4\n", 2, "BlockSizes is already set at line 1");
	expect_error("BlockSizes=4\nBlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodes=n[5-7]\n", 3,
		     "block b2 has 3 nodes, fewer than the base block size 4 (BlockSizes at line 1)");
	expect_error("BlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodes=n[5-7]\n", 2,
		     "block b2 has 3 nodes, fewer than the 4 nodes of the first block b1, which "
		     "sets the base block size when BlockSizes is not given");
	expect_error("\n\nBlockSizes=8\n", 3, "BlockSizes is set but no BlockName line defines a block");
}

static void test_nul_byte(void **state)
{
	static const char text[] = "SwitchName=s1 Nodes=n1\nSwitch\0Name=s2\n";
	topo_graph *g = topo_graph_new();
	topo_error err;

	(void)state;
	assert_int_equal(topo_load_topology_conf_mem(g, text, sizeof(text) - 1, "t.conf", &err), -1);
	assert_int_equal(err.line, 2);
	assert_string_equal(err.text, "line contains a NUL byte");
	topo_graph_free(g);
}

static void test_load_file(void **state)
{
	topo_graph *g = topo_graph_new();
	topo_error err;

	(void)state;
	assert_int_equal(topo_load_topology_conf(g, FIXTURES_DIR "/topology/tree.conf", &err), 0);
	assert_int_equal(topo_graph_count(g, TOPO_V_HOST), 8);
	assert_int_equal(topo_graph_count(g, TOPO_V_SWITCH), 4);
	assert_int_equal(topo_load_topology_conf(g, FIXTURES_DIR "/topology/no-such.conf", &err), -1);
	assert_int_equal(err.line, 0);
	assert_non_null(strstr(err.source, "no-such.conf"));
	assert_string_equal(err.text, "cannot open: No such file or directory");
	assert_int_equal(topo_load_topology_conf(g, FIXTURES_DIR "/topology/loop.conf", &err), -1);
	assert_int_equal(err.line, 5);
	assert_string_equal(err.text, "switch spine1 is its own ancestor (spine1 -> core1 -> spine1)");
	topo_graph_free(g);
}

/* Write g in `mode` into a malloc'd string. */
static char *write_conf(const topo_graph *g, topo_conf_mode mode, const char *source)
{
	FILE *f = tmpfile();
	topo_error err;
	long n;
	char *s;

	assert_non_null(f);
	if (topo_write_topology_conf(g, f, mode, source, &err) != 0)
		fail_msg("write: %s", err.text);
	n = ftell(f);
	rewind(f);
	s = calloc((size_t)n + 1, 1);
	assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return s;
}

/* The lines of s that are not comments. */
static const char *body(const char *s)
{
	while (*s == '#')
		s = strchr(s, '\n') + 1;
	return s;
}

/* load(text) -> write -> load: the two graphs are equal. Returns the written text. */
static char *roundtrip(const char *text, topo_conf_mode mode)
{
	topo_graph *a = parse_ok(text), *b;
	char why[256], *out = write_conf(a, mode, "test");

	b = parse_ok(out);
	assert_int_equal(topo_graph_canonicalize(a), 0);
	assert_int_equal(topo_graph_canonicalize(b), 0);
	if (!topo_graph_equal(a, b, why, sizeof(why)))
		fail_msg("round trip differs: %s\n%s", why, out);
	topo_graph_free(a);
	topo_graph_free(b);
	return out;
}

/* topology.yaml: the tree (with its LinkSpeed dropped: no such field) and the
 * block topology of the same fabric, every value quoted. */
static void test_write_yaml(void **state)
{
	topo_graph *g = parse_ok(tree_conf);
	topo_error err;
	FILE *f = tmpfile();
	char *s;
	long n;

	(void)state;
	assert_non_null(f);
	assert_int_equal(topo_write_topology_yaml(g, f, "test", &err), 0);
	n = ftell(f);
	rewind(f);
	s = calloc((size_t)n + 1, 1);
	assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	assert_string_equal(s, "# Generated by topognn-discover from test.\n"
			       "# Tree topology (topology/tree): 8 hosts under 2 leaf-level "
			       "switches, 2 switches above them.\n"
			       "- topology: tree\n"
			       "  cluster_default: true\n"
			       "  tree:\n"
			       "    switches:\n"
			       "      - switch: \"s1\"\n        nodes: \"n[01-04]\"\n"
			       "      - switch: \"s2\"\n        nodes: \"n[05-08]\"\n"
			       "      - switch: \"s3\"\n        children: \"s[1-2]\"\n"
			       "      - switch: \"core\"\n        children: \"s3\"\n"
			       "# Generated by topognn-discover from test.\n"
			       "# Block topology (topology/block): 8 hosts in 2 blocks.\n"
			       "- topology: block\n"
			       "  cluster_default: false\n"
			       "  block:\n"
			       "    blocks:\n"
			       "      - block: \"s1\"\n        nodes: \"n[01-04]\"\n"
			       "      - block: \"s2\"\n        nodes: \"n[05-08]\"\n"
			       "    block_sizes: [4,8]\n");
	free(s);
	topo_graph_free(g);
}

static void test_write_tree_roundtrip(void **state)
{
	char *out = roundtrip(tree_conf, TOPO_CONF_TREE);

	(void)state;
	assert_string_equal(out, "# Generated by topognn-discover from test.\n"
				 "# Tree topology (topology/tree): 8 hosts under 2 leaf-level "
				 "switches, 2 switches above them.\n"
				 "SwitchName=s1 Nodes=n[01-04]\n"
				 "SwitchName=s2 Nodes=n[05-08]\n"
				 "SwitchName=s3 Switches=s[1-2] LinkSpeed=100\n"
				 "SwitchName=core Switches=s3\n");
	free(out);
	/* a leaf directly under the core, next to a spine */
	out = roundtrip("SwitchName=l1 Nodes=a1\nSwitchName=l2 Nodes=a2\nSwitchName=sp Switches=l1\n"
			"SwitchName=c Switches=sp,l2\n",
			TOPO_CONF_TREE);
	assert_string_equal(body(out), "SwitchName=l1 Nodes=a1\n"
				       "SwitchName=l2 Nodes=a2\n"
				       "SwitchName=sp Switches=l1\n"
				       "SwitchName=c Switches=l2,sp\n");
	free(out);
	/* a switch with no host below it (l2) is not written, so c's height
	 * in the file is 1, as spine1's: the order is by that height, not by
	 * the level read, and writing the file read back gives the same text
	 * (fuzz_topology_conf, regress-writer-order-unwritten-switch) */
	{
		const char *in = "SwitchName=l1 Nodes=a1\nSwitchName=leaf1 Nodes=n[1-2]\n"
				 "SwitchName=spine1 Switches=leaf1\nSwitchName=l2\n"
				 "SwitchName=sp Switches=l2\nSwitchName=c Switches=sp,l1\n";
		topo_graph *g = parse_ok(in);
		char *again;

		out = write_conf(g, TOPO_CONF_TREE, "test");
		topo_graph_free(g);
		g = parse_ok(out);
		again = write_conf(g, TOPO_CONF_TREE, "test");
		assert_string_equal(again, out);
		assert_string_equal(body(out), "SwitchName=l1 Nodes=a1\n"
					       "SwitchName=leaf1 Nodes=n[1-2]\n"
					       "SwitchName=c Switches=l1\n"
					       "SwitchName=spine1 Switches=leaf1\n");
		topo_graph_free(g);
		free(again);
		free(out);
	}
}

static void test_write_block_roundtrip(void **state)
{
	char *out = roundtrip("BlockName=su10 Nodes=n[37-40]\nBlockName=su2 Nodes=n[1-4]\n"
			      "BlockName=su3 Nodes=n[5-8]\nBlockSizes=4,16\n",
			      TOPO_CONF_BLOCK);

	(void)state;
	assert_string_equal(out, "# Generated by topognn-discover from test.\n"
				 "# Block topology (topology/block): 12 hosts in 3 blocks.\n"
				 "BlockName=su2 Nodes=n[1-4]\n"
				 "BlockName=su3 Nodes=n[5-8]\n"
				 "BlockName=su10 Nodes=n[37-40]\n"
				 "BlockSizes=4,16\n");
	free(out);
}

/* A tiny rail-optimized fabric as the fabric builder makes it: 2 scalable
 * units (su1, su2) of 2 DGX hosts with 2 rails each; rail r of su s on leaf
 * leaf0<2(s-1)+r+1>; two spines over all four rail leaves; dgx05 of su2 with
 * only its rail-0 HCA cabled. Also a login host
 * with one HCA on leaf05 (under spine1 only) and a host with no cable. */
static topo_graph *rail_fabric(void)
{
	topo_graph *g = topo_graph_new();
	int spine[2], leaf[5];
	char name[32];

	for (int i = 0; i < 2; i++) {
		snprintf(name, sizeof(name), "spine%d", i + 1);
		spine[i] = topo_graph_add_vertex(g, TOPO_V_SWITCH, name);
		topo_graph_vertex_mut(g, spine[i])->level = TOPO_LEVEL_SPINE;
	}
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "leaf%02d", i + 1);
		leaf[i] = topo_graph_add_vertex(g, TOPO_V_SWITCH, name);
		topo_graph_vertex_mut(g, leaf[i])->level = TOPO_LEVEL_LEAF;
		for (int s = 0; s < (i < 4 ? 2 : 1); s++) {
			int e = topo_graph_add_edge(g, TOPO_E_FABRIC, leaf[i], spine[s]);

			topo_graph_edge_mut(g, e)->port_a = 33 + s;
			topo_graph_edge_mut(g, e)->port_b = i + 1;
			topo_edge_set_rate(topo_graph_edge_mut(g, e), 4, "NDR");
		}
	}
	for (int su = 0; su < 2; su++) {
		int grp;

		snprintf(name, sizeof(name), "su%d", su + 1);
		grp = topo_graph_add_vertex(g, TOPO_V_GROUP, name);
		for (int r = 0; r < 2; r++)
			topo_graph_add_edge(g, TOPO_E_MEMBER, grp, leaf[2 * su + r]);
		for (int k = 0; k < 2; k++) {
			int h;

			snprintf(name, sizeof(name), "dgx%02d", 2 * su + k + 1);
			h = topo_graph_add_vertex(g, TOPO_V_HOST, name);
			topo_graph_add_edge(g, TOPO_E_MEMBER, grp, h);
			for (int r = 0; r < 2; r++) {
				int hca, e;

				snprintf(name, sizeof(name), "mlx5_%d", r);
				hca = topo_graph_add_part(g, h, TOPO_V_HCA, name);
				topo_graph_vertex_mut(g, hca)->rail = r;
				e = topo_graph_add_edge(g, TOPO_E_FABRIC, hca, leaf[2 * su + r]);
				topo_graph_edge_mut(g, e)->port_a = 1;
				topo_graph_edge_mut(g, e)->port_b = k + 1;
			}
		}
	}
	{
		/* dgx05 of su2 has a single working HCA, on su2's rail-0 leaf */
		int h = topo_graph_add_vertex(g, TOPO_V_HOST, "dgx05");
		int hca = topo_graph_add_part(g, h, TOPO_V_HCA, "mlx5_0");

		topo_graph_add_edge(g, TOPO_E_FABRIC, hca, leaf[2]);
		topo_graph_add_edge(g, TOPO_E_MEMBER, topo_graph_find(g, TOPO_V_GROUP, "su2"), h);
	}
	{
		int h = topo_graph_add_vertex(g, TOPO_V_HOST, "login1");
		int hca = topo_graph_add_part(g, h, TOPO_V_HCA, "mlx5_0");

		topo_graph_add_edge(g, TOPO_E_FABRIC, hca, leaf[4]);
		topo_graph_add_vertex(g, TOPO_V_HOST, "mgmt1");
	}
	return g;
}

static void test_write_rail_fabric(void **state)
{
	topo_graph *g = rail_fabric(), *t, *t2;
	char *tree = write_conf(g, TOPO_CONF_TREE, "test-fabric"), *tree2;
	char *block = write_conf(g, TOPO_CONF_BLOCK, "test-fabric");
	char why[256];

	(void)state;
	assert_string_equal(tree, "# Generated by topognn-discover from test-fabric.\n"
				  "# Tree topology (topology/tree): 6 hosts under 3 leaf-level "
				  "switches, 2 switches above them.\n"
				  "# Hosts cabled to several leaf switches (one per rail) are "
				  "listed under their scalable unit.\n"
				  "# Not listed (cabled to no switch): mgmt1\n"
				  "SwitchName=leaf05 Nodes=login1\n"
				  "SwitchName=su1 Nodes=dgx[01-02]\n"
				  "SwitchName=su2 Nodes=dgx[03-05]\n"
				  "SwitchName=spine1 Switches=leaf05,su[1-2]\n"
				  "SwitchName=spine2 Switches=su[1-2]\n");
	assert_string_equal(block, "# Generated by topognn-discover from test-fabric.\n"
				   "# Block topology (topology/block): 5 hosts in 2 blocks.\n"
				   "# Not listed (in no block): login1,mgmt1\n"
				   "BlockName=su1 Nodes=dgx[01-02]\n"
				   "BlockName=su2 Nodes=dgx[03-05]\n"
				   "BlockSizes=2,4\n");
	/* what was written reads back as the tree it describes, and rewrites the same */
	t = parse_ok(tree);
	assert_int_equal(topo_graph_count(t, TOPO_V_HOST), 6);
	assert_int_equal(topo_graph_count_switches(t, TOPO_LEVEL_LEAF), 3);
	assert_int_equal(topo_graph_count_switches(t, TOPO_LEVEL_SPINE), 2);
	assert_true(has_edge(t, TOPO_E_FABRIC, host(t, "dgx03"), sw(t, "su2")));
	assert_true(has_edge(t, TOPO_E_FABRIC, host(t, "dgx05"), sw(t, "su2")));
	assert_true(has_edge(t, TOPO_E_FABRIC, sw(t, "su2"), sw(t, "spine2")));
	assert_false(has_edge(t, TOPO_E_FABRIC, sw(t, "leaf05"), sw(t, "spine2")));
	tree2 = write_conf(t, TOPO_CONF_TREE, "test-fabric");
	assert_string_equal(body(tree2), body(tree));
	t2 = parse_ok(tree2);
	topo_graph_canonicalize(t);
	topo_graph_canonicalize(t2);
	assert_true(topo_graph_equal(t, t2, why, sizeof(why)));
	free(tree);
	free(tree2);
	free(block);
	topo_graph_free(g);
	topo_graph_free(t);
	topo_graph_free(t2);
}

static void test_write_errors(void **state)
{
	topo_graph *g = rail_fabric();
	topo_error err;
	FILE *f = tmpfile();
	int h = topo_graph_find(g, TOPO_V_HOST, "dgx01"), grp;

	(void)state;
	/* a rail-optimized host in no group fits under no switch */
	for (size_t i = 0; i < topo_graph_nedges(g); i++) {
		topo_edge *e = topo_graph_edge_mut(g, (int)i);

		if (e->kind == TOPO_E_MEMBER && e->b == h)
			e->kind = TOPO_E_PCIE; /* detach dgx01 from su1 */
	}
	assert_int_equal(topo_write_topology_conf(g, f, TOPO_CONF_TREE, "x", &err), -1);
	assert_string_equal(err.text, "host dgx01 is cabled to 2 leaf switches and belongs to no "
				      "group, so it fits under no single switch");
	topo_graph_free(g);
	/* a group named like a switch */
	g = rail_fabric();
	grp = topo_graph_add_vertex(g, TOPO_V_GROUP, "leaf01");
	topo_graph_add_edge(g, TOPO_E_MEMBER, grp, topo_graph_find(g, TOPO_V_HOST, "dgx01"));
	assert_int_equal(topo_write_topology_conf(g, f, TOPO_CONF_TREE, "x", &err), -1);
	assert_string_equal(err.text, "group leaf01 has the same name as a switch; topology.conf "
				      "needs distinct names");
	topo_graph_free(g);
	/* a name the file cannot carry */
	g = topo_graph_new();
	topo_graph_add_edge(g, TOPO_E_FABRIC, topo_graph_add_vertex(g, TOPO_V_HOST, "h1"),
			    topo_graph_add_vertex(g, TOPO_V_SWITCH, "bad name"));
	assert_int_equal(topo_write_topology_conf(g, f, TOPO_CONF_TREE, "x", &err), -1);
	assert_string_equal(err.text, "switch name \"bad name\" cannot be written in topology.conf");
	topo_graph_free(g);
	/* nothing to write */
	g = topo_graph_new();
	topo_graph_add_vertex(g, TOPO_V_HOST, "alone");
	assert_int_equal(topo_write_topology_conf(g, f, TOPO_CONF_TREE, "x", &err), -1);
	assert_string_equal(err.text, "no host is cabled to a switch: nothing to write");
	assert_int_equal(topo_conf_mode_parse("block"), TOPO_CONF_BLOCK);
	assert_int_equal(topo_conf_mode_parse("tree"), TOPO_CONF_TREE);
	assert_int_equal(topo_conf_mode_parse("dragonfly"), -1);
	topo_graph_free(g);
	fclose(f);
}

/* The real DGX H100 SuperPOD: its 119 DGX hosts are rail-optimized, so each
 * of the 8 scalable units becomes a pseudo-switch under all 9 spines. */
static void test_write_superpod(void **state)
{
	static const char *const units =
		"SwitchName=su1 Nodes=a05-p1-dgx-01-c[01,03-04,09,12-15,17-18]\n"
		"SwitchName=su2 Nodes=a06-p1-dgx-02-c[01-04,07,10-12,14,16,18]\n"
		"SwitchName=su3 Nodes=a07-p1-dgx-03-c[01-18]\n"
		"SwitchName=su4 Nodes=a08-p1-dgx-04-c[01-17]\n"
		"SwitchName=su5 Nodes=b05-p1-dgx-05-c[01-18]\n"
		"SwitchName=su6 Nodes=b06-p1-dgx-06-c[01-03,05-08,10-13,15-18]\n"
		"SwitchName=su7 Nodes=b07-p1-dgx-07-c[01-04,06-14,16-18]\n"
		"SwitchName=su8 Nodes=b08-p1-dgx-08-c[01,04-06,08,10-18]\n";
	topo_graph *g = topo_graph_new(), *t;
	topo_error err;
	char *tree, *block, *tree2, expect[4096];
	size_t len;

	(void)state;
	if (topo_load_ibnetdiscover(g, FIXTURES_DIR "/fabrics/dgx-h100-superpod.ibnetdiscover", NULL,
				    &err) != 0)
		fail_msg("%s:%d: %s", err.source, err.line, err.text);
	tree = write_conf(g, TOPO_CONF_TREE, "dgx-h100-superpod.ibnetdiscover");
	len = (size_t)snprintf(expect, sizeof(expect),
			       "# Generated by topognn-discover from "
			       "dgx-h100-superpod.ibnetdiscover.\n"
			       "# Tree topology (topology/tree): 119 hosts under 8 leaf-level "
			       "switches, 9 switches above them.\n"
			       "# Hosts cabled to several leaf switches (one per rail) are listed "
			       "under their scalable unit.\n%s",
			       units);
	for (int i = 1; i <= 9; i++)
		len += (size_t)snprintf(expect + len, sizeof(expect) - len,
					"SwitchName=%s-P1-IBSPINE-%02d Switches=su[1-8]\n",
					i <= 4 ? "A10" : "B10", i);
	assert_string_equal(tree, expect);

	block = write_conf(g, TOPO_CONF_BLOCK, "dgx-h100-superpod.ibnetdiscover");
	assert_non_null(strstr(block, "# Block topology (topology/block): 119 hosts in 8 blocks.\n"));
	assert_non_null(strstr(block, "\nBlockName=su1 Nodes=a05-p1-dgx-01-c[01,03-04,09,12-15,17-18]\n"
				      "BlockName=su2 Nodes=a06-p1-dgx-02-c[01-04,07,10-12,14,16,18]\n"));
	assert_non_null(strstr(block, "\nBlockName=su8 Nodes=b08-p1-dgx-08-c[01,04-06,08,10-18]\n"
				      "BlockSizes=10,20,40,80\n"));
	assert_null(strstr(block, "Not listed"));

	/* the written file reads back: 8 leaf pseudo-switches, 9 spines, 119 hosts */
	t = parse_ok(tree);
	assert_int_equal(topo_graph_count(t, TOPO_V_HOST), 119);
	assert_int_equal(topo_graph_count_switches(t, TOPO_LEVEL_LEAF), 8);
	assert_int_equal(topo_graph_count_switches(t, TOPO_LEVEL_SPINE), 9);
	assert_int_equal(topo_graph_count_edges(t, TOPO_E_FABRIC), 119 + 9 * 8);
	tree2 = write_conf(t, TOPO_CONF_TREE, "again");
	assert_string_equal(strstr(tree2, "SwitchName="), strstr(tree, "SwitchName="));
	free(tree);
	free(tree2);
	free(block);
	topo_graph_free(g);
	topo_graph_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree),
		cmocka_unit_test(test_continuation_and_forward_refs),
		cmocka_unit_test(test_block),
		cmocka_unit_test(test_tree_errors),
		cmocka_unit_test(test_block_errors),
		cmocka_unit_test(test_nul_byte),
		cmocka_unit_test(test_load_file),
		cmocka_unit_test(test_write_tree_roundtrip),
		cmocka_unit_test(test_write_yaml),
		cmocka_unit_test(test_write_block_roundtrip),
		cmocka_unit_test(test_write_rail_fabric),
		cmocka_unit_test(test_write_errors),
		cmocka_unit_test(test_write_superpod),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
