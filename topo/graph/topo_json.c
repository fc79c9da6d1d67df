/*
 * topo_json: reading and writing topognn's graph file (see topo_json.h and
 * docs/graph-format.md).
 *
 * Only fields that differ from their defaults are written, so a small
 * cluster's file stays readable and hand-editable. Edge ends are written as
 * "kind:name" references, which survive re-ordering and hand edits.
 * Reading is strict: an unknown key is an error, since a typo that silently
 * drops a GUID or a rail is worse than a refusal.
 */
#include "topo_json.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "topo_check.h"
#include "topo_io.h"
#include "topo_num.h"

/* Integer fields of a vertex: JSON key, offset, default. */
typedef struct int_field {
	const char *key;
	size_t off;
	int dflt;
} int_field;

static const int_field vertex_ints[] = {
	{ "index", offsetof(topo_vertex, index), -1 },
	{ "numa", offsetof(topo_vertex, numa), -1 },
	{ "rail", offsetof(topo_vertex, rail), -1 },
	{ "lid", offsetof(topo_vertex, lid), 0 },
	{ "port", offsetof(topo_vertex, port), 0 },
	{ "nports", offsetof(topo_vertex, nports), 0 },
};

typedef struct str_field {
	const char *key;
	size_t off;
} str_field;

static const str_field vertex_strs[] = {
	{ "device", offsetof(topo_vertex, device) },
	{ "netdev", offsetof(topo_vertex, netdev) },
	{ "pci_busid", offsetof(topo_vertex, pci_busid) },
	{ "cpuset", offsetof(topo_vertex, cpuset) },
	{ "desc", offsetof(topo_vertex, desc) },
};

