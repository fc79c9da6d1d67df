/*
 * fuzz_graph_json: libFuzzer target for topognn's graph file loader
 * (topo_load_json_mem), the file slurmctld reads as GraphFile= and every tool
 * reads with --graph. Any bytes must load or fail with an error, never crash,
 * leak or trip a sanitizer. What loads must survive a save and a reload
 * unchanged (the format is lossless, topo_json.h), and the placement engine's
 * cluster view must build from it or refuse it with an error, as the plugin
 * does right after loading.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "place.h"
#include "topo_json.h"

/* Round-trip and build the cluster only for graphs this small, so one huge
 * but legal input does not slow the fuzzer to a crawl (it was 20,000: 100
 * executions/s); the loader itself still reads every input. */
#define ORACLE_MAX_VERTICES 2000
/* Longer inputs add no coverage: the seeds are a few KiB. */
#define FUZZ_MAX_LEN 65536

/* g is canonicalized first: topo_graph_equal compares canonical graphs. */
static void round_trip(topo_graph *g)
{
	char *buf = NULL, why[256];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	topo_graph *g2;
	topo_error err;
	int rc;

	if (!f)
		return;
	if (topo_graph_canonicalize(g) != 0) {
		fclose(f);
		free(buf);
		return;
	}
	rc = topo_write_json(g, f, &err);
	fclose(f);
	if (rc == 0) {
		g2 = topo_graph_new();
		if (topo_load_json_mem(g2, buf, len, "saved", &err) != 0) {
			fprintf(stderr, "saved graph does not load: %s\n", err.text);
			abort();
		}
		if (topo_graph_canonicalize(g2) == 0 && !topo_graph_equal(g, g2, why, sizeof(why))) {
			fprintf(stderr, "write/load is not lossless: %s\n", why);
			abort();
		}
		topo_graph_free(g2);
	}
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	topo_graph *g = topo_graph_new();
	place_cluster *c;
	topo_error err;

	if (!g || size > FUZZ_MAX_LEN) {
		topo_graph_free(g);
		return 0;
	}
	if (topo_load_json_mem(g, (const char *)data, size, "fuzz", &err) == 0 &&
	    topo_graph_nvertices(g) <= ORACLE_MAX_VERTICES) {
		round_trip(g);
		if ((c = place_cluster_new(g, &err)))
			place_cluster_free(c);
	}
	topo_graph_free(g);
	return 0;
}
