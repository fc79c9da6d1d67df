/* topo_num: strict number parsing, comparators, quantile (see topo_num.h). */
#include "topo_num.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* strtol & co. skip leading blanks and accept ""; a strict number starts
 * with a digit, a sign or (for doubles) a '.'. */
static int starts_number(const char *s)
{
	if (*s == '-' || *s == '+')
		s++;
	return isdigit((unsigned char)*s) || *s == '.';
}

/* Run strtol (is_double 0, into *l) or strtod (into *d) at the start of s:
 * 0 when s starts with a number the type can hold, with *end after it, else
 * -1. The range checks are the callers'. */
static int parse_start(const char *s, int is_double, long *l, double *d, const char **end)
{
	char *e;

	if (!s || !starts_number(s))
		return -1;
	errno = 0;
	if (is_double)
		*d = strtod(s, &e);
	else
		*l = strtol(s, &e, 10);
	*end = e;
	return errno || e == s ? -1 : 0;
}

/* The same when the number must be the whole text. */
static int parse_whole(const char *s, int is_double, long *l, double *d)
{
	const char *end;

	return parse_start(s, is_double, l, d, &end) || *end ? -1 : 0;
}

int topo_parse_long(const char *s, long lo, long hi, long *out)
{
	long v;

	if (parse_whole(s, 0, &v, NULL) || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

int topo_parse_long_prefix(const char *s, long lo, long hi, long *out, const char **rest)
{
	const char *end;
	long v;

	if (parse_start(s, 0, &v, NULL, &end) || v < lo || v > hi)
		return -1;
	*out = v;
	*rest = end;
	return 0;
}

int topo_parse_double_prefix(const char *s, double lo, double hi, double *out,
			     const char **rest)
{
	const char *end;
	double v;

	if (parse_start(s, 1, NULL, &v, &end) || !isfinite(v) || v < lo || v > hi)
		return -1;
	*out = v;
	*rest = end;
	return 0;
}

int topo_parse_int(const char *s, int lo, int hi, int *out)
{
	long v;

	if (topo_parse_long(s, lo, hi, &v))
		return -1;
	*out = (int)v;
	return 0;
}

int topo_parse_u64(const char *s, int base, uint64_t max, uint64_t *out)
{
	const char *p = s;
	unsigned long long v;
	char *end;

	if (!s || (base != 0 && base != 10 && base != 16))
		return -1;
	if (base == 0)
		base = p[0] == '0' && (p[1] == 'x' || p[1] == 'X') ? 16 : 10;
	if (base == 16 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	if (!isxdigit((unsigned char)*p) || (base == 10 && !isdigit((unsigned char)*p)))
		return -1;
	errno = 0;
	v = strtoull(p, &end, base);
	if (errno || end == p || *end || v > max)
		return -1;
	*out = (uint64_t)v;
	return 0;
}

int topo_parse_double(const char *s, double lo, double hi, double *out)
{
	double v;

	if (parse_whole(s, 1, NULL, &v) || !isfinite(v) || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

/* Copy s[0..n) into buf (64 bytes) as a C string; -1 if too long or it
 * holds a NUL byte. */
static int cut(const char *s, size_t n, char buf[64])
{
	if (n >= 64 || memchr(s, '\0', n))
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return 0;
}

int topo_parse_long_n(const char *s, size_t n, long lo, long hi, long *out)
{
	char buf[64];

	return cut(s, n, buf) ? -1 : topo_parse_long(buf, lo, hi, out);
}

int topo_parse_double_n(const char *s, size_t n, double lo, double hi, double *out)
{
	char buf[64];

	return cut(s, n, buf) ? -1 : topo_parse_double(buf, lo, hi, out);
}

int topo_cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

int topo_cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int topo_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	if (isnan(x) || isnan(y))
		return isnan(x) - isnan(y);
	return (x > y) - (x < y);
}

void topo_sort_doubles(double *v, size_t n)
{
	if (n > 1)
		qsort(v, n, sizeof(*v), topo_cmp_double);
}

double topo_quantile(const double *v, size_t n, double p)
{
	double r;
	size_t k;

	if (n == 0)
		return NAN;
	r = ceil(p * (double)n);
	k = r < 1 ? 0 : (size_t)r - 1;
	return v[k < n ? k : n - 1];
}
