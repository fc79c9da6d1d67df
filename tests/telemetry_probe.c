/*
 * telemetry_probe: driver of tests/telemetry/test_prometheus.sh. Builds a
 * small two-rail fabric graph, asks a real Prometheus for the InfiniBand
 * counters through the telemetry client and prints one line per measured
 * link and leaf, so the script can compare them with what it drove into the
 * fake sysfs.
 *
 * Graph: hosts node0001 (HCAs named mlx5_0, mlx5_1) and node0002 (HCAs named
 * HCA-1, HCA-2 as ibnetdiscover names them, devices mlx5_0, mlx5_1); rail r
 * HCAs cable to leaf-rR with 4X EDR (100 Gb/s); each leaf has two 4X EDR
 * cables to spine-1 (200 Gb/s up).
 *
 * Usage: telemetry_probe --url URL [--window S] [--max-age S] [--retries N]
 *        [--backoff-ms N] [--timeout-ms N] [--connect-timeout-ms N]
 *        [--credentials FILE] [--repeat N] [--graph two-rail|rail3] [--place N]
 * --graph rail3 uses tests/place_graphs.h's rail_graph(3) (groups su1..su3,
 * hosts n01..n12, leaves suX-0/suX-1 with one 400 Gb/s up-link each);
 * --place N then asks the placement engine (model policy) for N exclusive
 * communication-heavy hosts before and after applying the snapshot's leaf
 * estimates, and prints both choices.
 * Prints "error: TEXT" and exits 2 when the client fails (with --repeat,
 * prints how many failures the log-once helper asked to log).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "place.h"
#include "place_graphs.h"
#include "place_request.h"
#include "telemetry.h"
#include "telemetry_place.h"
#include "topo_graph.h"

static int add_hca(topo_graph *g, int host, const char *local, const char *device, int leaf)
{
	int h = topo_graph_add_part(g, host, TOPO_V_HCA, local);
	int e;
	topo_vertex *v;

	if (h < 0 || (e = topo_graph_add_edge(g, TOPO_E_FABRIC, h, leaf)) < 0)
		return -1;
	v = topo_graph_vertex_mut(g, h);
	v->port = 1;
	topo_set_str(&v->device, device);
	topo_edge_set_rate(topo_graph_edge_mut(g, e), 4, "EDR");
	topo_graph_edge_mut(g, e)->state = TOPO_LINK_ACTIVE;
	return 0;
}

static topo_graph *build_graph(void)
{
	topo_graph *g = topo_graph_new();
	int leaf[2], spine, h1, h2;

	if (!g)
		return NULL;
	leaf[0] = topo_graph_add_vertex(g, TOPO_V_SWITCH, "leaf-r0");
	leaf[1] = topo_graph_add_vertex(g, TOPO_V_SWITCH, "leaf-r1");
	spine = topo_graph_add_vertex(g, TOPO_V_SWITCH, "spine-1");
	topo_graph_vertex_mut(g, leaf[0])->level = TOPO_LEVEL_LEAF;
	topo_graph_vertex_mut(g, leaf[1])->level = TOPO_LEVEL_LEAF;
	topo_graph_vertex_mut(g, spine)->level = TOPO_LEVEL_SPINE;
	for (int l = 0; l < 2; l++)
		for (int k = 0; k < 2; k++) {
			int e = topo_graph_add_edge(g, TOPO_E_FABRIC, leaf[l], spine);

			topo_edge_set_rate(topo_graph_edge_mut(g, e), 4, "EDR");
		}
	h1 = topo_graph_add_vertex(g, TOPO_V_HOST, "node0001");
	h2 = topo_graph_add_vertex(g, TOPO_V_HOST, "node0002");
	if (add_hca(g, h1, "mlx5_0", "mlx5_0", leaf[0]) || add_hca(g, h1, "mlx5_1", "mlx5_1", leaf[1]) ||
	    add_hca(g, h2, "HCA-1", "mlx5_0", leaf[0]) || add_hca(g, h2, "HCA-2", "mlx5_1", leaf[1])) {
		topo_graph_free(g);
		return NULL;
	}
	return g;
}

static double mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void print_snapshot(const topo_graph *g, const telemetry_snapshot *s)
{
	for (size_t i = 0; i < s->nlinks; i++) {
		const telemetry_link *l = &s->links[i];

		printf("link %s leaf=%s cap=%.3f tx=%.4f rx=%.4f util=%.5f age=%.2f link_error_recovery=%.0f\n",
		       l->name, l->leaf >= 0 ? topo_graph_vertex(g, l->leaf)->name : "-", l->capacity_gbps,
		       l->tx_gbps, l->rx_gbps, l->util, s->taken - l->sample_time,
		       isnan(l->errors[TELEMETRY_LINK_ERROR_RECOVERY]) ? -1 : l->errors[TELEMETRY_LINK_ERROR_RECOVERY]);
	}
	for (size_t i = 0; i < s->nleaves; i++) {
		const telemetry_leaf *l = &s->leaves[i];

		printf("leaf %s links=%d up=%.3f tx=%.4f rx=%.4f util=%.5f\n", l->name, l->nlinks, l->up_gbps,
		       l->tx_gbps, l->rx_gbps, l->util);
	}
	printf("summary links=%zu leaves=%zu stale=%zu skipped=%zu unmapped=%zu\n", s->nlinks, s->nleaves,
	       s->nstale, s->nskipped, s->nunmapped);
}

/* Hosts of a choice as "n01,n02". */
static void print_hosts(const place_cluster *c, const place_choice *ch)
{
	for (int i = 0; i < ch->nhosts; i++)
		printf("%s%s", i ? "," : "", place_cluster_host_name(c, ch->hosts[i]));
}

