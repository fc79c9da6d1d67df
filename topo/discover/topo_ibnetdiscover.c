/*
 * topo_ibnetdiscover: reads `ibnetdiscover` text dumps (see the header).
 *
 * Two passes. The first reads every line into node records and port lines
 * and checks their syntax; a port line names its far end by the node name
 * that end's header uses ("S-2c5eab0300c26280"), which may come later in the
 * file. The second resolves those names to GUIDs and hands nodes and cables
 * to the topo_fabric builder, which checks ports and cabling and makes the
 * graph. Each port line describes its cable from one end; the builder keeps
 * one edge per cable.
 *
 * Format, as printed by infiniband-diags:
 *   switchguid=0x2c5eab0300b87b40(2c5eab0300b87b40)
 *   Switch  65 "S-2c5eab0300b87b40"  # "MF0;LEAF-1:MQM9701/U1" enhanced port 0 lid 73 lmc 0
 *   [1]  "H-e09d7303007a4bd8"[1](e09d7303007a4bd8)  # "dgx-01 mlx5_5" lid 647 4xNDR
 *   caguid=0xe09d730300156ff6
 *   Ca  1 "H-e09d730300156ff6"  # "dgx-01 HCA-6"
 *   [1](e09d730300156ff6)  "S-2c5eab0300c26480"[8]  # lid 246 lmc 0 "MF0;LEAF-2:MQM9701/U1" lid 119 4xNDR
 */
#include "topo_ibnetdiscover.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo_alloc.h"
#include "topo_io.h"

typedef struct pnode {
	topo_fnode_type type;
	uint64_t guid;
	int nports;
	char *name;
	char *desc;
	int lid;
	int line;
} pnode;

typedef struct pport {
	int node;           /* index into nodes */
	int port;
	uint64_t port_guid; /* "(guid)" after the local port: a CA port */
	int lid;            /* CA side: "# lid N lmc N" */
	char *rname;
	int rport;
	uint64_t rguid;     /* "(guid)" after the remote port: a CA port */
	int rlid;
	int width;
	char speed[8];
	int line;
} pport;

typedef struct parser {
	const char *source;
	topo_error *err;
	pnode *nodes;
	int nnodes;
	size_t capn;
	pport *ports;
	int nports;
	size_t capp;
	int cur;            /* node whose port lines follow; -1 none */
	uint64_t pending_guid; /* from a *guid= line, for the next header */
	int have_pending;
	int line;
} parser;

typedef struct name_ref {
	const char *name;
	int node;
	int line;
} name_ref;

static const char *const speeds[] = { "SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR", "NDR", "XDR" };

#define FAIL(P, ...)                                                    \
	do {                                                            \
		topo_error_set((P)->err, (P)->source, (P)->line, __VA_ARGS__); \
		return -1;                                              \
	} while (0)

static void parser_free(parser *p)
{
	for (int i = 0; i < p->nnodes; i++) {
		free(p->nodes[i].name);
		free(p->nodes[i].desc);
	}
	for (int i = 0; i < p->nports; i++)
		free(p->ports[i].rname);
	free(p->nodes);
	free(p->ports);
}

static const char *skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* Decimal number up to 1e9; -1 if none or too large. */
static int parse_uint(const char **s, int *out)
{
	long v = 0;
	const char *p = *s;

	if (!isdigit((unsigned char)*p))
		return -1;
	while (isdigit((unsigned char)*p)) {
		v = v * 10 + (*p++ - '0');
		if (v > 1000000000L)
			return -1;
	}
	*out = (int)v;
	*s = p;
	return 0;
}

/* 1 to 16 hex digits, optional 0x; stops at the first non-hex character. */
static int parse_hex(const char **s, uint64_t *out)
{
	const char *p = *s;
	uint64_t v = 0;
	int n = 0;

	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	for (; isxdigit((unsigned char)*p); p++, n++) {
		int d = isdigit((unsigned char)*p) ? *p - '0' : (tolower((unsigned char)*p) - 'a' + 10);

		v = (v << 4) | (uint64_t)d;
	}
	if (n < 1 || n > 16)
		return -1;
	*out = v;
	*s = p;
	return 0;
}

/* A quoted string starting at *s; `last` takes the last quote of the line
 * as the closing one (descriptions may hold quotes). */
static char *parse_quoted(const char **s, int last)
{
	const char *open = *s, *close;
	char *out;

	if (*open != '"')
		return NULL;
	close = last ? strrchr(open + 1, '"') : strchr(open + 1, '"');
	if (!close)
		return NULL;
	out = malloc((size_t)(close - open));
	if (!out)
		return NULL;
	memcpy(out, open + 1, (size_t)(close - open - 1));
	out[close - open - 1] = '\0';
	*s = close + 1;
	return out;
}

