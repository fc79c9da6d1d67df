/* bind_cpuset: growable CPU bitmask and the "0-3,8" list form (see bind_cpuset.h). */
#include "bind_cpuset.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bind_cpuset_init(bind_cpuset *s)
{
	s->bits = NULL;
	s->nwords = 0;
}

void bind_cpuset_free(bind_cpuset *s)
{
	free(s->bits);
	bind_cpuset_init(s);
}

void bind_cpuset_clear(bind_cpuset *s)
{
	if (s->nwords)
		memset(s->bits, 0, s->nwords * sizeof(*s->bits));
}

static int grow(bind_cpuset *s, size_t nwords)
{
	uint64_t *bits;

	if (nwords <= s->nwords)
		return 0;
	bits = realloc(s->bits, nwords * sizeof(*bits));
	if (!bits)
		return -1;
	memset(bits + s->nwords, 0, (nwords - s->nwords) * sizeof(*bits));
	s->bits = bits;
	s->nwords = nwords;
	return 0;
}

int bind_cpuset_add(bind_cpuset *s, int cpu)
{
	if (cpu < 0 || cpu > BIND_CPU_MAX)
		return -1;
	if (grow(s, (size_t)cpu / 64 + 1) < 0)
		return -1;
	s->bits[cpu / 64] |= UINT64_C(1) << (cpu % 64);
	return 0;
}

int bind_cpuset_has(const bind_cpuset *s, int cpu)
{
	if (cpu < 0 || (size_t)cpu / 64 >= s->nwords)
		return 0;
	return (s->bits[cpu / 64] >> (cpu % 64)) & 1;
}

int bind_cpuset_count(const bind_cpuset *s)
{
	int n = 0;

	for (size_t i = 0; i < s->nwords; i++)
		n += __builtin_popcountll(s->bits[i]);
	return n;
}

int bind_cpuset_next(const bind_cpuset *s, int after)
{
	int cpu = after < 0 ? 0 : after + 1;

	for (size_t w = (size_t)cpu / 64; w < s->nwords; w++) {
		uint64_t word = s->bits[w];

		if (w == (size_t)cpu / 64)
			word &= ~UINT64_C(0) << (cpu % 64);
		if (word)
			return (int)(w * 64) + __builtin_ctzll(word);
	}
	return -1;
}

int bind_cpuset_copy(bind_cpuset *dst, const bind_cpuset *src)
{
	if (grow(dst, src->nwords) < 0)
		return -1;
	bind_cpuset_clear(dst);
	if (src->nwords)
		memcpy(dst->bits, src->bits, src->nwords * sizeof(*src->bits));
	return 0;
}

void bind_cpuset_intersect(bind_cpuset *dst, const bind_cpuset *other)
{
	for (size_t i = 0; i < dst->nwords; i++)
		dst->bits[i] &= i < other->nwords ? other->bits[i] : 0;
}

void bind_cpuset_subtract(bind_cpuset *dst, const bind_cpuset *other)
{
	for (size_t i = 0; i < dst->nwords && i < other->nwords; i++)
		dst->bits[i] &= ~other->bits[i];
}

int bind_cpuset_intersects(const bind_cpuset *a, const bind_cpuset *b)
{
	for (size_t i = 0; i < a->nwords && i < b->nwords; i++)
		if (a->bits[i] & b->bits[i])
			return 1;
	return 0;
}

int bind_cpuset_equal(const bind_cpuset *a, const bind_cpuset *b)
{
	size_t n = a->nwords > b->nwords ? a->nwords : b->nwords;

	for (size_t i = 0; i < n; i++) {
		uint64_t x = i < a->nwords ? a->bits[i] : 0;
		uint64_t y = i < b->nwords ? b->bits[i] : 0;

		if (x != y)
			return 0;
	}
	return 1;
}

/* Parse a CPU number at *p; advances *p. -1 when there is none or it is too large. */
static int parse_cpu(const char **p)
{
	long v = 0;

	if (!isdigit((unsigned char)**p))
		return -1;
	while (isdigit((unsigned char)**p)) {
		v = v * 10 + (**p - '0');
		if (v > BIND_CPU_MAX)
			return -1;
		(*p)++;
	}
	return (int)v;
}

int bind_cpuset_parse(bind_cpuset *s, const char *text, const char *source, int line,
		      topo_error *err)
{
	const char *p = text, *end;
	size_t len;

	bind_cpuset_clear(s);
	while (isspace((unsigned char)*p))
		p++;
	end = p + strlen(p);
	while (end > p && isspace((unsigned char)end[-1]))
		end--;
	len = (size_t)(end - p);
	if (len == 0)
		return 0;
	for (;;) {
		int lo = parse_cpu(&p), hi;

		if (lo < 0)
			goto bad;
		hi = lo;
		if (*p == '-') {
			p++;
			hi = parse_cpu(&p);
			if (hi < lo)
				goto bad;
		}
		for (int c = lo; c <= hi; c++)
			if (bind_cpuset_add(s, c) < 0) {
				bind_cpuset_clear(s);
				topo_error_set(err, source, line, "out of memory reading a CPU list");
				return -1;
			}
		if (p == end)
			return 0;
		if (*p != ',')
			goto bad;
		p++;
	}
bad:
	bind_cpuset_clear(s);
	topo_error_set(err, source, line,
		       "\"%.*s\" is not a CPU list like \"0-3,8\" (CPU numbers 0-%d, ranges low-high)",
		       len > 64 ? 64 : (int)len, end - len, BIND_CPU_MAX);
	return -1;
}

char *bind_cpuset_format(const bind_cpuset *s)
{
	size_t cap = 16, used = 0;
	char *out = malloc(cap);
	int c = bind_cpuset_next(s, -1);

	if (!out)
		return NULL;
	out[0] = '\0';
	while (c >= 0) {
		int hi = c;
		char piece[32];
		int n;

		while (bind_cpuset_has(s, hi + 1))
			hi++;
		if (hi == c)
			n = snprintf(piece, sizeof(piece), "%s%d", used ? "," : "", c);
		else
			n = snprintf(piece, sizeof(piece), "%s%d-%d", used ? "," : "", c, hi);
		if (used + (size_t)n + 1 > cap) {
			char *bigger;

			while (used + (size_t)n + 1 > cap)
				cap *= 2;
			bigger = realloc(out, cap);
			if (!bigger) {
				free(out);
				return NULL;
			}
			out = bigger;
		}
		memcpy(out + used, piece, (size_t)n + 1);
		used += (size_t)n;
		c = bind_cpuset_next(s, hi);
	}
	return out;
}
