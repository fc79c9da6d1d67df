/*
 * fuzz_lldp: libFuzzer target of the LLDP reader: each input is one host's
 * `lldpcli -f json show neighbors details` output, read by
 * topo_load_lldp_mem, the code the directory reader (topo_load_lldp_dir)
 * runs on each DIR/HOST.json. Any input must load or fail with an error,
 * never crash, leak or trip a sanitizer. (It wrote each input to a scratch
 * directory first: 156 exec/s, most of it in open/write/readdir.)
 */
#include <stddef.h>
#include <stdint.h>

#include "topo_graph.h"
#include "topo_lldp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	topo_graph *g = topo_graph_new();
	topo_error err;

	if (g)
		(void)topo_load_lldp_mem(g, "host01", (const char *)data, size, "host01.json", NULL,
					 &err);
	topo_graph_free(g);
	return 0;
}
