/*
 * topo_fabric: the one place where discovered InfiniBand nodes and cables
 * become topo_graph vertices and edges (see topo_fabric.h).
 *
 * Loaders declare nodes and cables in whatever order they meet them; the
 * builder checks them as they come (ports in range, no port cabled twice,
 * no GUID declared twice) and keeps them until topo_fabric_finish(), which
 * creates the graph in a fixed order (switches by name, hosts by name, HCAs
 * by name, cables by GUID and port), so the same fabric gives the same graph
 * whichever loader read it and in whatever order.
 *
 * CA classification, in this order:
 *   - description containing "Aggregation Node": a SHARP aggregation node;
 *     the switch it hangs off gets TOPO_CAP_SHARP, no vertex is made;
 *   - description not matching the host pattern: anomaly "unnamed-hca";
 *   - host name from a short list of distribution defaults ("localhost",
 *     "ubuntu", ...): anomaly "generic-hostname";
 *   - host name matching the fabric-manager pattern (default: contains
 *     "ufm", any case): anomaly "fabric-manager";
 *   - two CAs claiming the same "host hca" pair: anomaly "duplicate-hostname"
 *     and the whole host is left out (we cannot tell the machines apart);
 *   - otherwise an HCA part of a compute host.
 * Anomalous CAs get no vertex, so they never take part in placement.
 */
#include "topo_fabric.h"

#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "topo_alloc.h"
#include "topo_groups.h"
#include "topo_regex.h"

#define MAX_PORTS 255 /* IB NumPorts is an 8-bit field */

typedef struct fport {
	int peer;           /* node index of the other end; -1 uncabled */
	int peer_port;
	uint64_t port_guid; /* CA port GUID as seen by either end */
	int lid;            /* CA port LID */
	int width;
	char speed[8];
	topo_link_state state;
	int line;
} fport;

typedef enum ca_class {
	CA_COMPUTE = 0,
	CA_SHARP,
	CA_UNNAMED,
	CA_GENERIC,
	CA_MANAGER,
	CA_DUPLICATE
} ca_class;

typedef struct fnode {
	topo_fnode_type type;
	uint64_t guid;
	int nports;
	char *desc;
	int lid;
	int line;
	fport *ports;   /* nports + 1 entries, [0] unused */
	/* filled by finish */
	ca_class cls;
	char *host;     /* CA: host name from the pattern */
	char *hca;      /* CA: HCA name from the pattern */
	int vertex;     /* switch vertex id */
} fnode;

struct topo_fabric {
	topo_graph *g;
	char *source;
	regex_t host_re;
	regex_t manager_re;
	fnode *nodes;
	int nnodes;
	size_t cap;
	int *slots; /* guid hash -> node index; -1 empty */
	size_t nslots;
	int finished;
};

static const char *const generic_hostnames[] = {
	"localhost", "localhost.localdomain", "ubuntu", "debian", "centos", "rocky",
	"rhel", "redhat", "fedora", "linux", "(none)", "none", "unknown", "host",
};

