/*
 * fuzz_lldp: libFuzzer target of the LLDP directory reader
 * (topo_load_lldp_dir): each input is one host's `lldpcli -f json show
 * neighbors details` output, DIR/host01.json. Any input must load or fail
 * with an error, never crash, leak or trip a sanitizer.
 */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_dir_input.h"
#include "topo_graph.h"
#include "topo_lldp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *dir = fuzz_dir_input("host01.json", data, size);
	topo_graph *g;
	topo_error err;

	if (!dir || !(g = topo_graph_new()))
		return 0;
	(void)topo_load_lldp_dir(g, dir, NULL, NULL, &err);
	topo_graph_free(g);
	return 0;
}
