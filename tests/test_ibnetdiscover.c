/* Tests of the ibnetdiscover loader and the fabric builder: the real DGX H100
 * SuperPOD dump (counts, names, groups, rails, anomalies, one host, one
 * cable), the host pattern option, every malformed-input error with its line,
 * and determinism. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo_ibnetdiscover.h"

#define SUPERPOD FIXTURES_DIR "/fabrics/dgx-h100-superpod.ibnetdiscover"

static topo_graph *load_superpod(const topo_fabric_opts *opts)
{
	topo_graph *g = topo_graph_new();
	topo_error err;

	assert_non_null(g);
	if (topo_load_ibnetdiscover(g, SUPERPOD, opts, &err) < 0)
		fail_msg("%s:%d: %s", err.source, err.line, err.text);
	return g;
}

static size_t count_anomalies(const topo_graph *g, const char *kind, const char *subject)
{
	size_t n = 0;

	for (size_t i = 0; i < topo_graph_nanomalies(g); i++) {
		const topo_anomaly *a = topo_graph_anomaly(g, i);

		n += strcmp(a->kind, kind) == 0 && (!subject || strcmp(a->subject, subject) == 0);
	}
	return n;
}

static const topo_anomaly *find_anomaly(const topo_graph *g, const char *kind, const char *subject)
{
	for (size_t i = 0; i < topo_graph_nanomalies(g); i++) {
		const topo_anomaly *a = topo_graph_anomaly(g, i);

		if (strcmp(a->kind, kind) == 0 && strcmp(a->subject, subject) == 0)
			return a;
	}
	return NULL;
}

/* Members of a group vertex of one kind. */
static int group_members(const topo_graph *g, const char *group, topo_vkind kind)
{
	int id = topo_graph_find(g, TOPO_V_GROUP, group), n, k = 0;
	const int *inc;

	assert_true(id >= 0);
	inc = topo_graph_incident(g, id, &n);
	for (int i = 0; i < n; i++) {
		const topo_edge *e = topo_graph_edge(g, inc[i]);

		k += e->kind == TOPO_E_MEMBER && e->a == id && topo_graph_vertex(g, e->b)->kind == kind;
	}
	return k;
}

/* The fabric edge of an HCA and the switch at its other end. */
static const topo_edge *hca_cable(const topo_graph *g, int hca, int *sw)
{
	int n;
	const int *inc = topo_graph_incident(g, hca, &n);

	for (int i = 0; i < n; i++) {
		const topo_edge *e = topo_graph_edge(g, inc[i]);

		if (e->kind == TOPO_E_FABRIC) {
			*sw = topo_edge_other(e, hca);
			return e;
		}
	}
	return NULL;
}

static void test_superpod_counts(void **state)
{
	topo_graph *g = load_superpod(NULL);
	size_t sharp = 0;

	(void)state;
	assert_int_equal(topo_graph_count(g, TOPO_V_SWITCH), 40);
	assert_int_equal(topo_graph_count_switches(g, TOPO_LEVEL_LEAF), 31);
	assert_int_equal(topo_graph_count_switches(g, TOPO_LEVEL_SPINE), 9);
	assert_int_equal(topo_graph_count_switches(g, TOPO_LEVEL_CORE), 0);
	assert_int_equal(topo_graph_count(g, TOPO_V_HOST), 119);
	/* 109 hosts x 4 rails + 10 hosts of su1 x 3 rails */
	assert_int_equal(topo_graph_count(g, TOPO_V_HCA), 466);
	assert_int_equal(topo_graph_count(g, TOPO_V_GROUP), 8);
	/* 466 HCA cables + 532 leaf-spine cables */
	assert_int_equal(topo_graph_count_edges(g, TOPO_E_FABRIC), 998);
	for (size_t i = 0; i < topo_graph_nvertices(g); i++)
		sharp += (topo_graph_vertex(g, (int)i)->caps & TOPO_CAP_SHARP) != 0;
	assert_int_equal(sharp, 40);
	assert_int_equal(topo_graph_find(g, TOPO_V_SWITCH, "A09-P1-IBLEAF-03-01"), -1);
	topo_graph_free(g);
}

