/*
 * telemetry_map: measured ports -> the graph: each HCA's cable load and
 * each leaf's up-link estimate (telemetry_snapshot).
 */
#define _GNU_SOURCE
#include "telemetry_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- snapshot ---------------------------------------------------------------- */

/* HCA vertex of a measured port, or -1. */
static int map_port(const topo_graph *g, const telemetry_port_sample *p)
{
	char name[MAX_HOST_LEN + MAX_DEVICE_LEN + 2];
	int host, v;

	snprintf(name, sizeof(name), "%s/%s", p->host, p->device);
	v = topo_graph_find(g, TOPO_V_HCA, name);
	if (v >= 0) {
		const topo_vertex *x = topo_graph_vertex(g, v);

		if (x->port == 0 || x->port == p->port)
			return v;
	}
	if ((host = topo_graph_find(g, TOPO_V_HOST, p->host)) < 0)
		return -1;
	for (int it = 0; (v = topo_graph_next_member(g, host, TOPO_V_HCA, &it)) >= 0;) {
		const topo_vertex *x = topo_graph_vertex(g, v);

		if (x->device && !strcmp(x->device, p->device) && (x->port == 0 || x->port == p->port))
			return v;
	}
	return -1;
}

/* The HCA's cable, preferring one to a switch. */
static int hca_cable(const topo_graph *g, int hca)
{
	int n, best = -1;
	const int *inc = topo_graph_incident(g, hca, &n);

	for (int i = 0; inc && i < n; i++) {
		const topo_edge *e = topo_graph_edge(g, inc[i]);

		if (e->kind != TOPO_E_FABRIC)
			continue;
		if (topo_graph_is_switch(g, topo_edge_other(e, hca)))
			return inc[i];
		if (best < 0)
			best = inc[i];
	}
	return best;
}

/* Capacity of a switch's links to switches above it (any non-leaf switch). */
static double uplink_gbps(const topo_graph *g, int sw)
{
	double sum = 0;
	int n;
	const int *inc = topo_graph_incident(g, sw, &n);

	for (int i = 0; inc && i < n; i++) {
		const topo_edge *e = topo_graph_edge(g, inc[i]);
		int o = topo_edge_other(e, sw);

		if (e->kind != TOPO_E_FABRIC || o == sw || !topo_graph_is_switch(g, o) || e->state == TOPO_LINK_DOWN)
			continue;
		if (topo_graph_vertex(g, o)->level == TOPO_LEVEL_LEAF)
			continue;
		sum += e->gbps;
	}
	return sum;
}

static int leaf_slot(const topo_graph *g, telemetry_snapshot *s, int *slot, int sw)
{
	telemetry_leaf *l;

	if (slot[sw] >= 0)
		return slot[sw];
	l = &s->leaves[s->nleaves];
	memset(l, 0, sizeof(*l));
	l->sw = sw;
	if (!(l->name = strdup(topo_graph_vertex(g, sw)->name)))
		return -1;
	l->up_gbps = uplink_gbps(g, sw);
	slot[sw] = (int)s->nleaves++;
	return slot[sw];
}

static double or_zero(double x)
{
	return isnan(x) ? 0 : x;
}

static int link_fill(const topo_graph *g, const telemetry_port_sample *p, int hca, telemetry_link *l)
{
	const topo_edge *e;

	memset(l, 0, sizeof(*l));
	l->hca = hca;
	l->port = p->port;
	l->edge = hca_cable(g, hca);
	l->leaf = -1;
	if (!(l->name = strdup(topo_graph_vertex(g, hca)->name)))
		return -1;
	e = l->edge >= 0 ? topo_graph_edge(g, l->edge) : NULL;
	if (e && topo_graph_is_switch(g, topo_edge_other(e, hca)))
		l->leaf = topo_edge_other(e, hca);
	l->capacity_gbps = e && e->gbps > 0 ? e->gbps
			   : (isfinite(p->rate_bytes_per_s) ? p->rate_bytes_per_s * 8 / 1e9 : 0);
	l->tx_gbps = or_zero(p->rate[TELEMETRY_TX_BYTES]) * 8 / 1e9;
	l->rx_gbps = or_zero(p->rate[TELEMETRY_RX_BYTES]) * 8 / 1e9;
	l->util = -1;
	if (l->capacity_gbps > 0 && (!isnan(p->rate[TELEMETRY_TX_BYTES]) || !isnan(p->rate[TELEMETRY_RX_BYTES])))
		l->util = fmax(l->tx_gbps, l->rx_gbps) / l->capacity_gbps;
	memcpy(l->errors, p->increase, sizeof(l->errors));
	l->sample_time = p->last_time;
	return 0;
}

int telemetry_snapshot_build(const telemetry_reply *r, const topo_graph *g, double taken,
			 telemetry_snapshot *out, topo_error *err)
{
	size_t nv = topo_graph_nvertices(g);
	int *slot = NULL;

	memset(out, 0, sizeof(*out));
	out->taken = taken;
	out->nstale = r->nstale;
	out->nskipped = r->nskipped;
	if (r->nports == 0)
		return 0;
	out->links = calloc(r->nports, sizeof(*out->links));
	out->leaves = calloc(r->nports, sizeof(*out->leaves));
	slot = malloc((nv ? nv : 1) * sizeof(*slot));
	if (!out->links || !out->leaves || !slot)
		goto oom;
	for (size_t i = 0; i < nv; i++)
		slot[i] = -1;
	for (size_t i = 0; i < r->nports; i++) {
		const telemetry_port_sample *p = &r->ports[i];
		int hca = map_port(g, p), li;
		telemetry_link *l;

		if (hca < 0) {
			out->nunmapped++;
			continue;
		}
		l = &out->links[out->nlinks];
		if (link_fill(g, p, hca, l))
			goto oom;
		out->nlinks++;
		if (out->oldest_sample == 0 || l->sample_time < out->oldest_sample)
			out->oldest_sample = l->sample_time;
		if (l->leaf < 0)
			continue;
		if ((li = leaf_slot(g, out, slot, l->leaf)) < 0)
			goto oom;
		out->leaves[li].nlinks++;
		out->leaves[li].tx_gbps += l->tx_gbps;
		out->leaves[li].rx_gbps += l->rx_gbps;
	}
	for (size_t i = 0; i < out->nleaves; i++) {
		telemetry_leaf *l = &out->leaves[i];

		l->util = l->up_gbps > 0 ? fmax(l->tx_gbps, l->rx_gbps) / l->up_gbps : -1;
	}
	free(slot);
	return 0;
oom:
	free(slot);
	telemetry_snapshot_free(out);
	topo_error_set(err, "", 0, "out of memory building the telemetry snapshot");
	return -1;
}

void telemetry_snapshot_free(telemetry_snapshot *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nlinks; i++)
		free(s->links[i].name);
	for (size_t i = 0; i < s->nleaves; i++)
		free(s->leaves[i].name);
	free(s->links);
	free(s->leaves);
	memset(s, 0, sizeof(*s));
}

const telemetry_link *telemetry_snapshot_link(const telemetry_snapshot *s, const char *hca_name)
{
	for (size_t i = 0; i < s->nlinks; i++)
		if (!strcmp(s->links[i].name, hca_name))
			return &s->links[i];
	return NULL;
}

const telemetry_leaf *telemetry_snapshot_leaf(const telemetry_snapshot *s, const char *switch_name)
{
	for (size_t i = 0; i < s->nleaves; i++)
		if (!strcmp(s->leaves[i].name, switch_name))
			return &s->leaves[i];
	return NULL;
}

