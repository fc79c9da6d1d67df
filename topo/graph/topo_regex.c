/*
 * topo_regex: the cost gate for administrator-written regexes (see
 * topo_regex.h). It measures the pattern as glibc's regcomp will build it,
 * without compiling it.
 */
#include "topo_regex.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "topo_num.h"

#define STR_(x) #x
#define STR(x) STR_(x)

/* Past a bracket expression starting at p ('['), or at its end if open. */
static const char *skip_bracket(const char *p)
{
	p++;
	if (*p == '^')
		p++;
	if (*p == ']')
		p++;
	for (; *p && *p != ']'; p++)
		if (*p == '[' && (p[1] == ':' || p[1] == '.' || p[1] == '=')) {
			const char *end = strchr(p + 2, p[1]);

			while (end && end[1] != ']')
				end = strchr(end + 1, p[1]);
			if (!end)
				return p + strlen(p);
			p = end + 1;
		}
	return *p ? p + 1 : p;
}

/* The number in an interval bound at s ("" is 0); *end past its digits. */
static long interval_bound(const char *s, const char **end)
{
	size_t n = strspn(s, "0123456789");
	long v = 0;

	*end = s + n;
	if (n && topo_parse_long_n(s, n, 0, LONG_MAX, &v) < 0)
		v = LONG_MAX; /* more digits than a long holds: the largest */
	return v;
}

/* The repetition operator at p: how many copies of its operand regcomp
 * makes (2 for '+', the larger bound + 1 for '{m}', '{m,}' and '{m,n}', 1
 * for '*' and '?'), with *end past it. Returns 0 when p is not one. */
static double repetition(const char *p, const char **end)
{
	const char *q;
	long m, n;

	*end = p + 1;
	if (*p == '*' || *p == '?')
		return 1;
	if (*p == '+')
		return 2;
	if (*p != '{')
		return 0;
	m = n = interval_bound(p + 1, &q);
	if (*q == ',' && q[1] != '}')
		n = interval_bound(q + 1, &q);
	else if (*q == ',')
		q++;
	if (*q != '}')
		return 0; /* not an interval: regcomp refuses it */
	*end = q + 1;
	return (double)(m > n ? m : n) + 1;
}

static double alternation_size(const char **pp, int *stacked);

/* Size of the atom at *pp (a group counts its contents), *pp moved past it. */
static double atom_size(const char **pp, int *stacked)
{
	const char *p = *pp;
	double n = 1;

	if (*p == '(') {
		p++;
		n = alternation_size(&p, stacked) + 1;
		if (*p == ')')
			p++;
	} else if (*p == '[') {
		p = skip_bracket(p);
	} else if (*p == '\\') {
		p += p[1] ? 2 : 1;
	} else {
		p++;
	}
	*pp = p;
	return n;
}

/* Size of the tree regcomp builds for the branches from *pp to the ')'
 * that closes them or the end: a sequence adds its pieces, a repetition
 * multiplies its operand (each stacked one again: ".*++" is 2 x 2 x ".*").
 * Sets *stacked when a repetition operator follows another. */
static double alternation_size(const char **pp, int *stacked)
{
	const char *p = *pp, *end;
	double total = 0, copies;

	while (*p && *p != ')') {
		double piece;

		if (*p == '|') {
			total++;
			p++;
			continue;
		}
		piece = atom_size(&p, stacked);
		for (int reps = 0; (copies = repetition(p, &end)) > 0; reps++) {
			if (reps > 0)
				*stacked = 1;
			piece = piece * copies + 1;
			p = end;
		}
		total += piece;
	}
	*pp = p;
	return total;
}

const char *topo_regex_cost(const char *re)
{
	double size = 0;
	const char *p;
	int stacked = 0;

	if (strlen(re) > TOPO_REGEX_MAX_LEN)
		return "longer than " STR(TOPO_REGEX_MAX_LEN) " characters";
	for (p = re; *p; p++) {
		if (*p == '\\' && p[1] >= '1' && p[1] <= '9')
			return "back-references are not allowed (matching could take exponential time)";
		if (*p == '\\' && p[1])
			p++;
		else if (*p == '[')
			p = skip_bracket(p) - 1;
	}
	for (p = re; *p;) {
		size += alternation_size(&p, &stacked);
		if (*p == ')')
			p++; /* an unmatched ')': regcomp refuses it */
	}
	if (size > TOPO_REGEX_MAX_SIZE)
		return "too complex: its repetitions ('+', '{m,n}') make regcomp copy it into more "
		       "than " STR(TOPO_REGEX_MAX_SIZE) " pieces, which would take too long";
	if (stacked)
		return "a repetition operator follows another ('*?', '?\?', '++', ...): POSIX leaves "
		       "that undefined, and glibc's regcomp can take minutes on a few of them";
	return NULL;
}

int topo_regex_compile(regex_t *re, const char *pattern, int cflags, char *msg, size_t len)
{
	const char *why = topo_regex_cost(pattern);
	int rc;

	if (why) {
		snprintf(msg, len, "%s", why);
		return -1;
	}
	rc = regcomp(re, pattern, REG_EXTENDED | cflags);
	if (rc) {
		regerror(rc, re, msg, len);
		return -1;
	}
	return 0;
}
