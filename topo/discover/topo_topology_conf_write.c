/*
 * topo_topology_conf_write: writing Slurm's topology.conf from a topo_graph
 * (see topo_write_topology_conf() in topo_topology_conf.h for the rules).
 *
 * The work is deciding where each host goes. A host's leaves are the switches
 * cabled to the host itself (graphs read from topology.conf) or to its HCAs
 * (discovered fabrics). One leaf: the host goes under it. Several leaves, one
 * per rail: no single switch holds it, so its scalable unit (group) stands in
 * as a pseudo-switch and absorbs the group's rail leaves. The levels above are
 * found by a breadth-first walk upward from that leaf level; the edge between
 * two listed switches points up when the upper one has a higher level (or,
 * with unknown levels, is further from the hosts).
 */
#include "topo_topology_conf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "topo_alloc.h"
#include "topo_hostlist.h"
#include "topo_nvsmi.h"

typedef struct intvec {
	int *v;
	size_t n, cap;
} intvec;

static int iv_push(intvec *a, int x)
{
	if (topo_grow(&a->v, &a->cap, a->n + 1, sizeof(*a->v), 16))
		return -1;
	a->v[a->n++] = x;
	return 0;
}

/* (container, member) pairs, sorted into per-container ranges. */
typedef struct pairs {
	int *a, *b;
	size_t n, cap;
	int *start; /* after index_pairs: members of c are b[start[c]..start[c+1]) */
} pairs;

static int pr_push(pairs *p, int a, int b)
{
	if (p->n == p->cap) {
		size_t ncap = p->cap ? p->cap * 2 : 64;
		int *na = realloc(p->a, ncap * sizeof(int)), *nb;

		if (!na)
			return -1;
		p->a = na;
		nb = realloc(p->b, ncap * sizeof(int));
		if (!nb)
			return -1;
		p->b = nb;
		p->cap = ncap;
	}
	p->a[p->n] = a;
	p->b[p->n++] = b;
	return 0;
}

/* Counting sort by container, dropping repeated pairs (first seen kept). */
static int index_pairs(pairs *p, size_t nv)
{
	int *start = calloc(nv + 2, sizeof(int));
	int *nb = malloc((p->n + 1) * sizeof(int)), *fill = calloc(nv + 1, sizeof(int));
	int *seen = calloc(nv + 1, sizeof(int));
	size_t m = 0;

	if (!start || !nb || !fill || !seen) {
		free(start);
		free(nb);
		free(fill);
		free(seen);
		return -1;
	}
	for (size_t i = 0; i < p->n; i++)
		start[p->a[i] + 1]++;
	for (size_t c = 0; c < nv; c++)
		start[c + 1] += start[c];
	for (size_t i = 0; i < p->n; i++)
		nb[start[p->a[i]] + fill[p->a[i]]++] = p->b[i];
	for (size_t c = 0; c < nv; c++) {
		int s = start[c], e = start[c + 1];

		start[c] = (int)m;
		for (int i = s; i < e; i++)
			if (seen[nb[i]] != (int)c + 1) {
				seen[nb[i]] = (int)c + 1;
				nb[m++] = nb[i];
			}
	}
	start[nv] = (int)m;
	free(fill);
	free(seen);
	free(p->b);
	p->b = nb;
	p->n = m;
	p->start = start;
	return 0;
}

static void pr_free(pairs *p)
{
	free(p->a);
	free(p->b);
	free(p->start);
}

typedef struct wctx {
	const topo_graph *g;
	topo_error *err;
	size_t nv;
	int *place;     /* host -> switch or group it is listed under, -1 */
	int *stamp;     /* scratch marks, compared against gen */
	int gen;
	char *listed;   /* leaf-level entry: has hosts placed under it */
	char *absorbed; /* rail leaf standing behind a group */
	int *d;         /* tree: steps up from the leaf level, -1 if not above it */
	long *key;      /* tree: order of levels */
	pairs rails;    /* (group, its rail leaves) */
	intvec unplaced;
	intvec tmp;
	int used_groups;
	int yaml;       /* topology.yaml entries instead of topology.conf lines */
} wctx;