static const int_field edge_ints[] = {
	{ "port_a", offsetof(topo_edge, port_a), 0 },
	{ "port_b", offsetof(topo_edge, port_b), 0 },
	{ "width", offsetof(topo_edge, width), 0 },
	{ "distance", offsetof(topo_edge, distance), 0 },
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define FIELD(base, off, type) ((type *)((char *)(base) + (off)))

/* ---- writing ------------------------------------------------------------- */

static int set_new(json_t *obj, const char *key, json_t *val)
{
	return val ? json_object_set_new(obj, key, val) : -1;
}

static char *vertex_ref(const topo_vertex *v)
{
	const char *kind = topo_vkind_name(v->kind);
	size_t n = strlen(kind) + strlen(v->name) + 2;
	char *ref = malloc(n);

	if (ref)
		snprintf(ref, n, "%s:%s", kind, v->name);
	return ref;
}

static json_t *vertex_to_json(const topo_graph *g, const topo_vertex *v)
{
	json_t *o = json_object();
	int rc = 0;

	if (!o)
		return NULL;
	rc |= set_new(o, "kind", json_string(topo_vkind_name(v->kind)));
	rc |= set_new(o, "name", json_string(v->name));
	if (v->host >= 0)
		rc |= set_new(o, "host", json_string(topo_graph_vertex(g, v->host)->name));
	for (size_t i = 0; i < NELEM(vertex_ints); i++) {
		int val = *FIELD(v, vertex_ints[i].off, const int);

		if (val != vertex_ints[i].dflt)
			rc |= set_new(o, vertex_ints[i].key, json_integer(val));
	}
	if (v->guid) {
		char buf[24];

		snprintf(buf, sizeof(buf), "0x%016" PRIx64, v->guid);
		rc |= set_new(o, "guid", json_string(buf));
	}
	if (v->level != TOPO_LEVEL_UNKNOWN)
		rc |= set_new(o, "level", json_string(topo_level_name(v->level)));
	if (v->caps & TOPO_CAP_SHARP)
		rc |= set_new(o, "caps", json_pack("[s]", "sharp"));
	if (v->link_layer != TOPO_LL_UNKNOWN)
		rc |= set_new(o, "link_layer", json_string(topo_link_layer_name(v->link_layer)));
	for (size_t i = 0; i < NELEM(vertex_strs); i++) {
		const char *s = *FIELD(v, vertex_strs[i].off, char *const);

		if (s)
			rc |= set_new(o, vertex_strs[i].key, json_string(s));
	}
	if (v->nattrs) {
		json_t *attrs = json_object();

		for (int i = 0; attrs && i < v->nattrs; i++)
			rc |= set_new(attrs, v->attrs[i].key, json_string(v->attrs[i].value));
		rc |= set_new(o, "attrs", attrs);
	}
	if (rc) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *edge_to_json(const topo_graph *g, const topo_edge *e)
{
	json_t *o = json_object();
	char *ra = vertex_ref(topo_graph_vertex(g, e->a));
	char *rb = vertex_ref(topo_graph_vertex(g, e->b));
	int rc = !o || !ra || !rb;

	if (!rc) {
		rc |= set_new(o, "kind", json_string(topo_ekind_name(e->kind)));
		rc |= set_new(o, "a", json_string(ra));
		rc |= set_new(o, "b", json_string(rb));
		for (size_t i = 0; i < NELEM(edge_ints); i++) {
			int val = *FIELD(e, edge_ints[i].off, const int);

			if (val != edge_ints[i].dflt)
				rc |= set_new(o, edge_ints[i].key, json_integer(val));
		}
		if (e->speed[0])
			rc |= set_new(o, "speed", json_string(e->speed));
		if (e->gbps != 0)
			rc |= set_new(o, "gbps", json_real(e->gbps));
		if (e->state != TOPO_LINK_UNKNOWN)
			rc |= set_new(o, "state", json_string(topo_link_state_name(e->state)));
	}
	free(ra);
	free(rb);
	if (rc) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int topo_write_json(const topo_graph *g, FILE *out, topo_error *err)
{
	json_t *root = json_object(), *vs = json_array(), *es = json_array(), *as = json_array();
	int rc = !root || !vs || !es || !as;

	for (size_t i = 0; !rc && i < topo_graph_nvertices(g); i++)
		rc |= json_array_append_new(vs, vertex_to_json(g, topo_graph_vertex(g, (int)i)));
	for (size_t i = 0; !rc && i < topo_graph_nedges(g); i++)
		rc |= json_array_append_new(es, edge_to_json(g, topo_graph_edge(g, (int)i)));
	for (size_t i = 0; !rc && i < topo_graph_nanomalies(g); i++) {
		const topo_anomaly *a = topo_graph_anomaly(g, i);

		rc |= json_array_append_new(as, json_pack("{s:s, s:s, s:s}", "kind", a->kind,
							  "subject", a->subject, "text", a->text));
	}
	if (!rc) {
		rc |= set_new(root, "format", json_string(TOPO_JSON_FORMAT));
		rc |= set_new(root, "version", json_integer(TOPO_JSON_VERSION));
		rc |= json_object_set(root, "vertices", vs);
		rc |= json_object_set(root, "edges", es);
		rc |= json_object_set(root, "anomalies", as);
	}
	if (!rc)
		rc = json_dumpf(root, out, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
	if (!rc && fputc('\n', out) == EOF)
		rc = -1;
	json_decref(vs);
	json_decref(es);
	json_decref(as);
	json_decref(root);
	if (rc) {
		topo_error_set(err, "", 0, "could not write the graph as JSON (out of memory or disk?)");
		return -1;
	}
	return 0;
}

/* ---- reading ------------------------------------------------------------- */

typedef struct reader {
	topo_graph *g;
	const char *source;
	topo_error *err;
} reader;

#define FAIL(r, ...)                                           \
	do {                                                   \
		topo_error_set((r)->err, (r)->source, 0, __VA_ARGS__); \
		return -1;                                     \
	} while (0)

static int get_int(reader *r, json_t *val, const char *what, size_t i, const char *key, int *out)
{
	if (!json_is_integer(val) || json_integer_value(val) < INT32_MIN ||
	    json_integer_value(val) > INT32_MAX)
		FAIL(r, "%s[%zu].%s must be an integer", what, i, key);
	*out = (int)json_integer_value(val);
	return 0;
}

static int get_str(reader *r, json_t *val, const char *what, size_t i, const char *key,
		   const char **out)
{
	if (!json_is_string(val))
		FAIL(r, "%s[%zu].%s must be a string", what, i, key);
	*out = json_string_value(val);
	return 0;
}

static int find_int_field(const int_field *f, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(f[i].key, key) == 0)
			return (int)i;
	return -1;
}

static int vertex_set_field(reader *r, size_t i, int id, const char *key, json_t *val)
{
	topo_vertex *v = topo_graph_vertex_mut(r->g, id);
	const char *s;
	int k, n;

	if ((k = find_int_field(vertex_ints, NELEM(vertex_ints), key)) >= 0)
		return get_int(r, val, "vertices", i, key, FIELD(v, vertex_ints[k].off, int));
	for (size_t j = 0; j < NELEM(vertex_strs); j++)
		if (strcmp(vertex_strs[j].key, key) == 0) {
			if (get_str(r, val, "vertices", i, key, &s) < 0)
				return -1;
			if (topo_set_str(FIELD(v, vertex_strs[j].off, char *), s) < 0)
				FAIL(r, "out of memory");
			return 0;
		}
	if (strcmp(key, "guid") == 0) {
		if (get_str(r, val, "vertices", i, key, &s) < 0)
			return -1;
		if (topo_parse_u64(s, 16, UINT64_MAX, &v->guid))
			FAIL(r, "vertices[%zu].guid \"%s\" is not a hexadecimal GUID", i, s);
		return 0;
	}
	if (strcmp(key, "level") == 0 || strcmp(key, "link_layer") == 0) {
		int is_level = key[1] == 'e';

		if (get_str(r, val, "vertices", i, key, &s) < 0)
			return -1;
		n = is_level ? topo_level_parse(s) : topo_link_layer_parse(s);
		if (n < 0)
			FAIL(r, "vertices[%zu].%s: unknown value \"%s\"", i, key, s);
		if (is_level)
			v->level = (topo_level)n;
		else
			v->link_layer = (topo_link_layer)n;
		return 0;
	}
	if (strcmp(key, "caps") == 0) {
		size_t j;
		json_t *c;

		if (!json_is_array(val))
			FAIL(r, "vertices[%zu].caps must be an array of names", i);
		json_array_foreach(val, j, c) {
			if (!json_is_string(c) || strcmp(json_string_value(c), "sharp") != 0)
				FAIL(r, "vertices[%zu].caps[%zu]: unknown capability", i, j);
			v->caps |= TOPO_CAP_SHARP;
		}
		return 0;
	}
	if (strcmp(key, "attrs") == 0) {
		const char *ak;
		json_t *av;

		if (!json_is_object(val))
			FAIL(r, "vertices[%zu].attrs must be an object of strings", i);
		json_object_foreach(val, ak, av) {
			if (!json_is_string(av))
				FAIL(r, "vertices[%zu].attrs.%s must be a string", i, ak);
			if (topo_graph_set_attr(r->g, id, ak, json_string_value(av)) < 0)
				FAIL(r, "out of memory");
		}
		return 0;
	}
	FAIL(r, "vertices[%zu]: unknown key \"%s\"", i, key);
}

static int read_vertices(reader *r, json_t *vs)
{
	size_t i;
	json_t *o;

	if (!json_is_array(vs))
		FAIL(r, "\"vertices\" must be an array");
	/* first pass: create every vertex, so "host" may refer forwards */
	json_array_foreach(vs, i, o) {
		json_t *kind = json_object_get(o, "kind"), *name = json_object_get(o, "name");
		int k;

		if (!json_is_object(o))
			FAIL(r, "vertices[%zu] must be an object", i);
		if (!json_is_string(kind) || (k = topo_vkind_parse(json_string_value(kind))) < 0)
			FAIL(r, "vertices[%zu].kind must be one of host, gpu, hca, numa, switch, group", i);
		if (!json_is_string(name) || !*json_string_value(name))
			FAIL(r, "vertices[%zu].name must be a non-empty string", i);
		if (topo_graph_add_vertex(r->g, (topo_vkind)k, json_string_value(name)) != (int)i)
			FAIL(r, "vertices[%zu]: %s \"%s\" appears twice", i, json_string_value(kind),
			     json_string_value(name));
	}
	json_array_foreach(vs, i, o) {
		const char *key;
		json_t *val;

		json_object_foreach(o, key, val) {
			if (strcmp(key, "kind") == 0 || strcmp(key, "name") == 0)
				continue;
			if (strcmp(key, "host") == 0) {
				const char *s;
				int h;

				if (get_str(r, val, "vertices", i, key, &s) < 0)
					return -1;
				h = topo_graph_find(r->g, TOPO_V_HOST, s);
				if (h < 0)
					FAIL(r, "vertices[%zu].host: no host named \"%s\"", i, s);
				topo_graph_vertex_mut(r->g, (int)i)->host = h;
			} else if (vertex_set_field(r, i, (int)i, key, val) < 0) {
				return -1;
			}
		}
	}
	return 0;
}

static int resolve_ref(reader *r, json_t *val, size_t i, const char *key)
{
	const char *s, *colon;
	char kind[16];
	int k, id;

	if (get_str(r, val, "edges", i, key, &s) < 0)
		return -1;
	colon = strchr(s, ':');
	if (!colon || (size_t)(colon - s) >= sizeof(kind))
		FAIL(r, "edges[%zu].%s \"%s\" must look like \"kind:name\"", i, key, s);
	memcpy(kind, s, colon - s);
	kind[colon - s] = '\0';
	if ((k = topo_vkind_parse(kind)) < 0)
		FAIL(r, "edges[%zu].%s: unknown vertex kind \"%s\"", i, key, kind);
	if ((id = topo_graph_find(r->g, (topo_vkind)k, colon + 1)) < 0)
		FAIL(r, "edges[%zu].%s: no vertex \"%s\"", i, key, s);
	return id;
}

static int read_edge(reader *r, size_t i, json_t *o)
{
	json_t *kind = json_object_get(o, "kind"), *val;
	int k, a, b, id;
	const char *key;
	topo_edge *e;

	if (!json_is_object(o))
		FAIL(r, "edges[%zu] must be an object", i);
	if (!json_is_string(kind) || (k = topo_ekind_parse(json_string_value(kind))) < 0)
		FAIL(r, "edges[%zu].kind must be one of fabric, pcie, member", i);
	if ((a = resolve_ref(r, json_object_get(o, "a"), i, "a")) < 0 ||
	    (b = resolve_ref(r, json_object_get(o, "b"), i, "b")) < 0)
		return -1;
	if ((id = topo_graph_add_edge(r->g, (topo_ekind)k, a, b)) < 0)
		FAIL(r, "out of memory");
	e = topo_graph_edge_mut(r->g, id);
	json_object_foreach(o, key, val) {
		int f = find_int_field(edge_ints, NELEM(edge_ints), key);

		if (strcmp(key, "kind") == 0 || strcmp(key, "a") == 0 || strcmp(key, "b") == 0)
			continue;
		if (f >= 0) {
			if (get_int(r, val, "edges", i, key, FIELD(e, edge_ints[f].off, int)) < 0)
				return -1;
		} else if (strcmp(key, "speed") == 0) {
			const char *s;

			if (get_str(r, val, "edges", i, key, &s) < 0)
				return -1;
			if (strlen(s) >= sizeof(e->speed))
				FAIL(r, "edges[%zu].speed \"%s\" is too long", i, s);
			strcpy(e->speed, s);
		} else if (strcmp(key, "gbps") == 0) {
			if (!json_is_number(val) || json_number_value(val) < 0)
				FAIL(r, "edges[%zu].gbps must be a non-negative number", i);
			e->gbps = json_number_value(val);
		} else if (strcmp(key, "state") == 0) {
			const char *s;
			int st;

			if (get_str(r, val, "edges", i, key, &s) < 0)
				return -1;
			if ((st = topo_link_state_parse(s)) < 0)
				FAIL(r, "edges[%zu].state: unknown value \"%s\"", i, s);
			e->state = (topo_link_state)st;
		} else {
			FAIL(r, "edges[%zu]: unknown key \"%s\"", i, key);
		}
	}
	return 0;
}

static int read_anomalies(reader *r, json_t *as)
{
	size_t i;
	json_t *o;

	if (!as)
		return 0;
	if (!json_is_array(as))
		FAIL(r, "\"anomalies\" must be an array");
	json_array_foreach(as, i, o) {
		const char *kind, *subject, *text;

		if (json_unpack(o, "{s:s, s:s, s:s !}", "kind", &kind, "subject", &subject, "text",
				&text) < 0)
			FAIL(r, "anomalies[%zu] must be {\"kind\", \"subject\", \"text\"} strings", i);
		if (topo_graph_add_anomaly(r->g, kind, subject, "%s", text) < 0)
			FAIL(r, "out of memory");
	}
	return 0;
}

static int read_root(reader *r, json_t *root)
{
	json_t *fmt = json_object_get(root, "format"), *ver = json_object_get(root, "version");
	json_t *es = json_object_get(root, "edges"), *o;
	const char *key;
	json_t *val;
	size_t i;

	if (!json_is_object(root))
		FAIL(r, "the top level must be a JSON object");
	if (!json_is_string(fmt) || strcmp(json_string_value(fmt), TOPO_JSON_FORMAT) != 0)
		FAIL(r, "\"format\" must be \"%s\": this is not a topognn graph file",
		     TOPO_JSON_FORMAT);
	if (!json_is_integer(ver) || json_integer_value(ver) != TOPO_JSON_VERSION)
		FAIL(r, "unsupported \"version\" (this topognn reads version %d)", TOPO_JSON_VERSION);
	json_object_foreach(root, key, val)
		if (strcmp(key, "format") && strcmp(key, "version") && strcmp(key, "vertices") &&
		    strcmp(key, "edges") && strcmp(key, "anomalies"))
			FAIL(r, "unknown top-level key \"%s\"", key);
	if (read_vertices(r, json_object_get(root, "vertices")) < 0)
		return -1;
	if (!json_is_array(es))
		FAIL(r, "\"edges\" must be an array");
	json_array_foreach(es, i, o)
		if (read_edge(r, i, o) < 0)
			return -1;
	return read_anomalies(r, json_object_get(root, "anomalies"));
}

static int load_root(topo_graph *g, json_t *root, const json_error_t *jerr, const char *source,
		     topo_error *err)
{
	reader r = { g, source, err };
	int rc;

	if (!root) {
		topo_error_set_at(err, source, jerr->line > 0 ? jerr->line : 0,
				  jerr->column > 0 ? jerr->column : 0, "%s",
				  jerr->text[0] ? jerr->text : "out of memory reading the JSON");
		return -1;
	}
	if (topo_graph_nvertices(g) != 0) {
		json_decref(root);
		topo_error_set(err, source, 0, "internal: load into a non-empty graph");
		return -1;
	}
	rc = read_root(&r, root);
	json_decref(root);
	if (rc == 0 && topo_check_fabric(g) < 0) {
		topo_error_set(err, source, 0, "out of memory checking the fabric");
		rc = -1;
	}
	return rc;
}

json_t *topo_json_load_input(const char *path, unsigned open_flags, size_t json_flags,
			     json_error_t *jerr)
{
	topo_error err;
	FILE *f = topo_fopen_input(path, open_flags, TOPO_IO_MAX_BYTES, &err);
	json_t *root;

	if (!f) {
		memset(jerr, 0, sizeof(*jerr));
		jerr->line = jerr->column = jerr->position = -1;
		snprintf(jerr->source, sizeof(jerr->source), "%.*s", (int)sizeof(jerr->source) - 1,
			 path);
		snprintf(jerr->text, sizeof(jerr->text), "%.*s", (int)sizeof(jerr->text) - 1,
			 err.text);
		return NULL;
	}
	root = json_loadf(f, json_flags, jerr);
	fclose(f);
	return root;
}

int topo_load_json(topo_graph *g, const char *path, topo_error *err)
{
	json_error_t jerr;
	json_t *root = topo_json_load_input(path, 0, JSON_REJECT_DUPLICATES, &jerr);

	return load_root(g, root, &jerr, path, err);
}

int topo_load_json_mem(topo_graph *g, const char *text, size_t len, const char *source,
		       topo_error *err)
{
	json_error_t jerr;
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);

	return load_root(g, root, &jerr, source, err);
}
