/*
 * topo_fattree: generator of rail-optimized fat-tree fabrics (see topo_fattree.h).
 *
 * The generator does not build graph vertices itself: it invents the nodes
 * and cables a real fabric of that shape would show to ibnetdiscover (node
 * descriptions, GUIDs, LIDs, port numbers) and feeds them to the topo_fabric
 * builder. That way a generated fabric, the ibsim netlist written from it and
 * the graph discovered from that simulation all go through one piece of code.
 *
 * Naming (what the builder's default host pattern expects):
 *   leaf r of group g:  "MF0;SU<g>-LEAF-R<r>:MQM9700/U1"  (g 1-based, r 0-based)
 *   spine s:            "MF0;SPINE-<s>:MQM9700/U1"          (s 1-based, 2 digits)
 *   HCA r of host h:    "<prefix><h> mlx5_<r>"              (h 1-based, `digits` digits, default 4)
 * Ports: a leaf's host h (0-based in its group) is on port h+1, its up-links
 * follow; a spine's ports are filled in the order its up-links arrive.
 * Up-link u of leaf L (L = g * rails + r) goes to spine (L * up + u) % spines.
 *
 * When one spine would need more than 255 ports (e.g. 16k hosts x 8 rails)
 * and `spines` was left at 0, a third level is added, as in a k-ary fat tree:
 * leaves form pods of 32; pod p has `up` spines "POD<p>-SPINE-<u>", leaf
 * up-link u going to its pod's spine u; spine u of every pod has 32 up-links
 * to the cores "CORE-<u*32+j>", one port per pod.
 *
 * Everything is O(hosts x rails): no pairwise work, one pass per cable.
 */
#include "topo_fattree.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "topo_fabric.h"
#include "topo_num.h"
#include "topo_nvsmi.h"

#define SRC "<fattree>"

/* Deterministic GUID bases (the OUIs of real NVIDIA/Mellanox parts). */
#define LEAF_GUID_BASE 0xfc6a1c0300000000ull
#define SPINE_GUID_BASE 0xfc6a1c0310000000ull
#define CORE_GUID_BASE 0xfc6a1c0320000000ull
#define CA_GUID_BASE 0x946dae0300000000ull
#define AN_GUID_BASE 0x946dae03f0000000ull

/* Switch radix of a QM9700; larger when the spec needs more ports. */
#define SWITCH_MIN_PORTS 64
/* Most ports an InfiniBand switch (and the builder) allows. */
#define SWITCH_MAX_PORTS 255
/* Leaves per pod when a core level is needed (half a radix down, half up). */
#define POD_LEAVES (SWITCH_MIN_PORTS / 2)
/* The unicast LID space ends here; beyond it the generator leaves LIDs at 0. */
#define MAX_UNICAST_LID 0xbfff
/* Hard limits that keep every count well inside an int. */
#define MAX_TOTAL_HCAS (1 << 22)
#define MAX_PREFIX_LEN 40

static const char *const speed_names[] = { "SDR", "DDR", "QDR", "FDR", "EDR", "HDR", "NDR", "XDR" };

/* One group of one host on one rail, 4x NDR, hosts node0001..: the
 * defaults topo_fattree_parse() starts from (docs in topo_fattree.h). */
static const topo_fattree_spec default_spec = {
	.groups = 1, .hosts_per_group = 1, .rails = 1, .oversub = 1.0,
	.width = 4, .speed = "NDR", /* the cables */
	.host_prefix = "node", .digits = 4,
};

void topo_fattree_spec_init(topo_fattree_spec *spec)
{
	*spec = default_spec;
}

/* Up-links per leaf: ceil(hosts_per_group / oversub), at least 1. */
static int leaf_uplinks(const topo_fattree_spec *s)
{
	double up = ceil((double)s->hosts_per_group / s->oversub - 1e-9);

	if (up < 1)
		return 1;
	return up > INT_MAX ? INT_MAX : (int)up;
}

static int known_speed(const char *speed)
{
	for (size_t i = 0; speed && i < sizeof(speed_names) / sizeof(speed_names[0]); i++)
		if (strcmp(speed, speed_names[i]) == 0)
			return 1;
	return 0;
}

