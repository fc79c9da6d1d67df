/*
 * fuzz_netq: libFuzzer target of the NVIDIA NetQ topology JSON reader
 * (topo_load_netq_mem). Any input must load or fail with an error, never
 * crash, leak or trip a sanitizer.
 */
#include <stddef.h>
#include <stdint.h>

#include "topo_graph.h"
#include "topo_netq.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	topo_graph *g = topo_graph_new();
	topo_error err;

	if (g)
		(void)topo_load_netq_mem(g, (const char *)data, size, "fuzz", NULL, &err);
	topo_graph_free(g);
	return 0;
}
