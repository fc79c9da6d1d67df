/*
 * topo_hostlist: expanding and compressing Slurm-style hostlist expressions
 * (see topo_hostlist.h for the syntax).
 *
 * Expansion is two passes per term: the first checks brackets and finds where
 * the term ends, the second parses the ranges and counts the names, so that
 * nothing is allocated for a term that is malformed or would exceed
 * TOPO_HOSTLIST_MAX. Compression sorts the names by (prefix, suffix, number)
 * and writes runs of consecutive numbers whose zero padding agrees as ranges.
 */
#include "topo_hostlist.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo_alloc.h"

/* Longest digit run we treat as a number (fits in uint64_t). */
#define MAX_DIGITS 18
/* How much of an expression an error message quotes. */
#define QUOTE_LEN 60

void topo_hostlist_init(topo_hostlist *hl)
{
	hl->names = NULL;
	hl->n = 0;
	hl->cap = 0;
}

static void truncate_to(topo_hostlist *hl, size_t n)
{
	while (hl->n > n)
		free(hl->names[--hl->n]);
}

void topo_hostlist_free(topo_hostlist *hl)
{
	truncate_to(hl, 0);
	free(hl->names);
	topo_hostlist_init(hl);
}

static int push_name(topo_hostlist *hl, const char *name)
{
	char *copy;

	if (topo_grow(&hl->names, &hl->cap, hl->n + 1, sizeof(*hl->names), 16))
		return -1;
	copy = strdup(name);
	if (!copy)
		return -1;
	hl->names[hl->n++] = copy;
	return 0;
}

/* ---- expansion ----------------------------------------------------------- */

typedef struct hl_range {
	uint64_t lo, hi;
	int width; /* digits written for lo: the zero padding */
} hl_range;

/* A term is a list of pieces: literal text, then (optionally) one bracket. */
typedef struct hl_piece {
	const char *lit;
	size_t litlen;
	hl_range *r; /* NULL for the trailing literal */
	size_t nr;
} hl_piece;

typedef struct hl_ctx {
	const char *expr;
	const char *source;
	int line;
	topo_error *err;
	uint64_t max; /* names allowed in all (at most TOPO_HOSTLIST_MAX) */
} hl_ctx;

static int hl_fail(const hl_ctx *c, size_t col0, const char *what)
{
	size_t len = strlen(c->expr);

	topo_error_set(c->err, c->source, c->line, "hostlist \"%.*s%s\" %s at column %zu",
		       QUOTE_LEN, c->expr, len > QUOTE_LEN ? "..." : "", what, col0 + 1);
	return -1;
}

/* Read up to MAX_DIGITS decimal digits at expr[*i]; -1 if there are none or too many. */
static int read_number(const hl_ctx *c, size_t *i, uint64_t *val, int *ndigits)
{
	size_t start = *i;
	uint64_t v = 0;

	while (isdigit((unsigned char)c->expr[*i])) {
		if (*i - start >= MAX_DIGITS)
			return hl_fail(c, start, "has a number longer than 18 digits");
		v = v * 10 + (uint64_t)(c->expr[*i] - '0');
		(*i)++;
	}
	if (*i == start)
		return hl_fail(c, start, "expects a number");
	*val = v;
	*ndigits = (int)(*i - start);
	return 0;
}

/* Parse the ranges of a bracket whose content is expr[b, e) (e is the ']').
 * Appends to r (room for e - b + 1 ranges) and adds their name count to *count. */
static int parse_bracket(const hl_ctx *c, size_t b, size_t e, hl_range *r, size_t *nr,
			 uint64_t *count)
{
	size_t i = b;

	*count = 0;
	for (;;) {
		hl_range x;
		size_t at = i;
		uint64_t n;

		if (read_number(c, &i, &x.lo, &x.width) < 0)
			return -1;
		x.hi = x.lo;
		if (c->expr[i] == '-') {
			int w;

			i++;
			if (read_number(c, &i, &x.hi, &w) < 0)
				return -1;
			if (x.hi < x.lo) {
				char what[96];

				snprintf(what, sizeof(what), "has a decreasing range %" PRIu64 "-%" PRIu64,
					 x.lo, x.hi);
				return hl_fail(c, at, what);
			}
		}
		n = x.hi - x.lo + 1;
		if (n > c->max) {
			char what[160];

			snprintf(what, sizeof(what),
				 "has a range of %" PRIu64 " names, more than the limit of %" PRIu64, n,
				 c->max);
			return hl_fail(c, at, what);
		}
		*count += n;
		r[(*nr)++] = x;
		if (i == e)
			return 0;
		if (c->expr[i] != ',')
			return hl_fail(c, i, "expects ',' or '-' between numbers");
		i++;
	}
}

