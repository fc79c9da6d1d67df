/*
 * topo_graph: storage for the cluster graph (see topo_graph.h).
 *
 * Vertices and edges live in growable arrays indexed by id. A hash table on
 * (kind, name) gives O(1) lookups, which loaders rely on when a 16k-host
 * fabric mentions the same switch thousands of times. Incidence lists are a
 * CSR built lazily on first use after a change.
 */
#include "topo_graph.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo_alloc.h"
#include "topo_hostlist.h"
#include "topo_num.h"

struct topo_graph {
	topo_vertex *v;
	size_t nv, cap_v;
	topo_edge *e;
	size_t ne, cap_e;
	topo_anomaly *an;
	size_t nan, cap_an;

	int *slots; /* hash of vertex ids by (kind, name); -1 = empty */
	size_t nslots;

	int *inc_off; /* CSR incidence: edges of v are inc_edges[inc_off[v]..inc_off[v+1]) */
	int *inc_edges;
	int inc_valid;
};

static const char *const vkind_names[] = { "host", "gpu", "hca", "numa", "switch", "group" };
static const char *const ekind_names[] = { "fabric", "pcie", "member" };
static const char *const level_names[] = { "unknown", "leaf", "spine", "core" };
static const char *const ll_names[] = { "unknown", "ib", "eth" };
static const char *const state_names[] = { "unknown", "active", "down" };

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static int parse_name(const char *s, const char *const *names, size_t n)
{
	for (size_t i = 0; s && i < n; i++)
		if (strcmp(s, names[i]) == 0)
			return (int)i;
	return -1;
}

const char *topo_vkind_name(topo_vkind k) { return (unsigned)k < NELEM(vkind_names) ? vkind_names[k] : "?"; }
const char *topo_ekind_name(topo_ekind k) { return (unsigned)k < NELEM(ekind_names) ? ekind_names[k] : "?"; }
const char *topo_level_name(topo_level l) { return (unsigned)l < NELEM(level_names) ? level_names[l] : "?"; }
const char *topo_link_layer_name(topo_link_layer l) { return (unsigned)l < NELEM(ll_names) ? ll_names[l] : "?"; }
const char *topo_link_state_name(topo_link_state s) { return (unsigned)s < NELEM(state_names) ? state_names[s] : "?"; }
int topo_vkind_parse(const char *s) { return parse_name(s, vkind_names, NELEM(vkind_names)); }
int topo_ekind_parse(const char *s) { return parse_name(s, ekind_names, NELEM(ekind_names)); }
int topo_level_parse(const char *s) { return parse_name(s, level_names, NELEM(level_names)); }
int topo_link_layer_parse(const char *s) { return parse_name(s, ll_names, NELEM(ll_names)); }
int topo_link_state_parse(const char *s) { return parse_name(s, state_names, NELEM(state_names)); }

static uint64_t hash_key(topo_vkind kind, const char *name)
{
	uint64_t h = 1469598103934665603ull ^ (uint64_t)kind;

	for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
		h ^= *p;
		h *= 1099511628211ull;
	}
	return h;
}

/* Insert id into the hash (the table must have a free slot). */
static void hash_put(topo_graph *g, int id)
{
	size_t i = hash_key(g->v[id].kind, g->v[id].name) & (g->nslots - 1);

	while (g->slots[i] >= 0)
		i = (i + 1) & (g->nslots - 1);
	g->slots[i] = id;
}

static int hash_rebuild(topo_graph *g, size_t nslots)
{
	int *slots = malloc(nslots * sizeof(*slots));

	if (!slots)
		return -1;
	free(g->slots);
	g->slots = slots;
	g->nslots = nslots;
	for (size_t i = 0; i < nslots; i++)
		slots[i] = -1;
	for (size_t id = 0; id < g->nv; id++)
		hash_put(g, (int)id);
	return 0;
}

topo_graph *topo_graph_new(void)
{
	topo_graph *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	if (hash_rebuild(g, 256) < 0) {
		free(g);
		return NULL;
	}
	return g;
}

static void vertex_free(topo_vertex *v)
{
	free(v->name);
	free(v->device);
	free(v->netdev);
	free(v->pci_busid);
	free(v->cpuset);
	free(v->desc);
	for (int i = 0; i < v->nattrs; i++) {
		free(v->attrs[i].key);
		free(v->attrs[i].value);
	}
	free(v->attrs);
}