static void test_superpod_switch(void **state)
{
	topo_graph *g = load_superpod(NULL);
	int id = topo_graph_find(g, TOPO_V_SWITCH, "A09-P1-IBLEAF-04-04");
	const topo_vertex *v = topo_graph_vertex(g, id);

	(void)state;
	assert_non_null(v);
	assert_string_equal(v->desc, "MF0;A09-P1-IBLEAF-04-04:MQM9701/U1");
	assert_true(v->guid == 0x2c5eab0300b87b40ull);
	assert_int_equal(v->lid, 73);
	assert_int_equal(v->nports, 65);
	assert_int_equal(v->level, TOPO_LEVEL_LEAF);
	assert_int_equal(v->caps, TOPO_CAP_SHARP);
	assert_int_equal(v->rail, 3);
	v = topo_graph_vertex(g, topo_graph_find(g, TOPO_V_SWITCH, "B10-P1-IBSPINE-09"));
	assert_non_null(v);
	assert_int_equal(v->level, TOPO_LEVEL_SPINE);
	assert_int_equal(v->rail, -1);
	topo_graph_free(g);
}

static void test_superpod_groups(void **state)
{
	static const char *const first_host[8] = {
		"a05-p1-dgx-01-c01", "a06-p1-dgx-02-c01", "a07-p1-dgx-03-c01", "a08-p1-dgx-04-c01",
		"b05-p1-dgx-05-c01", "b06-p1-dgx-06-c01", "b07-p1-dgx-07-c01", "b08-p1-dgx-08-c01",
	};
	static const int hosts[8] = { 10, 11, 18, 17, 18, 15, 16, 14 };
	static const int leaves[8] = { 3, 4, 4, 4, 4, 4, 4, 4 };
	topo_graph *g = load_superpod(NULL);

	(void)state;
	for (int i = 0; i < 8; i++) {
		char name[8];
		int gid, n;
		const int *inc;

		snprintf(name, sizeof(name), "su%d", i + 1);
		assert_int_equal(group_members(g, name, TOPO_V_HOST), hosts[i]);
		assert_int_equal(group_members(g, name, TOPO_V_SWITCH), leaves[i]);
		gid = topo_graph_find(g, TOPO_V_GROUP, name);
		inc = topo_graph_incident(g, gid, &n);
		/* members are added hosts first, in name order */
		assert_string_equal(topo_graph_vertex(g, topo_graph_edge(g, inc[0])->b)->name,
				    first_host[i]);
	}
	/* su1 lacks rail 2 (the rail of HCA-5, leaf IBLEAF-03-01 is absent) */
	assert_int_equal(count_anomalies(g, "missing-rail", NULL), 1);
	assert_non_null(strstr(find_anomaly(g, "missing-rail", "su1")->text, "rail 2 of 4"));
	assert_non_null(strstr(find_anomaly(g, "missing-rail", "su1")->text, "HCA-5"));
	assert_int_equal(topo_graph_vertex(g, topo_graph_find(g, TOPO_V_HCA,
							      "a05-p1-dgx-01-c01/HCA-6"))->rail, 3);
	assert_int_equal(topo_graph_find(g, TOPO_V_HCA, "a05-p1-dgx-01-c01/HCA-5"), -1);
	topo_graph_free(g);
}

static void test_superpod_anomalies(void **state)
{
	topo_graph *g = load_superpod(NULL);

	(void)state;
	assert_int_equal(topo_graph_nanomalies(g), 75);
	assert_int_equal(count_anomalies(g, "unnamed-hca", NULL), 69);
	assert_int_equal(count_anomalies(g, "generic-hostname", NULL), 2);
	assert_int_equal(count_anomalies(g, "generic-hostname", "localhost"), 1);
	assert_int_equal(count_anomalies(g, "generic-hostname", "ubuntu"), 1);
	assert_int_equal(count_anomalies(g, "fabric-manager", "B11-P1-CUFM-02"), 1);
	assert_int_equal(count_anomalies(g, "duplicate-hostname", NULL), 0);
	assert_int_equal(count_anomalies(g, "missing-rail", NULL), 1);
	/* b08-p1-dgx-08-c01 has HCA-5 and HCA-6 cabled to each other's leaf */
	assert_int_equal(count_anomalies(g, "crossed-rail", NULL), 2);
	assert_non_null(find_anomaly(g, "crossed-rail", "b08-p1-dgx-08-c01/HCA-5"));
	assert_non_null(strstr(find_anomaly(g, "unnamed-hca", "0xe09d730300858d88")->text,
			       "A09-P1-IBLEAF-04-02 port 6"));
	assert_non_null(strstr(find_anomaly(g, "generic-hostname", "localhost")->text, "3 CAs"));
	assert_int_equal(topo_graph_find(g, TOPO_V_HOST, "localhost"), -1);
	assert_int_equal(topo_graph_find(g, TOPO_V_HOST, "ubuntu"), -1);
	assert_int_equal(topo_graph_find(g, TOPO_V_HOST, "B11-P1-CUFM-02"), -1);
	topo_graph_free(g);
}

