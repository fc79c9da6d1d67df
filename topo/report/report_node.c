/*
 * report_node: read the node side's per-job, per-host outcome files
 * (job-<jobid>.<host>.json, as the SPANK plugin writes them; <jobid>.<host>.json
 * also reads) from a report directory. See report_node.h.
 */
#include "report_node.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo_hostlist.h"
#include "topo_io.h"

static void outcome_clear(report_node_outcome *o)
{
	for (int k = 0; k < o->nkeys; k++) {
		free(o->keys[k]);
		free(o->values[k]);
	}
	free(o->keys);
	free(o->values);
	free(o->host);
	free(o->problem);
	memset(o, 0, sizeof(*o));
}

void report_node_free(report_node_outcome *o, int n)
{
	for (int i = 0; o && i < n; i++)
		outcome_clear(&o[i]);
	free(o);
}

/* Split a report file name, "job-<job>.<host>.json" (what the SPANK plugin
 * writes, docs/node-side.md) or "<job>.<host>.json", into the job id and a
 * malloc'd host; NULL when the name is neither (or memory runs out). */
static char *parse_name(const char *name, uint32_t *job)
{
	const char *p = strncmp(name, "job-", 4) == 0 ? name + 4 : name, *dot;
	size_t nl = strlen(name);
	unsigned long v = 0;

	if (*p < '0' || *p > '9' || nl < 5 || strcmp(name + nl - 5, ".json"))
		return NULL;
	for (dot = p; *dot >= '0' && *dot <= '9'; dot++)
		if ((v = v * 10 + (unsigned long)(*dot - '0')) > UINT32_MAX)
			return NULL;
	if (*dot != '.' || dot + 1 >= name + nl - 5)
		return NULL;
	*job = (uint32_t)v;
	return strndup(dot + 1, (size_t)(name + nl - 5 - (dot + 1)));
}

/* The host part of a report file name when the report is job's, else NULL. */
static char *host_of(const char *name, uint32_t job)
{
	uint32_t j;
	char *host = parse_name(name, &j);

	if (host && j != job) {
		free(host);
		return NULL;
	}
	return host;
}

/* The report's "job_id" (a string or a number) is `job`, or absent. */
static int job_matches(json_t *root, uint32_t job)
{
	json_t *v = json_object_get(root, "job_id");
	char want[16];

	snprintf(want, sizeof(want), "%u", job);
	if (!v)
		return 1;
	if (json_is_integer(v))
		return json_integer_value(v) == (json_int_t)job;
	return json_is_string(v) && !strcmp(json_string_value(v), want);
}

/* Keep every top-level member of root in o, as text. 0, or -1 (memory). */
static int keep_members(json_t *root, report_node_outcome *o)
{
	size_t n = json_object_size(root);
	const char *key;
	json_t *v;

	o->keys = calloc(n + 1, sizeof(char *));
	o->values = calloc(n + 1, sizeof(char *));
	if (!o->keys || !o->values)
		return -1;
	json_object_foreach(root, key, v) {
		char *val = json_is_string(v) ? strdup(json_string_value(v))
					      : json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

		o->keys[o->nkeys] = strdup(key);
		o->values[o->nkeys] = val;
		o->nkeys++;
		if (!val || !o->keys[o->nkeys - 1])
			return -1;
	}
	return 0;
}

/* Read one candidate file into o (o->host: the name's host, replaced by the
 * report's "node"). Returns 0 (read, or kept with o->problem), 1 with *why
 * (skipped: not opened, or another job's report), -1 (memory). */
