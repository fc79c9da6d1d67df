/* libFuzzer target: the node side's parsers of what Slurm and the controller
 * hand a job (GPU index lists, the TOPOGNN_PLAN string) must refuse bad input
 * with an error, never crash or leak. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bind_plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	topo_error err;
	char *rails = NULL;
	int *gpus = NULL, n = 0;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (bind_parse_gpu_list(text, "fuzz", &gpus, &n, &err) == 0 && n < 0)
		abort();
	free(gpus);
	if (bind_plan_rails(text, &rails, &err) > 0 && !rails)
		abort();
	free(rails);
	free(text);
	return 0;
}