static int valid_prefix(const char *p)
{
	size_t n = p ? strlen(p) : 0;

	if (n == 0 || n > MAX_PREFIX_LEN)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)p[i]) && p[i] != '-' && p[i] != '_' && p[i] != '.')
			return 0;
	return 1;
}

/* Check a spec's ranges; shared by the parser and the builder. */
static int spec_check(const topo_fattree_spec *s, topo_error *err)
{
	long long hcas;

	if (s->groups < 1 || s->hosts_per_group < 1 || s->rails < 1) {
		topo_error_set(err, SRC, 0, "groups, hosts and rails must each be at least 1");
		return -1;
	}
	if (s->spines < 0 || s->gpus_per_host < 0 || s->sharp_spines < 0 || s->nvl_hosts < 0) {
		topo_error_set(err, SRC, 0, "spines, gpus, sharp and nvl must not be negative");
		return -1;
	}
	if (!(s->oversub >= 1.0 && s->oversub <= 1024.0)) {
		topo_error_set(err, SRC, 0, "oversub must be between 1 and 1024");
		return -1;
	}
	if (s->width != 1 && s->width != 2 && s->width != 4 && s->width != 8 && s->width != 12) {
		topo_error_set(err, SRC, 0, "width %d is not an InfiniBand link width (1, 2, 4, 8 or 12)",
			       s->width);
		return -1;
	}
	if (!known_speed(s->speed)) {
		topo_error_set(err, SRC, 0, "speed \"%s\" is not an InfiniBand speed (SDR ... XDR)",
			       s->speed ? s->speed : "");
		return -1;
	}
	if (s->digits < 1 || s->digits > 9) {
		topo_error_set(err, SRC, 0, "digits must be 1 to 9, not %d", s->digits);
		return -1;
	}
	if (!valid_prefix(s->host_prefix)) {
		topo_error_set(err, SRC, 0,
			       "host prefix must be 1 to %d letters, digits, '-', '_' or '.'",
			       MAX_PREFIX_LEN);
		return -1;
	}
	hcas = (long long)s->groups * s->hosts_per_group * s->rails;
	if (hcas > MAX_TOTAL_HCAS || s->spines > MAX_TOTAL_HCAS || s->gpus_per_host > 1024) {
		topo_error_set(err, SRC, 0, "fabric too large: %lld HCAs (at most %d)", hcas,
			       MAX_TOTAL_HCAS);
		return -1;
	}
	return 0;
}

/* ---- parsing "key=value,key=value" ---------------------------------------- */

/* Copy a "value" slice into buf as a string starting with a digit. */
static int value_copy(const char *v, size_t n, char *buf, size_t len)
{
	if (n == 0 || n >= len)
		return -1;
	memcpy(buf, v, n);
	buf[n] = '\0';
	return isdigit((unsigned char)buf[0]) ? 0 : -1;
}

static int parse_int(const char *v, size_t n, int *out)
{
	char buf[32];

	return value_copy(v, n, buf, sizeof(buf)) < 0 ? -1 : topo_parse_int(buf, 0, INT_MAX, out);
}

static int parse_double(const char *v, size_t n, double *out)
{
	char buf[32];

	return value_copy(v, n, buf, sizeof(buf)) < 0 ? -1 : topo_parse_double(buf, 0, DBL_MAX, out);
}

static const char *speed_lookup(const char *v, size_t n)
{
	for (size_t i = 0; i < sizeof(speed_names) / sizeof(speed_names[0]); i++)
		if (strlen(speed_names[i]) == n && strncasecmp(v, speed_names[i], n) == 0)
			return speed_names[i];
	return NULL;
}