static const topo_vertex *V(const wctx *w, int id)
{
	return topo_graph_vertex(w->g, id);
}

static int wfail_oom(wctx *w)
{
	topo_error_set(w->err, "", 0, "out of memory writing topology.conf");
	return -1;
}

/* The distinct switches cabled to host h or to its parts, into w->tmp. */
static int host_leaves(wctx *w, int h)
{
	int n;
	const int *inc;

	w->gen++;
	w->tmp.n = 0;
	inc = topo_graph_incident(w->g, h, &n);
	for (int i = 0; i < n; i++) {
		const topo_edge *e = topo_graph_edge(w->g, inc[i]);
		int o = topo_edge_other(e, h), m;
		const int *pinc;

		if (e->kind == TOPO_E_FABRIC && V(w, o)->kind == TOPO_V_SWITCH &&
		    w->stamp[o] != w->gen) {
			w->stamp[o] = w->gen;
			if (iv_push(&w->tmp, o) < 0)
				return -1;
		}
		if (e->kind != TOPO_E_MEMBER || e->a != h)
			continue;
		pinc = topo_graph_incident(w->g, o, &m);
		for (int j = 0; j < m; j++) {
			const topo_edge *f = topo_graph_edge(w->g, pinc[j]);
			int s = topo_edge_other(f, o);

			if (f->kind == TOPO_E_FABRIC && V(w, s)->kind == TOPO_V_SWITCH &&
			    w->stamp[s] != w->gen) {
				w->stamp[s] = w->gen;
				if (iv_push(&w->tmp, s) < 0)
					return -1;
			}
		}
	}
	return 0;
}

/* The group holding host h (the first by name if several), or -1. With
 * nvlink set (block placement) its NVLink domain, the innermost group, comes
 * first; without, NVLink domains are not fabric groups and are ignored. */
static int group_of(const wctx *w, int h, int nvlink)
{
	int n, best = -1, best_nvl = 0;
	const int *inc = topo_graph_incident(w->g, h, &n);

	for (int i = 0; i < n; i++) {
		const topo_edge *e = topo_graph_edge(w->g, inc[i]);
		int nvl;

		if (e->kind != TOPO_E_MEMBER || e->b != h || V(w, e->a)->kind != TOPO_V_GROUP)
			continue;
		nvl = topo_group_is_nvlink(w->g, e->a);
		if (nvl && !nvlink)
			continue;
		if (best < 0 || nvl > best_nvl ||
		    (nvl == best_nvl && topo_hostname_cmp(V(w, e->a)->name, V(w, best)->name) < 0)) {
			best = e->a;
			best_nvl = nvl;
		}
	}
	return best;
}

/* Does group grp have several member switches (rail leaves), `leaf` among them? */
static int is_rail_leaf_of(const wctx *w, int grp, int leaf)
{
	int nsw = 0, found = 0;

	for (int it = 0, sw; (sw = topo_graph_next_member(w->g, grp, TOPO_V_SWITCH, &it)) >= 0;) {
		nsw++;
		found |= sw == leaf;
	}
	return found && nsw > 1;
}

/* Tree placement (and block placement without groups): one leaf -> that
 * leaf; several leaves -> the host's group, which absorbs those leaves. A
 * host left with a single cable into one of its rail-optimized group's rail
 * leaves still belongs to the group, not to that one rail. */
static int place_by_leaves(wctx *w)
{
	for (size_t h = 0; h < w->nv; h++) {
		int grp;

		if (V(w, (int)h)->kind != TOPO_V_HOST)
			continue;
		if (host_leaves(w, (int)h) < 0)
			return wfail_oom(w);
		if (w->tmp.n == 0) {
			if (iv_push(&w->unplaced, (int)h) < 0)
				return wfail_oom(w);
			continue;
		}
		grp = group_of(w, (int)h, 0);
		if (w->tmp.n == 1 && (grp < 0 || !is_rail_leaf_of(w, grp, w->tmp.v[0]))) {
			w->place[h] = w->tmp.v[0];
			continue;
		}
		if (grp < 0) {
			topo_error_set(w->err, "", 0,
				       "host %s is cabled to %zu leaf switches and belongs to no "
				       "group, so it fits under no single switch",
				       V(w, (int)h)->name, w->tmp.n);
			return -1;
		}
		w->place[h] = grp;
		w->used_groups = 1;
		for (size_t i = 0; i < w->tmp.n; i++)
			if (pr_push(&w->rails, grp, w->tmp.v[i]) < 0)
				return wfail_oom(w);
	}
	return 0;
}

