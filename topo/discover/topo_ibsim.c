/*
 * topo_ibsim: ibsim netlist writer (see topo_ibsim.h).
 *
 * The netlist names each node "S-<guid>" / "H-<guid>" like ibnetdiscover,
 * and carries the real node description after '#', which ibsim reports as
 * the NodeDescription. Before each node a "switchguid=" / "caguid=" line
 * pins its GUID (ibsim otherwise numbers nodes itself). Every cable is
 * written from both ends, as ibsim requires, in ibnetdiscover's port-line
 * format: ibsim reads the trailing "lid N 4xNDR" as the port's width and
 * speed, and "# lid L" on a CA port as that port's LID.
 */
#include "topo_ibsim.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define SRC "<ibsim>"

typedef struct wnode {
	int is_switch;
	uint64_t guid;    /* node GUID */
	int nports;
	int lid;          /* switch LID */
	int vertex;       /* the switch, or the CA's first HCA vertex */
	const char *name; /* the vertex's name, for sorting switches */
	char desc[TOPO_IBSIM_MAX_DESC + 2];
} wnode;

typedef struct wport {
	int node, port;   /* this end: index into nodes, port number */
	int rnode, rport; /* the far end */
	int width;
	const char *speed;
	int lid;          /* this end's LID (CA port; 0 on a switch port) */
	int rlid;         /* the far end's LID (its port's, or its switch's) */
} wport;

typedef struct writer {
	const topo_graph *g;
	wnode *nodes;
	int nnodes;
	int *node_of;     /* vertex id -> node index, -1 if not a fabric node */
	wport *ports;
	size_t nports;
	topo_error *err;
} writer;

/* HCA port number: the vertex's, or 1 when unknown. */
static int hca_port(const topo_vertex *v)
{
	return v->port > 0 ? v->port : 1;
}

static int set_desc(writer *w, wnode *n, const topo_vertex *v)
{
	const char *d = v->desc;
	char tmp[512];

	if (!d || !*d) {
		if (v->kind == TOPO_V_HCA) {
			const char *slash = strchr(v->name, '/');

			snprintf(tmp, sizeof(tmp), "%.*s %s",
				 slash ? (int)(slash - v->name) : (int)strlen(v->name), v->name,
				 slash ? slash + 1 : "port");
		} else {
			snprintf(tmp, sizeof(tmp), "%s", v->name);
		}
		d = tmp;
	}
	if (strlen(d) > TOPO_IBSIM_MAX_DESC) {
		topo_error_set(w->err, SRC, 0,
			       "node description \"%.40s...\" of %s is longer than ibsim's %d characters",
			       d, v->name, TOPO_IBSIM_MAX_DESC);
		return -1;
	}
	if (strpbrk(d, "\"\n\r")) {
		topo_error_set(w->err, SRC, 0,
			       "node description of %s holds a quote or newline, which ibsim cannot read",
			       v->name);
		return -1;
	}
	memcpy(n->desc, d, strlen(d) + 1); /* length checked above */
	return 0;
}

/* Switches by name first, then CAs by node GUID. */
static int cmp_node(const void *pa, const void *pb)
{
	const wnode *a = pa, *b = pb;

	if (a->is_switch != b->is_switch)
		return b->is_switch - a->is_switch;
	if (a->is_switch)
		return strcmp(a->name, b->name);
	return (a->guid > b->guid) - (a->guid < b->guid);
}

static int cmp_guid_vertex(const void *pa, const void *pb)
{
	const wnode *a = pa, *b = pb;

	if (a->guid != b->guid)
		return (a->guid > b->guid) - (a->guid < b->guid);
	return a->vertex - b->vertex;
}

/* Collect switch and CA nodes; HCA vertices with the same node GUID (ports
 * of one multi-port CA) become one node. */
