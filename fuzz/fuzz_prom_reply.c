/*
 * fuzz_prom_reply: libFuzzer target of the Prometheus reply parser
 * (telemetry_reply_parse) and of mapping its result onto a small graph
 * (telemetry_snapshot_build). Any input must give 0 or -1, never a crash,
 * leak or undefined behaviour.
 */
#include <stddef.h>
#include <stdint.h>

#include "telemetry.h"
#include "topo_graph.h"

static topo_graph *graph(void)
{
	static topo_graph *g;

	if (!g) {
		int leaf, spine, host, hca, e;

		g = topo_graph_new();
		leaf = topo_graph_add_vertex(g, TOPO_V_SWITCH, "leaf");
		spine = topo_graph_add_vertex(g, TOPO_V_SWITCH, "spine");
		topo_graph_vertex_mut(g, spine)->level = TOPO_LEVEL_SPINE;
		host = topo_graph_add_vertex(g, TOPO_V_HOST, "node0001");
		hca = topo_graph_add_part(g, host, TOPO_V_HCA, "mlx5_0");
		e = topo_graph_add_edge(g, TOPO_E_FABRIC, hca, leaf);
		topo_edge_set_rate(topo_graph_edge_mut(g, e), 4, "NDR");
		hca = topo_graph_add_part(g, host, TOPO_V_HCA, "HCA-2");
		topo_set_str(&topo_graph_vertex_mut(g, hca)->device, "mlx5_1");
		topo_graph_add_edge(g, TOPO_E_FABRIC, hca, leaf);
		e = topo_graph_add_edge(g, TOPO_E_FABRIC, leaf, spine);
		topo_edge_set_rate(topo_graph_edge_mut(g, e), 4, "HDR");
	}
	return g;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	telemetry_reply r;
	telemetry_snapshot s;
	topo_error err;

	if (telemetry_reply_parse((const char *)data, size, 1700000100.0, 30, &r, &err) == 0) {
		if (telemetry_snapshot_build(&r, graph(), 1700000100.0, &s, &err) == 0)
			telemetry_snapshot_free(&s);
		telemetry_reply_free(&r);
	}
	return 0;
}