/* Find the end of the term starting at `start` (a top-level ',' or the end of
 * the string), checking that brackets pair up and no character is invalid. */
static int scan_term(const hl_ctx *c, size_t start, size_t *end, size_t *nbrackets)
{
	size_t i, open = 0;
	int depth = 0;

	*nbrackets = 0;
	for (i = start; c->expr[i] && !(c->expr[i] == ',' && depth == 0); i++) {
		unsigned char ch = (unsigned char)c->expr[i];

		if (ch <= ' ' || ch == 0x7f)
			return hl_fail(c, i, "has a blank or control character");
		if (ch == '[') {
			if (depth)
				return hl_fail(c, i, "has a '[' inside brackets");
			depth = 1;
			open = i;
			(*nbrackets)++;
		} else if (ch == ']') {
			if (!depth)
				return hl_fail(c, i, "has a ']' with no '['");
			depth = 0;
		}
	}
	if (depth)
		return hl_fail(c, open, "has a '[' that is never closed");
	if (i == start)
		return hl_fail(c, start, "has an empty name");
	*end = i;
	return 0;
}

/* Write the names of one parsed term into `out`. */
static int emit_term(const hl_piece *p, size_t np, size_t buflen, topo_hostlist *out)
{
	size_t *ri = calloc(np, sizeof(*ri));
	uint64_t *val = calloc(np, sizeof(*val));
	char *buf = malloc(buflen);
	int rc = -1;

	if (!ri || !val || !buf)
		goto out;
	for (size_t k = 0; k < np; k++)
		if (p[k].r)
			val[k] = p[k].r[0].lo;
	for (;;) {
		size_t len = 0;
		size_t k;

		for (k = 0; k < np; k++) {
			memcpy(buf + len, p[k].lit, p[k].litlen);
			len += p[k].litlen;
			if (p[k].r)
				len += (size_t)snprintf(buf + len, buflen - len, "%0*" PRIu64,
							p[k].r[ri[k]].width, val[k]);
		}
		buf[len] = '\0';
		if (push_name(out, buf) < 0)
			goto out;
		/* odometer: the last bracket varies fastest */
		for (k = np; k-- > 0;) {
			if (!p[k].r)
				continue;
			if (val[k] < p[k].r[ri[k]].hi) {
				val[k]++;
				break;
			}
			if (ri[k] + 1 < p[k].nr) {
				ri[k]++;
				val[k] = p[k].r[ri[k]].lo;
				break;
			}
			ri[k] = 0;
			val[k] = p[k].r[0].lo;
		}
		if (k == (size_t)-1)
			break;
	}
	rc = 0;
out:
	free(ri);
	free(val);
	free(buf);
	return rc;
}

static void too_many(const hl_ctx *c, size_t at)
{
	char what[64];

	snprintf(what, sizeof(what), "expands to more than %" PRIu64 " names", c->max);
	hl_fail(c, at, what);
}

/* Parse the term expr[start, end) and append its names; *total counts names
 * appended for the whole expression. */
static int expand_term(const hl_ctx *c, size_t start, size_t end, size_t nbrackets,
		       topo_hostlist *out, uint64_t *total)
{
	hl_piece *p = calloc(nbrackets + 1, sizeof(*p));
	hl_range *r = malloc((end - start + 1) * sizeof(*r));
	size_t np = 0, nr = 0, i = start;
	uint64_t names = 1;
	int rc = -1;

	if (!p || !r) {
		topo_error_set(c->err, c->source, c->line, "out of memory expanding a hostlist");
		goto out;
	}
	while (i < end) {
		size_t lb = i;

		while (lb < end && c->expr[lb] != '[')
			lb++;
		p[np].lit = c->expr + i;
		p[np].litlen = lb - i;
		if (lb < end) {
			size_t rb = lb + 1;
			uint64_t cnt;

			while (c->expr[rb] != ']')
				rb++;
			p[np].r = r + nr;
			if (parse_bracket(c, lb + 1, rb, r, &nr, &cnt) < 0)
				goto out;
			p[np].nr = (size_t)(r + nr - p[np].r);
			if (cnt > c->max || names * cnt > c->max) {
				too_many(c, start);
				goto out;
			}
			names *= cnt;
			i = rb + 1;
		} else {
			i = end;
		}
		np++;
	}
	if (*total + names > c->max) {
		too_many(c, start);
		goto out;
	}
	if (emit_term(p, np, (end - start) + nbrackets * (MAX_DIGITS + 2) + 1, out) < 0) {
		topo_error_set(c->err, c->source, c->line, "out of memory expanding a hostlist");
		goto out;
	}
	*total += names;
	rc = 0;
out:
	free(p);
	free(r);
	return rc;
}

