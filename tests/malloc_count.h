/*
 * malloc_count.h: counts malloc/calloc/realloc calls made while `counting`
 * is set, to prove that a hot path allocates nothing. Include it in exactly
 * one file of a test program (it defines the allocator entry points). Under
 * AddressSanitizer, which owns malloc, COUNT_MALLOC is 0 and nothing is
 * counted.
 */
#ifndef MALLOC_COUNT_H
#define MALLOC_COUNT_H

#include <stddef.h>


#if defined(__SANITIZE_ADDRESS__)
#define COUNT_MALLOC 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define COUNT_MALLOC 0
#endif
#endif
#ifndef COUNT_MALLOC
#define COUNT_MALLOC 1
#endif

#if COUNT_MALLOC
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
static int counting;
static long allocations;

void *malloc(size_t n)
{
	if (counting)
		allocations++;
	return __libc_malloc(n);
}

void *calloc(size_t n, size_t m)
{
	if (counting)
		allocations++;
	return __libc_calloc(n, m);
}

void *realloc(void *p, size_t n)
{
	if (counting)
		allocations++;
	return __libc_realloc(p, n);
}
#endif

#endif