/* Apply one "key=value" item. Returns 0, or -1 with err set. */
static int parse_item(const char *k, size_t kn, const char *v, size_t vn, topo_fattree_spec *spec,
		      topo_error *err)
{
	static const struct {
		const char *key;
		size_t off;
	} ints[] = {
		{ "groups", offsetof(topo_fattree_spec, groups) },
		{ "hosts", offsetof(topo_fattree_spec, hosts_per_group) },
		{ "rails", offsetof(topo_fattree_spec, rails) },
		{ "spines", offsetof(topo_fattree_spec, spines) },
		{ "gpus", offsetof(topo_fattree_spec, gpus_per_host) },
		{ "width", offsetof(topo_fattree_spec, width) },
		{ "digits", offsetof(topo_fattree_spec, digits) },
		{ "sharp", offsetof(topo_fattree_spec, sharp_spines) },
		{ "nvl", offsetof(topo_fattree_spec, nvl_hosts) },
	};

	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
		if (strlen(ints[i].key) != kn || strncmp(k, ints[i].key, kn) != 0)
			continue;
		if (parse_int(v, vn, (int *)((char *)spec + ints[i].off)) < 0) {
			topo_error_set(err, SRC, 0, "bad value \"%.*s\" for %s: expected a whole number",
				       (int)(vn > 32 ? 32 : vn), v, ints[i].key);
			return -1;
		}
		return 0;
	}
	if (kn == 7 && strncmp(k, "oversub", 7) == 0) {
		if (parse_double(v, vn, &spec->oversub) < 0) {
			topo_error_set(err, SRC, 0, "bad value \"%.*s\" for oversub: expected a number",
				       (int)(vn > 32 ? 32 : vn), v);
			return -1;
		}
		return 0;
	}
	if (kn == 5 && strncmp(k, "speed", 5) == 0) {
		if (!(spec->speed = speed_lookup(v, vn))) {
			topo_error_set(err, SRC, 0, "bad value \"%.*s\" for speed: expected SDR ... XDR",
				       (int)(vn > 32 ? 32 : vn), v);
			return -1;
		}
		return 0;
	}
	if (kn == 6 && strncmp(k, "prefix", 6) == 0) {
		if (vn == 0 || vn >= sizeof(spec->host_prefix_buf)) {
			topo_error_set(err, SRC, 0, "bad value for prefix: expected 1 to %d characters",
				       MAX_PREFIX_LEN);
			return -1;
		}
		memcpy(spec->host_prefix_buf, v, vn);
		spec->host_prefix_buf[vn] = '\0';
		spec->host_prefix = spec->host_prefix_buf;
		return 0;
	}
	topo_error_set(err, SRC, 0,
		       "unknown key \"%.*s\" (expected groups, hosts, rails, spines, oversub, gpus, "
		       "width, speed, prefix, digits, sharp or nvl)",
		       (int)(kn > 32 ? 32 : kn), k);
	return -1;
}

int topo_fattree_parse(const char *text, topo_fattree_spec *spec, topo_error *err)
{
	const char *p = text;

	topo_error_clear(err);
	if (!text || !*text) {
		topo_error_set(err, SRC, 0, "empty fat-tree spec");
		return -1;
	}
	while (*p) {
		const char *end = strchr(p, ',');
		const char *eq;
		size_t n = end ? (size_t)(end - p) : strlen(p);

		eq = memchr(p, '=', n);
		if (n == 0) {
			topo_error_set(err, SRC, 0, "empty item in fat-tree spec");
			return -1;
		}
		if (!eq || eq == p) {
			topo_error_set(err, SRC, 0, "item \"%.*s\" is not key=value",
				       (int)(n > 32 ? 32 : n), p);
			return -1;
		}
		if (parse_item(p, (size_t)(eq - p), eq + 1, n - (size_t)(eq - p) - 1, spec, err) < 0)
			return -1;
		if (!end)
			break;
		p = end + 1;
		if (!*p) {
			topo_error_set(err, SRC, 0, "empty item in fat-tree spec");
			return -1;
		}
	}
	return spec_check(spec, err);
}

/* ---- generation ------------------------------------------------------------ */

typedef struct gen {
	const topo_fattree_spec *s;
	topo_fabric *f;
	int up;         /* up-links per leaf */
	int nspines;
	int nleaves;
	int leaf_ports; /* nports of a leaf */
	int *spine_next;    /* next free port per spine */
	int spine_ports;    /* nports of every spine */
	int three_level;    /* pods of POD_LEAVES leaves under a core level */
	int npods;
	int ncores;
	int core_ports;
	int lids;           /* assign LIDs? */
	topo_error *err;
} gen;

