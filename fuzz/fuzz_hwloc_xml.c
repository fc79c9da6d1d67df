/*
 * libFuzzer target of the hwloc XML loader: the outline checks and the
 * 3.0 -> 2.0 rewrite of topo_hwloc_xml.c, then hwloc's import and the graph
 * building of topo_hwloc.c. Any input must give a host or a topo_error,
 * never a crash, a leak or undefined behaviour.
 *
 * The outline (topo_hwloc_xml_prepare) runs once per input here; the loader
 * begins with the same call and returns its error unchanged, so an input the
 * outline refuses is done after it (most mutations are: it took half of the
 * target's time to check them twice). What the outline accepts goes through
 * the whole loader, hwloc's import included.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "topo_affinity.h"
#include "topo_hwloc.h"
#include "topo_hwloc_xml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	topo_graph *g;
	topo_error err;
	char *out;
	size_t len;
	int host;

	topo_error_clear(&err);
	if (topo_hwloc_xml_prepare((const char *)data, size, "fuzz.xml", &out, &len, &err) < 0) {
		if (err.text[0] == '\0')
			abort(); /* every failure must say why */
		return 0;
	}
	if (strlen(out) != len)
		abort();
	free(out);
	g = topo_graph_new();
	if (!g)
		return 0;
	host = topo_load_hwloc_xml_mem(g, (const char *)data, size, "fuzz.xml", NULL, &err);
	if (host >= 0) {
		topo_affinity *a = topo_affinity_of_host(g, host);
		json_t *j = NULL;

		if (a && topo_affinity_to_json(a, &j) == 0)
			json_decref(j);
		topo_affinity_free(a);
	} else if (err.text[0] == '\0') {
		abort(); /* every failure must say why */
	}
	topo_graph_free(g);
	return 0;
}
