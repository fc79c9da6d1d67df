/* topo_dot: Graphviz writer for the fabric (see topo_dot.h). */
#include "topo_dot.h"

#include <stdlib.h>
#include <string.h>

/* The vertex a fabric end is drawn as: an HCA is drawn as its host. */
static int drawn_as(const topo_graph *g, int v)
{
	const topo_vertex *x = topo_graph_vertex(g, v);

	return x->kind == TOPO_V_HCA && x->host >= 0 ? x->host : v;
}

static void print_id(FILE *out, const topo_vertex *v)
{
	fputs(v->kind == TOPO_V_SWITCH ? "\"s:" : v->kind == TOPO_V_GROUP ? "\"g:" : "\"h:", out);
	for (const char *p = v->name; *p; p++) {
		if (*p == '"' || *p == '\\')
			fputc('\\', out);
		fputc(*p, out);
	}
	fputc('"', out);
}

typedef struct bundle {
	int a, b, cables;
	double gbps;
} bundle;

static int cmp_bundle(const void *pa, const void *pb)
{
	const bundle *x = pa, *y = pb;

	if (x->a != y->a)
		return x->a < y->a ? -1 : 1;
	return (x->b > y->b) - (x->b < y->b);
}

int topo_write_dot(const topo_graph *g, FILE *out, topo_error *err)
{
	size_t nv = topo_graph_nvertices(g), ne = topo_graph_nedges(g), nb = 0;
	bundle *b = malloc((ne + 1) * sizeof(*b));

	if (!b) {
		topo_error_set(err, "", 0, "out of memory writing the dot graph");
		return -1;
	}
	fprintf(out, "graph fabric {\n  rankdir=BT;\n  node [fontsize=9];\n");
	for (size_t i = 0; i < nv; i++) {
		const topo_vertex *v = topo_graph_vertex(g, (int)i);

		if (v->kind == TOPO_V_SWITCH) {
			fputs("  ", out);
			print_id(out, v);
			fprintf(out, " [shape=box, style=filled, fillcolor=\"%s\", label=\"%s\\n%s%s\"];\n",
				v->level == TOPO_LEVEL_LEAF ? "#cfe8ff" : "#ffe2b8", v->name,
				topo_level_name(v->level), (v->caps & TOPO_CAP_SHARP) ? " sharp" : "");
		} else if (v->kind == TOPO_V_HOST) {
			fputs("  ", out);
			print_id(out, v);
			fprintf(out, " [shape=ellipse, label=\"%s\"];\n", v->name);
		}
	}
	/* one cluster per group, holding its hosts */
	for (size_t i = 0; i < nv; i++) {
		const topo_vertex *grp = topo_graph_vertex(g, (int)i);

		if (grp->kind != TOPO_V_GROUP)
			continue;
		fprintf(out, "  subgraph \"cluster_%zu\" {\n    label=\"%s\";\n", i, grp->name);
		for (int it = 0, m; (m = topo_graph_next_member(g, (int)i, TOPO_V_HOST, &it)) >= 0;) {
			fputs("    ", out);
			print_id(out, topo_graph_vertex(g, m));
			fputs(";\n", out);
		}
		fputs("  }\n", out);
	}
	for (size_t i = 0; i < ne; i++) {
		const topo_edge *e = topo_graph_edge(g, (int)i);
		int a, c;

		if (e->kind != TOPO_E_FABRIC)
			continue;
		a = drawn_as(g, e->a);
		c = drawn_as(g, e->b);
		b[nb++] = (bundle){ a < c ? a : c, a < c ? c : a, 1, e->gbps };
	}
	qsort(b, nb, sizeof(*b), cmp_bundle);
	for (size_t i = 0; i < nb;) {
		bundle sum = b[i];
		size_t j = i + 1;

		for (; j < nb && b[j].a == sum.a && b[j].b == sum.b; j++) {
			sum.cables++;
			sum.gbps += b[j].gbps;
		}
		fputs("  ", out);
		print_id(out, topo_graph_vertex(g, sum.a));
		fputs(" -- ", out);
		print_id(out, topo_graph_vertex(g, sum.b));
		if (sum.cables > 1)
			fprintf(out, " [label=\"%dx %.0fG\"]", sum.cables, sum.gbps);
		fputs(";\n", out);
		i = j;
	}
	fputs("}\n", out);
	free(b);
	if (ferror(out)) {
		topo_error_set(err, "", 0, "could not write the dot graph");
		return -1;
	}
	return 0;
}