/* "lid N" at *s (after optional blanks); 0 if it is not there. */
static int parse_lid(const char **s, int *lid)
{
	const char *p = skip_ws(*s);

	if (strncmp(p, "lid", 3) != 0 || (p[3] != ' ' && p[3] != '\t'))
		return 0;
	p = skip_ws(p + 3);
	if (parse_uint(&p, lid) < 0)
		return -1;
	*s = p;
	return 1;
}

static int parse_rate(parser *p, const char *s, int *width, char *speed)
{
	const char *q = s;
	size_t n;
	int w;

	if (parse_uint(&q, &w) < 0 || *q != 'x')
		goto bad;
	q++;
	n = strcspn(q, " \t");
	if (w != 1 && w != 2 && w != 4 && w != 8 && w != 12)
		goto bad;
	for (size_t i = 0; i < sizeof(speeds) / sizeof(speeds[0]); i++)
		if (strlen(speeds[i]) == n && strncmp(q, speeds[i], n) == 0) {
			*width = w;
			snprintf(speed, 8, "%s", speeds[i]);
			return 0;
		}
bad:
	FAIL(p, "malformed link width/speed \"%.*s\" (expected e.g. 4xNDR)", (int)strcspn(s, " \t"),
	     s);
}

/* Skip an optional "[ext N]" and read an optional "(guid)". */
static int parse_port_suffix(parser *p, const char **s, uint64_t *guid)
{
	const char *q = *s;

	if (strncmp(q, "[ext ", 5) == 0) {
		q = strchr(q, ']');
		if (!q)
			FAIL(p, "port line is cut off inside \"[ext\"");
		q++;
	}
	if (*q == '(') {
		q++;
		if (parse_hex(&q, guid) < 0 || *q != ')')
			FAIL(p, "malformed GUID in \"%.*s\"", (int)strcspn(*s, " \t"), *s);
		q++;
	}
	*s = q;
	return 0;
}

/* "[1](guid) "S-..."[8](guid)  # lid 246 lmc 0 "desc" lid 119 4xNDR" */
static int parse_port(parser *p, const char *s)
{
	pport pp = { .node = p->cur, .line = p->line };
	int lmc;

	if (p->cur < 0)
		FAIL(p, "a port line comes before any Switch, Ca or Rt header (truncated file?)");
	s++;
	if (parse_uint(&s, &pp.port) < 0 || *s++ != ']')
		FAIL(p, "malformed port number in port line");
	if (parse_port_suffix(p, &s, &pp.port_guid) < 0)
		return -1;
	s = skip_ws(s);
	if (*s != '"')
		FAIL(p, "port line is cut off: no far-end node name");
	if (!(pp.rname = parse_quoted(&s, 0)))
		FAIL(p, "port line is cut off inside the far-end node name");
	if (*s != '[' || (s++, parse_uint(&s, &pp.rport) < 0) || *s++ != ']') {
		free(pp.rname);
		FAIL(p, "port line is cut off: no far-end port number");
	}
	if (parse_port_suffix(p, &s, &pp.rguid) < 0) {
		free(pp.rname);
		return -1;
	}
	s = skip_ws(s);
	if (*s != '#')
		goto cut;
	s = skip_ws(s + 1);
	if (parse_lid(&s, &pp.lid) < 0)
		goto cut;
	s = skip_ws(s);
	if (strncmp(s, "lmc", 3) == 0) {
		s = skip_ws(s + 3);
		if (parse_uint(&s, &lmc) < 0)
			goto cut;
		s = skip_ws(s);
	}
	if (*s != '"') /* the far end's description */
		goto cut;
	if (strrchr(s, '"') == s)
		goto cut;
	s = strrchr(s, '"') + 1;
	if (parse_lid(&s, &pp.rlid) != 1)
		goto cut;
	s = skip_ws(s);
	if (!*s)
		goto cut;
	if (parse_rate(p, s, &pp.width, pp.speed) < 0) {
		free(pp.rname);
		return -1;
	}
	if (topo_grow(&p->ports, &p->capp, (size_t)p->nports + 1, sizeof(*p->ports), 64) < 0) {
		free(pp.rname);
		FAIL(p, "out of memory");
	}
	p->ports[p->nports++] = pp;
	return 0;
cut:
	free(pp.rname);
	FAIL(p, "port line is cut off or malformed after the far-end port");
}

/* The GUID a header's node name carries ("S-<hex>", "H-<hex>", "R-<hex>"). */
static int guid_from_name(const char *name, uint64_t *guid)
{
	const char *q = name + 2;

	if (!name[0] || name[1] != '-' || !strchr("SHR", name[0]))
		return -1;
	return parse_hex(&q, guid) == 0 && *q == '\0' ? 0 : -1;
}

