/*
 * malloc_fail.h: fail the Nth allocation (SQLite's way of testing
 * out-of-memory paths), and count live allocations to find leaks. Builds on
 * malloc_count.h's idea (a test program defines the allocator entry points),
 * but also works under AddressSanitizer: there the entry points forward to
 * ASan's own (__interceptor_malloc & co.), so ASan still sees every block
 * and LeakSanitizer reports what a failure path forgot to free.
 *
 * Include it in exactly one file of a test program. Set fail_at = N to make
 * the Nth malloc/calloc/realloc from now on return NULL (0: never fail).
 * Leaks are LeakSanitizer's to find (run the sanitizer build with
 * ASAN_OPTIONS=detect_leaks=1); aligned allocations are not failed.
 */
#ifndef MALLOC_FAIL_H
#define MALLOC_FAIL_H

#include <stddef.h>

#if defined(__SANITIZE_ADDRESS__)
#define REAL(f) __interceptor_##f
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define REAL(f) __interceptor_##f
#endif
#endif
#ifndef REAL
#define REAL(f) __libc_##f
#endif

extern void *REAL(malloc)(size_t);
extern void *REAL(calloc)(size_t, size_t);
extern void *REAL(realloc)(void *, size_t);
extern void REAL(free)(void *);

static long fail_at;    /* fail the fail_at-th allocation; 0: none */
static long allocs;     /* allocations seen since fail_at was set */

/* Arm: the nth allocation from now fails (0: disarm). */
static void fail_nth(long n)
{
	fail_at = n;
	allocs = 0;
}

static int should_fail(void)
{
	return fail_at > 0 && ++allocs == fail_at;
}

void *malloc(size_t n)
{
	return should_fail() ? NULL : REAL(malloc)(n);
}

void *calloc(size_t n, size_t m)
{
	return should_fail() ? NULL : REAL(calloc)(n, m);
}

void *realloc(void *old, size_t n)
{
	if (should_fail())
		return NULL; /* the old block stays valid, as realloc promises */
	return REAL(realloc)(old, n);
}

void free(void *p)
{
	REAL(free)(p);
}

#endif
