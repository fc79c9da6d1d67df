/*
 * place_classify: job classes from Slurm-style rules (see place_classify.h
 * and docs/job-classes.md).
 *
 *   # comment
 *   ClassRule=partition=train class=heavy
 *   ClassRule=name=^nccl-.* class=heavy
 *   ClassRule=account=ops,infra class=light
 *   ClassRule=qos=debug minnodes=2 class=light
 *   ClassRule=account=llm class=heavy sharp=yes
 *   DefaultMultiNodeGpuClass=heavy
 *   DefaultMultiNodeClass=light
 *   DefaultClass=none
 *
 * Keys are case-insensitive as in slurm.conf. A rule's conditions must all
 * hold: partition/account/qos match one of a comma list exactly, name and
 * comment are POSIX extended regexes, minnodes/mingpus are lower bounds.
 * Other top-level keys belong to other parts of the shared config file and
 * are skipped; a line that is not key=value, an unknown rule key, a bad
 * regex, a bad class or number is an error at file:line.
 *
 * A pattern glibc would take too long to compile or to match is refused
 * before regcomp (pattern_cost): regcomp copies the tree of each '+' and
 * '{m,n}' operand, so stacked repetitions grow it exponentially (fuzz_topognn_conf
 * found a 250-byte rule that held regcomp for minutes), and back-references
 * make regexec backtrack on the job name and comment, which users choose.
 */
#include "place_classify.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "topo_io.h"
#include "topo_num.h"

#define MAX_RULE_TEXT 4096
#define MAX_PATTERN 512          /* characters of a name or comment pattern */
/* pieces of the tree regcomp builds for a pattern; its epsilon closures
 * take time growing faster than the square of that: ".*" under 12 stacked
 * '+' (12,293 pieces) held regcomp for 11 s, 2,000 pieces take at most about
 * 0.5 s (fuzz_topognn_conf) */
#define MAX_PATTERN_SIZE 2000
#define MAX_PATTERN_SIZE_TEXT "2000"

typedef enum field {
	F_PARTITION = 0,
	F_ACCOUNT,
	F_QOS,
	F_NAME,
	F_COMMENT,
	F_NFIELDS
} field;

static const char *const field_names[F_NFIELDS] = { "partition", "account", "qos", "name",
						     "comment" };

typedef struct rule {
	char *value[F_NFIELDS]; /* NULL: no condition */
	regex_t re[2];          /* name, comment */
	int has_re[2];
	int minnodes, mingpus;
	place_comm_class cls;
	int sharp;              /* sharp=yes: the job is a SHARP user */
	char where[300];        /* "file:line" */
} rule;

struct place_classifier {
	rule *rules;
	int nrules;
	place_comm_class multi_gpu, multi, single;
};

static void rule_free(rule *r)
{
	for (int f = 0; f < F_NFIELDS; f++)
		free(r->value[f]);
	for (int i = 0; i < 2; i++)
		if (r->has_re[i])
			regfree(&r->re[i]);
}

void place_classifier_free(place_classifier *k)
{
	if (!k)
		return;
	for (int i = 0; i < k->nrules; i++)
		rule_free(&k->rules[i]);
	free(k->rules);
	free(k);
}

place_classifier *place_classifier_default(void)
{
	place_classifier *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	k->multi_gpu = PLACE_COMM_HEAVY;
	k->multi = PLACE_COMM_LIGHT;
	k->single = PLACE_COMM_NONE;
	return k;
}

