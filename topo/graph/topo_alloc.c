/* topo_alloc: array growth and optional string copies (see topo_alloc.h). */
#include "topo_alloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int topo_grow(void *arrp, size_t *cap, size_t need, size_t size, size_t first)
{
	size_t ncap;
	void *arr, *p;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : (first ? first : 1);
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -1;
		ncap *= 2;
	}
	if (size && ncap > SIZE_MAX / size)
		return -1;
	/* arrp is a T **: copy the pointer in and out rather than access a T *
	 * through a void ** */
	memcpy(&arr, arrp, sizeof(arr));
	p = realloc(arr, ncap * size);
	if (!p)
		return -1;
	memcpy(arrp, &p, sizeof(p));
	*cap = ncap;
	return 0;
}

char *topo_strdup_opt(const char *s, int *fail)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*fail = 1;
	return d;
}