void topo_graph_free(topo_graph *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->nv; i++)
		vertex_free(&g->v[i]);
	for (size_t i = 0; i < g->nan; i++) {
		free(g->an[i].kind);
		free(g->an[i].subject);
		free(g->an[i].text);
	}
	free(g->v);
	free(g->e);
	free(g->an);
	free(g->slots);
	free(g->inc_off);
	free(g->inc_edges);
	free(g);
}

int topo_graph_find(const topo_graph *g, topo_vkind kind, const char *name)
{
	size_t i = hash_key(kind, name) & (g->nslots - 1);

	for (; g->slots[i] >= 0; i = (i + 1) & (g->nslots - 1)) {
		const topo_vertex *v = &g->v[g->slots[i]];

		if (v->kind == kind && strcmp(v->name, name) == 0)
			return g->slots[i];
	}
	return -1;
}

int topo_graph_add_vertex(topo_graph *g, topo_vkind kind, const char *name)
{
	topo_vertex *v;
	char *copy;

	if ((unsigned)kind >= TOPO_V_NKINDS || !name || topo_graph_find(g, kind, name) >= 0)
		return -1;
	if ((g->nv + 1) * 2 > g->nslots && hash_rebuild(g, g->nslots * 2) < 0)
		return -1;
	if (topo_grow(&g->v, &g->cap_v, g->nv + 1, sizeof(*g->v), 64) < 0)
		return -1;
	copy = strdup(name);
	if (!copy)
		return -1;
	v = &g->v[g->nv];
	memset(v, 0, sizeof(*v));
	v->kind = kind;
	v->name = copy;
	v->host = -1;
	v->index = -1;
	v->numa = -1;
	v->rail = -1;
	hash_put(g, (int)g->nv);
	g->inc_valid = 0;
	return (int)g->nv++;
}

int topo_graph_add_part(topo_graph *g, int host, topo_vkind kind, const char *local)
{
	char name[512];
	int id;

	if (host < 0 || (size_t)host >= g->nv || g->v[host].kind != TOPO_V_HOST)
		return -1;
	if (snprintf(name, sizeof(name), "%s/%s", g->v[host].name, local) >= (int)sizeof(name))
		return -1;
	id = topo_graph_add_vertex(g, kind, name);
	if (id < 0)
		return -1;
	g->v[id].host = host;
	if (topo_graph_add_edge(g, TOPO_E_MEMBER, host, id) < 0)
		return -1;
	return id;
}

int topo_graph_add_edge(topo_graph *g, topo_ekind kind, int a, int b)
{
	topo_edge *e;

	if ((unsigned)kind >= TOPO_E_NKINDS || a < 0 || b < 0 || (size_t)a >= g->nv ||
	    (size_t)b >= g->nv)
		return -1;
	if (topo_grow(&g->e, &g->cap_e, g->ne + 1, sizeof(*g->e), 64) < 0)
		return -1;
	e = &g->e[g->ne];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->a = a;
	e->b = b;
	g->inc_valid = 0;
	return (int)g->ne++;
}

double topo_lane_gbps(const char *speed)
{
	static const struct {
		const char *name;
		double gbps;
	} rates[] = {
		{ "SDR", 2.5 }, { "DDR", 5 }, { "QDR", 10 }, { "FDR10", 10 }, { "FDR", 14 },
		{ "EDR", 25 },  { "HDR", 50 }, { "NDR", 100 }, { "XDR", 200 },
	};
	const char *end;
	double g;

	if (!speed || !*speed)
		return 0;
	for (size_t i = 0; i < NELEM(rates); i++)
		if (strcmp(speed, rates[i].name) == 0)
			return rates[i].gbps;
	/* Ethernet style: "25G", "100G" */
	if (topo_parse_double_prefix(speed, 0, HUGE_VAL, &g, &end) == 0 &&
	    (*end == 'G' || *end == 'g') && end[1] == '\0' && g > 0)
		return g;
	return 0;
}

void topo_edge_set_rate(topo_edge *e, int width, const char *speed)
{
	e->width = width;
	snprintf(e->speed, sizeof(e->speed), "%s", speed ? speed : "");
	e->gbps = width * topo_lane_gbps(e->speed);
}

size_t topo_graph_nvertices(const topo_graph *g) { return g->nv; }
size_t topo_graph_nedges(const topo_graph *g) { return g->ne; }

const topo_vertex *topo_graph_vertex(const topo_graph *g, int id)
{
	return id >= 0 && (size_t)id < g->nv ? &g->v[id] : NULL;
}

topo_vertex *topo_graph_vertex_mut(topo_graph *g, int id)
{
	return id >= 0 && (size_t)id < g->nv ? &g->v[id] : NULL;
}

