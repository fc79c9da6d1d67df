/* libFuzzer target: the job trace readers (SWF and Alibaba CSV, chosen by the
 * first byte) must refuse bad lines with an error, never crash or leak. */
#include <stdint.h>
#include <stdio.h>

#include "trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	topo_trace t;
	topo_error err;
	FILE *f;

	if (size < 1)
		return 0;
	f = fmemopen((void *)(data + 1), size - 1, "r");
	if (!f)
		return 0;
	trace_init(&t);
	if (data[0] & 1)
		trace_load_alibaba(&t, f, "fuzz.csv", &err);
	else
		trace_load_swf(&t, f, "fuzz.swf", &err);
	trace_free(&t);
	fclose(f);
	return 0;
}
