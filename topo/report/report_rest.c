/*
 * report_rest: GET /jobs and /nodes from slurmrestd (libcurl) and
 * read the replies (jansson). See report_rest.h.
 */
#include "report_rest.h"

#include <curl/curl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "place.h"
#include "topo_hostlist.h"

typedef struct buffer {
	char *p;
	size_t len, cap;
	int overflow;
} buffer;

#define REST_MAX_REPLY (256u << 20) /* a reply larger than this is refused */

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *ud)
{
	buffer *b = ud;
	size_t n = size * nmemb;

	if (b->len + n + 1 > REST_MAX_REPLY) {
		b->overflow = 1;
		return 0;
	}
	if (b->len + n + 1 > b->cap) {
		size_t cap = (b->len + n + 1) * 2;
		char *q = realloc(b->p, cap);

		if (!q)
			return 0;
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, ptr, n);
	b->len += n;
	b->p[b->len] = '\0';
	return n;
}

void report_rest_free(report_rest_snapshot *s)
{
	for (int j = 0; j < s->njobs; j++) {
		for (int i = 0; i < s->jobs[j].nhosts; i++)
			free(s->jobs[j].hosts[i]);
		free(s->jobs[j].hosts);
	}
	free(s->jobs);
	free(s->nodes);
	memset(s, 0, sizeof(*s));
}

static const char *first_flag(json_t *v)
{
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_array(v) && json_is_string(json_array_get(v, 0)))
		return json_string_value(json_array_get(v, 0));
	return "";
}

/* slurmrestd's own complaint in a reply: errors[0].description / .error. */
static const char *rest_error(json_t *root)
{
	json_t *e = json_array_get(json_object_get(root, "errors"), 0);
	json_t *d = json_object_get(e, "description");

	if (!json_is_string(d) || !*json_string_value(d))
		d = json_object_get(e, "error");
	return json_is_string(d) ? json_string_value(d) : NULL;
}

static json_t *load_list(const char *body, size_t len, const char *source, const char *key,
			 json_t **root, topo_error *err)
{
	json_error_t je;
	json_t *list;

	*root = json_loadb(body, len, 0, &je);
	if (!*root) {
		topo_error_set(err, source, je.line, "the reply is not JSON: %s", je.text);
		return NULL;
	}
	list = json_object_get(*root, key);
	if (!json_is_array(list)) {
		const char *why = rest_error(*root);

		topo_error_set(err, source, 0, "the reply has no \"%s\" list%s%s", key,
			       why ? ": " : "", why ? why : "");
		json_decref(*root);
		*root = NULL;
		return NULL;
	}
	return list;
}

int report_rest_parse_jobs(const char *body, size_t len, const char *source,
			   report_rest_snapshot *s, topo_error *err)
{
	json_t *root, *list = load_list(body, len, source, "jobs", &root, err), *j;
	size_t i;

	if (!list)
		return -1;
	if (json_array_size(list) > 0) {
		report_rest_job *n = realloc(s->jobs, (s->njobs + json_array_size(list)) *
							 sizeof(*n));

		if (!n)
			goto oom;
		s->jobs = n;
	}
	json_array_foreach(list, i, j) {
		report_rest_job *rj = &s->jobs[s->njobs];
		json_t *id = json_object_get(j, "job_id"), *nodes = json_object_get(j, "nodes");
		topo_hostlist hl;
		topo_error e;

		if (!json_is_integer(id))
			continue;
		memset(rj, 0, sizeof(*rj));
		rj->job = (uint32_t)json_integer_value(id);
		snprintf(rj->name, sizeof(rj->name), "%s",
			 json_is_string(json_object_get(j, "name"))
				 ? json_string_value(json_object_get(j, "name")) : "");
		snprintf(rj->partition, sizeof(rj->partition), "%s",
			 json_is_string(json_object_get(j, "partition"))
				 ? json_string_value(json_object_get(j, "partition")) : "");
		snprintf(rj->state, sizeof(rj->state), "%s", first_flag(json_object_get(j, "job_state")));
		rj->running = !strcmp(rj->state, "RUNNING") || !strcmp(rj->state, "COMPLETING") ||
			      !strcmp(rj->state, "SUSPENDED");
		topo_hostlist_init(&hl);
		if (json_is_string(nodes) && *json_string_value(nodes)) {
			if (topo_hostlist_expand(json_string_value(nodes), &hl, source, 0, &e) == 0) {
				rj->hosts = hl.names;
				rj->nhosts = (int)hl.n;
			} else {
				topo_hostlist_free(&hl);
			}
		}
		s->njobs++;
	}
	json_decref(root);
	return 0;
oom:
	json_decref(root);
	topo_error_set(err, source, 0, "out of memory reading the jobs");
	return -1;
}