const topo_edge *topo_graph_edge(const topo_graph *g, int id)
{
	return id >= 0 && (size_t)id < g->ne ? &g->e[id] : NULL;
}

topo_edge *topo_graph_edge_mut(topo_graph *g, int id)
{
	if (id < 0 || (size_t)id >= g->ne)
		return NULL;
	g->inc_valid = 0; /* the caller may move the edge's ends */
	return &g->e[id];
}

int topo_set_str(char **field, const char *s)
{
	char *copy = NULL;

	if (s && !(copy = strdup(s)))
		return -1;
	free(*field);
	*field = copy;
	return 0;
}

int topo_graph_set_attr(topo_graph *g, int id, const char *key, const char *value)
{
	topo_vertex *v = topo_graph_vertex_mut(g, id);
	topo_attr *a;

	if (!v || !key || !value)
		return -1;
	for (int i = 0; i < v->nattrs; i++)
		if (strcmp(v->attrs[i].key, key) == 0)
			return topo_set_str(&v->attrs[i].value, value);
	a = realloc(v->attrs, (v->nattrs + 1) * sizeof(*a));
	if (!a)
		return -1;
	v->attrs = a;
	a = &v->attrs[v->nattrs];
	a->key = strdup(key);
	a->value = strdup(value);
	if (!a->key || !a->value) {
		free(a->key);
		free(a->value);
		return -1;
	}
	v->nattrs++;
	return 0;
}

const char *topo_graph_get_attr(const topo_graph *g, int id, const char *key)
{
	const topo_vertex *v = topo_graph_vertex(g, id);

	for (int i = 0; v && i < v->nattrs; i++)
		if (strcmp(v->attrs[i].key, key) == 0)
			return v->attrs[i].value;
	return NULL;
}

/* Build the incidence CSR; const-cast because it is a cache. */
static int incidence_build(topo_graph *g)
{
	int *off = calloc(g->nv + 1, sizeof(*off));
	int *edges = malloc((2 * g->ne + 1) * sizeof(*edges));
	int *fill;

	if (!off || !edges) {
		free(off);
		free(edges);
		return -1;
	}
	for (size_t i = 0; i < g->ne; i++) {
		off[g->e[i].a + 1]++;
		if (g->e[i].b != g->e[i].a)
			off[g->e[i].b + 1]++;
	}
	for (size_t i = 0; i < g->nv; i++)
		off[i + 1] += off[i];
	fill = calloc(g->nv + 1, sizeof(*fill));
	if (!fill) {
		free(off);
		free(edges);
		return -1;
	}
	for (size_t i = 0; i < g->ne; i++) {
		edges[off[g->e[i].a] + fill[g->e[i].a]++] = (int)i;
		if (g->e[i].b != g->e[i].a)
			edges[off[g->e[i].b] + fill[g->e[i].b]++] = (int)i;
	}
	free(fill);
	free(g->inc_off);
	free(g->inc_edges);
	g->inc_off = off;
	g->inc_edges = edges;
	g->inc_valid = 1;
	return 0;
}

const int *topo_graph_incident(const topo_graph *cg, int v, int *count)
{
	topo_graph *g = (topo_graph *)cg;

	*count = 0;
	if (v < 0 || (size_t)v >= g->nv)
		return NULL;
	if (!g->inc_valid && incidence_build(g) < 0)
		return NULL;
	*count = g->inc_off[v + 1] - g->inc_off[v];
	return &g->inc_edges[g->inc_off[v]];
}

int topo_graph_next_member(const topo_graph *g, int container, topo_vkind kind, int *it)
{
	int n;
	const int *inc = topo_graph_incident(g, container, &n);

	while (inc && *it < n) {
		const topo_edge *e = topo_graph_edge(g, inc[(*it)++]);

		if (e->kind == TOPO_E_MEMBER && e->a == container && e->b != container &&
		    (kind == TOPO_V_NKINDS || topo_graph_vertex(g, e->b)->kind == kind))
			return e->b;
	}
	return -1;
}

int topo_graph_count_members(const topo_graph *g, int container, topo_vkind kind)
{
	int k = 0;

	for (int it = 0; topo_graph_next_member(g, container, kind, &it) >= 0;)
		k++;
	return k;
}

