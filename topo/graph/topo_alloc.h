/*
 * topo_alloc: the two allocation steps every area repeats: growing an
 * array by doubling, and copying a string that may be NULL.
 *
 * Why one place: each loader used to carry its own grow() with its own
 * first size and overflow handling; one tested version serves them all.
 */
#ifndef TOPO_ALLOC_H
#define TOPO_ALLOC_H

#include <stddef.h>

/* Make room for `need` elements of `size` bytes in the array that `arrp`
 * points to (a T ** holding a T * from malloc, or NULL), whose capacity is
 * *cap elements: the capacity doubles, starting at `first`, until it holds
 * `need`. Returns 0, or -1 when memory runs out or the size overflows;
 * then the array and *cap are unchanged (and still the caller's to free). */
int topo_grow(void *arrp, size_t *cap, size_t need, size_t size, size_t first);

/* A malloc'd copy of s, or NULL when s is NULL. When a non-NULL s cannot be
 * copied, NULL is returned and *fail is set to 1 (it is never cleared), so a
 * caller copies several fields and checks once. */
char *topo_strdup_opt(const char *s, int *fail);

#endif
