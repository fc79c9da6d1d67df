/* libFuzzer target: the run-time predictor's saved state
 * (place_runtime_load) must refuse a broken file with an error, never crash
 * or leak; a state it accepts must predict, learn, save and load again. */
#define _GNU_SOURCE /* fmemopen, open_memstream */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "place_runtime.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	place_runtime *p = place_runtime_new(), *q = place_runtime_new();
	place_runtime_job j = {5, 1, 7, 3600, 4, 0};
	topo_error err;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = size ? fmemopen((void *)data, size, "r") : NULL;

	if (f && p && q && place_runtime_load(p, f, "fuzz.state", &err) == 0) {
		FILE *out;

		(void)place_runtime_predict(p, &j);
		(void)place_runtime_last_two(p, &j);
		(void)place_runtime_observe(p, &j, 1800);
		out = open_memstream(&buf, &len);
		if (out && place_runtime_save(p, out) == 0) {
			fclose(out);
			out = fmemopen(buf, len, "r");
			if (out && place_runtime_load(q, out, "fuzz.resaved", &err) != 0)
				abort(); /* what it saved must load */
		}
		if (out)
			fclose(out);
	}
	if (f)
		fclose(f);
	free(buf);
	place_runtime_free(p);
	place_runtime_free(q);
	return 0;
}