static uint64_t leaf_guid(int l) { return LEAF_GUID_BASE + (uint64_t)l + 1; }
static uint64_t spine_guid(int s) { return SPINE_GUID_BASE + (uint64_t)s + 1; }
static uint64_t core_guid(int c) { return CORE_GUID_BASE + (uint64_t)c + 1; }
/* CA node GUID; its port p has GUID node + p, as ibsim lays them out. */
static uint64_t ca_guid(const gen *g, long host, int rail)
{
	return CA_GUID_BASE + ((uint64_t)host * (uint64_t)g->s->rails + (uint64_t)rail) * 2;
}

/* LIDs: switches 1..nswitches (leaves, then spines), then CA ports. */
static int leaf_lid(const gen *g, int l) { return g->lids ? 1 + l : 0; }
static int spine_lid(const gen *g, int s) { return g->lids ? 1 + g->nleaves + s : 0; }
static int core_lid(const gen *g, int c) { return g->lids ? 1 + g->nleaves + g->nspines + c : 0; }
static int ca_lid(const gen *g, long host, int rail)
{
	return g->lids ? (int)(1 + g->nleaves + g->nspines + g->ncores + host * g->s->rails + rail)
		       : 0;
}

static int add_switch(gen *g, uint64_t guid, int nports, int lid, const char *name)
{
	char desc[128];
	topo_fabric_node n = { 0 };

	snprintf(desc, sizeof(desc), "MF0;%s:MQM9700/U1", name);
	n.type = TOPO_FNODE_SWITCH;
	n.guid = guid;
	n.nports = nports;
	n.desc = desc;
	n.lid = lid;
	return topo_fabric_add_node(g->f, &n, 0, g->err);
}

static int add_nodes(gen *g)
{
	const topo_fattree_spec *s = g->s;
	char name[96];

	for (int l = 0; l < g->nleaves; l++) {
		snprintf(name, sizeof(name), "SU%d-LEAF-R%d", l / s->rails + 1, l % s->rails);
		if (add_switch(g, leaf_guid(l), g->leaf_ports, leaf_lid(g, l), name) < 0)
			return -1;
	}
	for (int sp = 0; sp < g->nspines; sp++) {
		if (g->three_level)
			snprintf(name, sizeof(name), "POD%d-SPINE-%02d", sp / g->up + 1, sp % g->up + 1);
		else
			snprintf(name, sizeof(name), "SPINE-%02d", sp + 1);
		if (add_switch(g, spine_guid(sp), g->spine_ports, spine_lid(g, sp), name) < 0)
			return -1;
	}
	for (int c = 0; c < g->ncores; c++) {
		snprintf(name, sizeof(name), "CORE-%04d", c + 1);
		if (add_switch(g, core_guid(c), g->core_ports, core_lid(g, c), name) < 0)
			return -1;
	}
	for (long h = 0; h < (long)s->groups * s->hosts_per_group; h++) {
		for (int r = 0; r < s->rails; r++) {
			topo_fabric_node n = { 0 };

			snprintf(name, sizeof(name), "%s%0*ld mlx5_%d", s->host_prefix, s->digits, h + 1, r);
			n.type = TOPO_FNODE_CA;
			n.guid = ca_guid(g, h, r);
			n.nports = 1;
			n.desc = name;
			if (topo_fabric_add_node(g->f, &n, 0, g->err) < 0)
				return -1;
		}
	}
	return 0;
}

static int add_cable(gen *g, uint64_t ga, int pa, uint64_t pga, int lida, uint64_t gb, int pb)
{
	topo_fabric_link k = { 0 };

	k.a.guid = ga;
	k.a.port = pa;
	k.a.port_guid = pga;
	k.a.lid = lida;
	k.b.guid = gb;
	k.b.port = pb;
	k.width = g->s->width;
	k.speed = g->s->speed;
	k.state = TOPO_LINK_ACTIVE;
	return topo_fabric_add_link(g->f, &k, 0, g->err);
}

