/* libFuzzer target for the topology.conf reader and writer: any bytes must
 * load or fail with an error, never crash, leak or trip a sanitizer. What
 * loads and can be written must read back, and writing that again must give
 * the same text (the writer's output is a fixed point). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo_topology_conf.h"

/* Run the write/read-back oracle only on graphs this small: a million-host
 * file is legal but would slow the fuzzer to a crawl (it was 20,000); the
 * reader itself still reads every input. */
#define ORACLE_MAX_VERTICES 2000
/* Longer inputs add no coverage: the seeds are under a KiB. */
#define FUZZ_MAX_LEN 65536

/* Write g in mode into a malloc'd buffer; NULL when the writer refuses. */
static char *write_mem(const topo_graph *g, topo_conf_mode mode, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	topo_error err;
	int rc;

	if (!f)
		return NULL;
	rc = topo_write_topology_conf(g, f, mode, "fuzz", &err);
	fclose(f);
	if (rc != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static void check_fixed_point(const topo_graph *g, topo_conf_mode mode)
{
	size_t len1, len2;
	char *w1 = write_mem(g, mode, &len1), *w2;
	topo_graph *g2;
	topo_error err;

	if (!w1)
		return;
	g2 = topo_graph_new();
	if (!g2 || topo_load_topology_conf_mem(g2, w1, len1, "written", &err) != 0)
		abort(); /* the writer wrote a file the reader refuses */
	w2 = write_mem(g2, mode, &len2);
	if (!w2 || len1 != len2 || memcmp(w1, w2, len1) != 0)
		abort();
	free(w1);
	free(w2);
	topo_graph_free(g2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	topo_graph *g = topo_graph_new();
	topo_error err;

	if (!g || size > FUZZ_MAX_LEN) {
		topo_graph_free(g);
		return 0;
	}
	if (topo_load_topology_conf_mem(g, (const char *)data, size, "fuzz", &err) == 0 &&
	    topo_graph_nvertices(g) <= ORACLE_MAX_VERTICES) {
		check_fixed_point(g, TOPO_CONF_TREE);
		check_fixed_point(g, TOPO_CONF_BLOCK);
		topo_graph_canonicalize(g);
	}
	topo_graph_free(g);
	return 0;
}
