/*
 * bind_cpuset: a set of CPU numbers of any size, and the kernel's CPU list
 * text form "0-3,8,10-11" in both directions.
 *
 * Linux speaks CPU lists everywhere the binding planner looks
 * (/proc/irq/N/smp_affinity_list, sysfs local_cpulist, hwloc cpusets as
 * lists, Slurm's allocated cores), and hosts with more than 64 CPUs are
 * common, so the set is a growable bitmask rather than one machine word.
 */
#ifndef BIND_CPUSET_H
#define BIND_CPUSET_H

#include <stddef.h>
#include <stdint.h>

#include "topo_error.h"

/* Highest CPU number a list may name; larger numbers are a parse error. */
#define BIND_CPU_MAX 65535

typedef struct bind_cpuset {
	uint64_t *bits; /* bit c of word c/64 set: CPU c is in the set */
	size_t nwords;  /* words allocated (grows on demand) */
} bind_cpuset;

/* An empty set; needs no allocation. */
void bind_cpuset_init(bind_cpuset *s);

/* Release the set's memory; the set is empty afterwards. */
void bind_cpuset_free(bind_cpuset *s);

/* Empty the set (keeps its memory). */
void bind_cpuset_clear(bind_cpuset *s);

/* Add CPU `cpu` (0..BIND_CPU_MAX). Returns 0, or -1 if out of range or out of memory. */
int bind_cpuset_add(bind_cpuset *s, int cpu);

/* 1 if `cpu` is in the set, else 0. */
int bind_cpuset_has(const bind_cpuset *s, int cpu);

/* Number of CPUs in the set. */
int bind_cpuset_count(const bind_cpuset *s);

/* The smallest CPU in the set greater than `after` (pass -1 for the first), or -1. */
int bind_cpuset_next(const bind_cpuset *s, int after);

/* Make `dst` a copy of `src`. Returns 0, or -1 when out of memory. */
int bind_cpuset_copy(bind_cpuset *dst, const bind_cpuset *src);

/* Keep in `dst` only the CPUs also in `other`. */
void bind_cpuset_intersect(bind_cpuset *dst, const bind_cpuset *other);

/* Remove from `dst` the CPUs in `other`. */
void bind_cpuset_subtract(bind_cpuset *dst, const bind_cpuset *other);

/* 1 if the two sets share a CPU, else 0. */
int bind_cpuset_intersects(const bind_cpuset *a, const bind_cpuset *b);

/* 1 if the two sets hold the same CPUs, else 0. */
int bind_cpuset_equal(const bind_cpuset *a, const bind_cpuset *b);

/*
 * Replace the set's content with the CPU list `text` ("0-3,8,10-11").
 * Leading/trailing white space (the kernel's trailing newline) is ignored and
 * an empty list gives an empty set. On a malformed list ("a", "3-1", "1,,2",
 * a number above BIND_CPU_MAX) returns -1, fills `err` with `source`/`line`
 * and a sentence quoting the list, and leaves the set empty.
 */
int bind_cpuset_parse(bind_cpuset *s, const char *text, const char *source, int line,
		      topo_error *err);

/* The set as a canonical CPU list ("0-3,8,10-11"; "" when empty), malloc'd; NULL when out of memory. */
char *bind_cpuset_format(const bind_cpuset *s);

#endif