static int read_file(const char *path, uint32_t job, report_node_outcome *o, char **why)
{
	json_error_t je;
	json_t *root, *node;
	topo_error err;
	size_t len;
	char *text = topo_read_input(path, TOPO_OPEN_NOFOLLOW | TOPO_OPEN_TRUSTED,
				     REPORT_NODE_MAX_BYTES, &len, &err);
	char buf[600];
	int rc = 0;

	if (!text)
		return (*why = strdup(err.text)) ? 1 : -1;
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	free(text);
	if (!root) {
		snprintf(buf, sizeof(buf), "line %d: %s", je.line, je.text);
		return (o->problem = strdup(buf)) ? 0 : -1;
	}
	if (!json_is_object(root)) {
		json_decref(root);
		return (o->problem = strdup("not a JSON object")) ? 0 : -1;
	}
	node = json_object_get(root, "node");
	if (!job_matches(root, job)) {
		rc = (*why = strdup("its job_id is another job's")) ? 1 : -1;
	} else if (json_is_string(node) && *json_string_value(node)) {
		free(o->host);
		rc = (o->host = strdup(json_string_value(node))) ? 0 : -1;
	}
	if (rc == 0 && keep_members(root, o) < 0)
		rc = -1;
	json_decref(root);
	return rc;
}

static int skip(report_node_skips *s, const char *file, char *why)
{
	char **f, **w;

	if (!s) {
		free(why);
		return 0;
	}
	f = realloc(s->file, (size_t)(s->n + 1) * sizeof(*f));
	if (f)
		s->file = f;
	w = f ? realloc(s->why, (size_t)(s->n + 1) * sizeof(*w)) : NULL;
	if (w)
		s->why = w;
	if (!f || !w || !(s->file[s->n] = strdup(file))) {
		free(why);
		return -1;
	}
	s->why[s->n++] = why;
	return 0;
}

void report_node_skips_free(report_node_skips *s)
{
	for (int i = 0; s && i < s->n; i++) {
		free(s->file[i]);
		free(s->why[i]);
	}
	if (s) {
		free(s->file);
		free(s->why);
		memset(s, 0, sizeof(*s));
	}
}

static int cmp_outcome(const void *a, const void *b)
{
	return topo_hostname_cmp(((const report_node_outcome *)a)->host,
				 ((const report_node_outcome *)b)->host);
}

int report_node_load(const char *dir, uint32_t job, report_node_outcome **out,
		     report_node_skips *skipped, topo_error *err)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	report_node_outcome *o = NULL;
	int n = 0, cap = 0;

	*out = NULL;
	if (skipped)
		memset(skipped, 0, sizeof(*skipped));
	if (!d) {
		topo_error_set(err, dir, 0, "cannot read the node report directory: %s",
			       strerror(errno));
		return -1;
	}
	while ((e = readdir(d))) {
		char *host = host_of(e->d_name, job), path[4096], *why = NULL;
		int rc;

		if (!host)
			continue;
		if (n == cap) {
			report_node_outcome *g = realloc(o, (size_t)(cap = cap ? 2 * cap : 8) * sizeof(*o));

			if (!g) {
				free(host);
				goto oom;
			}
			o = g;
		}
		memset(&o[n], 0, sizeof(*o));
		o[n++].host = host;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		rc = read_file(path, job, &o[n - 1], &why);
		if (rc == 1) { /* not an outcome: a skipped file */
			outcome_clear(&o[--n]);
			rc = skip(skipped, e->d_name, why);
		}
		if (rc < 0)
			goto oom;
	}
	closedir(d);
	if (n > 1)
		qsort(o, (size_t)n, sizeof(*o), cmp_outcome);
	*out = o;
	return n;
oom:
	closedir(d);
	report_node_free(o, n);
	report_node_skips_free(skipped);
	topo_error_set(err, dir, 0, "out of memory reading node reports");
	return -1;
}

/* ---- summary for monitoring ------------------------------------------------- */

const char *const report_node_irq_kinds[REPORT_NODE_IRQ_KINDS] = {
	"shared-core", "remote-numa", "on-job-cores", "all-on-one-core"};

static void copy_field(char *dst, size_t len, json_t *v)
{
	snprintf(dst, len, "%s", json_is_string(v) ? json_string_value(v) : "");
}

