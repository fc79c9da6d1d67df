/* libFuzzer target: the GNN model file loader must refuse any bad input with
 * an error, never crash or leak (gnn_model_load_mem). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gnn_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	gnn_error err;
	gnn_model *m;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	m = gnn_model_load_mem(text, "fuzz.json", &err);
	gnn_model_free(m);
	free(text);
	return 0;
}