/* Block placement when the graph has groups: each host in its group. */
static int place_by_groups(wctx *w)
{
	for (size_t h = 0; h < w->nv; h++) {
		if (V(w, (int)h)->kind != TOPO_V_HOST)
			continue;
		w->place[h] = group_of(w, (int)h, 1);
		if (w->place[h] < 0 && iv_push(&w->unplaced, (int)h) < 0)
			return wfail_oom(w);
	}
	return 0;
}

static int graph_has_host_groups(const wctx *w)
{
	for (size_t i = 0; i < topo_graph_nedges(w->g); i++) {
		const topo_edge *e = topo_graph_edge(w->g, (int)i);

		if (e->kind == TOPO_E_MEMBER && V(w, e->a)->kind == TOPO_V_GROUP &&
		    V(w, e->b)->kind == TOPO_V_HOST)
			return 1;
	}
	return 0;
}

/* Mark listed entries and the rail leaves their groups absorb. */
static int mark_listed(wctx *w)
{
	for (size_t h = 0; h < w->nv; h++)
		if (V(w, (int)h)->kind == TOPO_V_HOST && w->place[h] >= 0)
			w->listed[w->place[h]] = 1;
	/* a group's own member switches are its rail leaves too */
	for (size_t i = 0; i < topo_graph_nedges(w->g); i++) {
		const topo_edge *e = topo_graph_edge(w->g, (int)i);

		if (e->kind == TOPO_E_MEMBER && w->listed[e->a] && V(w, e->a)->kind == TOPO_V_GROUP &&
		    V(w, e->b)->kind == TOPO_V_SWITCH && pr_push(&w->rails, e->a, e->b) < 0)
			return wfail_oom(w);
	}
	if (index_pairs(&w->rails, w->nv) < 0)
		return wfail_oom(w);
	for (size_t i = 0; i < w->rails.n; i++)
		w->absorbed[w->rails.b[i]] = 1;
	for (size_t v = 0; v < w->nv; v++)
		if (w->listed[v] && V(w, (int)v)->kind == TOPO_V_GROUP &&
		    topo_graph_find(w->g, TOPO_V_SWITCH, V(w, (int)v)->name) >= 0) {
			topo_error_set(w->err, "", 0,
				       "group %s has the same name as a switch; topology.conf needs "
				       "distinct names",
				       V(w, (int)v)->name);
			return -1;
		}
	return 0;
}

/* Switches one step up from x (a switch, or a group through its rail
 * leaves), into w->tmp. */
static int up_neighbors(wctx *w, int x)
{
	const int *leaves = &x;
	int nleaves = 1;

	w->gen++;
	w->tmp.n = 0;
	if (V(w, x)->kind == TOPO_V_GROUP) {
		leaves = w->rails.b + w->rails.start[x];
		nleaves = w->rails.start[x + 1] - w->rails.start[x];
	}
	for (int l = 0; l < nleaves; l++) {
		int n;
		const int *inc = topo_graph_incident(w->g, leaves[l], &n);

		for (int i = 0; i < n; i++) {
			const topo_edge *e = topo_graph_edge(w->g, inc[i]);
			int o = topo_edge_other(e, leaves[l]);

			if (e->kind != TOPO_E_FABRIC || V(w, o)->kind != TOPO_V_SWITCH ||
			    w->stamp[o] == w->gen)
				continue;
			w->stamp[o] = w->gen;
			if (w->listed[o] || w->absorbed[o] || V(w, o)->level == TOPO_LEVEL_LEAF)
				continue;
			if (iv_push(&w->tmp, o) < 0)
				return -1;
		}
	}
	return 0;
}