/* One report's health; 0 read, 1 unreadable. */
static int health_read(const char *path, report_node_health *h)
{
	json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, NULL), *irq, *f;
	size_t i;

	if (!json_is_object(root)) {
		json_decref(root);
		return 1;
	}
	h->time = json_is_number(json_object_get(root, "time"))
			  ? json_number_value(json_object_get(root, "time")) : 0;
	irq = json_object_get(root, "irq");
	copy_field(h->mode, sizeof(h->mode), json_object_get(irq, "mode"));
	copy_field(h->status, sizeof(h->status), json_object_get(irq, "status"));
	json_array_foreach(json_object_get(irq, "findings"), i, f) {
		const char *kind = json_string_value(json_object_get(f, "kind"));

		for (int k = 0; kind && k < REPORT_NODE_IRQ_KINDS; k++)
			h->findings[k] += strcmp(kind, report_node_irq_kinds[k]) == 0;
	}
	json_decref(root);
	return 0;
}

static int newer(const report_node_health *a, const report_node_health *b)
{
	return a->time > b->time || (a->time == b->time && a->job > b->job);
}

static int cmp_health(const void *a, const void *b)
{
	return topo_hostname_cmp(((const report_node_health *)a)->host,
				 ((const report_node_health *)b)->host);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Keep h as its host's entry when it is the newest; takes h->host. */
static int health_keep(report_node_summary *s, int *cap, report_node_health *h)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->nodes[i].host, h->host)) {
			if (newer(h, &s->nodes[i])) {
				free(s->nodes[i].host);
				s->nodes[i] = *h;
			} else {
				free(h->host);
			}
			return 0;
		}
	if (s->n == *cap) {
		report_node_health *g = realloc(s->nodes, (size_t)(*cap = *cap ? 2 * *cap : 16) *
							     sizeof(*g));

		if (!g) {
			free(h->host);
			return -1;
		}
		s->nodes = g;
	}
	s->nodes[s->n++] = *h;
	return 0;
}

void report_node_summary_free(report_node_summary *s)
{
	for (int i = 0; s->nodes && i < s->n; i++)
		free(s->nodes[i].host);
	free(s->nodes);
	memset(s, 0, sizeof(*s));
}

int report_node_summarise(const char *dir, report_node_summary *s, topo_error *err)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	uint32_t *jobs = NULL;
	int cap = 0, njobs = 0, jcap = 0;

	memset(s, 0, sizeof(*s));
	if (!d) {
		topo_error_set(err, dir, 0, "cannot read the node report directory: %s",
			       strerror(errno));
		return -1;
	}
	while ((e = readdir(d))) {
		report_node_health h = {0};
		char path[4096];

		if (!(h.host = parse_name(e->d_name, &h.job)))
			continue;
		s->reports++;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (health_read(path, &h)) {
			s->unreadable++;
			free(h.host);
			continue;
		}
		if (njobs == jcap) {
			uint32_t *g = realloc(jobs, (size_t)(jcap = jcap ? 2 * jcap : 64) * sizeof(*g));

			if (!g) {
				free(h.host);
				goto oom;
			}
			jobs = g;
		}
		jobs[njobs++] = h.job;
		if (health_keep(s, &cap, &h))
			goto oom;
	}
	closedir(d);
	if (njobs > 1)
		qsort(jobs, (size_t)njobs, sizeof(*jobs), cmp_u32);
	for (int i = 0; i < njobs; i++)
		s->jobs += i == 0 || jobs[i] != jobs[i - 1];
	free(jobs);
	if (s->n > 1)
		qsort(s->nodes, (size_t)s->n, sizeof(*s->nodes), cmp_health);
	return 0;
oom:
	closedir(d);
	free(jobs);
	report_node_summary_free(s);
	topo_error_set(err, dir, 0, "out of memory reading node reports");
	return -1;
}