static void test_superpod_host(void **state)
{
	static const struct {
		const char *hca, *leaf;
		int rail, leaf_port;
		uint64_t guid;
		int lid;
	} want[4] = {
		{ "mlx5_0", "A09-P1-IBLEAF-01-04", 0, 1, 0xe09d7303007a4fbcull, 614 },
		{ "mlx5_1", "A09-P1-IBLEAF-02-04", 1, 1, 0xe09d7303007a4fc0ull, 615 },
		{ "mlx5_4", "A09-P1-IBLEAF-03-04", 2, 1, 0xe09d7303007a4bd4ull, 646 },
		{ "mlx5_5", "A09-P1-IBLEAF-04-04", 3, 1, 0xe09d7303007a4bd8ull, 647 },
	};
	topo_graph *g = load_superpod(NULL);
	int host = topo_graph_find(g, TOPO_V_HOST, "a08-p1-dgx-04-c01"), n, parts = 0;
	const int *inc = topo_graph_incident(g, host, &n);

	(void)state;
	for (int i = 0; i < n; i++)
		parts += topo_graph_edge(g, inc[i])->kind == TOPO_E_MEMBER &&
			 topo_graph_edge(g, inc[i])->a == host;
	assert_int_equal(parts, 4);
	for (int i = 0; i < 4; i++) {
		char name[64];
		int id, sw = -1;
		const topo_vertex *v;
		const topo_edge *e;

		snprintf(name, sizeof(name), "a08-p1-dgx-04-c01/%s", want[i].hca);
		id = topo_graph_find(g, TOPO_V_HCA, name);
		v = topo_graph_vertex(g, id);
		assert_non_null(v);
		assert_int_equal(v->host, host);
		assert_string_equal(v->device, want[i].hca);
		assert_true(v->guid == want[i].guid);
		assert_int_equal(v->lid, want[i].lid);
		assert_int_equal(v->port, 1);
		assert_int_equal(v->link_layer, TOPO_LL_IB);
		assert_int_equal(v->rail, want[i].rail);
		e = hca_cable(g, id, &sw);
		assert_non_null(e);
		assert_string_equal(topo_graph_vertex(g, sw)->name, want[i].leaf);
		assert_int_equal(e->a, id);
		assert_int_equal(e->port_a, 0);
		assert_int_equal(e->port_b, want[i].leaf_port);
		assert_int_equal(e->width, 4);
		assert_string_equal(e->speed, "NDR");
		assert_true(e->gbps == 400.0);
		assert_int_equal(e->state, TOPO_LINK_ACTIVE);
	}
	topo_graph_free(g);
}

/* Leaf A09-P1-IBLEAF-04-04 port 35 <-> spine A10-P1-IBSPINE-02 port 32. */
static void test_superpod_cable(void **state)
{
	topo_graph *g = load_superpod(NULL);
	int leaf = topo_graph_find(g, TOPO_V_SWITCH, "A09-P1-IBLEAF-04-04");
	int spine = topo_graph_find(g, TOPO_V_SWITCH, "A10-P1-IBSPINE-02");
	int n, found = 0, to_spine = 0;
	const int *inc = topo_graph_incident(g, leaf, &n);

	(void)state;
	for (int i = 0; i < n; i++) {
		const topo_edge *e = topo_graph_edge(g, inc[i]);
		int lp = e->a == leaf ? e->port_a : e->port_b, sp = e->a == leaf ? e->port_b : e->port_a;

		if (e->kind != TOPO_E_FABRIC || topo_edge_other(e, leaf) != spine)
			continue;
		to_spine++;
		if (lp == 35) {
			assert_int_equal(sp, 32);
			assert_true(e->gbps == 400.0);
			assert_string_equal(e->speed, "NDR");
			found = 1;
		}
	}
	assert_true(found);
	assert_int_equal(to_spine, 2); /* ports 35 and 36 */
	topo_graph_free(g);
}