static uint64_t guid_hash(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

static int node_find(const topo_fabric *f, uint64_t guid)
{
	size_t i = guid_hash(guid) & (f->nslots - 1);

	for (; f->slots[i] >= 0; i = (i + 1) & (f->nslots - 1))
		if (f->nodes[f->slots[i]].guid == guid)
			return f->slots[i];
	return -1;
}

static void slot_put(topo_fabric *f, int idx)
{
	size_t i = guid_hash(f->nodes[idx].guid) & (f->nslots - 1);

	while (f->slots[i] >= 0)
		i = (i + 1) & (f->nslots - 1);
	f->slots[i] = idx;
}

static int slots_grow(topo_fabric *f)
{
	size_t n = f->nslots ? f->nslots * 2 : 256;
	int *s = malloc(n * sizeof(*s));

	if (!s)
		return -1;
	free(f->slots);
	f->slots = s;
	f->nslots = n;
	for (size_t i = 0; i < n; i++)
		s[i] = -1;
	for (int i = 0; i < f->nnodes; i++)
		slot_put(f, i);
	return 0;
}

static int compile(regex_t *re, const char *pattern, int flags, const char *what,
		   const char *source, topo_error *err)
{
	char msg[200];

	if (topo_regex_compile(re, pattern, flags, msg, sizeof(msg)) < 0) {
		topo_error_set(err, source, 0, "the %s \"%.80s%s\" is not a valid regular expression: %s",
			       what, pattern, strlen(pattern) > 80 ? "..." : "", msg);
		return -1;
	}
	return 0;
}

topo_fabric *topo_fabric_new(topo_graph *g, const topo_fabric_opts *opts, const char *source,
			     topo_error *err)
{
	const char *hp = opts && opts->host_pattern ? opts->host_pattern
						    : TOPO_FABRIC_DEFAULT_HOST_PATTERN;
	const char *mp = opts && opts->manager_pattern ? opts->manager_pattern
						       : TOPO_FABRIC_DEFAULT_MANAGER_PATTERN;
	topo_fabric *f = calloc(1, sizeof(*f));

	if (!f || !(f->source = strdup(source ? source : ""))) {
		free(f);
		topo_error_set(err, source, 0, "out of memory");
		return NULL;
	}
	f->g = g;
	if (compile(&f->host_re, hp, 0, "host pattern", source, err) < 0)
		goto fail;
	if (f->host_re.re_nsub < 2) {
		regfree(&f->host_re);
		topo_error_set(err, source, 0,
			       "the host pattern \"%s\" needs two groups: the host name and the HCA name",
			       hp);
		goto fail;
	}
	if (compile(&f->manager_re, mp, REG_ICASE | REG_NOSUB, "fabric-manager pattern", source,
		    err) < 0) {
		regfree(&f->host_re);
		goto fail;
	}
	if (slots_grow(f) < 0) {
		regfree(&f->host_re);
		regfree(&f->manager_re);
		topo_error_set(err, source, 0, "out of memory");
		goto fail;
	}
	return f;
fail:
	free(f->source);
	free(f);
	return NULL;
}

void topo_fabric_free(topo_fabric *f)
{
	if (!f)
		return;
	for (int i = 0; i < f->nnodes; i++) {
		free(f->nodes[i].desc);
		free(f->nodes[i].ports);
		free(f->nodes[i].host);
		free(f->nodes[i].hca);
	}
	free(f->nodes);
	free(f->slots);
	regfree(&f->host_re);
	regfree(&f->manager_re);
	free(f->source);
	free(f);
}

static const char *type_name(topo_fnode_type t)
{
	return t == TOPO_FNODE_SWITCH ? "switch" : t == TOPO_FNODE_CA ? "CA" : "router";
}

int topo_fabric_add_node(topo_fabric *f, const topo_fabric_node *node, int line, topo_error *err)
{
	fnode *n;
	int prev;

	if (node->type != TOPO_FNODE_SWITCH && node->type != TOPO_FNODE_CA &&
	    node->type != TOPO_FNODE_ROUTER) {
		topo_error_set(err, f->source, line, "node 0x%016" PRIx64 " has unknown type %d",
			       node->guid, (int)node->type);
		return -1;
	}
	if (node->nports < 1 || node->nports > MAX_PORTS) {
		topo_error_set(err, f->source, line, "%s 0x%016" PRIx64 " claims %d ports (1 to %d)",
			       type_name(node->type), node->guid, node->nports, MAX_PORTS);
		return -1;
	}
	prev = node_find(f, node->guid);
	if (prev >= 0) {
		topo_error_set(err, f->source, line,
			       "%s GUID 0x%016" PRIx64 " is declared twice (first at line %d)",
			       type_name(node->type), node->guid, f->nodes[prev].line);
		return -1;
	}
	if ((size_t)(f->nnodes + 1) * 2 > f->nslots && slots_grow(f) < 0)
		goto oom;
	if (topo_grow(&f->nodes, &f->cap, (size_t)f->nnodes + 1, sizeof(*f->nodes), 64) < 0)
		goto oom;
	n = &f->nodes[f->nnodes];
	memset(n, 0, sizeof(*n));
	n->type = node->type;
	n->guid = node->guid;
	n->nports = node->nports;
	n->lid = node->lid;
	n->line = line;
	n->vertex = -1;
	n->desc = strdup(node->desc ? node->desc : "");
	n->ports = calloc(node->nports + 1, sizeof(*n->ports));
	if (!n->desc || !n->ports) {
		free(n->desc);
		free(n->ports);
		goto oom;
	}
	for (int p = 0; p <= node->nports; p++)
		n->ports[p].peer = -1;
	slot_put(f, f->nnodes++);
	return 0;
oom:
	topo_error_set(err, f->source, line, "out of memory");
	return -1;
}

/* Resolve one end of a cable to its node; error if undeclared or out of range. */
static int end_check(topo_fabric *f, const topo_fabric_end *e, int line, topo_error *err)
{
	int n = node_find(f, e->guid);

	if (n < 0) {
		topo_error_set(err, f->source, line,
			       "a cable ends at node 0x%016" PRIx64 ", which was never declared",
			       e->guid);
		return -1;
	}
	if (e->port < 1 || e->port > f->nodes[n].nports) {
		topo_error_set(err, f->source, line, "%s port %d is beyond the %s's %d ports",
			       type_name(f->nodes[n].type), e->port, type_name(f->nodes[n].type),
			       f->nodes[n].nports);
		return -1;
	}
	return n;
}

static void end_fill(fport *p, const topo_fabric_end *e)
{
	if (e->port_guid)
		p->port_guid = e->port_guid;
	if (e->lid)
		p->lid = e->lid;
}

static int cabled_twice(topo_fabric *f, int n, int port, int line, topo_error *err)
{
	const fport *p = &f->nodes[n].ports[port];
	const fnode *o = &f->nodes[p->peer];

	topo_error_set(err, f->source, line,
		       "%s 0x%016" PRIx64 " port %d is cabled twice: it already goes to %s 0x%016" PRIx64
		       " port %d (line %d)",
		       type_name(f->nodes[n].type), f->nodes[n].guid, port, type_name(o->type), o->guid,
		       p->peer_port, p->line);
	return -1;
}

int topo_fabric_add_link(topo_fabric *f, const topo_fabric_link *link, int line, topo_error *err)
{
	int a = end_check(f, &link->a, line, err), b;
	fport *pa, *pb;

	if (a < 0 || (b = end_check(f, &link->b, line, err)) < 0)
		return -1;
	if (a == b && link->a.port == link->b.port) {
		topo_error_set(err, f->source, line, "%s 0x%016" PRIx64 " port %d is cabled to itself",
			       type_name(f->nodes[a].type), f->nodes[a].guid, link->a.port);
		return -1;
	}
	pa = &f->nodes[a].ports[link->a.port];
	pb = &f->nodes[b].ports[link->b.port];
	if (pa->peer == b && pa->peer_port == link->b.port && pb->peer == a &&
	    pb->peer_port == link->a.port) {
		/* the same cable seen from its other end: keep what it adds */
		end_fill(pa, &link->a);
		end_fill(pb, &link->b);
		return 0;
	}
	if (pa->peer >= 0)
		return cabled_twice(f, a, link->a.port, line, err);
	if (pb->peer >= 0)
		return cabled_twice(f, b, link->b.port, line, err);
	for (int i = 0; i < 2; i++) {
		fport *p = i ? pb : pa;

		p->peer = i ? a : b;
		p->peer_port = i ? link->a.port : link->b.port;
		p->width = link->width;
		snprintf(p->speed, sizeof(p->speed), "%s", link->speed ? link->speed : "");
		p->state = link->state;
		p->line = line;
	}
	end_fill(pa, &link->a);
	end_fill(pb, &link->b);
	return 0;
}

/* ---- finish: classification -------------------------------------------- */

static char *match_group(const char *s, const regmatch_t *m)
{
	size_t len;
	char *out;

	if (m->rm_so < 0 || m->rm_eo < m->rm_so)
		return NULL;
	len = (size_t)(m->rm_eo - m->rm_so);
	out = malloc(len + 1);
	if (out) {
		memcpy(out, s + m->rm_so, len);
		out[len] = '\0';
	}
	return out;
}

static int is_generic_hostname(const char *h)
{
	for (size_t i = 0; i < sizeof(generic_hostnames) / sizeof(generic_hostnames[0]); i++)
		if (strcasecmp(h, generic_hostnames[i]) == 0)
			return 1;
	return 0;
}

/* Split a CA's description into host and HCA and pick its class. */
static int classify_ca(topo_fabric *f, fnode *n)
{
	regmatch_t m[3];

	if (strstr(n->desc, "Aggregation Node")) {
		n->cls = CA_SHARP;
		return 0;
	}
	if (regexec(&f->host_re, n->desc, 3, m, 0) != 0 || m[1].rm_so < 0 || m[2].rm_so < 0 ||
	    m[1].rm_eo == m[1].rm_so || m[2].rm_eo == m[2].rm_so ||
	    memchr(n->desc + m[1].rm_so, '/', (size_t)(m[1].rm_eo - m[1].rm_so))) {
		n->cls = CA_UNNAMED;
		return 0;
	}
	n->host = match_group(n->desc, &m[1]);
	n->hca = match_group(n->desc, &m[2]);
	if (!n->host || !n->hca)
		return -1;
	if (is_generic_hostname(n->host))
		n->cls = CA_GENERIC;
	else if (regexec(&f->manager_re, n->host, 0, NULL, 0) == 0)
		n->cls = CA_MANAGER;
	else
		n->cls = CA_COMPUTE;
	return 0;
}

/* Sort keys: qsort has no context argument, so each entry carries its key. */
typedef struct node_key {
	uint64_t guid;
	const char *host, *hca;
	int node;
} node_key;

static int cmp_u64(uint64_t a, uint64_t b) { return (a > b) - (a < b); }

static int cmp_key_guid(const void *pa, const void *pb)
{
	return cmp_u64(((const node_key *)pa)->guid, ((const node_key *)pb)->guid);
}

/* CAs by (host, hca, guid): duplicates and a host's HCAs end up adjacent. */
static int cmp_key_host(const void *pa, const void *pb)
{
	const node_key *a = pa, *b = pb;
	int c = strcmp(a->host, b->host);

	if (!c)
		c = strcmp(a->hca, b->hca);
	return c ? c : cmp_u64(a->guid, b->guid);
}

/* Where a CA is cabled, for anomaly texts: "A09-P1-IBLEAF-04-02 port 6". */
static void ca_where(const topo_fabric *f, const fnode *n, char *buf, size_t len)
{
	snprintf(buf, len, "an uncabled port");
	for (int p = 1; p <= n->nports; p++) {
		const fport *fp = &n->ports[p];

		if (fp->peer < 0)
			continue;
		const fnode *o = &f->nodes[fp->peer];

		if (o->vertex >= 0)
			snprintf(buf, len, "%s port %d", topo_graph_vertex(f->g, o->vertex)->name,
				 fp->peer_port);
		else
			snprintf(buf, len, "node 0x%016" PRIx64 " port %d", o->guid, fp->peer_port);
		return;
	}
}

/* Group anomalous CAs of one host name into one anomaly. */
static int report_host_group(topo_fabric *f, const int *idx, int from, int to, const char *kind,
			     const char *why)
{
	char guids[TOPO_ERROR_TEXT_LEN / 2] = "";
	size_t used = 0;

	for (int i = from; i < to && used + 24 < sizeof(guids); i++)
		used += (size_t)snprintf(guids + used, sizeof(guids) - used, "%s0x%016" PRIx64,
					 i > from ? ", " : "", f->nodes[idx[i]].guid);
	return topo_graph_add_anomaly(f->g, kind, f->nodes[idx[from]].host,
				      "%d CA%s (%s) report the host name \"%s\", %s; left out of the compute hosts",
				      to - from, to - from > 1 ? "s" : "", guids,
				      f->nodes[idx[from]].host, why);
}

/* Classify all CAs and list the named ones in named[] sorted by (host, hca);
 * a host with a repeated (host, hca) pair is a duplicate as a whole. */
static int classify_all(topo_fabric *f, const int *order, int *named, int *nnamed)
{
	node_key *keys = malloc(((size_t)f->nnodes + 1) * sizeof(*keys));
	int k = 0;

	if (!keys)
		return -1;
	for (int i = 0; i < f->nnodes; i++) {
		fnode *n = &f->nodes[order[i]];

		if (n->type != TOPO_FNODE_CA)
			continue;
		if (classify_ca(f, n) < 0) {
			free(keys);
			return -1;
		}
		if (n->host)
			keys[k++] = (node_key){ n->guid, n->host, n->hca, order[i] };
	}
	qsort(keys, k, sizeof(*keys), cmp_key_host);
	for (int i = 0; i < k; i++)
		named[i] = keys[i].node;
	for (int i = 0; i < k;) {
		int j = i + 1, dup = 0;

		for (; j < k && strcmp(keys[j].host, keys[i].host) == 0; j++)
			dup |= strcmp(keys[j].hca, keys[j - 1].hca) == 0;
		for (int m = i; dup && m < j; m++)
			if (f->nodes[keys[m].node].cls == CA_COMPUTE)
				f->nodes[keys[m].node].cls = CA_DUPLICATE;
		i = j;
	}
	free(keys);
	*nnamed = k;
	return 0;
}

static int report_named(topo_fabric *f, const int *named, int k)
{
	for (int i = 0; i < k;) {
		int j = i + 1;
		const fnode *n = &f->nodes[named[i]];

		while (j < k && strcmp(f->nodes[named[j]].host, n->host) == 0)
			j++;
		if (n->cls == CA_GENERIC &&
		    report_host_group(f, named, i, j, "generic-hostname",
				      "a distribution default that does not identify a machine") < 0)
			return -1;
		if (n->cls == CA_MANAGER &&
		    report_host_group(f, named, i, j, "fabric-manager",
				      "which looks like the fabric manager") < 0)
			return -1;
		if (n->cls == CA_DUPLICATE &&
		    report_host_group(f, named, i, j, "duplicate-hostname",
				      "with an HCA name used twice, so they are more than one machine") < 0)
			return -1;
		i = j;
	}
	return 0;
}

/* ---- finish: vertices --------------------------------------------------- */

/* Switch name from its description: "MF0;NAME:MODEL/U1" -> NAME, a single
 * token -> itself; anything else (vendor defaults) -> "". */
static void switch_name_from_desc(const char *desc, char *out, size_t len)
{
	const char *semi = strncmp(desc, "MF0;", 4) == 0 ? desc + 3 : NULL;
	const char *colon;

	out[0] = '\0';
	if (semi && (colon = strchr(semi + 1, ':')) && colon > semi + 1 &&
	    (size_t)(colon - semi - 1) < len) {
		snprintf(out, len, "%.*s", (int)(colon - semi - 1), semi + 1);
	} else if (*desc && !strpbrk(desc, " \t") && strlen(desc) < len) {
		snprintf(out, len, "%s", desc);
	}
	if (strpbrk(out, " \t/\""))
		out[0] = '\0';
}

typedef struct named_sw {
	char name[128];
	int node;
} named_sw;

static int cmp_named_sw(const void *pa, const void *pb)
{
	const named_sw *a = pa, *b = pb;
	int c = strcmp(a->name, b->name);

	return c ? c : (a->node > b->node) - (a->node < b->node);
}

static int add_switches(topo_fabric *f, const int *order, topo_error *err)
{
	named_sw *sw = calloc((size_t)f->nnodes + 1, sizeof(*sw));
	int k = 0, rc = -1;

	if (!sw)
		return -1;
	for (int i = 0; i < f->nnodes; i++) {
		const fnode *n = &f->nodes[order[i]];

		if (n->type != TOPO_FNODE_SWITCH)
			continue;
		sw[k].node = order[i];
		switch_name_from_desc(n->desc, sw[k].name, sizeof(sw[k].name));
		k++;
	}
	qsort(sw, k, sizeof(*sw), cmp_named_sw);
	/* a name two switches share identifies neither: fall back to GUIDs */
	for (int i = 0; i < k;) {
		int j = i + 1;

		while (j < k && strcmp(sw[j].name, sw[i].name) == 0)
			j++;
		if (j - i > 1 && sw[i].name[0] &&
		    topo_graph_add_anomaly(f->g, "duplicate-switch-name", sw[i].name,
					   "%d switches describe themselves as \"%s\"; they are named by GUID",
					   j - i, sw[i].name) < 0)
			goto out;
		for (int m = i; j - i > 1 && m < j; m++)
			sw[m].name[0] = '\0';
		i = j;
	}
	for (int i = 0; i < k; i++)
		if (!sw[i].name[0])
			snprintf(sw[i].name, sizeof(sw[i].name), "S-%016" PRIx64,
				 f->nodes[sw[i].node].guid);
	qsort(sw, k, sizeof(*sw), cmp_named_sw);
	for (int i = 0; i < k; i++) {
		fnode *n = &f->nodes[sw[i].node];
		int id = topo_graph_add_vertex(f->g, TOPO_V_SWITCH, sw[i].name);
		topo_vertex *v;

		if (id < 0) {
			topo_error_set(err, f->source, n->line,
				       "switch 0x%016" PRIx64 " cannot be named \"%s\": the name is taken",
				       n->guid, sw[i].name);
			goto out;
		}
		v = topo_graph_vertex_mut(f->g, id);
		v->guid = n->guid;
		v->lid = n->lid;
		v->nports = n->nports;
		if (topo_set_str(&v->desc, n->desc) < 0)
			goto out;
		n->vertex = id;
	}
	rc = 0;
out:
	free(sw);
	return rc;
}

static int cabled_ports(const fnode *n)
{
	int c = 0;

	for (int p = 1; p <= n->nports; p++)
		c += n->ports[p].peer >= 0;
	return c;
}

/* One HCA vertex per cabled port of a compute CA ("hca", or "hca.P" when the
 * CA has several cabled ports). */
static int add_hca_ports(topo_fabric *f, int host, fnode *n, int *port_vertex)
{
	int multi = cabled_ports(n) > 1;

	for (int p = 1; p <= n->nports; p++) {
		const fport *fp = &n->ports[p];
		char local[300];
		topo_vertex *v;
		int id;

		if (fp->peer < 0 && (p > 1 || cabled_ports(n) > 0))
			continue;
		if (multi)
			snprintf(local, sizeof(local), "%s.%d", n->hca, p);
		else
			snprintf(local, sizeof(local), "%s", n->hca);
		id = topo_graph_add_part(f->g, host, TOPO_V_HCA, local);
		if (id < 0)
			return -1;
		v = topo_graph_vertex_mut(f->g, id);
		v->guid = fp->port_guid ? fp->port_guid : n->guid;
		v->lid = fp->lid;
		v->port = p;
		v->link_layer = TOPO_LL_IB;
		if (topo_set_str(&v->device, n->hca) < 0 || topo_set_str(&v->desc, n->desc) < 0)
			return -1;
		port_vertex[p] = id;
	}
	return 0;
}

/* Hosts in name order, each with its HCAs in name order (named[] is sorted so). */
static int add_hosts(topo_fabric *f, const int *named, int k, int **port_vertex,
		     topo_error *err)
{
	int host = -1;
	const char *cur = NULL;

	for (int i = 0; i < k; i++) {
		fnode *n = &f->nodes[named[i]];

		if (n->cls != CA_COMPUTE)
			continue;
		if (!cur || strcmp(cur, n->host) != 0) {
			host = topo_graph_add_vertex(f->g, TOPO_V_HOST, n->host);
			if (host < 0) {
				topo_error_set(err, f->source, n->line,
					       "cannot add host \"%s\"", n->host);
				return -1;
			}
			cur = n->host;
		}
		if (add_hca_ports(f, host, n, port_vertex[named[i]]) < 0) {
			topo_error_set(err, f->source, n->line, "cannot add HCA \"%s\" of host \"%s\"",
				       n->hca, n->host);
			return -1;
		}
	}
	return 0;
}

/* The vertex that stands for port p of node n, or -1. */
static int end_vertex(const topo_fabric *f, int n, int p, int *const *port_vertex)
{
	const fnode *x = &f->nodes[n];

	if (x->type == TOPO_FNODE_SWITCH)
		return x->vertex;
	if (x->type == TOPO_FNODE_CA)
		return port_vertex[n][p];
	return -1;
}

typedef struct cable_end {
	int node, port, vertex;
} cable_end;

static int node_less(const topo_fabric *f, int a, int pa, int b, int pb)
{
	if (f->nodes[a].guid != f->nodes[b].guid)
		return f->nodes[a].guid < f->nodes[b].guid;
	return pa < pb;
}

/* One fabric edge per cable whose both ends have vertices; switches cabled to
 * a non-SHARP CA are leaves; SHARP CAs mark their switch. */
static int add_cables(topo_fabric *f, const int *order, int *const *port_vertex)
{
	for (int i = 0; i < f->nnodes; i++) {
		int n = order[i];
		const fnode *x = &f->nodes[n];

		for (int p = 1; p <= x->nports; p++) {
			const fport *fp = &x->ports[p];
			cable_end e1, e2;
			topo_edge *ed;
			int e;

			if (fp->peer < 0)
				continue;
			if (x->type == TOPO_FNODE_CA && f->nodes[fp->peer].type == TOPO_FNODE_SWITCH) {
				topo_vertex *sw = topo_graph_vertex_mut(f->g, f->nodes[fp->peer].vertex);

				if (x->cls == CA_SHARP)
					sw->caps |= TOPO_CAP_SHARP;
				else
					sw->level = TOPO_LEVEL_LEAF;
			}
			if (!node_less(f, n, p, fp->peer, fp->peer_port))
				continue;
			e1 = (cable_end){ n, p, end_vertex(f, n, p, port_vertex) };
			e2 = (cable_end){ fp->peer, fp->peer_port,
					  end_vertex(f, fp->peer, fp->peer_port, port_vertex) };
			if (e1.vertex < 0 || e2.vertex < 0)
				continue;
			if (f->nodes[e2.node].type == TOPO_FNODE_CA) { /* an HCA is end a */
				cable_end t = e1;

				e1 = e2;
				e2 = t;
			}
			e = topo_graph_add_edge(f->g, TOPO_E_FABRIC, e1.vertex, e2.vertex);
			if (e < 0)
				return -1;
			ed = topo_graph_edge_mut(f->g, e);
			ed->port_a = f->nodes[e1.node].type == TOPO_FNODE_CA ? 0 : e1.port;
			ed->port_b = f->nodes[e2.node].type == TOPO_FNODE_CA ? 0 : e2.port;
			topo_edge_set_rate(ed, fp->width, fp->speed);
			ed->state = fp->state;
		}
	}
	return 0;
}

static int report_unnamed(topo_fabric *f, const int *order)
{
	char where[200];

	for (int i = 0; i < f->nnodes; i++) {
		const fnode *n = &f->nodes[order[i]];
		char subject[24];

		if (n->type == TOPO_FNODE_ROUTER) {
			snprintf(subject, sizeof(subject), "0x%016" PRIx64, n->guid);
			if (topo_graph_add_anomaly(f->g, "router", subject,
						   "router \"%s\" is not modelled; its cables are left out",
						   n->desc) < 0)
				return -1;
		}
		if (n->type != TOPO_FNODE_CA || n->cls != CA_UNNAMED)
			continue;
		ca_where(f, n, where, sizeof(where));
		snprintf(subject, sizeof(subject), "0x%016" PRIx64, n->guid);
		if (topo_graph_add_anomaly(f->g, "unnamed-hca", subject,
					   "CA \"%s\" on %s has no host name; left out of the compute hosts",
					   n->desc, where) < 0)
			return -1;
	}
	return 0;
}

static int build(topo_fabric *f, int *order, int *named, int **port_vertex, topo_error *err)
{
	node_key *keys = malloc(((size_t)f->nnodes + 1) * sizeof(*keys));
	int k;

	if (!keys)
		goto oom;
	for (int i = 0; i < f->nnodes; i++)
		keys[i] = (node_key){ f->nodes[i].guid, NULL, NULL, i };
	qsort(keys, f->nnodes, sizeof(*keys), cmp_key_guid);
	for (int i = 0; i < f->nnodes; i++)
		order[i] = keys[i].node;
	free(keys);
	if (classify_all(f, order, named, &k) < 0 || report_named(f, named, k) < 0)
		goto oom;
	if (add_switches(f, order, err) < 0)
		return -1;
	if (add_hosts(f, named, k, port_vertex, err) < 0)
		return -1;
	if (add_cables(f, order, port_vertex) < 0 || report_unnamed(f, order) < 0)
		goto oom;
	return topo_infer_fabric_structure(f->g, err);
oom:
	topo_error_set(err, f->source, 0, "out of memory");
	return -1;
}

int topo_fabric_finish(topo_fabric *f, topo_error *err)
{
	int *order, *named, **port_vertex, rc = -1;

	if (f->finished) {
		topo_error_set(err, f->source, 0, "the fabric was already finished");
		return -1;
	}
	f->finished = 1;
	topo_error_clear(err);
	order = malloc(((size_t)f->nnodes + 1) * sizeof(*order));
	named = malloc(((size_t)f->nnodes + 1) * sizeof(*named));
	port_vertex = calloc((size_t)f->nnodes + 1, sizeof(*port_vertex));
	if (!order || !named || !port_vertex)
		goto out;
	for (int i = 0; i < f->nnodes; i++) {
		port_vertex[i] = malloc(((size_t)f->nodes[i].nports + 1) * sizeof(int));
		if (!port_vertex[i])
			goto out;
		for (int p = 0; p <= f->nodes[i].nports; p++)
			port_vertex[i][p] = -1;
	}
	rc = build(f, order, named, port_vertex, err);
out:
	if (rc < 0 && err && !err->text[0])
		topo_error_set(err, f->source, 0, "out of memory");
	for (int i = 0; port_vertex && i < f->nnodes; i++)
		free(port_vertex[i]);
	free(port_vertex);
	free(order);
	free(named);
	return rc;
}