int report_rest_parse_nodes(const char *body, size_t len, const char *source,
			    report_rest_snapshot *s, topo_error *err)
{
	json_t *root, *list = load_list(body, len, source, "nodes", &root, err), *nd;
	size_t i;

	if (!list)
		return -1;
	if (json_array_size(list) > 0) {
		report_rest_node *n = realloc(s->nodes, (s->nnodes + json_array_size(list)) *
							   sizeof(*n));

		if (!n) {
			json_decref(root);
			topo_error_set(err, source, 0, "out of memory reading the nodes");
			return -1;
		}
		s->nodes = n;
	}
	json_array_foreach(list, i, nd) {
		report_rest_node *rn = &s->nodes[s->nnodes];
		json_t *name = json_object_get(nd, "name"), *st = json_object_get(nd, "state"), *f;
		size_t k, pos = 0;

		if (!json_is_string(name))
			continue;
		memset(rn, 0, sizeof(*rn));
		snprintf(rn->name, sizeof(rn->name), "%s", json_string_value(name));
		if (json_is_string(st))
			st = json_pack("[O]", st); /* older parsers give a string */
		else
			json_incref(st);
		json_array_foreach(st, k, f) {
			const char *v = json_is_string(f) ? json_string_value(f) : "";

			if (pos < sizeof(rn->state))
				pos += (size_t)snprintf(rn->state + pos, sizeof(rn->state) - pos, "%s%s",
							k ? "+" : "", v);
			if (!strcmp(v, "DOWN") || !strcmp(v, "NOT_RESPONDING") ||
			    !strcmp(v, "FAIL") || !strcmp(v, "FUTURE"))
				rn->flags |= PLACE_HOST_DOWN;
			if (!strcmp(v, "DRAIN") || !strcmp(v, "DRAINING") || !strcmp(v, "DRAINED"))
				rn->flags |= PLACE_HOST_DRAIN;
		}
		json_decref(st);
		s->nnodes++;
	}
	json_decref(root);
	return 0;
}

static int get(const char *base, const char *path, const char *token, const char *user,
	       buffer *b, char *url, size_t urlen, topo_error *err)
{
	CURL *h = curl_easy_init();
	struct curl_slist *hdr = NULL;
	char line[8192], cerr[CURL_ERROR_SIZE] = "";
	long status = 0;
	CURLcode rc;

	if (!h) {
		topo_error_set(err, base, 0, "cannot start an HTTP client");
		return -1;
	}
	if (!strncmp(base, "unix:", 5)) {
		curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, base + 5);
		snprintf(url, urlen, "http://localhost%s", path);
	} else {
		size_t n = strlen(base);

		snprintf(url, urlen, "%.*s%s", (int)(n && base[n - 1] == '/' ? n - 1 : n), base, path);
	}
	if (token) {
		snprintf(line, sizeof(line), "X-SLURM-USER-TOKEN: %s", token);
		hdr = curl_slist_append(hdr, line);
	}
	if (user) {
		snprintf(line, sizeof(line), "X-SLURM-USER-NAME: %s", user);
		hdr = curl_slist_append(hdr, line);
	}
	hdr = curl_slist_append(hdr, "Accept: application/json");
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, b);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 5L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 20L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
	rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	curl_slist_free_all(hdr);
	curl_easy_cleanup(h);
	if (rc != CURLE_OK) {
		topo_error_set(err, url, 0, "%s", b->overflow ? "the reply is too large"
						  : cerr[0] ? cerr : curl_easy_strerror(rc));
		return -1;
	}
	if (status != 200) {
		json_t *root = b->p ? json_loadb(b->p, b->len, 0, NULL) : NULL;
		const char *why = root ? rest_error(root) : NULL;
		char text[128];

		if (!root && b->p && b->len > 0) {
			/* slurmrestd answers some failures in plain text */
			size_t n = strcspn(b->p, "\r\n");

			snprintf(text, sizeof(text), "%.*s", (int)(n < 100 ? n : 100), b->p);
			for (char *c = text; *c; c++)
				if ((unsigned char)*c < 0x20 || (unsigned char)*c == 0x7f)
					*c = '?';
			why = text[0] ? text : NULL;
		}

		topo_error_set(err, url, 0, "HTTP %ld%s%s%s", status, why ? ": " : "",
			       why ? why : "",
			       status == 401 || status == 403 || status == 511
				       ? " (is the JWT valid? set SLURM_JWT or run scontrol token)"
				       : "");
		json_decref(root);
		return -1;
	}
	return 0;
}

int report_rest_fetch(const char *base_url, const char *token, const char *user,
		      report_rest_snapshot *s, topo_error *err)
{
	static const char *const paths[2] = {"/slurm/" REPORT_REST_API "/jobs",
					     "/slurm/" REPORT_REST_API "/nodes"};
	char url[2048];

	memset(s, 0, sizeof(*s));
	for (int i = 0; i < 2; i++) {
		buffer b = {0};
		int rc = get(base_url, paths[i], token, user, &b, url, sizeof(url), err);

		if (rc == 0)
			rc = (i == 0 ? report_rest_parse_jobs : report_rest_parse_nodes)(
				b.p ? b.p : "", b.len, url, s, err);
		free(b.p);
		if (rc) {
			report_rest_free(s);
			return -1;
		}
	}
	return 0;
}
