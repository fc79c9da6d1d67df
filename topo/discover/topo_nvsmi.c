/*
 * topo_nvsmi: NVLink domains from `nvidia-smi -q` (see topo_nvsmi.h).
 *
 * The parser only follows indentation: a "GPU <bus id>" line at column 0
 * opens a GPU, a "Fabric" line inside it opens its fabric block, and
 * "Key : Value" lines one level deeper fill it ("Health" one more level
 * down gives Bandwidth). Everything else nvidia-smi prints is skipped, so
 * other driver versions' extra fields do not matter.
 */
#include "topo_nvsmi.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo_hostdir.h"

#define NVSMI_MAX_BYTES (16u << 20) /* a 72-GPU node prints well under 1 MB */
#define MAX_GPUS 64
#define VAL_LEN 80

typedef struct gpu_fabric {
	char busid[VAL_LEN];
	char state[VAL_LEN], status[VAL_LEN], clique[VAL_LEN], uuid[VAL_LEN];
	char bandwidth[VAL_LEN];
	int line;     /* the CliqueId line, else the GPU line */
	int fabric;   /* a Fabric block was seen */
} gpu_fabric;

typedef struct host_fabric {
	gpu_fabric gpu[MAX_GPUS];
	int ngpus;
} host_fabric;

static int indent_of(const char *s)
{
	int n = 0;

	while (s[n] == ' ')
		n++;
	return n;
}

/* "   Key   : Value" -> key and value, both trimmed; 0 if no colon. */
static int split_kv(const char *s, char *key, char *val)
{
	const char *colon = strchr(s, ':'), *a, *b;

	if (!colon)
		return 0;
	for (a = s; *a == ' '; a++)
		;
	for (b = colon; b > a && b[-1] == ' '; b--)
		;
	snprintf(key, VAL_LEN, "%.*s", (int)(b - a), a);
	for (a = colon + 1; *a == ' '; a++)
		;
	for (b = a + strlen(a); b > a && (b[-1] == ' ' || b[-1] == '\r'); b--)
		;
	snprintf(val, VAL_LEN, "%.*s", (int)(b - a), a);
	return 1;
}

static void fabric_value(gpu_fabric *g, const char *key, const char *val, int health,
			 int lineno)
{
	char *dst = NULL;

	if (health && strcmp(key, "Bandwidth") == 0)
		dst = g->bandwidth;
	else if (!health && strcmp(key, "State") == 0)
		dst = g->state;
	else if (!health && strcmp(key, "Status") == 0)
		dst = g->status;
	else if (!health && strcmp(key, "CliqueId") == 0) {
		dst = g->clique;
		g->line = lineno;
	}
	else if (!health && strcmp(key, "ClusterUUID") == 0)
		dst = g->uuid;
	if (dst)
		snprintf(dst, VAL_LEN, "%s", val);
}

static int parse(char *text, const char *path, host_fabric *h, topo_error *err)
{
	int lineno = 0, fabric_indent = -1, health_indent = -1;
	gpu_fabric *cur = NULL;
	char key[VAL_LEN], val[VAL_LEN];

	for (char *line = text, *next; line; line = next) {
		int ind;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		ind = indent_of(line);
		if (!line[ind] || line[ind] == '\r')
			continue;
		if (ind == 0 && strncmp(line, "GPU ", 4) == 0) {
			if (h->ngpus == MAX_GPUS) {
				topo_error_set(err, path, lineno, "more than %d GPU sections", MAX_GPUS);
				return -1;
			}
			cur = &h->gpu[h->ngpus++];
			memset(cur, 0, sizeof(*cur));
			snprintf(cur->busid, VAL_LEN, "%s", line + 4);
			cur->busid[strcspn(cur->busid, " \r")] = '\0';
			cur->line = lineno;
			fabric_indent = health_indent = -1;
			continue;
		}
		if (!cur)
			continue;
		if (fabric_indent >= 0 && ind <= fabric_indent)
			fabric_indent = -1;
		if (health_indent >= 0 && ind <= health_indent)
			health_indent = -1;
		if (fabric_indent < 0 && strcmp(line + ind, "Fabric") == 0) {
			fabric_indent = ind;
			cur->fabric = 1;
			continue;
		}
		if (fabric_indent < 0)
			continue;
		if (health_indent < 0 && strcmp(line + ind, "Health") == 0) {
			health_indent = ind;
			continue;
		}
		if (split_kv(line, key, val))
			fabric_value(cur, key, val, health_indent >= 0, lineno);
	}
	if (h->ngpus == 0) {
		topo_error_set(err, path, 0,
			       "no \"GPU <bus id>\" section: this is not `nvidia-smi -q` output");
		return -1;
	}
	return 0;
}