typedef struct sortrec {
	long key;
	const char *name;
	int id;
} sortrec;

static int cmp_sortrec(const void *pa, const void *pb)
{
	const sortrec *a = pa, *b = pb;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return topo_hostname_cmp(a->name, b->name);
}

/* Sort vertex ids by natural name (by key first when by_key). */
static int sort_ids(wctx *w, int *ids, size_t n, int by_key)
{
	sortrec *r = malloc((n + 1) * sizeof(*r));

	if (!r)
		return wfail_oom(w);
	for (size_t i = 0; i < n; i++)
		r[i] = (sortrec){ by_key ? w->key[ids[i]] : 0, V(w, ids[i])->name, ids[i] };
	qsort(r, n, sizeof(*r), cmp_sortrec);
	for (size_t i = 0; i < n; i++)
		ids[i] = r[i].id;
	free(r);
	return 0;
}

/* Names go into the file as they are: refuse those it cannot carry. */
static int name_ok(wctx *w, int v)
{
	if (topo_topology_conf_name_ok(V(w, v)->name))
		return 1;
	topo_error_set(w->err, "", 0, "%s name \"%s\" cannot be written in topology.conf",
		       topo_vkind_name(V(w, v)->kind), V(w, v)->name);
	return 0;
}

/* Compress the names of ids[0..n) into a malloc'd hostlist. */
static char *names_of(wctx *w, const int *ids, size_t n)
{
	const char **names = malloc((n + 1) * sizeof(*names));
	char *s;

	if (!names) {
		wfail_oom(w);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		names[i] = V(w, ids[i])->name;
		if (!name_ok(w, ids[i])) {
			free(names);
			return NULL;
		}
	}
	s = topo_hostlist_compress(names, n, w->err);
	free(names);
	return s;
}

/* Hosts placed under each entry: pairs (entry, host), hosts in id order. */
static int hosts_by_entry(wctx *w, pairs *hp)
{
	for (size_t h = 0; h < w->nv; h++)
		if (V(w, (int)h)->kind == TOPO_V_HOST && w->place[h] >= 0 &&
		    pr_push(hp, w->place[h], (int)h) < 0)
			return wfail_oom(w);
	if (index_pairs(hp, w->nv) < 0)
		return wfail_oom(w);
	return 0;
}

/* Ids of the listed entries in natural name order. */
static int listed_entries(wctx *w, intvec *out)
{
	for (size_t v = 0; v < w->nv; v++)
		if (w->listed[v] && iv_push(out, (int)v) < 0)
			return wfail_oom(w);
	return sort_ids(w, out->v, out->n, 0);
}

static void write_header(wctx *w, FILE *out, const char *source, const char *summary)
{
	if (!source || !*source)
		source = "an unnamed source";
	/* one comment line, whatever the source name holds */
	fprintf(out, "# Generated by topognn-discover from %.*s.\n", (int)strcspn(source, "\r\n"),
		source);
	fprintf(out, "# %s\n", summary);
	if (w->used_groups)
		fprintf(out, "# Hosts cabled to several leaf switches (one per rail) are listed under "
			     "their scalable unit.\n");
}

static int write_unplaced(wctx *w, FILE *out, const char *why)
{
	char *s;

	if (!w->unplaced.n)
		return 0;
	s = names_of(w, w->unplaced.v, w->unplaced.n);
	if (!s)
		return -1;
	fprintf(out, "# Not listed (%s): %s\n", why, s);
	free(s);
	return 0;
}

static void write_link_speed(const wctx *w, FILE *out, int v)
{
	const char *ls = topo_graph_get_attr(w->g, v, "link_speed");

	/* topology.yaml has no link speed (Slurm's parser skips it) */
	if (ls && V(w, v)->kind == TOPO_V_SWITCH && !w->yaml)
		fprintf(out, " LinkSpeed=%s", ls);
	fputc('\n', out);
}