static void test_host_pattern(void **state)
{
	topo_fabric_opts opts = { "^[a-z][0-9]+-p1-(dgx-[0-9]+-c[0-9]+) +([A-Za-z0-9_-]+)$", NULL };
	topo_graph *g = load_superpod(&opts), *h;
	topo_error err;

	(void)state;
	assert_int_equal(topo_graph_count(g, TOPO_V_HOST), 119);
	assert_true(topo_graph_find(g, TOPO_V_HOST, "dgx-04-c01") >= 0);
	assert_true(topo_graph_find(g, TOPO_V_HCA, "dgx-04-c01/mlx5_5") >= 0);
	assert_int_equal(topo_graph_find(g, TOPO_V_HOST, "a08-p1-dgx-04-c01"), -1);
	/* localhost, ubuntu and the UFM no longer match: unnamed */
	assert_int_equal(count_anomalies(g, "unnamed-hca", NULL), 69 + 3 + 2 + 2);
	assert_int_equal(count_anomalies(g, "generic-hostname", NULL), 0);
	topo_graph_free(g);

	opts.host_pattern = "^([^ ]+) +[A-Z]";
	h = topo_graph_new();
	assert_int_equal(topo_load_ibnetdiscover(h, SUPERPOD, &opts, &err), -1);
	assert_non_null(strstr(err.text, "needs two groups"));
	opts.host_pattern = "^(([a-z]+";
	assert_int_equal(topo_load_ibnetdiscover(h, SUPERPOD, &opts, &err), -1);
	assert_non_null(strstr(err.text, "not a valid regular expression"));
	/* refused before regcomp, which would take seconds on it (topo_regex.h) */
	opts.host_pattern = "^([^ ]+) +(.*++++++++++++)$";
	assert_int_equal(topo_load_ibnetdiscover(h, SUPERPOD, &opts, &err), -1);
	assert_non_null(strstr(err.text, "not a valid regular expression: too complex"));
	topo_graph_free(h);
}

/* A one-leaf, two-host fabric to break in small ways. */
#define SW_HDR                                                   \
	"switchguid=0x0000000000000a01(0000000000000a01)\n"      \
	"Switch\t4 \"S-0000000000000a01\"\t\t# \"MF0;leaf-1:MQM9701/U1\" enhanced port 0 lid 1 lmc 0\n"
#define SW_P1 "[1]\t\"H-0000000000000b01\"[1](0000000000000b01) \t\t# \"node1 mlx5_0\" lid 5 4xNDR\n"
#define SW_P2 "[2]\t\"H-0000000000000b02\"[1](0000000000000b02) \t\t# \"node2 mlx5_0\" lid 6 4xNDR\n"
#define CA1                                                                      \
	"\ncaguid=0x0000000000000b01\n"                                          \
	"Ca\t1 \"H-0000000000000b01\"\t\t# \"node1 mlx5_0\"\n"                  \
	"[1](0000000000000b01) \t\"S-0000000000000a01\"[1]\t\t# lid 5 lmc 0 "    \
	"\"MF0;leaf-1:MQM9701/U1\" lid 1 4xNDR\n"
#define CA2                                                                      \
	"\ncaguid=0x0000000000000b02\n"                                          \
	"Ca\t1 \"H-0000000000000b02\"\t\t# \"node2 mlx5_0\"\n"                  \
	"[1](0000000000000b02) \t\"S-0000000000000a01\"[2]\t\t# lid 6 lmc 0 "    \
	"\"MF0;leaf-1:MQM9701/U1\" lid 1 4xNDR\n"
#define SMALL "#\n" SW_HDR SW_P1 SW_P2 CA1 CA2

static int load_text(topo_graph **g, const char *text, topo_error *err)
{
	*g = topo_graph_new();
	assert_non_null(*g);
	return topo_load_ibnetdiscover_mem(*g, text, strlen(text), "t.txt", NULL, err);
}

static void test_small_fabric(void **state)
{
	topo_graph *g;
	topo_error err;
	int hca, sw;

	(void)state;
	assert_int_equal(load_text(&g, SMALL, &err), 0);
	assert_int_equal(topo_graph_count(g, TOPO_V_HOST), 2);
	assert_int_equal(topo_graph_count_switches(g, TOPO_LEVEL_LEAF), 1);
	assert_int_equal(topo_graph_count(g, TOPO_V_GROUP), 1);
	assert_int_equal(topo_graph_count_edges(g, TOPO_E_FABRIC), 2);
	assert_int_equal(topo_graph_nanomalies(g), 0);
	hca = topo_graph_find(g, TOPO_V_HCA, "node2/mlx5_0");
	assert_int_equal(topo_graph_vertex(g, hca)->lid, 6);
	assert_int_equal(topo_graph_vertex(g, hca)->rail, 0);
	assert_int_equal(hca_cable(g, hca, &sw)->port_b, 2);
	assert_string_equal(topo_graph_vertex(g, sw)->name, "leaf-1");
	topo_graph_free(g);
}