/* Placement of n hosts before and after the snapshot's leaf estimates. */
static int place_with_telemetry(const topo_graph *g, const telemetry_snapshot *s, int n)
{
	place_config pcfg;
	place_decision d;
	place_request r;
	topo_error err;
	place_cluster *c = place_cluster_new(g, &err);
	place_state *st = c ? place_state_new(c) : NULL;
	place_engine *e;
	int applied, unknown, rc = -1;

	place_config_init(&pcfg);
	e = st ? place_engine_new(c, &pcfg, &err) : NULL;
	if (!e)
		goto out;
	r = heavy_request(n);
	r.job_id = 1;
	if (place_decide(e, st, &r, PLACE_POLICY_MODEL, PLACE_POLICY_MODEL, &d))
		goto out;
	printf("place before=");
	print_hosts(c, &d.chosen);
	applied = telemetry_apply_to_state(s, st, &unknown);
	if (place_decide(e, st, &r, PLACE_POLICY_MODEL, PLACE_POLICY_MODEL, &d))
		goto out;
	printf(" after=");
	print_hosts(c, &d.chosen);
	printf(" applied=%d unknown=%d\n", applied, unknown);
	rc = 0;
out:
	if (rc)
		printf("error: placement failed\n");
	place_engine_free(e);
	place_state_free(st);
	place_cluster_free(c);
	return rc;
}

int main(int argc, char **argv)
{
	telemetry_config cfg;
	telemetry_client *c;
	telemetry_health health = { 0 };
	topo_error err;
	topo_graph *g;
	char buf[TOPO_ERROR_TEXT_LEN + TOPO_ERROR_SOURCE_LEN + 8];
	int repeat = 1, logged = 0, failed = 0, place = 0, rail3 = 0;
	static const struct { const char *flag, *key; } opts[] = {
		{ "--url", "TelemetryURL" },
		{ "--window", "TelemetryWindowSec" },
		{ "--max-age", "TelemetryMaxAgeSec" },
		{ "--retries", "TelemetryRetries" },
		{ "--backoff-ms", "TelemetryBackoffMs" },
		{ "--timeout-ms", "TelemetryTimeoutMs" },
		{ "--connect-timeout-ms", "TelemetryConnectTimeoutMs" },
		{ "--credentials", "TelemetryCredentialsFile" },
	};

	telemetry_config_init(&cfg);
	for (int i = 1; i + 1 < argc; i += 2) {
		size_t k;

		if (!strcmp(argv[i], "--repeat") || !strcmp(argv[i], "--place")) {
			*(!strcmp(argv[i], "--repeat") ? &repeat : &place) = atoi(argv[i + 1]);
			continue;
		}
		if (!strcmp(argv[i], "--graph")) {
			rail3 = !strcmp(argv[i + 1], "rail3");
			continue;
		}
		for (k = 0; k < sizeof(opts) / sizeof(opts[0]) && strcmp(argv[i], opts[k].flag); k++)
			;
		if (k == sizeof(opts) / sizeof(opts[0])) {
			fprintf(stderr, "telemetry_probe: unknown option %s\n", argv[i]);
			return 64;
		}
		if (telemetry_config_set(&cfg, opts[k].key, argv[i + 1], &err)) {
			printf("error: %s\n", topo_error_format(&err, buf, sizeof(buf)));
			return 2;
		}
	}
	if (!(g = rail3 ? rail_graph(3) : build_graph())) {
		fprintf(stderr, "telemetry_probe: cannot build the graph\n");
		return 1;
	}
	if (!(c = telemetry_client_new(&cfg, &err))) {
		printf("error: %s\n", topo_error_format(&err, buf, sizeof(buf)));
		topo_graph_free(g);
		return 2;
	}
	for (int i = 0; i < repeat; i++) {
		telemetry_snapshot s;
		double t0 = mono_ms();
		int rc = telemetry_fetch_snapshot(c, g, &s, &err);

		printf("fetch %d ms=%.0f\n", i, mono_ms() - t0);
		if (telemetry_health_update(&health, rc == 0) == TELEMETRY_LOG_DOWN) {
			logged++;
			printf("error: %s\n", topo_error_format(&err, buf, sizeof(buf)));
		}
		if (rc) {
			failed++;
			continue;
		}
		print_snapshot(g, &s);
		if (place > 0 && place_with_telemetry(g, &s, place))
			failed++;
		telemetry_snapshot_free(&s);
	}
	if (failed)
		printf("log-once: %d of %d fetches failed, %d logged\n", failed, repeat, logged);
	telemetry_client_free(c);
	topo_graph_free(g);
	return failed ? 2 : 0;
}
