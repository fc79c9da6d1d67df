/*
 * topo_hostlist: Slurm-style hostlist expressions, without Slurm.
 *
 * topology.conf (and every Slurm tool) names sets of nodes with expressions
 * like "n[001-004,7],gpu[1-2]x" or "r[1-2]n[1-3]". We read and write them
 * ourselves because the topo layer never includes a Slurm header. The syntax
 * follows Slurm's hostlist.c:
 *   - top-level commas separate terms; commas inside brackets separate ranges;
 *   - a range "lo-hi" or a single "lo" is decimal; its zero padding is the
 *     number of digits written for lo ("n[001-004]" -> n001..n004,
 *     "n[8-10]" -> n8, n9, n10);
 *   - a term may hold several bracket groups, expanded as a cartesian product
 *     with the last group varying fastest ("r[1-2]n[1-2]" -> r1n1 r1n2 r2n1 r2n2);
 *   - text after a bracket is a suffix ("gpu[1-2]x" -> gpu1x gpu2x).
 * One expression expands to at most TOPO_HOSTLIST_MAX names, so a typo like
 * "n[1-100000000]" is an error rather than an out-of-memory.
 */
#ifndef TOPO_HOSTLIST_H
#define TOPO_HOSTLIST_H

#include "topognn_export.h"

#include <stddef.h>

#include "topo_error.h"

/* Most names one expression may expand to. A fuzzing build (scripts/fuzz.sh
 * defines FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION, as OSS-Fuzz does) allows
 * 256: the readers that take hostlists (topology.conf, the decision log,
 * slurmrestd replies) spent most of their fuzzing time making legal lists of
 * up to a million names, which add no coverage over a few hundred (at 2,000,
 * fuzz_topology_conf's long run fell from 9,000 to 500 executions/s as its
 * corpus filled with such lists); the limit's own error path is the same
 * code either way, tests/test_hostlist.c covers the million. */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define TOPO_HOSTLIST_MAX 256
#else
#define TOPO_HOSTLIST_MAX 1000000
#endif

/* A growable list of names; zero-initialise (or topo_hostlist_init) before use. */
typedef struct topo_hostlist {
	char **names;
	size_t n;
	size_t cap;
} topo_hostlist;

TOPOGNN_EXPORT void topo_hostlist_init(topo_hostlist *hl);

/* Free the names and the array, and reset to empty. */
TOPOGNN_EXPORT void topo_hostlist_free(topo_hostlist *hl);

/* Expand `expr` and append its names, in expression order, to `out`.
 * `source` and `line` are where the expression was read (for err; line 0 when
 * none). Returns 0, or -1 with err naming the problem and its 1-based column
 * within the expression; on error `out` is left as it was. Names are not
 * de-duplicated. */
TOPOGNN_EXPORT int topo_hostlist_expand(const char *expr, topo_hostlist *out, const char *source,
					int line, topo_error *err);

/* The same with at most `max` names in all (capped at TOPO_HOSTLIST_MAX),
 * refused before anything is allocated: for callers that want less than a
 * million names (the fuzz target, which would otherwise spend most of its
 * time on legal million-name lists). */
int topo_hostlist_expand_max(const char *expr, topo_hostlist *out, size_t max,
			     const char *source, int line, topo_error *err);

/* The shortest sorted Slurm-style expression for `names` (duplicates count
 * once): {"n001","n002","n003","n004","n007"} -> "n[001-004,007]".
 * Names are grouped by the text around their last run of digits and ordered
 * by topo_hostname_cmp. Returns a malloc'd string (free it), or NULL when a
 * name cannot be written in a hostlist (empty, or holding ',', '[', ']' or
 * white space) or memory runs out; err says which. n == 0 gives "". */
TOPOGNN_EXPORT char *topo_hostlist_compress(const char *const *names, size_t n, topo_error *err);

/* Natural order of host names: runs of digits compare by value, so "n2" <
 * "n10"; on equal value the shorter spelling ("n1" before "n01") comes first.
 * Returns <0, 0 or >0 like strcmp. */
TOPOGNN_EXPORT int topo_hostname_cmp(const char *a, const char *b);

#endif