int topo_graph_group_of(const topo_graph *g, int host)
{
	int n, best = -1;
	const int *inc = topo_graph_incident(g, host, &n);

	for (int i = 0; inc && i < n; i++) {
		const topo_edge *e = topo_graph_edge(g, inc[i]);
		const topo_vertex *c = topo_graph_vertex(g, e->a);

		if (e->kind == TOPO_E_MEMBER && e->b == host && e->a != host &&
		    c->kind == TOPO_V_GROUP &&
		    (best < 0 || topo_hostname_cmp(c->name, topo_graph_vertex(g, best)->name) < 0))
			best = e->a;
	}
	return best;
}

int topo_graph_add_anomaly(topo_graph *g, const char *kind, const char *subject,
			   const char *fmt, ...)
{
	char text[TOPO_ERROR_TEXT_LEN];
	topo_anomaly *a;
	va_list ap;

	if (topo_grow(&g->an, &g->cap_an, g->nan + 1, sizeof(*g->an), 64) < 0)
		return -1;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	a = &g->an[g->nan];
	a->kind = strdup(kind);
	a->subject = strdup(subject ? subject : "");
	a->text = strdup(text);
	if (!a->kind || !a->subject || !a->text) {
		free(a->kind);
		free(a->subject);
		free(a->text);
		return -1;
	}
	g->nan++;
	return 0;
}

size_t topo_graph_nanomalies(const topo_graph *g) { return g->nan; }

const topo_anomaly *topo_graph_anomaly(const topo_graph *g, size_t i)
{
	return i < g->nan ? &g->an[i] : NULL;
}

size_t topo_graph_count(const topo_graph *g, topo_vkind kind)
{
	size_t n = 0;

	for (size_t i = 0; i < g->nv; i++)
		n += g->v[i].kind == kind;
	return n;
}

size_t topo_graph_count_switches(const topo_graph *g, topo_level level)
{
	size_t n = 0;

	for (size_t i = 0; i < g->nv; i++)
		n += g->v[i].kind == TOPO_V_SWITCH && g->v[i].level == level;
	return n;
}

size_t topo_graph_count_edges(const topo_graph *g, topo_ekind kind)
{
	size_t n = 0;

	for (size_t i = 0; i < g->ne; i++)
		n += g->e[i].kind == kind;
	return n;
}

/* ---- canonical order ---------------------------------------------------- */

static int cmp_vertex(const void *pa, const void *pb)
{
	const topo_vertex *a = pa, *b = pb;

	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	return strcmp(a->name, b->name);
}

static int cmp_int(int a, int b) { return (a > b) - (a < b); }

static int cmp_edge(const void *pa, const void *pb)
{
	const topo_edge *a = pa, *b = pb;
	int c;

	if ((c = cmp_int(a->kind, b->kind)) || (c = cmp_int(a->a, b->a)) ||
	    (c = cmp_int(a->b, b->b)) || (c = cmp_int(a->port_a, b->port_a)))
		return c;
	return cmp_int(a->port_b, b->port_b);
}

static int cmp_attr(const void *pa, const void *pb)
{
	return strcmp(((const topo_attr *)pa)->key, ((const topo_attr *)pb)->key);
}

static int cmp_anomaly(const void *pa, const void *pb)
{
	const topo_anomaly *a = pa, *b = pb;
	int c;

	if ((c = strcmp(a->kind, b->kind)) || (c = strcmp(a->subject, b->subject)))
		return c;
	return strcmp(a->text, b->text);
}

/* Undirected edges (fabric, pcie) are stored with the smaller id first so the
 * same cable discovered from either end compares equal. */
static void edge_orient(topo_edge *e)
{
	if (e->kind != TOPO_E_MEMBER && e->a > e->b) {
		int t = e->a, tp = e->port_a;

		e->a = e->b;
		e->b = t;
		e->port_a = e->port_b;
		e->port_b = tp;
	}
}

typedef struct vref {
	const topo_vertex *v;
	int old;
} vref;

static int cmp_vref(const void *pa, const void *pb)
{
	return cmp_vertex(((const vref *)pa)->v, ((const vref *)pb)->v);
}

