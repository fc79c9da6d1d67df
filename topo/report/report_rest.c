/*
 * report_rest: GET /jobs and /nodes from slurmrestd (libcurl) and
 * read the replies (jansson). See report_rest.h.
 */
#include "report_rest.h"

#include <curl/curl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "place.h"
#include "topo_hostlist.h"
#include "http_client.h"

#define REST_MAX_REPLY (256u << 20) /* a reply larger than this is refused */

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

/* The request headers: the JWT, the user, JSON please. NULL when memory runs out. */
static struct curl_slist *rest_headers(const char *token, const char *user)
{
	struct curl_slist *hdr = curl_slist_append(NULL, "Accept: application/json"), *n;
	char line[8192];

	if (hdr && token) {
		snprintf(line, sizeof(line), "X-SLURM-USER-TOKEN: %s", token);
		n = curl_slist_append(hdr, line);
		memset(line, 0, sizeof(line));
		hdr = n ? n : (curl_slist_free_all(hdr), NULL);
	}
	if (hdr && user) {
		snprintf(line, sizeof(line), "X-SLURM-USER-NAME: %s", user);
		n = curl_slist_append(hdr, line);
		hdr = n ? n : (curl_slist_free_all(hdr), NULL);
	}
	return hdr;
}

/* The URL of `path` on `base`, and the socket when base is unix:/path. */
static const char *rest_url(const char *base, const char *path, char *url, size_t urlen)
{
	size_t n = strlen(base);

	if (!strncmp(base, "unix:", 5)) {
		snprintf(url, urlen, "http://localhost%s", path);
		return base + 5;
	}
	snprintf(url, urlen, "%.*s%s", (int)(n && base[n - 1] == '/' ? n - 1 : n), base, path);
	return NULL;
}

/* An HTTP error status as an error naming slurmrestd's own complaint. */
static void status_error(const http_body *b, long status, const char *url, topo_error *err)
{
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
	topo_error_set(err, url, 0, "HTTP %ld%s%s%s", status, why ? ": " : "", why ? why : "",
		       status == 401 || status == 403 || status == 511
			       ? " (is the JWT valid? set SLURM_JWT or run scontrol token)"
			       : "");
	json_decref(root);
}

static int get(const char *base, const char *path, struct curl_slist *hdr, http_body *b,
	       char *url, size_t urlen, topo_error *err)
{
	CURL *h = curl_easy_init();
	char cerr[CURL_ERROR_SIZE] = "";
	http_get rq = { url, NULL, hdr, NULL, 5000, 20000, cerr };
	long status = 0;
	CURLcode rc;

	rq.unix_socket = rest_url(base, path, url, urlen);
	if (!h) {
		topo_error_set(err, base, 0, "cannot start an HTTP client");
		return -1;
	}
	if (http_setup(h, &rq, b)) {
		curl_easy_cleanup(h);
		topo_error_set(err, url, 0, "libcurl refused an option of the request");
		return -1;
	}
	rc = curl_easy_perform(h);
	if (curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status) != CURLE_OK)
		status = 0;
	curl_easy_cleanup(h);
	if (rc != CURLE_OK) {
		topo_error_set(err, url, 0, "%s", b->too_big ? "the reply is too large"
						  : cerr[0] ? cerr : curl_easy_strerror(rc));
		return -1;
	}
	if (status != 200) {
		status_error(b, status, url, err);
		return -1;
	}
	return 0;
}

int report_rest_fetch(const char *base_url, const char *token, const char *user,
		      unsigned flags, report_rest_snapshot *s, topo_error *err)
{
	static const char *const paths[2] = {"/slurm/" REPORT_REST_API "/jobs",
					     "/slurm/" REPORT_REST_API "/nodes"};
	struct curl_slist *hdr;
	char url[HTTP_MAX_URL + HTTP_MAX_PATH];

	memset(s, 0, sizeof(*s));
	if (http_check_url(base_url, "the slurmrestd URL",
				HTTP_UNIX | (flags & REPORT_REST_PLAIN_HTTP ? HTTP_PLAIN_REMOTE : 0),
				err))
		return -1;
	if (!(hdr = rest_headers(token, user))) {
		topo_error_set(err, base_url, 0, "out of memory building the request");
		return -1;
	}
	for (int i = 0; i < 2; i++) {
		http_body b = { .max = REST_MAX_REPLY };
		int rc = get(base_url, paths[i], hdr, &b, url, sizeof(url), err);

		if (rc == 0)
			rc = (i == 0 ? report_rest_parse_jobs : report_rest_parse_nodes)(
				b.p ? b.p : "", b.len, url, s, err);
		http_body_free(&b);
		if (rc) {
			curl_slist_free_all(hdr);
			report_rest_free(s);
			return -1;
		}
	}
	curl_slist_free_all(hdr);
	return 0;
}