static int is_na(const char *s)
{
	return !*s || strcmp(s, "N/A") == 0;
}

static int all_digits(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

/* The host's domain key "UUID/CLIQUE" into key (empty: none), reporting
 * anomalies. Returns 0, or -1 on a malformed value or memory exhaustion. */
static int host_domain(topo_graph *g, const char *host, const char *path, const host_fabric *h,
		       char *key, size_t len, topo_error *err)
{
	int none = 0, ready = 0;
	char k[2 * VAL_LEN + 2];

	key[0] = '\0';
	for (int i = 0; i < h->ngpus; i++) {
		const gpu_fabric *f = &h->gpu[i];

		if (!f->fabric || is_na(f->state)) {
			none++;
			continue;
		}
		if (strcmp(f->state, "Completed") != 0 || strcmp(f->status, "Success") != 0) {
			key[0] = '\0';
			return topo_graph_add_anomaly(g, "nvlink-fabric-not-ready", host,
						      "GPU %s of %s reports fabric State \"%s\", Status \"%s\"; "
						      "the host joins no NVLink domain",
						      f->busid, host, f->state, f->status) < 0 ? -1 : 0;
		}
		if (!all_digits(f->clique) || is_na(f->uuid) || strpbrk(f->uuid, " /")) {
			topo_error_set(err, path, f->line,
				       "GPU %s: CliqueId \"%s\" / ClusterUUID \"%s\" is not what "
				       "nvidia-smi prints for a completed fabric",
				       f->busid, f->clique, f->uuid);
			return -1;
		}
		if (!is_na(f->bandwidth) && strcmp(f->bandwidth, "Full") != 0 &&
		    topo_graph_add_anomaly(g, "nvlink-degraded", host,
					   "GPU %s of %s reports NVLink fabric bandwidth \"%s\"",
					   f->busid, host, f->bandwidth) < 0)
			return -1;
		snprintf(k, sizeof(k), "%s/%s", f->uuid, f->clique);
		if (ready++ && strcmp(k, key) != 0) {
			key[0] = '\0';
			return topo_graph_add_anomaly(g, "nvlink-domain-split", host,
						      "the GPUs of %s are in different NVLink domains "
						      "(%s and %s); the host joins none",
						      host, key, k) < 0 ? -1 : 0;
		}
		snprintf(key, len, "%s", k);
	}
	if (ready && none) {
		key[0] = '\0';
		return topo_graph_add_anomaly(g, "nvlink-fabric-not-ready", host,
					      "%d of the %d GPUs of %s have no NVLink fabric; the host "
					      "joins no NVLink domain",
					      none, h->ngpus, host) < 0 ? -1 : 0;
	}
	return 0;
}

static int find_or_add_host(topo_graph *g, const char *name)
{
	int id = topo_graph_find(g, TOPO_V_HOST, name);

	return id >= 0 ? id : topo_graph_add_vertex(g, TOPO_V_HOST, name);
}

/* The group of domain key k, created as "nvlN" on first use. */
static int domain_group(topo_graph *g, char **keys, int *groups, int *ndom, const char *k,
			topo_error *err)
{
	char name[32], uuid[VAL_LEN];
	const char *slash;
	int id;

	for (int i = 0; i < *ndom; i++)
		if (strcmp(keys[i], k) == 0)
			return groups[i];
	snprintf(name, sizeof(name), "nvl%d", *ndom + 1);
	id = topo_graph_add_vertex(g, TOPO_V_GROUP, name);
	if (id < 0) {
		topo_error_set(err, "", 0, "cannot add NVLink domain group %s: the name is taken",
			       name);
		return -1;
	}
	slash = strrchr(k, '/');
	snprintf(uuid, sizeof(uuid), "%.*s", (int)(slash - k), k);
	if (!(keys[*ndom] = strdup(k))) {
		topo_error_set(err, "", 0, "out of memory");
		return -1;
	}
	groups[(*ndom)++] = id;
	if (topo_graph_set_attr(g, id, TOPO_GROUP_KIND_ATTR, TOPO_GROUP_KIND_NVLINK) < 0 ||
	    topo_graph_set_attr(g, id, "cluster_uuid", uuid) < 0 ||
	    topo_graph_set_attr(g, id, "clique_id", slash + 1) < 0) {
		topo_error_set(err, "", 0, "out of memory");
		return -1;
	}
	return id;
}

/* The NVLink domains being made: one key "UUID/CLIQUE" and group per domain. */
typedef struct domains {
	host_fabric *hf; /* one host's GPUs, reused (31 KiB) */
	char **keys;
	int *groups, n;
} domains;

/* One host's output (text, NUL-terminated, changed in place): its GPUs are
 * parsed, the host added if absent, and made a member of its domain. */
static int add_host(topo_graph *g, domains *d, const char *host, const char *path, char *text,
		    topo_error *err)
{
	char key[2 * VAL_LEN + 2];
	int grp;

	d->hf->ngpus = 0;
	if (parse(text, path, d->hf, err) < 0)
		return -1;
	if (find_or_add_host(g, host) < 0) {
		topo_error_set(err, path, 0, "cannot add host %s", host);
		return -1;
	}
	if (host_domain(g, host, path, d->hf, key, sizeof(key), err) < 0)
		return -1;
	if (!key[0])
		return 0;
	if ((grp = domain_group(g, d->keys, d->groups, &d->n, key, err)) < 0)
		return -1;
	if (topo_graph_add_edge(g, TOPO_E_MEMBER, grp, topo_graph_find(g, TOPO_V_HOST, host)) < 0) {
		topo_error_set(err, path, 0, "out of memory");
		return -1;
	}
	return 0;
}

/* Room for nhosts hosts' domains; 0, or -1 with err filled. */
static int domains_init(domains *d, size_t nhosts, const char *source, topo_error *err)
{
	d->n = 0;
	d->hf = malloc(sizeof(*d->hf));
	d->keys = calloc(nhosts + 1, sizeof(*d->keys));
	d->groups = calloc(nhosts + 1, sizeof(*d->groups));
	if (d->hf && d->keys && d->groups)
		return 0;
	topo_error_set(err, source, 0, "out of memory");
	return -1;
}

static void domains_free(domains *d)
{
	for (int i = 0; d->keys && i < d->n; i++)
		free(d->keys[i]);
	free(d->keys);
	free(d->groups);
	free(d->hf);
}

int topo_load_nvidia_smi_dir(topo_graph *g, const char *dir, topo_error *err)
{
	topo_hostdir hd;
	domains d = { 0 };
	int rc = -1;

	topo_error_clear(err);
	if (topo_hostdir_list(&hd, dir, "txt", err) < 0)
		return -1;
	if (domains_init(&d, hd.n, dir, err) < 0)
		goto out;
	for (size_t i = 0; i < hd.n; i++) {
		size_t len;
		char *text = topo_read_file(hd.path[i], NVSMI_MAX_BYTES, &len, err);
		int r = text ? add_host(g, &d, hd.host[i], hd.path[i], text, err) : -1;

		free(text);
		if (r < 0)
			goto out;
	}
	rc = d.n;
out:
	domains_free(&d);
	topo_hostdir_free(&hd);
	return rc;
}

int topo_load_nvidia_smi_mem(topo_graph *g, const char *host, const char *text, size_t len,
			     const char *source, topo_error *err)
{
	domains d = { 0 };
	char *copy;
	int rc = -1;

	topo_error_clear(err);
	if (len > NVSMI_MAX_BYTES) {
		topo_error_set(err, source, 0, "larger than %u bytes", NVSMI_MAX_BYTES);
		return -1;
	}
	if (!(copy = malloc(len + 1))) {
		topo_error_set(err, source, 0, "out of memory");
		return -1;
	}
	memcpy(copy, text, len);
	copy[len] = '\0';
	if (domains_init(&d, 1, source, err) == 0 && add_host(g, &d, host, source, copy, err) == 0)
		rc = d.n;
	domains_free(&d);
	free(copy);
	return rc;
}
