/* libFuzzer target for hostlist expressions: any bytes must expand or fail
 * with an error, never crash, leak or trip a sanitizer; and what expands must
 * survive compression: expand(compress(names)) holds the same set of names. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "topo_hostlist.h"

/* Expand at most this many names (topo_hostlist_expand_max refuses more
 * before making any): legal million-name lists took most of the fuzzer's
 * time (36,742 executions in 180 s), and so did 20,000 (one input made,
 * compressed, expanded again and sorted 60,000 strings: 813 exec/s); a few
 * hundred names already cross every width, padding and product case of the
 * compressor (widths depend on the numbers, not on how many there are).
 * The fuzzing build's TOPO_HOSTLIST_MAX is the same 256.
 * tests/test_hostlist.c covers the million-name limit itself. */
#define FUZZ_MAX_NAMES 256
/* Longer inputs add no coverage either: an expression is a few terms. */
#define FUZZ_MAX_LEN 512

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sort and drop duplicates; returns the new count. */
static size_t sort_unique(char **v, size_t n)
{
	size_t m = 0;

	qsort(v, n, sizeof(*v), cmp_str);
	for (size_t i = 0; i < n; i++)
		if (m == 0 || strcmp(v[m - 1], v[i]) != 0)
			v[m++] = v[i];
	return m;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *expr = malloc(size + 1);
	topo_hostlist a, b;
	topo_error err;
	char *s;

	if (size > FUZZ_MAX_LEN || !expr) {
		free(expr);
		return 0;
	}
	memcpy(expr, data, size);
	expr[size] = '\0';
	topo_hostlist_init(&a);
	topo_hostlist_init(&b);
	if (topo_hostlist_expand_max(expr, &a, FUZZ_MAX_NAMES, "fuzz", 1, &err) != 0)
		goto out;
	s = topo_hostlist_compress((const char *const *)a.names, a.n, &err);
	if (!s)
		abort(); /* expanded names are always writable */
	if (topo_hostlist_expand(s, &b, "fuzz", 1, &err) != 0)
		abort();
	free(s);
	{
		/* sort copies of the pointer arrays: the lists still own the names */
		char **x = malloc((a.n + 1) * sizeof(*x)), **y = malloc((b.n + 1) * sizeof(*y));
		size_t nx, ny;

		if (x && y) {
			memcpy(x, a.names, a.n * sizeof(*x));
			memcpy(y, b.names, b.n * sizeof(*y));
			nx = sort_unique(x, a.n);
			ny = sort_unique(y, b.n);
			if (nx != ny || ny != b.n)
				abort();
			for (size_t i = 0; i < nx; i++)
				if (strcmp(x[i], y[i]) != 0)
					abort();
		}
		free(x);
		free(y);
	}
out:
	topo_hostlist_free(&a);
	topo_hostlist_free(&b);
	free(expr);
	return 0;
}