int place_classifier_nrules(const place_classifier *k)
{
	return k->nrules;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static int parse_count(const char *v, int *out)
{
	return topo_parse_int(v, 0, 1000000, out);
}

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

/* NULL when the ERE `re` is cheap enough to compile and match, else why not. */
static const char *pattern_cost(const char *re)
{
	double size = 0;
	const char *p;
	int stacked = 0;

	if (strlen(re) > MAX_PATTERN)
		return "longer than 512 characters";
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
	if (size > MAX_PATTERN_SIZE)
		return "too complex: its repetitions ('+', '{m,n}') make regcomp copy it into more "
		       "than " MAX_PATTERN_SIZE_TEXT " pieces, which would take too long";
	if (stacked)
		return "a repetition operator follows another ('*?', '??', '++', ...): POSIX leaves "
		       "that undefined, and glibc's regcomp can take minutes on a few of them";
	return NULL;
}

/* Compile the name or comment pattern val into *re. Returns 0 or -1 (err set). */
static int compile_pattern(regex_t *re, const char *val, field f, const char *src, int line,
			   topo_error *err)
{
	const char *why = pattern_cost(val);
	int rc;

	if (why) {
		topo_error_set(err, src, line, "bad %s pattern '%.60s%s': %s", field_names[f], val,
			       strlen(val) > 60 ? "..." : "", why);
		return -1;
	}
	rc = regcomp(re, val, REG_EXTENDED | REG_NOSUB);
	if (rc) {
		char msg[128];

		regerror(rc, re, msg, sizeof(msg));
		topo_error_set(err, src, line, "bad %s pattern '%s': %s", field_names[f], val, msg);
		return -1;
	}
	return 0;
}

/* Parse "k=v k=v ... class=X" into r. Returns 0 or -1 (err set). */
static int parse_rule(char *text, rule *r, const char *src, int line, topo_error *err)
{
	char *save = NULL, *tok;
	int have_class = 0, nconds = 0;

	for (tok = strtok_r(text, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		char *eq = strchr(tok, '='), *key = tok, *val;
		int f;

		if (!eq || eq == tok || !eq[1]) {
			topo_error_set(err, src, line, "ClassRule condition '%s' is not key=value", tok);
			return -1;
		}
		*eq = '\0';
		val = eq + 1;
		if (!strcasecmp(key, "class")) {
			int c = place_comm_class_parse(val);

			if (c < 0) {
				topo_error_set(err, src, line,
					       "unknown class '%s' (use heavy, light or none)", val);
				return -1;
			}
			r->cls = (place_comm_class)c;
			have_class = 1;
			continue;
		}
		if (!strcasecmp(key, "sharp")) {
			if (strcasecmp(val, "yes") && strcasecmp(val, "no")) {
				topo_error_set(err, src, line, "sharp must be yes or no, not '%s'", val);
				return -1;
			}
			r->sharp = !strcasecmp(val, "yes");
			continue;
		}
		if (!strcasecmp(key, "minnodes") || !strcasecmp(key, "mingpus")) {
			if (parse_count(val, key[3] == 'n' || key[3] == 'N' ? &r->minnodes
									    : &r->mingpus) < 0) {
				topo_error_set(err, src, line, "%s needs a count, not '%s'", key, val);
				return -1;
			}
			nconds++;
			continue;
		}
		for (f = 0; f < F_NFIELDS; f++)
			if (!strcasecmp(key, field_names[f]))
				break;
		if (f == F_NFIELDS) {
			topo_error_set(err, src, line,
				       "unknown ClassRule key '%s' (use partition, account, qos, name, "
				       "comment, minnodes, mingpus, class, sharp)",
				       key);
			return -1;
		}
		if (r->value[f]) {
			topo_error_set(err, src, line, "ClassRule gives %s twice", field_names[f]);
			return -1;
		}
		r->value[f] = strdup(val);
		if (!r->value[f]) {
			topo_error_set(err, src, line, "out of memory");
			return -1;
		}
		if (f == F_NAME || f == F_COMMENT) {
			int i = f == F_NAME ? 0 : 1;

			if (compile_pattern(&r->re[i], val, (field)f, src, line, err))
				return -1;
			r->has_re[i] = 1;
		}
		nconds++;
	}
	if (!have_class) {
		topo_error_set(err, src, line, "ClassRule has no class=heavy|light|none");
		return -1;
	}
	if (!nconds) {
		topo_error_set(err, src, line, "ClassRule has no condition");
		return -1;
	}
	snprintf(r->where, sizeof(r->where), "rule at %s:%d", src, line);
	return 0;
}

static int parse_default(const char *val, place_comm_class *out, const char *key,
			 const char *src, int line, topo_error *err)
{
	int c = place_comm_class_parse(val);

	if (c < 0) {
		topo_error_set(err, src, line, "%s must be heavy, light or none, not '%s'", key, val);
		return -1;
	}
	*out = (place_comm_class)c;
	return 0;
}

static int parse_line(place_classifier *k, char *s, const char *src, int line, topo_error *err)
{
	char *hash = strchr(s, '#'), *eq, *key, *val;

	if (hash)
		*hash = '\0';
	s = trim(s);
	if (!*s)
		return 0;
	eq = strchr(s, '=');
	if (!eq || eq == s) {
		topo_error_set(err, src, line, "expected key=value, got '%.60s'", s);
		return -1;
	}
	*eq = '\0';
	key = trim(s);
	val = trim(eq + 1);
	if (!strcasecmp(key, "ClassRule")) {
		rule *nr = realloc(k->rules, ((size_t)k->nrules + 1) * sizeof(*nr));

		if (!nr) {
			topo_error_set(err, src, line, "out of memory");
			return -1;
		}
		k->rules = nr;
		memset(&k->rules[k->nrules], 0, sizeof(rule));
		if (parse_rule(val, &k->rules[k->nrules], src, line, err) < 0) {
			rule_free(&k->rules[k->nrules]);
			return -1;
		}
		k->nrules++;
		return 0;
	}
	if (!strcasecmp(key, "DefaultMultiNodeGpuClass"))
		return parse_default(val, &k->multi_gpu, key, src, line, err);
	if (!strcasecmp(key, "DefaultMultiNodeClass"))
		return parse_default(val, &k->multi, key, src, line, err);
	if (!strcasecmp(key, "DefaultClass"))
		return parse_default(val, &k->single, key, src, line, err);
	return 0; /* another part of the shared config file */
}

place_classifier *place_classifier_load_mem(const char *text, const char *source, topo_error *err)
{
	place_classifier *k = place_classifier_default();
	const char *p = text;
	char buf[MAX_RULE_TEXT];
	int line = 0;

	topo_error_clear(err);
	if (!source)
		source = "";
	if (!k) {
		topo_error_set(err, source, 0, "out of memory");
		return NULL;
	}
	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		line++;
		if (len >= sizeof(buf)) {
			topo_error_set(err, source, line, "line is longer than %d characters",
				       MAX_RULE_TEXT - 1);
			place_classifier_free(k);
			return NULL;
		}
		memcpy(buf, p, len);
		buf[len] = '\0';
		if (memchr(buf, '\0', len)) {
			topo_error_set(err, source, line, "line contains a NUL byte");
			place_classifier_free(k);
			return NULL;
		}
		if (parse_line(k, buf, source, line, err) < 0) {
			place_classifier_free(k);
			return NULL;
		}
		p = nl ? nl + 1 : NULL;
	}
	return k;
}

place_classifier *place_classifier_load(const char *path, topo_error *err)
{
	size_t n;
	char *text = topo_read_file(path, TOPO_IO_MAX_BYTES, &n, err);
	place_classifier *k;

	if (!text)
		return NULL;
	if (strlen(text) != n) {
		free(text);
		topo_error_set(err, path, 0, "the file contains a NUL byte");
		return NULL;
	}
	k = place_classifier_load_mem(text, path, err);
	free(text);
	return k;
}

/* A `comm=heavy|light|none` token in the comment, optionally followed by
 * ",sharp" (*sharp set to 1, else 0); -1 if none. */
static int comment_tag(const char *comment, int *sharp)
{
	const char *p = comment;

	*sharp = 0;
	while (p && (p = strstr(p, "comm=")) != NULL) {
		if (p == comment || !isalnum((unsigned char)p[-1])) {
			char word[8];
			size_t n = 0;

			p += 5;
			while (n < sizeof(word) - 1 && isalpha((unsigned char)p[n])) {
				word[n] = p[n];
				n++;
			}
			word[n] = '\0';
			if (!isalnum((unsigned char)p[n]) && place_comm_class_parse(word) >= 0) {
				*sharp = !strncmp(p + n, ",sharp", 6) && !isalnum((unsigned char)p[n + 6]);
				return place_comm_class_parse(word);
			}
		} else {
			p += 5;
		}
	}
	return -1;
}

static int in_list(const char *list, const char *v)
{
	size_t n = strlen(v);

	for (const char *p = list; p && *p;) {
		const char *c = strchr(p, ',');
		size_t len = c ? (size_t)(c - p) : strlen(p);

		if (len == n && !strncmp(p, v, n))
			return 1;
		p = c ? c + 1 : NULL;
	}
	return 0;
}

static int rule_matches(const rule *r, const place_job_info *j)
{
	const char *vals[F_NFIELDS] = { j->partition, j->account, j->qos, j->name, j->comment };

	for (int f = 0; f < F_NFIELDS; f++) {
		if (!r->value[f])
			continue;
		if (!vals[f])
			return 0;
		if (f == F_NAME || f == F_COMMENT) {
			if (regexec(&r->re[f == F_NAME ? 0 : 1], vals[f], 0, NULL, 0))
				return 0;
		} else if (!in_list(r->value[f], vals[f])) {
			return 0;
		}
	}
	return j->nodes >= r->minnodes && j->gpus >= r->mingpus;
}

place_comm_class place_classify(const place_classifier *k, const place_job_info *j,
				const char **why)
{
	return place_classify_job(k, j, NULL, why);
}

place_comm_class place_classify_job(const place_classifier *k, const place_job_info *j,
				    int *sharp, const char **why)
{
	int tag_sharp, tag = comment_tag(j->comment, &tag_sharp), dummy_sharp;
	const char *dummy;

	if (!why)
		why = &dummy;
	if (!sharp)
		sharp = &dummy_sharp;
	*sharp = 0;
	if (tag >= 0) {
		*why = "comment tag";
		*sharp = tag_sharp;
		return (place_comm_class)tag;
	}
	for (int i = 0; i < k->nrules; i++)
		if (rule_matches(&k->rules[i], j)) {
			*why = k->rules[i].where;
			*sharp = k->rules[i].sharp;
			return k->rules[i].cls;
		}
	if (j->nodes > 1 && j->gpus > 0) {
		*why = "default for multi-node GPU jobs";
		return k->multi_gpu;
	}
	if (j->nodes > 1) {
		*why = "default for multi-node jobs";
		return k->multi;
	}
	*why = "default for single-node jobs";
	return k->single;
}