int topo_hostlist_expand(const char *expr, topo_hostlist *out, const char *source, int line,
			 topo_error *err)
{
	return topo_hostlist_expand_max(expr, out, TOPO_HOSTLIST_MAX, source, line, err);
}

int topo_hostlist_expand_max(const char *expr, topo_hostlist *out, size_t max,
			     const char *source, int line, topo_error *err)
{
	hl_ctx c = { expr ? expr : "", source ? source : "", line, err,
		     max < TOPO_HOSTLIST_MAX ? max : TOPO_HOSTLIST_MAX };
	size_t before = out->n, i = 0;
	uint64_t total = 0;

	if (!expr || !*expr) {
		topo_error_set(err, c.source, line, "hostlist is empty");
		return -1;
	}
	for (;;) {
		size_t end, nb;

		if (scan_term(&c, i, &end, &nb) < 0 || expand_term(&c, i, end, nb, out, &total) < 0) {
			truncate_to(out, before);
			return -1;
		}
		if (!expr[end])
			return 0;
		i = end + 1;
	}
}

/* ---- natural order ------------------------------------------------------- */

int topo_hostname_cmp(const char *a, const char *b)
{
	int tie = 0;

	while (*a && *b) {
		if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
			const char *sa = a, *sb = b;
			size_t la, lb;

			while (*a == '0')
				a++;
			while (*b == '0')
				b++;
			for (la = 0; isdigit((unsigned char)a[la]); la++)
				;
			for (lb = 0; isdigit((unsigned char)b[lb]); lb++)
				;
			if (la != lb)
				return la < lb ? -1 : 1;
			for (size_t k = 0; k < la; k++)
				if (a[k] != b[k])
					return a[k] < b[k] ? -1 : 1;
			if (!tie && (a - sa) != (b - sb))
				tie = (a - sa) < (b - sb) ? -1 : 1;
			a += la;
			b += lb;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		a++;
		b++;
	}
	if (*a || *b)
		return *a ? 1 : -1;
	return tie;
}

/* ---- compression --------------------------------------------------------- */

/* A name split around its last run of digits: prefix, number, suffix. */
typedef struct hname {
	const char *s;
	size_t plen;     /* prefix length; the whole name when there is no number */
	size_t nlen;     /* digits in the number; 0 when none */
	uint64_t val;
	const char *suffix;
} hname;

static void split_name(const char *s, hname *h)
{
	size_t len = strlen(s), e = len, b;

	while (e > 0 && !isdigit((unsigned char)s[e - 1]))
		e--;
	b = e;
	while (b > 0 && isdigit((unsigned char)s[b - 1]))
		b--;
	h->s = s;
	h->val = 0;
	if (e == b || e - b > MAX_DIGITS) {
		h->plen = len;
		h->nlen = 0;
		h->suffix = s + len;
		return;
	}
	h->plen = b;
	h->nlen = e - b;
	h->suffix = s + e;
	for (size_t i = b; i < e; i++)
		h->val = h->val * 10 + (uint64_t)(s[i] - '0');
}

static int cmp_prefix(const hname *x, const hname *y)
{
	size_t m = x->plen < y->plen ? x->plen : y->plen;
	int c = memcmp(x->s, y->s, m);

	if (c)
		return c;
	return (x->plen > y->plen) - (x->plen < y->plen);
}

/* Same (prefix, suffix, has-number): may share one bracket. */
static int same_group(const hname *x, const hname *y)
{
	return cmp_prefix(x, y) == 0 && strcmp(x->suffix, y->suffix) == 0 &&
	       (x->nlen == 0) == (y->nlen == 0);
}

