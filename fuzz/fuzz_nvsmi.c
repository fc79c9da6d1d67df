/*
 * fuzz_nvsmi: libFuzzer target of the nvidia-smi reader
 * (topo_load_nvidia_smi_dir): each input is one host's `nvidia-smi -q`
 * output, DIR/host01.txt. Any input must load or fail with an error, never
 * crash, leak or trip a sanitizer.
 */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_dir_input.h"
#include "topo_graph.h"
#include "topo_nvsmi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *dir = fuzz_dir_input("host01.txt", data, size);
	topo_graph *g;
	topo_error err;

	if (!dir || !(g = topo_graph_new()))
		return 0;
	(void)topo_load_nvidia_smi_dir(g, dir, &err);
	topo_graph_free(g);
	return 0;
}
