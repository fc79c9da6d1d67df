/* topo_check: self-loops, duplicate cables and odd switch loops (see topo_check.h). */
#include "topo_check.h"

#include <stdlib.h>
#include <string.h>

static int known(const topo_graph *g, const char *kind, const char *subject)
{
	for (size_t i = 0; i < topo_graph_nanomalies(g); i++) {
		const topo_anomaly *a = topo_graph_anomaly(g, i);

		if (!strcmp(a->kind, kind) && !strcmp(a->subject, subject))
			return 1;
	}
	return 0;
}

static const char *name(const topo_graph *g, int v)
{
	return topo_graph_vertex(g, v)->name;
}

/* Do fabric edges e and f join the same two ports? */
static int same_cable(const topo_edge *e, const topo_edge *f)
{
	return (e->a == f->a && e->b == f->b && e->port_a == f->port_a && e->port_b == f->port_b) ||
	       (e->a == f->b && e->b == f->a && e->port_a == f->port_b && e->port_b == f->port_a);
}

static int check_loops_and_duplicates(topo_graph *g)
{
	int added = 0;

	for (size_t i = 0; i < topo_graph_nedges(g); i++) {
		const topo_edge *e = topo_graph_edge(g, (int)i);
		const char *n = name(g, e->a);
		int n_inc;
		const int *inc;

		if (e->kind != TOPO_E_FABRIC)
			continue;
		if (e->a == e->b) {
			if (known(g, "self-loop", n))
				continue;
			if (topo_graph_add_anomaly(g, "self-loop", n, "%s is cabled to itself (port %d to port %d)",
						   n, e->port_a, e->port_b) < 0)
				return -1;
			added++;
			continue;
		}
		/* report each duplicate once, at its second copy */
		inc = topo_graph_incident(g, e->a, &n_inc);
		for (int k = 0; inc && k < n_inc && inc[k] < (int)i; k++) {
			const topo_edge *f = topo_graph_edge(g, inc[k]);

			/* either end: a reloaded graph may list the cable the other way round */
			if (f->kind != TOPO_E_FABRIC || !same_cable(e, f) || known(g, "duplicate-edge", n) ||
			    known(g, "duplicate-edge", name(g, e->b)))
				continue;
			if (topo_graph_add_anomaly(g, "duplicate-edge", n,
						   "the cable %s port %d - %s port %d is listed twice", n,
						   e->port_a, name(g, e->b), e->port_b) < 0)
				return -1;
			added++;
			break;
		}
	}
	return added;
}

/* Two-colour the switch graph by BFS; a cable between two switches of the
 * same colour closes an odd loop. */
static int check_odd_loops(topo_graph *g)
{
	size_t nv = topo_graph_nvertices(g);
	signed char *side = malloc(nv ? nv : 1);
	int *queue = malloc((nv ? nv : 1) * sizeof(int)), added = 0;

	if (!side || !queue) {
		free(side);
		free(queue);
		return -1;
	}
	memset(side, -1, nv);
	for (size_t s = 0; s < nv && added >= 0; s++) {
		size_t head = 0, tail = 0;

		if (!topo_graph_is_switch(g, (int)s) || side[s] >= 0)
			continue;
		side[s] = 0;
		queue[tail++] = (int)s;
		while (head < tail && added >= 0) {
			int v = queue[head++], n;
			const int *inc = topo_graph_incident(g, v, &n);

			for (int k = 0; inc && k < n; k++) {
				const topo_edge *e = topo_graph_edge(g, inc[k]);
				int w = topo_edge_other(e, v);

				if (e->kind != TOPO_E_FABRIC || w == v || !topo_graph_is_switch(g, w))
					continue;
				if (side[w] < 0) {
					side[w] = (signed char)!side[v];
					queue[tail++] = w;
				} else if (side[w] == side[v] && v < w && !known(g, "switch-cycle", name(g, v))) {
					if (topo_graph_add_anomaly(g, "switch-cycle", name(g, v),
								   "switches %s and %s close a loop of odd length: "
								   "not a fat tree", name(g, v), name(g, w)) < 0)
						added = -1;
					else
						added++;
				}
			}
		}
	}
	free(side);
	free(queue);
	return added;
}

int topo_check_fabric(topo_graph *g)
{
	int a = check_loops_and_duplicates(g), b;

	if (a < 0)
		return -1;
	b = check_odd_loops(g);
	return b < 0 ? -1 : a + b;
}
