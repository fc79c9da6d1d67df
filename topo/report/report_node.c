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

void report_node_free(report_node_outcome *o, int n)
{
	for (int i = 0; o && i < n; i++) {
		for (int k = 0; k < o[i].nkeys; k++) {
			free(o[i].keys[k]);
			free(o[i].values[k]);
		}
		free(o[i].keys);
		free(o[i].values);
		free(o[i].host);
		free(o[i].problem);
	}
	free(o);
}

/* The host part of "job-<job>.<host>.json" (what the SPANK plugin writes,
 * docs/node-side.md) or "<job>.<host>.json" when the name is job's, else NULL. */
static char *host_of(const char *name, uint32_t job)
{
	char prefix[24];
	size_t pl, nl = strlen(name);

	if (strncmp(name, "job-", 4) == 0)
		pl = (size_t)snprintf(prefix, sizeof(prefix), "job-%u.", job);
	else
		pl = (size_t)snprintf(prefix, sizeof(prefix), "%u.", job);
	if (nl <= pl + 5 || strncmp(name, prefix, pl) || strcmp(name + nl - 5, ".json"))
		return NULL;
	return strndup(name + pl, nl - pl - 5);
}

static int read_file(const char *path, report_node_outcome *o)
{
	json_error_t je;
	json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je), *v;
	const char *key;
	size_t n;
	char buf[600];

	if (!root) {
		snprintf(buf, sizeof(buf), "line %d: %s", je.line, je.text);
		return (o->problem = strdup(buf)) ? 0 : -1;
	}
	if (!json_is_object(root)) {
		json_decref(root);
		return (o->problem = strdup("not a JSON object")) ? 0 : -1;
	}
	n = json_object_size(root);
	o->keys = calloc(n + 1, sizeof(char *));
	o->values = calloc(n + 1, sizeof(char *));
	if (!o->keys || !o->values) {
		json_decref(root);
		return -1;
	}
	json_object_foreach(root, key, v) {
		char *val = json_is_string(v) ? strdup(json_string_value(v))
					      : json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

		o->keys[o->nkeys] = strdup(key);
		o->values[o->nkeys] = val;
		o->nkeys++;
		if (!val || !o->keys[o->nkeys - 1]) {
			json_decref(root);
			return -1;
		}
	}
	json_decref(root);
	return 0;
}

static int cmp_outcome(const void *a, const void *b)
{
	return topo_hostname_cmp(((const report_node_outcome *)a)->host,
				 ((const report_node_outcome *)b)->host);
}

int report_node_load(const char *dir, uint32_t job, report_node_outcome **out, topo_error *err)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	report_node_outcome *o = NULL;
	int n = 0, cap = 0;

	*out = NULL;
	if (!d) {
		topo_error_set(err, dir, 0, "cannot read the node report directory: %s",
			       strerror(errno));
		return -1;
	}
	while ((e = readdir(d))) {
		char *host = host_of(e->d_name, job), path[4096];

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
		if (read_file(path, &o[n - 1]))
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
	topo_error_set(err, dir, 0, "out of memory reading node reports");
	return -1;
}
