/*
 * topo_regex: the one gate every administrator-written POSIX extended regex
 * passes before regcomp (ClassRule name/comment patterns, NIC role rules,
 * the fabric host and manager patterns).
 *
 * Why: glibc's regcomp copies the tree of each '+' and '{m,n}' operand, and
 * its epsilon closures take time growing faster than the square of that
 * tree, so a short pattern with stacked repetitions can hold the caller for
 * minutes (fuzz_topognn_conf found "^nccl-.*++++++++++++", 11 s, and a
 * 274-byte pattern of stacked '?' and '*', over 100 s). The callers run in
 * slurmctld and in slurmstepd at every job start, which must not block.
 * Back-references make regexec backtrack on the text matched (job names and
 * comments are chosen by users), so they are refused too.
 */
#ifndef TOPO_REGEX_H
#define TOPO_REGEX_H

#include <regex.h>
#include <stddef.h>

#define TOPO_REGEX_MAX_LEN 512 /* characters of a pattern */
/* pieces of the tree regcomp builds: a sequence adds its parts, a
 * repetition multiplies its operand; 2,000 pieces compile in at most about
 * 0.5 s, 12,293 (".*" under 12 stacked '+') took 11 s */
#define TOPO_REGEX_MAX_SIZE 2000

/* NULL when the ERE re is cheap to compile and to match, else why not (a
 * static text that completes "bad pattern: ..."). */
const char *topo_regex_cost(const char *re);

/* regcomp(re, pattern, REG_EXTENDED | cflags) after topo_regex_cost.
 * Returns 0, or -1 with the reason (the cost or regerror's text) in msg;
 * then re holds nothing to free. */
int topo_regex_compile(regex_t *re, const char *pattern, int cflags, char *msg, size_t len);

#endif
