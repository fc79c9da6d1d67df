/* libFuzzer target for the ibnetdiscover loader: any bytes must load or fail
 * with an error, never crash, leak or trip a sanitizer. */
#include <stddef.h>
#include <stdint.h>

#include "topo_ibnetdiscover.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	topo_graph *g = topo_graph_new();
	topo_error err;

	if (!g)
		return 0;
	if (topo_load_ibnetdiscover_mem(g, (const char *)data, size, "fuzz", NULL, &err) == 0)
		topo_graph_canonicalize(g);
	topo_graph_free(g);
	return 0;
}
