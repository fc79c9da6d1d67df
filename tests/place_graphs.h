/*
 * place_graphs.h: small hand-built clusters for the placement tests.
 *
 * rail_graph(G): G groups "su1".."suG" of 4 hosts (n01, n02, ...), 2 rails:
 *   host HCA r -> leaf "suX-r" (4xNDR = 400 Gb/s); leaf r of every group has
 *   one 400 Gb/s up-link to spine "spine-r" (4:1 oversubscribed).
 * direct_graph(with_groups): 2 groups x 2 leaves x 4 hosts (h01..h16), each
 *   host cabled directly to its leaf (as read from topology.conf); leaves
 *   A1 A2 (su1) and B1 B2 (su2) up to one spine "S".
 */
#ifndef PLACE_GRAPHS_H
#define PLACE_GRAPHS_H

#include <stdio.h>

#include "topo_graph.h"

static int pg_cable(topo_graph *g, int a, int b)
{
	int e = topo_graph_add_edge(g, TOPO_E_FABRIC, a, b);

	topo_edge_set_rate(topo_graph_edge_mut(g, e), 4, "NDR");
	topo_graph_edge_mut(g, e)->state = TOPO_LINK_ACTIVE;
	return e;
}

static int pg_switch(topo_graph *g, const char *name, topo_level level)
{
	int v = topo_graph_add_vertex(g, TOPO_V_SWITCH, name);

	topo_graph_vertex_mut(g, v)->level = level;
	return v;
}

static __attribute__((unused)) topo_graph *rail_graph(int groups)
{
	topo_graph *g = topo_graph_new();
	int spine[2];
	char name[32];

	spine[0] = pg_switch(g, "spine-0", TOPO_LEVEL_SPINE);
	spine[1] = pg_switch(g, "spine-1", TOPO_LEVEL_SPINE);
	for (int s = 0; s < groups; s++) {
		int grp, leaf[2];

		snprintf(name, sizeof(name), "su%d", s + 1);
		grp = topo_graph_add_vertex(g, TOPO_V_GROUP, name);
		for (int r = 0; r < 2; r++) {
			snprintf(name, sizeof(name), "su%d-%d", s + 1, r);
			leaf[r] = pg_switch(g, name, TOPO_LEVEL_LEAF);
			topo_graph_add_edge(g, TOPO_E_MEMBER, grp, leaf[r]);
			pg_cable(g, leaf[r], spine[r]);
		}
		for (int i = 0; i < 4; i++) {
			int h;

			snprintf(name, sizeof(name), "n%02d", s * 4 + i + 1);
			h = topo_graph_add_vertex(g, TOPO_V_HOST, name);
			topo_graph_add_edge(g, TOPO_E_MEMBER, grp, h);
			for (int r = 0; r < 2; r++) {
				int hca;

				snprintf(name, sizeof(name), "mlx5_%d", r);
				hca = topo_graph_add_part(g, h, TOPO_V_HCA, name);
				topo_graph_vertex_mut(g, hca)->rail = r;
				pg_cable(g, hca, leaf[r]);
				snprintf(name, sizeof(name), "gpu%d", r);
				topo_graph_add_part(g, h, TOPO_V_GPU, name);
			}
		}
	}
	return g;
}

static __attribute__((unused)) topo_graph *direct_graph(int with_groups)
{
	topo_graph *g = topo_graph_new();
	const char *leaves[4] = { "A1", "A2", "B1", "B2" };
	int spine = pg_switch(g, "S", TOPO_LEVEL_SPINE), grp = -1;
	char name[32];

	for (int l = 0; l < 4; l++) {
		int leaf = pg_switch(g, leaves[l], TOPO_LEVEL_LEAF);

		if (with_groups && l % 2 == 0) {
			snprintf(name, sizeof(name), "su%d", l / 2 + 1);
			grp = topo_graph_add_vertex(g, TOPO_V_GROUP, name);
		}
		pg_cable(g, leaf, spine);
		for (int i = 0; i < 4; i++) {
			int h;

			snprintf(name, sizeof(name), "h%02d", l * 4 + i + 1);
			h = topo_graph_add_vertex(g, TOPO_V_HOST, name);
			pg_cable(g, h, leaf);
			if (with_groups)
				topo_graph_add_edge(g, TOPO_E_MEMBER, grp, h);
		}
	}
	return g;
}

#endif