static void test_duplicate_hostname(void **state)
{
	/* node2's CA also says "node1 mlx5_0": two machines, one name */
	topo_graph *g;
	topo_error err;

	(void)state;
	{
		char full[2048];

		snprintf(full, sizeof(full), "%s%s%s", "#\n" SW_HDR SW_P1 SW_P2 CA1,
			 "\ncaguid=0x0000000000000b02\nCa\t1 \"H-0000000000000b02\"\t\t# \"node1 mlx5_0\"\n",
			 "[1](0000000000000b02) \t\"S-0000000000000a01\"[2]\t\t# lid 6 lmc 0 \"x\" lid 1 4xNDR\n");
		assert_int_equal(load_text(&g, full, &err), 0);
		assert_int_equal(topo_graph_count(g, TOPO_V_HOST), 0);
		assert_int_equal(count_anomalies(g, "duplicate-hostname", "node1"), 1);
		assert_non_null(strstr(find_anomaly(g, "duplicate-hostname", "node1")->text, "2 CAs"));
		topo_graph_free(g);
	}
}

typedef struct bad_case {
	const char *text;
	int line;
	const char *fragment;
} bad_case;

static void test_malformed(void **state)
{
	static const bad_case cases[] = {
		{ SW_P1, 1, "before any Switch, Ca or Rt header" },
		{ "#\n" SW_HDR "[1]\t\"H-0000000000000b01\"[1](0000000000000b01) \t\t# \"node1 mlx", 4,
		  "cut off" },
		{ "#\n" SW_HDR "[1]\t\"H-0000000000000b01\"[1](0000000000000b01) \t\t# \"node1 mlx5_0\" lid 5",
		  4, "cut off" },
		{ "#\n" SW_HDR "[1]\t\"H-0000000000000b0", 4, "cut off inside the far-end node name" },
		{ "#\n" SW_HDR SW_P1
		  "[7]\t\"H-0000000000000b02\"[1](0000000000000b02) \t\t# \"node2 mlx5_0\" lid 6 4xNDR\n" CA1 CA2,
		  5, "switch port 7 is beyond the switch's 4 ports" },
		{ "#\n" SW_HDR SW_P1
		  "[2]\t\"H-0000000000000b01\"[1](0000000000000b01) \t\t# \"node1 mlx5_0\" lid 5 4xNDR\n" CA1,
		  5, "port 1 is cabled twice" },
		{ "#\n" SW_HDR SW_P1 SW_P2 CA1 CA2
		  "\nswitchguid=0x0000000000000a01\n"
		  "Switch\t4 \"S-0000000000000a02\"\t\t# \"MF0;leaf-2:MQM9701/U1\" enhanced port 0 lid 2 lmc 0\n",
		  16, "switch GUID 0x0000000000000a01 is declared twice (first at line 3)" },
		{ "#\n" SW_HDR SW_P1 SW_P2 CA1 CA2
		  "\nswitchguid=0x0000000000000a02\n"
		  "Switch\t4 \"S-0000000000000a01\"\t\t# \"MF0;leaf-2:MQM9701/U1\" enhanced port 0 lid 2 lmc 0\n",
		  16, "node name \"S-0000000000000a01\" is declared twice (first at line 3)" },
		{ "switchguid=0xZZ01\n", 1, "malformed GUID" },
		{ "#\n" SW_HDR "[1]\t\"H-0000000000000b01\"[1](00000000000g0b01) \t\t# \"n m\" lid 5 4xNDR\n",
		  4, "malformed GUID" },
		{ "#\n" SW_HDR "[1]\t\"H-0000000000000b01\"[1](0000000000000b01) \t\t# \"n m\" lid 5 4xFOO\n",
		  4, "malformed link width/speed \"4xFOO\"" },
		{ "#\n" SW_HDR "[1]\t\"H-0000000000000b01\"[1](0000000000000b01) \t\t# \"n m\" lid 5 3xNDR\n",
		  4, "malformed link width/speed \"3xNDR\"" },
		{ "#\nHub\t4 \"X-1\"\t\t# \"hub\"\n", 2, "unknown node type \"Hub\"" },
		{ "#\n" SW_HDR SW_P1 SW_P2 CA1, 5, "which the file never declares (truncated file?)" },
		{ "#\n" SW_HDR "Switch\t4 \"S-0000000000000a02\"", 4, "no node description" },
		{ "#\nthis is not a fabric\n", 2, "not part of the ibnetdiscover format" },
		{ "# only comments\n\n", 0, "no Switch or Ca node found" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		topo_graph *g;
		topo_error err;
		char buf[700];

		assert_int_equal(load_text(&g, cases[i].text, &err), -1);
		topo_error_format(&err, buf, sizeof(buf));
		if (err.line != cases[i].line || !strstr(err.text, cases[i].fragment))
			fail_msg("case %zu: got \"%s\", want line %d and \"%s\"", i, buf, cases[i].line,
				 cases[i].fragment);
		assert_string_equal(err.source, "t.txt");
		topo_graph_free(g);
	}
}

static void test_nul_and_missing_file(void **state)
{
	static const char text[] = "#\nSwitch\t4 \"S-0000000000000a01\"\0\n";
	topo_graph *g = topo_graph_new();
	topo_error err;

	(void)state;
	assert_int_equal(topo_load_ibnetdiscover_mem(g, text, sizeof(text) - 1, "t.txt", NULL, &err), -1);
	assert_int_equal(err.line, 2);
	assert_non_null(strstr(err.text, "NUL byte"));
	assert_int_equal(topo_load_ibnetdiscover(g, FIXTURES_DIR "/fabrics/absent.txt", NULL, &err), -1);
	assert_int_equal(err.line, 0);
	assert_non_null(strstr(err.text, "cannot open"));
	topo_graph_free(g);
}

/* The fixture with its node records in reverse order. */
static char *reversed_records(size_t *len)
{
	FILE *fp = fopen(SUPERPOD, "rb");
	char *text, *out, *starts[4096];
	long size;
	int n = 0;
	size_t used = 0;

	assert_non_null(fp);
	fseek(fp, 0, SEEK_END);
	size = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	text = calloc((size_t)size + 2, 1);
	out = calloc((size_t)size + 4096, 1);
	assert_int_equal(fread(text, 1, (size_t)size, fp), (size_t)size);
	fclose(fp);
	starts[n++] = text;
	for (char *p = text; (p = strstr(p, "\n\n")) != NULL && n < 4096; p += 2) {
		p[1] = '\0';
		starts[n++] = p + 2;
	}
	for (int i = n - 1; i >= 0; i--) {
		size_t l = strlen(starts[i]);

		memcpy(out + used, starts[i], l);
		used += l;
		out[used++] = '\n';
	}
	free(text);
	*len = used;
	return out;
}

static void test_determinism(void **state)
{
	topo_graph *a = load_superpod(NULL), *b = load_superpod(NULL), *c = topo_graph_new();
	topo_error err;
	char why[256];
	size_t len;
	char *rev = reversed_records(&len);

	(void)state;
	assert_int_equal(topo_load_ibnetdiscover_mem(c, rev, len, "rev", NULL, &err), 0);
	free(rev);
	assert_int_equal(topo_graph_canonicalize(a), 0);
	assert_int_equal(topo_graph_canonicalize(b), 0);
	assert_int_equal(topo_graph_canonicalize(c), 0);
	if (!topo_graph_equal(a, b, why, sizeof(why)))
		fail_msg("two loads differ: %s", why);
	if (!topo_graph_equal(a, c, why, sizeof(why)))
		fail_msg("reversed records differ: %s", why);
	topo_graph_free(a);
	topo_graph_free(b);
	topo_graph_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_superpod_counts),
		cmocka_unit_test(test_superpod_switch),
		cmocka_unit_test(test_superpod_groups),
		cmocka_unit_test(test_superpod_anomalies),
		cmocka_unit_test(test_superpod_host),
		cmocka_unit_test(test_superpod_cable),
		cmocka_unit_test(test_host_pattern),
		cmocka_unit_test(test_small_fabric),
		cmocka_unit_test(test_duplicate_hostname),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_nul_and_missing_file),
		cmocka_unit_test(test_determinism),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