static int cmp_hname(const void *pa, const void *pb)
{
	const hname *x = pa, *y = pb;
	int c = topo_hostname_cmp(x->s, y->s);

	if (c)
		return c;
	return strcmp(x->s, y->s);
}

/* Group order: by prefix and suffix, names without a number first. */
static int cmp_group(const void *pa, const void *pb)
{
	const hname *x = pa, *y = pb;
	int c = cmp_prefix(x, y);

	if (c)
		return c;
	c = strcmp(x->suffix, y->suffix);
	if (c)
		return c;
	if ((x->nlen == 0) != (y->nlen == 0))
		return x->nlen == 0 ? -1 : 1;
	if (x->val != y->val)
		return x->val < y->val ? -1 : 1;
	if (x->nlen != y->nlen)
		return x->nlen < y->nlen ? -1 : 1;
	return strcmp(x->s, y->s);
}

typedef struct strbuf {
	char *s;
	size_t len, cap;
	int oom;
} strbuf;

static void sb_add(strbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (topo_grow(&b->s, &b->cap, b->len + n + 1, 1, 64)) {
		b->oom = 1;
		return;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static size_t ndigits(uint64_t v)
{
	size_t d = 1;

	while (v >= 10) {
		v /= 10;
		d++;
	}
	return d;
}

/* Does the number of `h`, printed with zero padding `w`, give back its digits? */
static int renders_as(const hname *h, size_t w)
{
	size_t d = ndigits(h->val);

	return h->nlen == (d > w ? d : w);
}

/* Write the group of numbered names g[0..n) (sorted by value, unique). */
static void write_group(strbuf *b, const hname *g, size_t n)
{
	if (n == 1) {
		sb_add(b, g[0].s, strlen(g[0].s));
		return;
	}
	sb_add(b, g[0].s, g[0].plen);
	sb_add(b, "[", 1);
	for (size_t i = 0; i < n;) {
		size_t j = i;

		while (j + 1 < n && g[j + 1].val == g[j].val + 1 && renders_as(&g[j + 1], g[i].nlen))
			j++;
		if (i)
			sb_add(b, ",", 1);
		sb_add(b, g[i].s + g[i].plen, g[i].nlen);
		if (j > i) {
			sb_add(b, "-", 1);
			sb_add(b, g[j].s + g[j].plen, g[j].nlen);
		}
		i = j + 1;
	}
	sb_add(b, "]", 1);
	sb_add(b, g[0].suffix, strlen(g[0].suffix));
}

char *topo_hostlist_compress(const char *const *names, size_t n, topo_error *err)
{
	hname *h = malloc((n + 1) * sizeof(*h));
	strbuf b = { NULL, 0, 0, 0 };
	size_t i, m = 0;

	if (!h) {
		topo_error_set(err, "", 0, "out of memory compressing a hostlist");
		return NULL;
	}
	for (i = 0; i < n; i++) {
		const char *s = names[i];

		if (!s || !*s || strpbrk(s, ",[]")) {
			topo_error_set(err, "", 0, "host name \"%s\" cannot be written in a hostlist",
				       s ? s : "");
			goto fail;
		}
		for (const char *p = s; *p; p++)
			if ((unsigned char)*p <= ' ' || *p == 0x7f) {
				topo_error_set(err, "", 0,
					       "host name \"%s\" cannot be written in a hostlist", s);
				goto fail;
			}
		split_name(s, &h[i]);
	}
	/* drop duplicates, then order into groups */
	qsort(h, n, sizeof(*h), cmp_hname);
	for (i = 0; i < n; i++)
		if (m == 0 || strcmp(h[m - 1].s, h[i].s) != 0)
			h[m++] = h[i];
	qsort(h, m, sizeof(*h), cmp_group);
	sb_add(&b, "", 0);
	for (i = 0; i < m;) {
		size_t j = i + 1;

		while (j < m && same_group(&h[i], &h[j]))
			j++;
		if (i)
			sb_add(&b, ",", 1);
		if (h[i].nlen == 0) {
			for (size_t k = i; k < j; k++) {
				if (k > i)
					sb_add(&b, ",", 1);
				sb_add(&b, h[k].s, strlen(h[k].s));
			}
		} else {
			write_group(&b, h + i, j - i);
		}
		i = j;
	}
	if (b.oom) {
		topo_error_set(err, "", 0, "out of memory compressing a hostlist");
		goto fail;
	}
	free(h);
	return b.s;
fail:
	free(h);
	free(b.s);
	return NULL;
}
