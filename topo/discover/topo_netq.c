/*
 * topo_netq: NetQ topology graph JSON -> topo_ethfabric (see topo_netq.h).
 *
 * Devices are kept sorted by NetQ id so each cable end is a binary search;
 * everything else (stand-in GUIDs, checks, levels, groups) is the builder's.
 */
#include "topo_netq.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo_io.h"
#include "topo_json.h"

typedef struct ndev {
	const char *id, *name; /* borrowed from the JSON document */
	int is_switch;
} ndev;

typedef struct nctx {
	const char *source;
	topo_error *err;
	topo_ethfabric *f;
	ndev *dev;
	size_t ndev;
} nctx;

static int fail(nctx *c, const char *path, const char *what)
{
	topo_error_set(c->err, c->source, 0, "%s: %s", path, what);
	return -1;
}

static int cmp_dev(const void *a, const void *b)
{
	return strcmp(((const ndev *)a)->id, ((const ndev *)b)->id);
}

static const ndev *dev_find(const nctx *c, const char *id)
{
	ndev key = { id, NULL, 0 };

	return bsearch(&key, c->dev, c->ndev, sizeof(*c->dev), cmp_dev);
}

static const char *str_member(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* One compounded node: a switch (declared to the builder) or a host. */
static int read_device(nctx *c, json_t *cn, const char *path)
{
	const char *id = str_member(cn, "id"), *name = str_member(cn, "name");
	const char *type = str_member(cn, "device_type");
	json_t *tier = json_object_get(cn, "tier");
	ndev *d = &c->dev[c->ndev];
	topo_error le;
	int t;

	if (!json_is_object(cn))
		return fail(c, path, "a device is not an object");
	if (!id || !*id)
		return fail(c, path, "a device has no \"id\" string");
	if (!name || !*name)
		return fail(c, path, "a device has no \"name\" string");
	if (!json_is_integer(tier))
		return fail(c, path, "a device has no integer \"tier\"");
	t = (int)json_integer_value(tier);
	d->id = id;
	d->name = name;
	d->is_switch = t >= 1 || (type && strcmp(type, "switch") == 0);
	c->ndev++;
	if (d->is_switch && topo_ethfabric_add_switch(c->f, name, t >= 1 ? t : 0, 0, &le) < 0)
		return fail(c, path, le.text);
	return 0;
}

static int read_nodes(nctx *c, json_t *nodes)
{
	char path[96];
	size_t total = 0, i, k;
	json_t *tier, *cn;

	if (!json_is_array(nodes))
		return fail(c, "[0].nodes", "missing, or not an array of tiers");
	json_array_foreach(nodes, i, tier) {
		json_t *list = json_object_get(tier, "compounded_nodes");

		snprintf(path, sizeof(path), "nodes[%zu].compounded_nodes", i);
		if (!json_is_array(list))
			return fail(c, path, "missing, or not an array of devices");
		total += json_array_size(list);
	}
	c->dev = calloc(total + 1, sizeof(*c->dev));
	if (!c->dev)
		return fail(c, "nodes", "out of memory");
	json_array_foreach(nodes, i, tier) {
		json_array_foreach(json_object_get(tier, "compounded_nodes"), k, cn) {
			snprintf(path, sizeof(path), "nodes[%zu].compounded_nodes[%zu]", i, k);
			if (read_device(c, cn, path) < 0)
				return -1;
		}
	}
	qsort(c->dev, c->ndev, sizeof(*c->dev), cmp_dev);
	for (i = 1; i < c->ndev; i++)
		if (strcmp(c->dev[i].id, c->dev[i - 1].id) == 0) {
			snprintf(path, sizeof(path), "device id \"%.60s\"", c->dev[i].id);
			return fail(c, path, "declared twice");
		}
	return 0;
}

/* Split "A-*-B" at its separator into a[] and b[]. */
static int split_pair(const char *s, char *a, char *b, size_t len)
{
	const char *sep = strstr(s, "-*-");

	if (!sep || sep == s || !sep[3] || (size_t)(sep - s) >= len || strlen(sep + 3) >= len ||
	    strstr(sep + 3, "-*-"))
		return -1;
	snprintf(a, len, "%.*s", (int)(sep - s), s);
	snprintf(b, len, "%s", sep + 3);
	return 0;
}

/* "NODE:IFACE" -> node, iface (split at the last ':'). */
static int split_end(char *s, const char **node, const char **iface)
{
	char *colon = strrchr(s, ':');

	if (!colon || colon == s || !colon[1])
		return -1;
	*colon = '\0';
	*node = s;
	*iface = colon + 1;
	return 0;
}

static int add_cable(nctx *c, const char *path, const char *id0, const char *if0,
		     const char *id1, const char *if1)
{
	const ndev *d0 = dev_find(c, id0), *d1 = dev_find(c, id1);
	topo_eth_end a, b;
	topo_error le;
	char msg[TOPO_ERROR_TEXT_LEN];

	if (!d0 || !d1) {
		snprintf(msg, sizeof(msg), "the cable ends at device \"%.100s\", which no tier lists",
			 d0 ? id1 : id0);
		return fail(c, path, msg);
	}
	if (!d0->is_switch && !d1->is_switch) {
		snprintf(msg, sizeof(msg), "a cable between two hosts (%.100s and %.100s)", d0->name,
			 d1->name);
		return fail(c, path, msg);
	}
	a = (topo_eth_end){ d0->name, if0 };
	b = (topo_eth_end){ d1->name, if1 };
	if (topo_ethfabric_add_link(c->f, &a, &b, NULL, 0, &le) < 0)
		return fail(c, path, le.text);
	return 0;
}

/* A cable's ends: from "interfaces" when present, else from its id. */
static int read_cable(nctx *c, json_t *cl, const char *path)
{
	json_t *ifs = json_object_get(cl, "interfaces");
	const char *id = str_member(cl, "id");
	char a[256], b[256];
	const char *n0, *i0, *n1, *i1;

	if (json_is_array(ifs) && json_array_size(ifs) == 2) {
		json_t *e0 = json_array_get(ifs, 0), *e1 = json_array_get(ifs, 1);

		n0 = str_member(e0, "node");
		i0 = str_member(e0, "interface");
		n1 = str_member(e1, "node");
		i1 = str_member(e1, "interface");
		if (n0 && i0 && n1 && i1)
			return add_cable(c, path, n0, i0, n1, i1);
	}
	if (!id || split_pair(id, a, b, sizeof(a)) < 0 || split_end(a, &n0, &i0) < 0 ||
	    split_end(b, &n1, &i1) < 0)
		return fail(c, path, "a cable needs \"interfaces\" or an id \"A:IF-*-B:IF\"");
	return add_cable(c, path, n0, i0, n1, i1);
}

static int read_link(nctx *c, json_t *link, size_t i)
{
	json_t *cls = json_object_get(link, "compounded_links"), *cl;
	json_t *size = json_object_get(link, "size");
	const char *id = str_member(link, "id");
	char path[96], a[256], b[256];
	size_t k;

	snprintf(path, sizeof(path), "links[%zu]", i);
	if (!json_is_object(link))
		return fail(c, path, "a link is not an object");
	if (json_is_array(cls) && json_array_size(cls) > 0) {
		if (json_is_integer(size) && (size_t)json_integer_value(size) != json_array_size(cls))
			return fail(c, path, "\"size\" differs from the number of compounded links");
		json_array_foreach(cls, k, cl) {
			snprintf(path, sizeof(path), "links[%zu].compounded_links[%zu]", i, k);
			if (read_cable(c, cl, path) < 0)
				return -1;
		}
		return 0;
	}
	/* no cable list: one cable, named after the device at its other end */
	if (!id || split_pair(id, a, b, sizeof(a)) < 0)
		return fail(c, path, "a link needs an \"id\" \"A-*-B\"");
	{
		const ndev *d0 = dev_find(c, a), *d1 = dev_find(c, b);
		char p0[300], p1[300];

		snprintf(p0, sizeof(p0), "to-%s", d1 ? d1->name : b);
		snprintf(p1, sizeof(p1), "to-%s", d0 ? d0->name : a);
		return add_cable(c, path, a, p0, b, p1);
	}
}

static int load_root(topo_graph *g, json_t *root, const json_error_t *jerr, const char *source,
		     const topo_nic_rules *rules, topo_error *err)
{
	nctx c = { source, err, NULL, NULL, 0 };
	json_t *top, *links, *link;
	size_t i;
	int rc = -1;

	if (!root) {
		topo_error_set(err, source, jerr->line > 0 ? jerr->line : 0, "%s", jerr->text);
		return -1;
	}
	top = json_array_get(root, 0);
	if (!json_is_array(root) || json_array_size(root) != 1 || !json_is_object(top)) {
		topo_error_set(err, source, 0,
			       "not a NetQ topology graph: expected an array of one object");
		goto out;
	}
	if (!(c.f = topo_ethfabric_new(g, source, rules, err)) ||
	    read_nodes(&c, json_object_get(top, "nodes")) < 0)
		goto out;
	links = json_object_get(top, "links");
	if (!json_is_array(links)) {
		fail(&c, "[0].links", "missing, or not an array");
		goto out;
	}
	json_array_foreach(links, i, link)
		if (read_link(&c, link, i) < 0)
			goto out;
	rc = topo_ethfabric_finish(c.f, err);
out:
	topo_ethfabric_free(c.f);
	free(c.dev);
	json_decref(root);
	return rc;
}

int topo_load_netq(topo_graph *g, const char *path, const topo_nic_rules *rules, topo_error *err)
{
	json_error_t jerr;
	json_t *root = topo_json_load_input(path, 0, 0, &jerr);

	return load_root(g, root, &jerr, path, rules, err);
}

/* The fuzz target's entry (fuzz/fuzz_netq.c): the same from memory. */
int topo_load_netq_mem(topo_graph *g, const char *text, size_t len, const char *source,
		       const topo_nic_rules *rules, topo_error *err)
{
	json_error_t jerr;
	json_t *root = json_loadb(text, len, 0, &jerr);

	return load_root(g, root, &jerr, source, rules, err);
}