static int collect_nodes(writer *w)
{
	const topo_graph *g = w->g;
	size_t nv = topo_graph_nvertices(g);
	int n = 0, out = 0;

	w->nodes = calloc(nv ? nv : 1, sizeof(*w->nodes));
	w->node_of = malloc((nv ? nv : 1) * sizeof(*w->node_of));
	if (!w->nodes || !w->node_of)
		goto nomem;
	for (size_t i = 0; i < nv; i++) {
		const topo_vertex *v = topo_graph_vertex(g, (int)i);
		wnode *x = &w->nodes[n];

		w->node_of[i] = -1;
		if (v->kind != TOPO_V_SWITCH && v->kind != TOPO_V_HCA)
			continue;
		if (v->kind == TOPO_V_HCA && v->link_layer == TOPO_LL_ETH)
			continue;
		x->is_switch = v->kind == TOPO_V_SWITCH;
		x->vertex = (int)i;
		x->name = v->name;
		if (x->is_switch) {
			x->guid = v->guid ? v->guid : 0x0002c90200000000ull + i;
			x->nports = v->nports;
			x->lid = v->lid;
		} else {
			x->guid = v->guid ? v->guid - (uint64_t)hca_port(v) : 0x0002c90100000000ull + 2 * i;
			x->nports = hca_port(v);
		}
		if (set_desc(w, x, v) < 0)
			return -1;
		n++;
	}
	/* merge CA ports sharing a node GUID */
	qsort(w->nodes, (size_t)n, sizeof(*w->nodes), cmp_guid_vertex);
	for (int i = 0; i < n; i++) {
		wnode *x = &w->nodes[i];

		if (out > 0 && !x->is_switch && !w->nodes[out - 1].is_switch &&
		    w->nodes[out - 1].guid == x->guid) {
			if (x->nports > w->nodes[out - 1].nports)
				w->nodes[out - 1].nports = x->nports;
			continue;
		}
		w->nodes[out++] = *x;
	}
	n = out;
	qsort(w->nodes, (size_t)n, sizeof(*w->nodes), cmp_node);
	w->nnodes = n;
	return 0;
nomem:
	topo_error_set(w->err, SRC, 0, "out of memory");
	return -1;
}

/* Map vertices to node indices (after sorting). CAs map by node GUID. */
static int map_vertices(writer *w)
{
	const topo_graph *g = w->g;
	size_t nv = topo_graph_nvertices(g);
	int *ca_idx = malloc((size_t)(w->nnodes ? w->nnodes : 1) * sizeof(int));
	int nca = 0;

	if (!ca_idx) {
		topo_error_set(w->err, SRC, 0, "out of memory");
		return -1;
	}
	for (int i = 0; i < w->nnodes; i++) {
		if (w->nodes[i].is_switch)
			w->node_of[w->nodes[i].vertex] = i;
		else
			ca_idx[nca++] = i; /* CAs are sorted by GUID: binary search below */
	}
	for (size_t i = 0; i < nv; i++) {
		const topo_vertex *v = topo_graph_vertex(g, (int)i);
		uint64_t guid;
		int lo = 0, hi = nca - 1;

		if (v->kind != TOPO_V_HCA || v->link_layer == TOPO_LL_ETH)
			continue;
		guid = v->guid ? v->guid - (uint64_t)hca_port(v) : 0x0002c90100000000ull + 2 * i;
		while (lo <= hi) {
			int mid = (lo + hi) / 2;
			uint64_t mg = w->nodes[ca_idx[mid]].guid;

			if (mg == guid) {
				w->node_of[i] = ca_idx[mid];
				break;
			}
			if (mg < guid)
				lo = mid + 1;
			else
				hi = mid - 1;
		}
	}
	free(ca_idx);
	return 0;
}

static int cmp_port(const void *pa, const void *pb)
{
	const wport *a = pa, *b = pb;

	if (a->node != b->node)
		return a->node - b->node;
	return a->port - b->port;
}