static int add_cables(gen *g)
{
	const topo_fattree_spec *s = g->s;

	for (int l = 0; l < g->nleaves; l++) {
		int grp = l / s->rails, r = l % s->rails;

		for (int h = 0; h < s->hosts_per_group; h++) {
			long host = (long)grp * s->hosts_per_group + h;
			uint64_t ca = ca_guid(g, host, r);

			if (add_cable(g, ca, 1, ca + 1, ca_lid(g, host, r), leaf_guid(l), h + 1) < 0)
				return -1;
		}
		for (int u = 0; u < g->up; u++) {
			int sp = (int)(((long long)l * g->up + u) % g->nspines);

			if (g->three_level)
				sp = (l / POD_LEAVES) * g->up + u;
			if (add_cable(g, leaf_guid(l), s->hosts_per_group + 1 + u, 0, 0, spine_guid(sp),
				      g->spine_next[sp]++) < 0)
				return -1;
		}
	}
	/* pod spine (p, u), up-link j -> core u * POD_LEAVES + j, port p + 1 */
	for (int sp = 0; g->three_level && sp < g->nspines; sp++) {
		for (int j = 0; j < POD_LEAVES; j++) {
			int c = (sp % g->up) * POD_LEAVES + j;

			if (add_cable(g, spine_guid(sp), POD_LEAVES + 1 + j, 0, 0, core_guid(c),
				      sp / g->up + 1) < 0)
				return -1;
		}
	}
	return 0;
}

/* A SHARP aggregation node on the port after switch `guid`'s last cable. */
static int add_aggregation_node(gen *g, int idx, uint64_t sw, int port)
{
	topo_fabric_node n = { 0 };
	uint64_t guid = AN_GUID_BASE + (uint64_t)idx * 2;

	n.type = TOPO_FNODE_CA;
	n.guid = guid;
	n.nports = 1;
	n.desc = "Mellanox Technologies Aggregation Node";
	if (topo_fabric_add_node(g->f, &n, 0, g->err) < 0)
		return -1;
	return add_cable(g, guid, 1, guid + 1, 0, sw, port);
}

/* Every leaf and the first sharp_spines spines get an aggregation node. */
static int add_sharp(gen *g)
{
	int k = 0;

	if (g->s->sharp_spines <= 0)
		return 0;
	for (int l = 0; l < g->nleaves; l++)
		if (add_aggregation_node(g, k++, leaf_guid(l), g->s->hosts_per_group + g->up + 1) < 0)
			return -1;
	for (int sp = 0; sp < g->s->sharp_spines; sp++)
		if (add_aggregation_node(g, k++, spine_guid(sp),
					 g->three_level ? 2 * POD_LEAVES + 1 : g->spine_next[sp]++) < 0)
			return -1;
	return 0;
}

/* NVLink domains: runs of nvl_hosts consecutive hosts. */
static int add_nvlink_domains(topo_graph *graph, const topo_fattree_spec *s, topo_error *err)
{
	long nh = (long)s->groups * s->hosts_per_group;
	char name[96];
	int grp = -1;

	for (long h = 0; s->nvl_hosts > 0 && h < nh; h++) {
		int host;

		if (h % s->nvl_hosts == 0) {
			snprintf(name, sizeof(name), "nvl%ld", h / s->nvl_hosts + 1);
			grp = topo_graph_add_vertex(graph, TOPO_V_GROUP, name);
			if (grp < 0 || topo_graph_set_attr(graph, grp, TOPO_GROUP_KIND_ATTR, TOPO_GROUP_KIND_NVLINK) < 0)
				goto nomem;
		}
		snprintf(name, sizeof(name), "%s%0*ld", s->host_prefix, s->digits, h + 1);
		host = topo_graph_find(graph, TOPO_V_HOST, name);
		if (host < 0 || topo_graph_add_edge(graph, TOPO_E_MEMBER, grp, host) < 0)
			goto nomem;
	}
	return 0;
nomem:
	topo_error_set(err, SRC, 0, "cannot add NVLink domain %s", name);
	return -1;
}

/* GPUs: gpus_per_host parts per host, each tied (PCIe) to the HCA of the rail
 * it maps to (gpu i -> rail i * rails / gpus; one per rail when equal). */
