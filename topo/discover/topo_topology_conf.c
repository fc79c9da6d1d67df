/*
 * topo_topology_conf: reading Slurm's topology.conf into a topo_graph (see
 * topo_topology_conf.h for what is built and which errors are reported).
 *
 * The reader builds into a scratch graph, checking each line as it goes and
 * the cross-line rules (Switches= references, loops, block sizes) at the end;
 * only a file that passes every check is merged into the caller's graph. The
 * writer lives in topo_topology_conf_write.c.
 */
#include "topo_topology_conf.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "topo_hostdir.h"
#include "topo_alloc.h"
#include "topo_hostlist.h"
#include "topo_io.h"

/* Most names (nodes and switch references) one file may expand to. */
#define MAX_NAMES 4000000u
/* Slurm's largest block level: a block size is at most 2^15 base blocks. */
#define MAX_BLOCK_LEVEL 15

enum conf_key { K_SWITCHNAME, K_SWITCHES, K_NODES, K_LINKSPEED, K_BLOCKNAME, K_BLOCKSIZES, K_N };

static const char *const key_names[K_N] = { "SwitchName", "Switches",  "Nodes",
					    "LinkSpeed",  "BlockName", "BlockSizes" };

enum conf_mode { MODE_NONE = 0, MODE_TREE, MODE_BLOCK };

/* A SwitchName line, kept until the whole file is read so Switches= may
 * name switches defined further down. */
typedef struct swrec {
	int id; /* switch vertex in the scratch graph */
	int line;
	topo_hostlist children; /* the Switches= names */
	int *kids;              /* resolved: indexes into the swrec array, unique */
	size_t nkids;
} swrec;

typedef struct blockrec {
	int id; /* group vertex in the scratch graph */
	int line;
	size_t nnodes;
} blockrec;

typedef struct conf_parser {
	const char *source;
	topo_error *err;
	topo_graph *t; /* scratch graph, merged into the caller's on success */
	int *line_of;  /* per scratch vertex: the line defining it (switch, block) */
	int *under;    /* per scratch host: the switch or block it is under, -1 */
	int *rec_of;   /* per scratch switch: its swrec index */
	size_t cap;
	swrec *sw;
	size_t nsw, capsw;
	blockrec *blk;
	size_t nblk, capblk;
	enum conf_mode mode;
	int mode_line;
	char *block_sizes; /* normalised BlockSizes value, NULL if absent */
	int bs_line;
	uint64_t bs_base;
	size_t names; /* names expanded so far, against MAX_NAMES */
} conf_parser;