/* One wport per cable end. */
static int collect_ports(writer *w)
{
	const topo_graph *g = w->g;
	size_t ne = topo_graph_nedges(g);

	w->ports = calloc(2 * (ne ? ne : 1), sizeof(*w->ports));
	if (!w->ports) {
		topo_error_set(w->err, SRC, 0, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < ne; i++) {
		const topo_edge *e = topo_graph_edge(g, (int)i);
		const topo_vertex *va, *vb;
		int na, nb, pa, pb;
		wport *x;

		if (e->kind != TOPO_E_FABRIC)
			continue;
		na = w->node_of[e->a];
		nb = w->node_of[e->b];
		if (na < 0 || nb < 0)
			continue;
		va = topo_graph_vertex(g, e->a);
		vb = topo_graph_vertex(g, e->b);
		pa = va->kind == TOPO_V_HCA ? hca_port(va) : e->port_a;
		pb = vb->kind == TOPO_V_HCA ? hca_port(vb) : e->port_b;
		if (pa < 1 || pb < 1) {
			topo_error_set(w->err, SRC, 0, "cable between %s and %s has no port number",
				       va->name, vb->name);
			return -1;
		}
		x = &w->ports[w->nports++];
		*x = (wport){ na, pa, nb, pb, e->width, e->speed, va->kind == TOPO_V_HCA ? va->lid : 0,
			      vb->lid };
		x = &w->ports[w->nports++];
		*x = (wport){ nb, pb, na, pa, e->width, e->speed, vb->kind == TOPO_V_HCA ? vb->lid : 0,
			      va->lid };
	}
	qsort(w->ports, w->nports, sizeof(*w->ports), cmp_port);
	for (size_t i = 0; i < w->nports; i++) {
		wport *x = &w->ports[i];
		wnode *n = &w->nodes[x->node];

		if (i > 0 && x->node == w->ports[i - 1].node && x->port == x[-1].port) {
			topo_error_set(w->err, SRC, 0, "port %d of %s carries two cables", x->port,
				       topo_graph_vertex(g, n->vertex)->name);
			return -1;
		}
		if (x->port > n->nports)
			n->nports = x->port;
		if (n->nports > TOPO_IBSIM_MAX_PORTS) {
			topo_error_set(w->err, SRC, 0, "%s has %d ports; ibsim allows at most %d",
				       topo_graph_vertex(g, n->vertex)->name, n->nports,
				       TOPO_IBSIM_MAX_PORTS);
			return -1;
		}
	}
	return 0;
}

static void node_id(const wnode *n, char *buf, size_t len)
{
	snprintf(buf, len, "%c-%016" PRIx64, n->is_switch ? 'S' : 'H', n->guid);
}

/* One port line, in ibnetdiscover's format, which ibsim reads back: the
 * "lid N 4xNDR" after the last quote sets the port's enabled width and speed
 * (FDR to NDR included); on a CA port "# lid L" sets its own LID. */
static void write_port(writer *w, FILE *out, const wnode *n, const wport *p)
{
	const wnode *r = &w->nodes[p->rnode];
	char rid[32];
	int width = p->width > 0 ? p->width : 4;
	const char *speed = p->speed && *p->speed ? p->speed : "SDR";

	node_id(r, rid, sizeof(rid));
	if (n->is_switch) {
		fprintf(out, "[%d]\t\"%s\"[%d]", p->port, rid, p->rport);
		if (!r->is_switch)
			fprintf(out, "(%" PRIx64 ")", r->guid + (uint64_t)p->rport);
		fprintf(out, " \t\t# \"%s\" lid %d %dx%s\n", r->desc, p->rlid, width, speed);
	} else {
		fprintf(out, "[%d](%" PRIx64 ") \t\"%s\"[%d]\t\t# lid %d lmc 0 \"%s\" lid %d %dx%s\n",
			p->port, n->guid + (uint64_t)p->port, rid, p->rport, p->lid, r->desc, p->rlid,
			width, speed);
	}
}

static void write_node(writer *w, FILE *out, const wnode *n, const wport *p, const wport *end)
{
	char id[32];

	node_id(n, id, sizeof(id));
	if (n->is_switch) {
		fprintf(out, "switchguid=0x%" PRIx64 "\n", n->guid);
		fprintf(out, "Switch\t%d \"%s\"\t\t# \"%s\" enhanced port 0 lid %d lmc 0\n",
			n->nports > 0 ? n->nports : 1, id, n->desc, n->lid);
	} else {
		fprintf(out, "caguid=0x%" PRIx64 "\n", n->guid);
		fprintf(out, "Ca\t%d \"%s\"\t\t# \"%s\"\n", n->nports > 0 ? n->nports : 1, id, n->desc);
	}
	for (; p < end; p++)
		write_port(w, out, n, p);
	fputc('\n', out);
}

static void write_all(writer *w, FILE *out)
{
	size_t pi = 0;
	int nsw = 0;

	for (int i = 0; i < w->nnodes; i++)
		nsw += w->nodes[i].is_switch;
	fprintf(out, "# ibsim netlist written by topognn: %d switches, %d CAs, %zu cables.\n"
		     "# Start with: ibsim -s -N %d -S %d -P %zu FILE\n"
		     "# Port lines follow ibnetdiscover's format; ibsim takes width and speed from them.\n\n",
		nsw, w->nnodes - nsw, w->nports / 2, w->nnodes + 16, nsw + 16,
		(size_t)w->nnodes * 2 + w->nports + 1024);
	for (int i = 0; i < w->nnodes; i++) {
		size_t start = pi;

		while (pi < w->nports && w->ports[pi].node == i)
			pi++;
		write_node(w, out, &w->nodes[i], w->ports + start, w->ports + pi);
	}
}

int topo_write_ibsim_netlist(const topo_graph *g, FILE *out, topo_error *err)
{
	writer w = { 0 };
	int rc = -1;

	topo_error_clear(err);
	w.g = g;
	w.err = err;
	if (collect_nodes(&w) < 0 || map_vertices(&w) < 0 || collect_ports(&w) < 0)
		goto out;
	write_all(&w, out);
	if (fflush(out) != 0 || ferror(out)) {
		topo_error_set(err, SRC, 0, "cannot write the netlist");
		goto out;
	}
	rc = 0;
out:
	free(w.nodes);
	free(w.node_of);
	free(w.ports);
	return rc;
}