/* Walk up from the leaf level: d[] for every switch above it. */
static int walk_up(wctx *w, intvec *upper)
{
	int *queue = malloc((w->nv + 1) * sizeof(int));
	size_t head = 0, tail = 0;

	if (!queue)
		return wfail_oom(w);
	for (size_t v = 0; v < w->nv; v++) {
		w->d[v] = -1;
		if (w->listed[v]) {
			w->d[v] = 0;
			queue[tail++] = (int)v;
		}
	}
	while (head < tail) {
		int x = queue[head++];

		if (up_neighbors(w, x) < 0) {
			free(queue);
			return wfail_oom(w);
		}
		for (size_t i = 0; i < w->tmp.n; i++) {
			int n = w->tmp.v[i];

			if (w->d[n] >= 0)
				continue;
			w->d[n] = w->d[x] + 1;
			queue[tail++] = n;
			if (iv_push(upper, n) < 0) {
				free(queue);
				return wfail_oom(w);
			}
		}
	}
	free(queue);
	return 0;
}

/* key = (level, d) when every switch involved has a known level, else d. */
static void compute_keys(wctx *w)
{
	int use_levels = 1;

	for (size_t v = 0; v < w->nv; v++)
		if (w->d[v] >= 0 && V(w, (int)v)->kind == TOPO_V_SWITCH &&
		    V(w, (int)v)->level == TOPO_LEVEL_UNKNOWN)
			use_levels = 0;
	for (size_t v = 0; v < w->nv; v++) {
		long lvl = V(w, (int)v)->kind == TOPO_V_GROUP ? TOPO_LEVEL_LEAF : V(w, (int)v)->level;

		w->key[v] = use_levels ? lvl * ((long)w->nv + 1) + w->d[v] : w->d[v];
	}
}

static int write_tree(wctx *w, FILE *out, const char *source)
{
	intvec entries = { 0 }, upper = { 0 }, kids = { 0 };
	pairs hp = { 0 }, ch = { 0 };
	char *emitted = NULL, summary[256];
	size_t nupper = 0, nhosts = 0;
	int rc = -1;

	if (place_by_leaves(w) < 0 || mark_listed(w) < 0 || listed_entries(w, &entries) < 0 ||
	    hosts_by_entry(w, &hp) < 0 || walk_up(w, &upper) < 0)
		goto out;
	if (!entries.n) {
		topo_error_set(w->err, "", 0, "no host is cabled to a switch: nothing to write");
		goto out;
	}
	compute_keys(w);
	/* child -> parent where the parent's key is higher */
	for (size_t i = 0; i < entries.n + upper.n; i++) {
		int x = i < entries.n ? entries.v[i] : upper.v[i - entries.n];

		if (up_neighbors(w, x) < 0) {
			wfail_oom(w);
			goto out;
		}
		for (size_t j = 0; j < w->tmp.n; j++) {
			int n = w->tmp.v[j];

			if (w->d[n] >= 1 && w->key[n] > w->key[x] && pr_push(&ch, n, x) < 0) {
				wfail_oom(w);
				goto out;
			}
		}
	}
	emitted = calloc(w->nv + 1, 1);
	if (!emitted || index_pairs(&ch, w->nv) < 0) {
		wfail_oom(w);
		goto out;
	}
	if (sort_ids(w, upper.v, upper.n, 1) < 0)
		goto out;
	for (size_t i = 0; i < entries.n; i++)
		emitted[entries.v[i]] = 1;
	for (size_t i = 0; i < upper.n; i++) {
		int n = upper.v[i];

		for (int j = ch.start[n]; j < ch.start[n + 1]; j++)
			emitted[n] |= emitted[ch.b[j]];
		nupper += emitted[n];
	}
	/*
	 * Written in the order of their height over what is written (1 + the
	 * highest written switch below), then by name. The graph's levels may
	 * count switches that are not written (no host is below them), and the
	 * file read back would then give other levels and another order
	 * (fuzz_topology_conf: writing what was read back did not give the
	 * same text). Children come before parents in `upper` here.
	 */
	for (size_t i = 0; i < entries.n; i++)
		w->key[entries.v[i]] = 0;
	for (size_t i = 0; i < upper.n; i++) {
		int n = upper.v[i];
		long h = 0;

		for (int j = ch.start[n]; j < ch.start[n + 1]; j++)
			if (emitted[ch.b[j]] && w->key[ch.b[j]] + 1 > h)
				h = w->key[ch.b[j]] + 1;
		w->key[n] = h;
	}
	if (sort_ids(w, upper.v, upper.n, 1) < 0)
		goto out;
	for (size_t i = 0; i < entries.n; i++)
		nhosts += (size_t)(hp.start[entries.v[i] + 1] - hp.start[entries.v[i]]);
	snprintf(summary, sizeof(summary),
		 "Tree topology (topology/tree): %zu hosts under %zu leaf-level switches, "
		 "%zu switches above them.",
		 nhosts, entries.n, nupper);
	write_header(w, out, source, summary);
	if (write_unplaced(w, out, "cabled to no switch") < 0)
		goto out;
	if (w->yaml)
		fputs("- topology: tree\n  cluster_default: true\n  tree:\n    switches:\n", out);
	for (size_t i = 0; i < entries.n; i++) {
		int v = entries.v[i];
		char *s = names_of(w, hp.b + hp.start[v], (size_t)(hp.start[v + 1] - hp.start[v]));

		if (!s || !name_ok(w, v)) {
			free(s);
			goto out;
		}
		if (w->yaml)
			fprintf(out, "      - switch: \"%s\"\n        nodes: \"%s\"", V(w, v)->name, s);
		else
			fprintf(out, "SwitchName=%s Nodes=%s", V(w, v)->name, s);
		write_link_speed(w, out, v);
		free(s);
	}
	for (size_t i = 0; i < upper.n; i++) {
		int n = upper.v[i];
		char *s;

		if (!emitted[n])
			continue;
		kids.n = 0;
		for (int j = ch.start[n]; j < ch.start[n + 1]; j++)
			if (emitted[ch.b[j]] && iv_push(&kids, ch.b[j]) < 0) {
				wfail_oom(w);
				goto out;
			}
		s = names_of(w, kids.v, kids.n);
		if (!s || !name_ok(w, n)) {
			free(s);
			goto out;
		}
		if (w->yaml)
			fprintf(out, "      - switch: \"%s\"\n        children: \"%s\"", V(w, n)->name, s);
		else
			fprintf(out, "SwitchName=%s Switches=%s", V(w, n)->name, s);
		write_link_speed(w, out, n);
		free(s);
	}
	rc = 0;
out:
	free(entries.v);
	free(upper.v);
	free(kids.v);
	free(emitted);
	pr_free(&hp);
	pr_free(&ch);
	return rc;
}