static int add_gpus(topo_graph *graph, const topo_fattree_spec *s, topo_error *err)
{
	char name[96], local[32];

	for (long h = 0; s->gpus_per_host > 0 && h < (long)s->groups * s->hosts_per_group; h++) {
		int host;

		snprintf(name, sizeof(name), "%s%0*ld", s->host_prefix, s->digits, h + 1);
		if ((host = topo_graph_find(graph, TOPO_V_HOST, name)) < 0) {
			topo_error_set(err, SRC, 0, "generated host %s is missing from the graph", name);
			return -1;
		}
		for (int i = 0; i < s->gpus_per_host; i++) {
			int rail = (int)((long long)i * s->rails / s->gpus_per_host);
			int gpu, hca;

			snprintf(local, sizeof(local), "gpu%d", i);
			if ((gpu = topo_graph_add_part(graph, host, TOPO_V_GPU, local)) < 0)
				goto nomem;
			topo_graph_vertex_mut(graph, gpu)->index = i;
			snprintf(name, sizeof(name), "%s%0*ld/mlx5_%d", s->host_prefix, s->digits, h + 1, rail);
			if ((hca = topo_graph_find(graph, TOPO_V_HCA, name)) >= 0 &&
			    topo_graph_add_edge(graph, TOPO_E_PCIE, gpu, hca) < 0)
				goto nomem;
		}
	}
	return 0;
nomem:
	topo_error_set(err, SRC, 0, "out of memory while adding GPUs");
	return -1;
}

int topo_fattree_build(topo_graph *graph, const topo_fattree_spec *spec, topo_error *err)
{
	gen g = { 0 };
	int rc = -1;
	long long per_spine, nswitch_ca;

	topo_error_clear(err);
	if (spec_check(spec, err) < 0)
		return -1;
	g.s = spec;
	g.err = err;
	g.up = leaf_uplinks(spec);
	g.nspines = spec->spines ? spec->spines : g.up;
	g.nleaves = spec->groups * spec->rails;
	g.leaf_ports = spec->hosts_per_group + g.up + (spec->sharp_spines > 0);
	if (g.leaf_ports < SWITCH_MIN_PORTS)
		g.leaf_ports = SWITCH_MIN_PORTS;
	per_spine = ((long long)g.nleaves * g.up + g.nspines - 1) / g.nspines;
	if (per_spine > SWITCH_MAX_PORTS && spec->spines == 0 && g.up <= POD_LEAVES) {
		g.three_level = 1;
		g.npods = (g.nleaves + POD_LEAVES - 1) / POD_LEAVES;
		g.nspines = g.npods * g.up;
		g.ncores = g.up * POD_LEAVES;
		g.core_ports = g.npods < SWITCH_MIN_PORTS ? SWITCH_MIN_PORTS : g.npods;
		per_spine = 2 * POD_LEAVES;
	}
	if (spec->sharp_spines > g.nspines) {
		topo_error_set(err, SRC, 0, "sharp=%d but the fabric has only %d spines",
			       spec->sharp_spines, g.nspines);
		return -1;
	}
	per_spine += spec->sharp_spines > 0; /* the aggregation node's port */
	if (per_spine > SWITCH_MAX_PORTS || g.core_ports > SWITCH_MAX_PORTS) {
		topo_error_set(err, SRC, 0,
			       "fabric too large: a %s would need %lld ports (at most %d)",
			       g.three_level ? "core" : "spine",
			       g.three_level ? (long long)g.core_ports : per_spine, SWITCH_MAX_PORTS);
		return -1;
	}
	g.spine_ports = per_spine < SWITCH_MIN_PORTS ? SWITCH_MIN_PORTS : (int)per_spine;
	nswitch_ca = (long long)g.nleaves + g.nspines + g.ncores +
		     (long long)spec->groups * spec->hosts_per_group * spec->rails;
	g.lids = nswitch_ca <= MAX_UNICAST_LID;

	g.spine_next = malloc((size_t)g.nspines * sizeof(*g.spine_next));
	if (!g.spine_next) {
		topo_error_set(err, SRC, 0, "out of memory");
		return -1;
	}
	for (int i = 0; i < g.nspines; i++)
		g.spine_next[i] = 1;
	g.f = topo_fabric_new(graph, NULL, SRC, err);
	if (!g.f)
		goto out;
	if (add_nodes(&g) < 0 || add_cables(&g) < 0 || add_sharp(&g) < 0 ||
	    topo_fabric_finish(g.f, err) < 0)
		goto out;
	rc = add_gpus(graph, spec, err);
	if (rc == 0)
		rc = add_nvlink_domains(graph, spec, err);
out:
	if (g.f)
		topo_fabric_free(g.f);
	free(g.spine_next);
	return rc;
}
