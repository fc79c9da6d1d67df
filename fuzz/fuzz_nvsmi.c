/*
 * fuzz_nvsmi: libFuzzer target of the nvidia-smi reader: each input is one
 * host's `nvidia-smi -q` output, read by topo_load_nvidia_smi_mem, the code
 * the directory reader (topo_load_nvidia_smi_dir) runs on each DIR/HOST.txt.
 * Any input must load or fail with an error, never crash, leak or trip a
 * sanitizer.
 */
#include <stddef.h>
#include <stdint.h>

#include "topo_graph.h"
#include "topo_nvsmi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	topo_graph *g = topo_graph_new();
	topo_error err;

	if (g)
		(void)topo_load_nvidia_smi_mem(g, "host01", (const char *)data, size, "host01.txt",
					       &err);
	topo_graph_free(g);
	return 0;
}