/* The groups' own BlockSizes when they all agree, else base * 2^k up to the
 * largest power of two not above the number of blocks (k <= 15). */
static void block_sizes(const wctx *w, const intvec *blocks, const pairs *hp, char *buf,
			size_t len)
{
	const char *attr = topo_graph_get_attr(w->g, blocks->v[0], "block_sizes");
	size_t base = SIZE_MAX, used = 0;

	for (size_t i = 1; attr && i < blocks->n; i++) {
		const char *o = topo_graph_get_attr(w->g, blocks->v[i], "block_sizes");

		if (!o || strcmp(o, attr) != 0)
			attr = NULL;
	}
	if (attr && V(w, blocks->v[0])->kind == TOPO_V_GROUP) {
		snprintf(buf, len, "%s", attr);
		return;
	}
	for (size_t i = 0; i < blocks->n; i++) {
		int v = blocks->v[i];
		size_t c = (size_t)(hp->start[v + 1] - hp->start[v]);

		if (c < base)
			base = c;
	}
	buf[0] = '\0';
	for (size_t k = 0; k <= 15 && ((size_t)1 << k) <= blocks->n && used < len; k++)
		used += (size_t)snprintf(buf + used, len - used, "%s%zu", k ? "," : "", base << k);
}

static int write_block(wctx *w, FILE *out, const char *source)
{
	intvec blocks = { 0 };
	pairs hp = { 0 };
	char summary[256], sizes[256];
	size_t nhosts = 0;
	int rc = -1;

	if (graph_has_host_groups(w) ? place_by_groups(w) : place_by_leaves(w))
		goto out;
	if (mark_listed(w) < 0 || listed_entries(w, &blocks) < 0 || hosts_by_entry(w, &hp) < 0)
		goto out;
	if (!blocks.n) {
		topo_error_set(w->err, "", 0, "no host is in a group or cabled to a switch: "
					      "nothing to write");
		goto out;
	}
	w->used_groups = 0; /* groups are the blocks themselves here */
	for (size_t i = 0; i < blocks.n; i++)
		nhosts += (size_t)(hp.start[blocks.v[i] + 1] - hp.start[blocks.v[i]]);
	block_sizes(w, &blocks, &hp, sizes, sizeof(sizes));
	snprintf(summary, sizeof(summary), "Block topology (topology/block): %zu hosts in %zu blocks.",
		 nhosts, blocks.n);
	write_header(w, out, source, summary);
	if (write_unplaced(w, out, "in no block") < 0)
		goto out;
	if (w->yaml)
		fputs("- topology: block\n  cluster_default: false\n  block:\n    blocks:\n", out);
	for (size_t i = 0; i < blocks.n; i++) {
		int v = blocks.v[i];
		char *s = names_of(w, hp.b + hp.start[v], (size_t)(hp.start[v + 1] - hp.start[v]));

		if (!s || !name_ok(w, v)) {
			free(s);
			goto out;
		}
		if (w->yaml)
			fprintf(out, "      - block: \"%s\"\n        nodes: \"%s\"\n", V(w, v)->name, s);
		else
			fprintf(out, "BlockName=%s Nodes=%s\n", V(w, v)->name, s);
		free(s);
	}
	if (w->yaml)
		fprintf(out, "    block_sizes: [%s]\n", sizes);
	else
		fprintf(out, "BlockSizes=%s\n", sizes);
	rc = 0;
out:
	free(blocks.v);
	pr_free(&hp);
	return rc;
}