int topo_graph_canonicalize(topo_graph *g)
{
	vref *order = malloc((g->nv + 1) * sizeof(*order));
	int *newid = malloc((g->nv + 1) * sizeof(*newid));
	topo_vertex *sorted = malloc((g->nv + 1) * sizeof(*sorted));
	size_t i;

	if (!order || !newid || !sorted) {
		free(order);
		free(newid);
		free(sorted);
		return -1;
	}
	for (i = 0; i < g->nv; i++)
		order[i] = (vref){ &g->v[i], (int)i };
	qsort(order, g->nv, sizeof(*order), cmp_vref);
	for (i = 0; i < g->nv; i++) {
		newid[order[i].old] = (int)i;
		sorted[i] = *order[i].v;
	}
	for (i = 0; i < g->nv; i++) {
		topo_vertex *v = &sorted[i];

		if (v->host >= 0)
			v->host = newid[v->host];
		if (v->nattrs > 1)
			qsort(v->attrs, v->nattrs, sizeof(*v->attrs), cmp_attr);
	}
	free(g->v);
	g->v = sorted;
	g->cap_v = g->nv + 1;
	for (i = 0; i < g->ne; i++) {
		g->e[i].a = newid[g->e[i].a];
		g->e[i].b = newid[g->e[i].b];
		edge_orient(&g->e[i]);
	}
	if (g->ne) /* qsort's base must not be NULL, even for 0 elements */
		qsort(g->e, g->ne, sizeof(*g->e), cmp_edge);
	if (g->nan)
		qsort(g->an, g->nan, sizeof(*g->an), cmp_anomaly);
	free(order);
	free(newid);
	g->inc_valid = 0;
	return hash_rebuild(g, g->nslots);
}

/* ---- equality ------------------------------------------------------------ */

static int str_eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

#define DIFF(...)                                   \
	do {                                        \
		if (why)                            \
			snprintf(why, len, __VA_ARGS__); \
		return 0;                           \
	} while (0)

static int vertex_equal(const topo_vertex *x, const topo_vertex *y, char *why, size_t len)
{
	const char *sx[] = { x->device, x->netdev, x->pci_busid, x->cpuset, x->desc };
	const char *sy[] = { y->device, y->netdev, y->pci_busid, y->cpuset, y->desc };
	static const char *const sn[] = { "device", "netdev", "pci_busid", "cpuset", "desc" };

	if (x->kind != y->kind || strcmp(x->name, y->name) != 0)
		DIFF("vertex %s %s vs %s %s", topo_vkind_name(x->kind), x->name,
		     topo_vkind_name(y->kind), y->name);
	if (x->host != y->host || x->index != y->index || x->numa != y->numa ||
	    x->rail != y->rail || x->guid != y->guid || x->lid != y->lid ||
	    x->port != y->port || x->nports != y->nports || x->level != y->level ||
	    x->caps != y->caps || x->link_layer != y->link_layer)
		DIFF("vertex %s: a numeric field differs", x->name);
	for (size_t i = 0; i < NELEM(sn); i++)
		if (!str_eq(sx[i], sy[i]))
			DIFF("vertex %s: %s \"%s\" vs \"%s\"", x->name, sn[i], sx[i] ? sx[i] : "",
			     sy[i] ? sy[i] : "");
	if (x->nattrs != y->nattrs)
		DIFF("vertex %s: %d vs %d attributes", x->name, x->nattrs, y->nattrs);
	for (int i = 0; i < x->nattrs; i++)
		if (!str_eq(x->attrs[i].key, y->attrs[i].key) ||
		    !str_eq(x->attrs[i].value, y->attrs[i].value))
			DIFF("vertex %s: attribute %s differs", x->name, x->attrs[i].key);
	return 1;
}

int topo_graph_equal(const topo_graph *a, const topo_graph *b, char *why, size_t len)
{
	if (a->nv != b->nv)
		DIFF("%zu vs %zu vertices", a->nv, b->nv);
	if (a->ne != b->ne)
		DIFF("%zu vs %zu edges", a->ne, b->ne);
	if (a->nan != b->nan)
		DIFF("%zu vs %zu anomalies", a->nan, b->nan);
	for (size_t i = 0; i < a->nv; i++)
		if (!vertex_equal(&a->v[i], &b->v[i], why, len))
			return 0;
	for (size_t i = 0; i < a->ne; i++) {
		const topo_edge *x = &a->e[i], *y = &b->e[i];

		if (x->kind != y->kind || x->a != y->a || x->b != y->b || x->port_a != y->port_a ||
		    x->port_b != y->port_b || x->width != y->width ||
		    strcmp(x->speed, y->speed) != 0 || x->gbps != y->gbps ||
		    x->state != y->state || x->distance != y->distance)
			DIFF("edge %zu (%s %s - %s) differs", i, topo_ekind_name(x->kind),
			     a->v[x->a].name, a->v[x->b].name);
	}
	for (size_t i = 0; i < a->nan; i++)
		if (cmp_anomaly(&a->an[i], &b->an[i]) != 0)
			DIFF("anomaly %zu (%s %s) differs", i, a->an[i].kind, a->an[i].subject);
	return 1;
}