/* "Switch 65 "S-..." # "desc" enhanced port 0 lid 73 lmc 0" */
static int parse_header(parser *p, const char *s)
{
	size_t n = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz");
	pnode nd = { .line = p->line };
	const char *q;

	if (n == 6 && strncmp(s, "Switch", 6) == 0)
		nd.type = TOPO_FNODE_SWITCH;
	else if (n == 2 && strncmp(s, "Ca", 2) == 0)
		nd.type = TOPO_FNODE_CA;
	else if (n == 2 && strncmp(s, "Rt", 2) == 0)
		nd.type = TOPO_FNODE_ROUTER;
	else
		FAIL(p, "unknown node type \"%.*s\" (expected Switch, Ca or Rt)", (int)n, s);
	s = skip_ws(s + n);
	if (parse_uint(&s, &nd.nports) < 0)
		FAIL(p, "malformed port count in node header");
	s = skip_ws(s);
	if (!(nd.name = parse_quoted(&s, 0)))
		FAIL(p, "node header is cut off: no node name");
	s = skip_ws(s);
	if (*s != '#' || *(q = skip_ws(s + 1)) != '"' || !(nd.desc = parse_quoted(&q, 1))) {
		free(nd.name);
		FAIL(p, "node header is cut off: no node description");
	}
	if (nd.type == TOPO_FNODE_SWITCH) {
		const char *l = strstr(q, " lid ");

		if (l && parse_lid(&l, &nd.lid) < 0)
			nd.lid = 0;
	}
	if (p->have_pending)
		nd.guid = p->pending_guid;
	else if (guid_from_name(nd.name, &nd.guid) < 0) {
		topo_error_set(p->err, p->source, p->line,
			       "cannot tell the GUID of node \"%s\": no guid= line before it", nd.name);
		goto fail;
	}
	p->have_pending = 0;
	if (topo_grow(&p->nodes, &p->capn, (size_t)p->nnodes + 1, sizeof(*p->nodes), 64) < 0) {
		topo_error_set(p->err, p->source, p->line, "out of memory");
		goto fail;
	}
	p->cur = p->nnodes;
	p->nodes[p->nnodes++] = nd;
	return 0;
fail:
	free(nd.name);
	free(nd.desc);
	return -1;
}

/* "switchguid=0x...(...)", "caguid=0x...", "rtguid=..."; others are ignored. */
static int parse_keyval(parser *p, const char *s)
{
	const char *eq = strchr(s, '=');
	const char *v = eq + 1;
	size_t klen = (size_t)(eq - s);

	if ((klen == 10 && strncmp(s, "switchguid", 10) == 0) ||
	    (klen == 6 && (strncmp(s, "caguid", 6) == 0 || strncmp(s, "rtguid", 6) == 0))) {
		if (parse_hex(&v, &p->pending_guid) < 0 || (*v && *v != '(' && *v != ' '))
			FAIL(p, "malformed GUID \"%s\"", eq + 1);
		p->have_pending = 1;
	}
	return 0;
}

static int parse_line(parser *p, char *s)
{
	size_t n = strlen(s);

	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	s = (char *)skip_ws(s);
	if (!*s) {
		p->cur = -1; /* a blank line ends a node's record */
		return 0;
	}
	if (*s == '#')
		return 0;
	if (*s == '[')
		return parse_port(p, s);
	if (isalpha((unsigned char)*s)) {
		size_t w = strcspn(s, " \t=");

		if (s[w] == '=')
			return parse_keyval(p, s);
		if (s[w] && isdigit((unsigned char)*skip_ws(s + w)))
			return parse_header(p, s);
	}
	FAIL(p, "line is not part of the ibnetdiscover format: \"%.40s\"", s);
}

static int parse_all(parser *p, const char *text, size_t len)
{
	char *buf = NULL;
	size_t cap = 0, pos = 0;
	int rc = 0;

	while (pos < len && rc == 0) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - (text + pos)) : len - pos;

		p->line++;
		if (memchr(text + pos, '\0', ll)) {
			topo_error_set(p->err, p->source, p->line, "line contains a NUL byte");
			rc = -1;
			break;
		}
		if (ll + 1 > cap) {
			char *nb = realloc(buf, ll + 1);

			if (!nb) {
				topo_error_set(p->err, p->source, p->line, "out of memory");
				rc = -1;
				break;
			}
			buf = nb;
			cap = ll + 1;
		}
		memcpy(buf, text + pos, ll);
		buf[ll] = '\0';
		rc = parse_line(p, buf);
		pos += ll + 1;
	}
	free(buf);
	return rc;
}

