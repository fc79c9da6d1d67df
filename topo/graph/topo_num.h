/*
 * topo_num: strict number parsing and the small numeric helpers every area
 * needs (sort comparators, quantile).
 *
 * Why one place: strtol and strtod accept leading blanks, an empty string
 * (returning 0), trailing junk and out-of-range values (clamping and setting
 * errno), and each loader used to re-check a different subset of that. The
 * parsers here accept exactly one number that fills the whole text, in
 * range, or fail: "", " 7", "7x", "1e999", "nan" and 2^64 are all errors.
 *
 * Each parser returns 0 and stores the value, or -1 and leaves *out as it
 * was; the caller owns the message (it knows the file, line and key).
 */
#ifndef TOPO_NUM_H
#define TOPO_NUM_H

#include <stddef.h>
#include <stdint.h>

/* A decimal integer in [lo, hi]: optional '-' (or '+'), digits, nothing else. */
int topo_parse_long(const char *s, long lo, long hi, long *out);
int topo_parse_int(const char *s, int lo, int hi, int *out);

/* An unsigned integer in `base` up to max: no sign, digits, nothing else.
 * Base 16 accepts a leading "0x"; base 0 reads "0x..." as 16 and anything
 * else as 10 (never octal: sysfs writes a LID as "0x1a", a user "010"). */
int topo_parse_u64(const char *s, int base, uint64_t max, uint64_t *out);

/* A finite floating-point number in [lo, hi] (strtod syntax, no blanks). */
int topo_parse_double(const char *s, double lo, double hi, double *out);

/* The same on the first n bytes of s (s need not be NUL-terminated there):
 * for values cut out of a larger buffer. Texts longer than 63 bytes fail. */
int topo_parse_long_n(const char *s, size_t n, long lo, long hi, long *out);
int topo_parse_double_n(const char *s, size_t n, double lo, double hi, double *out);

/* A number at the start of s, followed by anything (a unit, a separator):
 * "25G" gives 25 with *rest at "G". The number itself is as strict as
 * above (no leading blanks, in range, finite); -1 when s does not start
 * with one, and then *out and *rest are left as they were. */
int topo_parse_long_prefix(const char *s, long lo, long hi, long *out, const char **rest);
int topo_parse_double_prefix(const char *s, double lo, double hi, double *out,
			     const char **rest);

/* qsort comparators for int and double arrays (ascending; NaN sorts last),
 * and for arrays of C strings (char *, strcmp order). */
int topo_cmp_int(const void *a, const void *b);
int topo_cmp_double(const void *a, const void *b);
int topo_cmp_str(const void *a, const void *b);

/* Sort v[0..n) ascending (topo_cmp_double). */
void topo_sort_doubles(double *v, size_t n);

/* The p-quantile (p in [0, 1]) of the ascending v[0..n): the nearest-rank
 * value v[ceil(p n) - 1] (p = 0 gives the minimum, 1 the maximum).
 * NaN when n is 0: there is no value, and a caller that wants a number for
 * "no data" says which one (n ? topo_quantile(v, n, p) : 0). */
double topo_quantile(const double *v, size_t n, double p);

#endif
