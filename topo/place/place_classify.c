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
 * before regcomp (topo_regex.h): stacked repetitions make regcomp's tree grow
 * exponentially, and back-references make regexec backtrack on the job name
 * and comment, which users choose.
 */
#include "place_classify.h"

#include <ctype.h>
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "topo_io.h"
#include "topo_num.h"
#include "topo_regex.h"

#define MAX_RULE_TEXT 4096

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

/* Compile the name or comment pattern val into *re. Returns 0 or -1 (err set). */
static int compile_pattern(regex_t *re, const char *val, field f, const char *src, int line,
			   topo_error *err)
{
	char why[200];

	if (topo_regex_compile(re, val, REG_NOSUB, why, sizeof(why)) == 0)
		return 0;
	topo_error_set(err, src, line, "bad %s pattern '%.60s%s': %s", field_names[f], val,
		       strlen(val) > 60 ? "..." : "", why);
	return -1;
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