static int cmp_name_ref(const void *pa, const void *pb)
{
	const name_ref *a = pa, *b = pb;
	int c = strcmp(a->name, b->name);

	return c ? c : (a->line > b->line) - (a->line < b->line);
}

/* Node names sorted for lookup; a name declared twice is an error. */
static name_ref *index_names(parser *p)
{
	name_ref *refs = malloc(((size_t)p->nnodes + 1) * sizeof(*refs));
	int dup = -1;

	if (!refs) {
		topo_error_set(p->err, p->source, 0, "out of memory");
		return NULL;
	}
	for (int i = 0; i < p->nnodes; i++)
		refs[i] = (name_ref){ p->nodes[i].name, i, p->nodes[i].line };
	qsort(refs, p->nnodes, sizeof(*refs), cmp_name_ref);
	for (int i = 1; i < p->nnodes; i++)
		if (strcmp(refs[i].name, refs[i - 1].name) == 0 &&
		    (dup < 0 || refs[i].line < refs[dup].line))
			dup = i;
	if (dup >= 0) {
		topo_error_set(p->err, p->source, refs[dup].line,
			       "node name \"%s\" is declared twice (first at line %d)", refs[dup].name,
			       refs[dup - 1].line);
		free(refs);
		return NULL;
	}
	return refs;
}

static int feed_links(parser *p, topo_fabric *f, const name_ref *refs)
{
	for (int i = 0; i < p->nports; i++) {
		const pport *pp = &p->ports[i];
		const pnode *a = &p->nodes[pp->node], *b;
		name_ref key = { pp->rname, -1, 0 };
		const name_ref *r = NULL;
		topo_fabric_link link = { .width = pp->width, .speed = pp->speed,
					  .state = TOPO_LINK_ACTIVE };
		int lo = 0, hi = p->nnodes - 1;

		while (lo <= hi && !r) { /* first entry with the name */
			int mid = lo + (hi - lo) / 2, c = strcmp(refs[mid].name, key.name);

			if (c == 0)
				r = &refs[mid];
			else if (c < 0)
				lo = mid + 1;
			else
				hi = mid - 1;
		}
		if (!r) {
			topo_error_set(p->err, p->source, pp->line,
				       "port %d is cabled to \"%s\", which the file never declares (truncated file?)",
				       pp->port, pp->rname);
			return -1;
		}
		b = &p->nodes[r->node];
		link.a = (topo_fabric_end){ a->guid, pp->port,
					    a->type == TOPO_FNODE_CA ? pp->port_guid : 0,
					    a->type == TOPO_FNODE_CA ? pp->lid : 0 };
		link.b = (topo_fabric_end){ b->guid, pp->rport,
					    b->type == TOPO_FNODE_CA ? pp->rguid : 0,
					    b->type == TOPO_FNODE_CA ? pp->rlid : 0 };
		if (topo_fabric_add_link(f, &link, pp->line, p->err) < 0)
			return -1;
	}
	return 0;
}

static int feed(parser *p, topo_graph *g, const topo_fabric_opts *opts)
{
	name_ref *refs = index_names(p);
	topo_fabric *f;
	int rc = -1;

	if (!refs)
		return -1;
	f = topo_fabric_new(g, opts, p->source, p->err);
	if (!f) {
		free(refs);
		return -1;
	}
	for (int i = 0; i < p->nnodes; i++) {
		const pnode *n = &p->nodes[i];
		topo_fabric_node fn = { n->type, n->guid, n->nports, n->desc, n->lid };

		if (topo_fabric_add_node(f, &fn, n->line, p->err) < 0)
			goto out;
	}
	if (feed_links(p, f, refs) < 0)
		goto out;
	rc = topo_fabric_finish(f, p->err);
out:
	topo_fabric_free(f);
	free(refs);
	return rc;
}

int topo_load_ibnetdiscover_mem(topo_graph *g, const char *text, size_t len, const char *source,
				const topo_fabric_opts *opts, topo_error *err)
{
	parser p = { .source = source ? source : "", .err = err, .cur = -1 };
	int rc;

	topo_error_clear(err);
	rc = parse_all(&p, text, len);
	if (rc == 0 && p.nnodes == 0) {
		topo_error_set(err, p.source, 0, "no Switch or Ca node found: not an ibnetdiscover dump");
		rc = -1;
	}
	if (rc == 0)
		rc = feed(&p, g, opts);
	parser_free(&p);
	return rc;
}

int topo_load_ibnetdiscover(topo_graph *g, const char *path, const topo_fabric_opts *opts,
			    topo_error *err)
{
	size_t len;
	char *text = topo_read_file(path, TOPO_IO_MAX_BYTES, &len, err);
	int rc;

	if (!text)
		return -1;
	rc = topo_load_ibnetdiscover_mem(g, text, len, path, opts, err);
	free(text);
	return rc;
}