static int write_conf(const topo_graph *g, FILE *out, topo_conf_mode mode, int yaml,
		      const char *source, topo_error *err)
{
	wctx w;
	int rc = -1;

	memset(&w, 0, sizeof(w));
	w.yaml = yaml;
	w.g = g;
	w.err = err;
	w.nv = topo_graph_nvertices(g);
	w.place = malloc((w.nv + 1) * sizeof(int));
	w.stamp = calloc(w.nv + 1, sizeof(int));
	w.listed = calloc(w.nv + 1, 1);
	w.absorbed = calloc(w.nv + 1, 1);
	w.d = malloc((w.nv + 1) * sizeof(int));
	w.key = malloc((w.nv + 1) * sizeof(long));
	if (!w.place || !w.stamp || !w.listed || !w.absorbed || !w.d || !w.key) {
		wfail_oom(&w);
		goto out;
	}
	for (size_t i = 0; i < w.nv; i++)
		w.place[i] = -1;
	if (mode == TOPO_CONF_TREE)
		rc = write_tree(&w, out, source);
	else if (mode == TOPO_CONF_BLOCK)
		rc = write_block(&w, out, source);
	else
		topo_error_set(err, "", 0, "unknown topology.conf mode %d", (int)mode);
	if (rc == 0 && (fflush(out) != 0 || ferror(out))) {
		topo_error_set(err, "", 0, "writing %s failed", yaml ? "topology.yaml" : "topology.conf");
		rc = -1;
	}
	if (rc == 0)
		topo_error_clear(err);
out:
	free(w.place);
	free(w.stamp);
	free(w.listed);
	free(w.absorbed);
	free(w.d);
	free(w.key);
	pr_free(&w.rails);
	free(w.unplaced.v);
	free(w.tmp.v);
	return rc;
}

int topo_write_topology_conf(const topo_graph *g, FILE *out, topo_conf_mode mode,
			     const char *source, topo_error *err)
{
	return write_conf(g, out, mode, 0, source, err);
}

int topo_write_topology_yaml(const topo_graph *g, FILE *out, const char *source, topo_error *err)
{
	if (write_conf(g, out, TOPO_CONF_TREE, 1, source, err) < 0)
		return -1;
	return write_conf(g, out, TOPO_CONF_BLOCK, 1, source, err);
}