static int fail(conf_parser *p, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(conf_parser *p, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	topo_error_vset(p->err, p->source, line, 0, fmt, ap);
	va_end(ap);
	return -1;
}

static int oom(conf_parser *p, int line)
{
	return fail(p, line, "out of memory");
}

int topo_conf_mode_parse(const char *s)
{
	if (s && strcmp(s, "tree") == 0)
		return TOPO_CONF_TREE;
	if (s && strcmp(s, "block") == 0)
		return TOPO_CONF_BLOCK;
	return -1;
}

/* Keep the per-vertex side arrays as long as the scratch graph. */
static int side_grow(conf_parser *p)
{
	size_t need = topo_graph_nvertices(p->t);
	size_t ncap = p->cap ? p->cap : 64;
	int *a, *b, *c;

	if (need <= p->cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	a = realloc(p->line_of, ncap * sizeof(*a));
	if (a)
		p->line_of = a;
	b = realloc(p->under, ncap * sizeof(*b));
	if (b)
		p->under = b;
	c = realloc(p->rec_of, ncap * sizeof(*c));
	if (c)
		p->rec_of = c;
	if (!a || !b || !c)
		return -1;
	for (size_t i = p->cap; i < ncap; i++) {
		p->line_of[i] = 0;
		p->under[i] = -1;
		p->rec_of[i] = -1;
	}
	p->cap = ncap;
	return 0;
}

/* Add a vertex to the scratch graph; returns its id, -2 if it exists, -1 on OOM. */
static int scratch_add(conf_parser *p, topo_vkind kind, const char *name)
{
	int id;

	if (topo_graph_find(p->t, kind, name) >= 0)
		return -2;
	id = topo_graph_add_vertex(p->t, kind, name);
	if (id < 0 || side_grow(p) < 0)
		return -1;
	return id;
}

int topo_topology_conf_name_ok(const char *name)
{
	if (!name || !*name)
		return 0;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		if (*p <= ' ' || *p == 0x7f || strchr(",[]\"#\\", *p))
			return 0;
	return 1;
}

/* SwitchName and BlockName hold one name, not a hostlist. */
static int check_single_name(conf_parser *p, int line, const char *key, const char *name)
{
	if (!*name)
		return fail(p, line, "%s is empty", key);
	if (strpbrk(name, ",[]"))
		return fail(p, line, "%s \"%s\" must be a single name, not a hostlist", key, name);
	if (!topo_topology_conf_name_ok(name))
		return fail(p, line, "%s \"%s\" holds a character topology.conf cannot carry", key,
			    name);
	return 0;
}

static int set_mode(conf_parser *p, enum conf_mode mode, int line, const char *key)
{
	if (p->mode == MODE_NONE) {
		p->mode = mode;
		p->mode_line = line;
		return 0;
	}
	if (p->mode == mode)
		return 0;
	return fail(p, line,
		    "%s mixes %s topology into a %s topology (line %d); a topology.conf is "
		    "either tree (SwitchName) or block (BlockName)",
		    key, mode == MODE_TREE ? "tree" : "block",
		    p->mode == MODE_TREE ? "tree" : "block", p->mode_line);
}

static int expand(conf_parser *p, int line, const char *expr, topo_hostlist *hl)
{
	if (topo_hostlist_expand(expr, hl, p->source, line, p->err) < 0)
		return -1;
	p->names += hl->n;
	if (p->names > MAX_NAMES)
		return fail(p, line, "the file lists more than %u names", MAX_NAMES);
	return 0;
}

/* Put the hosts of `expr` under `container` (a switch: fabric edge; a block:
 * member edge). Counts the distinct hosts in *count. */
static int attach_nodes(conf_parser *p, int line, int container, const char *expr, size_t *count)
{
	topo_hostlist hl;
	int is_block = topo_graph_vertex(p->t, container)->kind == TOPO_V_GROUP;
	int rc = -1;

	topo_hostlist_init(&hl);
	*count = 0;
	if (expand(p, line, expr, &hl) < 0)
		goto out;
	for (size_t i = 0; i < hl.n; i++) {
		int h = topo_graph_find(p->t, TOPO_V_HOST, hl.names[i]), e;

		if (!topo_topology_conf_name_ok(hl.names[i])) {
			fail(p, line, "node name \"%s\" holds a character topology.conf cannot carry",
			     hl.names[i]);
			goto out;
		}
		if (h < 0 && (h = scratch_add(p, TOPO_V_HOST, hl.names[i])) < 0) {
			oom(p, line);
			goto out;
		}
		if (p->under[h] == container)
			continue; /* listed twice for the same switch: harmless, as in Slurm */
		if (p->under[h] >= 0) {
			int o = p->under[h];

			fail(p, line, "node %s is already %s %s (line %d)", hl.names[i],
			     is_block ? "in block" : "under leaf switch",
			     topo_graph_vertex(p->t, o)->name, p->line_of[o]);
			goto out;
		}
		p->under[h] = container;
		e = is_block ? topo_graph_add_edge(p->t, TOPO_E_MEMBER, container, h)
			     : topo_graph_add_edge(p->t, TOPO_E_FABRIC, h, container);
		if (e < 0) {
			oom(p, line);
			goto out;
		}
		(*count)++;
	}
	rc = 0;
out:
	topo_hostlist_free(&hl);
	return rc;
}

static int parse_u32(const char *s, uint32_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (!isdigit((unsigned char)*s))
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > UINT32_MAX)
			return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

static int handle_switch(conf_parser *p, int line, const char *const *val)
{
	const char *name = val[K_SWITCHNAME];
	uint32_t speed = 0;
	swrec *r;
	size_t count;
	int id;

	if (set_mode(p, MODE_TREE, line, "SwitchName") < 0 ||
	    check_single_name(p, line, "SwitchName", name) < 0)
		return -1;
	if (val[K_NODES] && val[K_SWITCHES])
		return fail(p, line, "switch %s has both Nodes= and Switches=; a switch holds "
				     "either nodes or switches", name);
	if (val[K_LINKSPEED] && parse_u32(val[K_LINKSPEED], &speed) < 0)
		return fail(p, line, "LinkSpeed \"%s\" of switch %s is not a whole number",
			    val[K_LINKSPEED], name);
	id = scratch_add(p, TOPO_V_SWITCH, name);
	if (id == -2) {
		int o = topo_graph_find(p->t, TOPO_V_SWITCH, name);

		return fail(p, line, "switch %s is already defined at line %d", name, p->line_of[o]);
	}
	if (id < 0)
		return oom(p, line);
	p->line_of[id] = line;
	if (topo_grow(&p->sw, &p->capsw, p->nsw + 1, sizeof(*p->sw), 16))
		return oom(p, line);
	r = &p->sw[p->nsw];
	memset(r, 0, sizeof(*r));
	r->id = id;
	r->line = line;
	p->rec_of[id] = (int)p->nsw++;
	if (val[K_LINKSPEED]) {
		char buf[16];

		snprintf(buf, sizeof(buf), "%" PRIu32, speed);
		if (topo_graph_set_attr(p->t, id, "link_speed", buf) < 0)
			return oom(p, line);
	}
	if (val[K_NODES])
		return attach_nodes(p, line, id, val[K_NODES], &count);
	if (val[K_SWITCHES])
		return expand(p, line, val[K_SWITCHES], &r->children);
	return 0;
}

static int handle_block(conf_parser *p, int line, const char *const *val)
{
	const char *name = val[K_BLOCKNAME];
	blockrec *b;
	int id;

	if (set_mode(p, MODE_BLOCK, line, "BlockName") < 0 ||
	    check_single_name(p, line, "BlockName", name) < 0)
		return -1;
	if (!val[K_NODES])
		return fail(p, line, "block %s has no Nodes=", name);
	id = scratch_add(p, TOPO_V_GROUP, name);
	if (id == -2) {
		int o = topo_graph_find(p->t, TOPO_V_GROUP, name);

		return fail(p, line, "block %s is already defined at line %d", name, p->line_of[o]);
	}
	if (id < 0)
		return oom(p, line);
	p->line_of[id] = line;
	if (topo_grow(&p->blk, &p->capblk, p->nblk + 1, sizeof(*p->blk), 16))
		return oom(p, line);
	b = &p->blk[p->nblk++];
	b->id = id;
	b->line = line;
	return attach_nodes(p, line, id, val[K_NODES], &b->nnodes);
}

/* BlockSizes as Slurm's topology/block reads it: the first size is the base
 * block size; every size is base * 2^k with k <= 15. */
static int handle_block_sizes(conf_parser *p, int line, const char *value)
{
	char norm[512];
	size_t nlen = 0;
	const char *s = value;
	uint64_t base = 0;

	if (set_mode(p, MODE_BLOCK, line, "BlockSizes") < 0)
		return -1;
	if (p->block_sizes)
		return fail(p, line, "BlockSizes is already set at line %d", p->bs_line);
	for (;;) {
		uint64_t v = 0;
		const char *start = s;

		while (isdigit((unsigned char)*s) && v <= UINT32_MAX)
			v = v * 10 + (uint64_t)(*s++ - '0');
		if (s == start || v == 0 || v > UINT32_MAX || (*s && *s != ','))
			return fail(p, line,
				    "BlockSizes \"%s\" is not a comma-separated list of positive "
				    "whole numbers",
				    value);
		if (!base)
			base = v;
		if (v % base || (v / base & (v / base - 1)) || v / base > (1u << MAX_BLOCK_LEVEL))
			return fail(p, line,
				    "BlockSizes %" PRIu64 " is not a power-of-two multiple (at most "
				    "2^15) of the base block size %" PRIu64,
				    v, base);
		nlen += (size_t)snprintf(norm + nlen, sizeof(norm) - nlen, "%s%" PRIu64,
					 nlen ? "," : "", v);
		if (nlen >= sizeof(norm))
			return fail(p, line, "BlockSizes lists too many sizes");
		if (!*s)
			break;
		s++;
	}
	p->block_sizes = strdup(norm);
	if (!p->block_sizes)
		return oom(p, line);
	p->bs_line = line;
	p->bs_base = base;
	return 0;
}

/* ---- one logical line ------------------------------------------------------ */

static int match_key(const char *k)
{
	for (int i = 0; i < K_N; i++)
		if (strcasecmp(k, key_names[i]) == 0)
			return i;
	return -1;
}

/* Split "Key=Value Key=\"Value\" ..." in place into val[]. */
static int tokenize(conf_parser *p, int line, char *s, const char **val)
{
	for (int i = 0; i < K_N; i++)
		val[i] = NULL;
	for (;;) {
		char *key, *v;
		int k;

		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			return 0;
		key = s;
		while (*s && *s != '=' && *s != ' ' && *s != '\t')
			s++;
		if (*s != '=') {
			*s = '\0';
			return fail(p, line, "expected Key=Value but found \"%.60s\"", key);
		}
		*s++ = '\0';
		k = match_key(key);
		if (k < 0)
			return fail(p, line, "unknown key \"%.60s\"", key);
		if (val[k])
			return fail(p, line, "key %s appears twice on one line", key_names[k]);
		if (*s == '"') {
			v = ++s;
			while (*s && *s != '"')
				s++;
			if (!*s)
				return fail(p, line, "value of %s has no closing '\"'", key_names[k]);
		} else {
			v = s;
			while (*s && *s != ' ' && *s != '\t')
				s++;
		}
		if (*s)
			*s++ = '\0';
		val[k] = v;
	}
}

static int handle_line(conf_parser *p, int line, char *s)
{
	const char *val[K_N];
	int name_key;

	if (tokenize(p, line, s, val) < 0)
		return -1;
	name_key = val[K_SWITCHNAME] ? K_SWITCHNAME : val[K_BLOCKNAME] ? K_BLOCKNAME : -1;
	if (val[K_SWITCHNAME] && val[K_BLOCKNAME])
		return fail(p, line, "a line cannot have both SwitchName and BlockName");
	if (name_key < 0) {
		for (int k = 0; k < K_N; k++)
			if (k != K_BLOCKSIZES && val[k])
				return fail(p, line, "line has %s but no SwitchName or BlockName",
					    key_names[k]);
		if (val[K_BLOCKSIZES])
			return handle_block_sizes(p, line, val[K_BLOCKSIZES]);
		return 0; /* blank */
	}
	if (val[K_BLOCKSIZES])
		return fail(p, line, "BlockSizes must be on a line of its own");
	if (name_key == K_BLOCKNAME) {
		if (val[K_SWITCHES] || val[K_LINKSPEED])
			return fail(p, line, "key %s does not belong on a BlockName line",
				    key_names[val[K_SWITCHES] ? K_SWITCHES : K_LINKSPEED]);
		return handle_block(p, line, val);
	}
	return handle_switch(p, line, val);
}

/* ---- checks once the whole file is read ---------------------------------- */

/* Resolve Switches= names into swrec indexes, dropping repeats. */
static int resolve_children(conf_parser *p)
{
	int *stamp = malloc((p->nsw + 1) * sizeof(*stamp));

	if (!stamp)
		return oom(p, 0);
	for (size_t i = 0; i < p->nsw; i++)
		stamp[i] = -1;
	for (size_t i = 0; i < p->nsw; i++) {
		swrec *r = &p->sw[i];
		const char *self = topo_graph_vertex(p->t, r->id)->name;

		if (!r->children.n)
			continue;
		r->kids = malloc(r->children.n * sizeof(*r->kids));
		if (!r->kids) {
			free(stamp);
			return oom(p, r->line);
		}
		for (size_t c = 0; c < r->children.n; c++) {
			const char *name = r->children.names[c];
			int id = topo_graph_find(p->t, TOPO_V_SWITCH, name), k;

			if (id < 0) {
				free(stamp);
				return fail(p, r->line,
					    "switch %s lists %s in Switches=, but no SwitchName "
					    "defines %s",
					    self, name, name);
			}
			k = p->rec_of[id];
			if (k == (int)i) {
				free(stamp);
				return fail(p, r->line,
					    "switch %s is its own ancestor (%s -> %s)", self, self,
					    self);
			}
			if (stamp[k] == (int)i)
				continue;
			stamp[k] = (int)i;
			r->kids[r->nkids++] = k;
		}
	}
	free(stamp);
	return 0;
}

/* Name a loop among the unresolved switches: walk down from the first one in
 * file order until a switch repeats. */
static int report_loop(conf_parser *p, const int *pending)
{
	int *pos = malloc((p->nsw + 1) * sizeof(*pos));
	int *path = malloc((p->nsw + 1) * sizeof(*path));
	size_t n = 0, i;
	int cur = -1;
	char chain[256];
	size_t len = 0;

	if (!pos || !path) {
		free(pos);
		free(path);
		return oom(p, 0);
	}
	for (i = 0; i < p->nsw; i++) {
		pos[i] = -1;
		if (cur < 0 && pending[i] > 0)
			cur = (int)i;
	}
	while (pos[cur] < 0) {
		const swrec *r = &p->sw[cur];

		pos[cur] = (int)n;
		path[n++] = cur;
		for (i = 0; i < r->nkids; i++)
			if (pending[r->kids[i]] > 0)
				break;
		if (i == r->nkids)
			break; /* cannot happen: an unresolved switch has an unresolved child */
		cur = r->kids[i];
	}
	chain[0] = '\0';
	for (i = (size_t)pos[cur]; i <= n && len < sizeof(chain); i++) {
		int k = i < n ? path[i] : cur;

		len += (size_t)snprintf(chain + len, sizeof(chain) - len, "%s%s",
					i > (size_t)pos[cur] ? " -> " : "",
					topo_graph_vertex(p->t, p->sw[k].id)->name);
	}
	fail(p, p->sw[cur].line, "switch %s is its own ancestor (%s)",
	     topo_graph_vertex(p->t, p->sw[cur].id)->name, chain);
	free(pos);
	free(path);
	return -1;
}

/* Heights by Kahn's algorithm over child -> parent; leftovers form a loop. */
static int tree_levels(conf_parser *p)
{
	size_t n = p->nsw, done = 0, head = 0, tail = 0;
	int *pending = calloc(n + 1, sizeof(int)), *height = calloc(n + 1, sizeof(int));
	int *poff = calloc(n + 2, sizeof(int)), *par = NULL, *fill = NULL, *queue = NULL;
	int rc = -1;

	if (!pending || !height || !poff)
		goto nomem;
	for (size_t i = 0; i < n; i++) {
		pending[i] = (int)p->sw[i].nkids;
		for (size_t c = 0; c < p->sw[i].nkids; c++)
			poff[p->sw[i].kids[c] + 1]++;
	}
	for (size_t i = 0; i < n; i++)
		poff[i + 1] += poff[i];
	par = malloc(((size_t)poff[n] + 1) * sizeof(int));
	fill = calloc(n + 1, sizeof(int));
	queue = malloc((n + 1) * sizeof(int));
	if (!par || !fill || !queue)
		goto nomem;
	for (size_t i = 0; i < n; i++)
		for (size_t c = 0; c < p->sw[i].nkids; c++) {
			int k = p->sw[i].kids[c];

			par[poff[k] + fill[k]++] = (int)i;
		}
	for (size_t i = 0; i < n; i++)
		if (!pending[i])
			queue[tail++] = (int)i;
	while (head < tail) {
		int x = queue[head++];

		done++;
		for (int j = poff[x]; j < poff[x + 1]; j++) {
			int q = par[j];

			if (height[q] < height[x] + 1)
				height[q] = height[x] + 1;
			if (--pending[q] == 0)
				queue[tail++] = q;
		}
	}
	if (done < n) {
		report_loop(p, pending);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		topo_vertex *v = topo_graph_vertex_mut(p->t, p->sw[i].id);

		v->level = height[i] == 0 ? TOPO_LEVEL_LEAF
			   : height[i] == 1 ? TOPO_LEVEL_SPINE : TOPO_LEVEL_CORE;
		for (size_t c = 0; c < p->sw[i].nkids; c++)
			if (topo_graph_add_edge(p->t, TOPO_E_FABRIC, p->sw[p->sw[i].kids[c]].id,
						p->sw[i].id) < 0)
				goto nomem;
	}
	rc = 0;
	goto out;
nomem:
	oom(p, 0);
out:
	free(pending);
	free(height);
	free(poff);
	free(par);
	free(fill);
	free(queue);
	return rc;
}

static int finish_blocks(conf_parser *p)
{
	uint64_t base;

	if (!p->nblk)
		return fail(p, p->bs_line, "BlockSizes is set but no BlockName line defines a block");
	base = p->block_sizes ? p->bs_base : p->blk[0].nnodes;
	for (size_t i = 0; i < p->nblk; i++) {
		const blockrec *b = &p->blk[i];
		const char *name = topo_graph_vertex(p->t, b->id)->name;

		if (b->nnodes >= base)
			continue;
		if (p->block_sizes)
			return fail(p, b->line,
				    "block %s has %zu nodes, fewer than the base block size %" PRIu64
				    " (BlockSizes at line %d)",
				    name, b->nnodes, base, p->bs_line);
		return fail(p, b->line,
			    "block %s has %zu nodes, fewer than the %" PRIu64 " nodes of the first "
			    "block %s, which sets the base block size when BlockSizes is not given",
			    name, b->nnodes, base, topo_graph_vertex(p->t, p->blk[0].id)->name);
	}
	if (p->block_sizes)
		for (size_t i = 0; i < p->nblk; i++)
			if (topo_graph_set_attr(p->t, p->blk[i].id, "block_sizes", p->block_sizes) < 0)
				return oom(p, 0);
	return 0;
}

/* Copy the checked scratch graph into g, reusing vertices g already has. */
static int merge_into(conf_parser *p, topo_graph *g)
{
	size_t nv = topo_graph_nvertices(p->t), ne = topo_graph_nedges(p->t);
	int *map = malloc((nv + 1) * sizeof(*map));

	if (!map)
		return oom(p, 0);
	for (size_t i = 0; i < nv; i++) {
		const topo_vertex *s = topo_graph_vertex(p->t, (int)i);
		int id = topo_graph_find(g, s->kind, s->name);

		if (id < 0)
			id = topo_graph_add_vertex(g, s->kind, s->name);
		if (id < 0)
			goto nomem;
		map[i] = id;
		if (s->level != TOPO_LEVEL_UNKNOWN)
			topo_graph_vertex_mut(g, id)->level = s->level;
		for (int a = 0; a < s->nattrs; a++)
			if (topo_graph_set_attr(g, id, s->attrs[a].key, s->attrs[a].value) < 0)
				goto nomem;
	}
	for (size_t i = 0; i < ne; i++) {
		const topo_edge *s = topo_graph_edge(p->t, (int)i);

		if (topo_graph_add_edge(g, s->kind, map[s->a], map[s->b]) < 0)
			goto nomem;
	}
	free(map);
	return 0;
nomem:
	free(map);
	return oom(p, 0);
}

/* ---- the file -------------------------------------------------------------- */

typedef struct linebuf {
	char *s;
	size_t len, cap;
} linebuf;

static int lb_add(linebuf *b, char c)
{
	if (topo_grow(&b->s, &b->cap, b->len + 2, 1, 256))
		return -1;
	b->s[b->len++] = c;
	b->s[b->len] = '\0';
	return 0;
}

/* Append one physical line (without its newline) minus its comment; returns
 * 1 when it ends in a continuation backslash, 0 when not, -1 on OOM. */
static int append_physical(linebuf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n && s[i] != '#'; i++)
		if (lb_add(b, s[i] == '\r' ? ' ' : s[i]) < 0)
			return -1;
	while (b->len && (b->s[b->len - 1] == ' ' || b->s[b->len - 1] == '\t'))
		b->s[--b->len] = '\0';
	if (b->len && b->s[b->len - 1] == '\\') {
		b->s[--b->len] = '\0';
		return 1;
	}
	return 0;
}

static int parse_text(conf_parser *p, const char *text, size_t len)
{
	linebuf b = { NULL, 0, 0 };
	size_t pos = 0;
	int line = 0, start = 0, rc = -1;

	if (lb_add(&b, ' ') < 0)
		return oom(p, 0);
	b.len = 0;
	b.s[0] = '\0';
	while (pos < len) {
		size_t end = pos;
		int cont;

		while (end < len && text[end] != '\n')
			end++;
		line++;
		if (memchr(text + pos, '\0', end - pos)) {
			fail(p, line, "line contains a NUL byte");
			goto out;
		}
		if (!start)
			start = line;
		cont = append_physical(&b, text + pos, end - pos);
		if (cont < 0) {
			oom(p, line);
			goto out;
		}
		pos = end + 1;
		if (cont && pos < len)
			continue;
		if (handle_line(p, start, b.s) < 0)
			goto out;
		b.len = 0;
		b.s[0] = '\0';
		start = 0;
	}
	rc = 0;
out:
	free(b.s);
	return rc;
}

static void parser_free(conf_parser *p)
{
	for (size_t i = 0; i < p->nsw; i++) {
		topo_hostlist_free(&p->sw[i].children);
		free(p->sw[i].kids);
	}
	free(p->sw);
	free(p->blk);
	free(p->line_of);
	free(p->under);
	free(p->rec_of);
	free(p->block_sizes);
	topo_graph_free(p->t);
}

int topo_load_topology_conf_mem(topo_graph *g, const char *text, size_t len, const char *source,
				topo_error *err)
{
	conf_parser p;
	int rc = -1;

	memset(&p, 0, sizeof(p));
	p.source = source ? source : "";
	p.err = err;
	p.t = topo_graph_new();
	if (!p.t)
		return oom(&p, 0);
	if (parse_text(&p, text, len) < 0)
		goto out;
	if (p.mode == MODE_NONE) {
		fail(&p, 0, "no SwitchName or BlockName line: the file defines no topology");
		goto out;
	}
	if (p.mode == MODE_TREE && (resolve_children(&p) < 0 || tree_levels(&p) < 0))
		goto out;
	if (p.mode == MODE_BLOCK && finish_blocks(&p) < 0)
		goto out;
	rc = merge_into(&p, g);
	if (rc == 0)
		topo_error_clear(err);
out:
	parser_free(&p);
	return rc;
}

int topo_load_topology_conf(topo_graph *g, const char *path, topo_error *err)
{
	size_t len;
	char *buf = topo_read_file(path, TOPO_TOPOLOGY_CONF_MAX_BYTES, &len, err);
	int rc;

	if (!buf)
		return -1;
	rc = topo_load_topology_conf_mem(g, buf, len, path, err);
	free(buf);
	return rc;
}
