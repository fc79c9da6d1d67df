/* topo_affinity: a host's GPU/HCA/NIC locality read from the graph, and its JSON (see topo_affinity.h). */
#include "topo_affinity.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo_alloc.h"
#include "topo_num.h"

int topo_hca_is_nic(const topo_vertex *v)
{
	return v->kind == TOPO_V_HCA && v->link_layer == TOPO_LL_ETH && v->device && v->netdev &&
	       strcmp(v->device, v->netdev) == 0;
}

/* The part of "host/local" after the host's name. */
static const char *local_name(const topo_graph *g, const topo_vertex *v)
{
	size_t n = strlen(topo_graph_vertex(g, v->host)->name);

	return strlen(v->name) > n && v->name[n] == '/' ? v->name + n + 1 : v->name;
}

static int cmp_gpu(const void *a, const void *b)
{
	const topo_affinity_gpu *x = a, *y = b;

	return x->index != y->index ? (x->index < y->index ? -1 : 1) : strcmp(x->name, y->name);
}

static int cmp_hca(const void *a, const void *b)
{
	return strcmp(((const topo_affinity_hca *)a)->name, ((const topo_affinity_hca *)b)->name);
}

static int fill_gpu(const topo_graph *g, int vid, topo_affinity_gpu *out)
{
	const topo_vertex *v = topo_graph_vertex(g, vid);
	const int *inc;
	int ninc, fail = 0;

	out->name = topo_strdup_opt(local_name(g, v), &fail);
	out->index = v->index;
	out->pci_busid = topo_strdup_opt(v->pci_busid, &fail);
	out->model = topo_strdup_opt(v->device, &fail);
	out->numa = v->numa;
	out->cpuset = topo_strdup_opt(v->cpuset, &fail);
	inc = topo_graph_incident(g, vid, &ninc);
	out->nearest_hcas = calloc((size_t)ninc + 1, sizeof(char *));
	if (!out->nearest_hcas)
		return -1;
	for (int i = 0; i < ninc; i++) {
		const topo_edge *e = topo_graph_edge(g, inc[i]);
		const topo_vertex *h = topo_graph_vertex(g, topo_edge_other(e, vid));

		if (e->kind != TOPO_E_PCIE || h->kind != TOPO_V_HCA || topo_hca_is_nic(h))
			continue;
		out->nearest_hcas[out->nnearest++] = topo_strdup_opt(local_name(g, h), &fail);
		if (out->pci_distance == 0 || (e->distance > 0 && e->distance < out->pci_distance))
			out->pci_distance = e->distance;
	}
	if (!fail && out->nnearest > 1)
		qsort(out->nearest_hcas, (size_t)out->nnearest, sizeof(char *), topo_cmp_str);
	return fail ? -1 : 0;
}

static int fill_hca(const topo_graph *g, const topo_vertex *v, topo_affinity_hca *out)
{
	int fail = 0;

	out->name = topo_strdup_opt(local_name(g, v), &fail);
	out->netdev = topo_strdup_opt(v->netdev, &fail);
	out->numa = v->numa;
	out->port = v->port;
	out->link_layer = v->link_layer;
	out->pci_busid = topo_strdup_opt(v->pci_busid, &fail);
	out->cpuset = topo_strdup_opt(v->cpuset, &fail);
	out->guid = v->guid;
	out->lid = v->lid;
	return fail ? -1 : 0;
}

topo_affinity *topo_affinity_of_host(const topo_graph *g, int host)
{
	const topo_vertex *hv;
	topo_affinity *a;
	int ninc, fail = 0;

	if (host < 0 || (size_t)host >= topo_graph_nvertices(g))
		return NULL;
	hv = topo_graph_vertex(g, host);
	if (hv->kind != TOPO_V_HOST)
		return NULL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	/* a host's parts are among its incident vertices: that many at most */
	(void)topo_graph_incident(g, host, &ninc);
	a->host = topo_strdup_opt(hv->name, &fail);
	a->gpus = calloc((size_t)ninc + 1, sizeof(*a->gpus));
	a->hcas = calloc((size_t)ninc + 1, sizeof(*a->hcas));
	a->nics = calloc((size_t)ninc + 1, sizeof(*a->nics));
	if (fail || !a->gpus || !a->hcas || !a->nics) {
		topo_affinity_free(a);
		return NULL;
	}
	for (int it = 0, pid; !fail && (pid = topo_graph_next_member(g, host, TOPO_V_NKINDS, &it)) >= 0;) {
		const topo_vertex *p = topo_graph_vertex(g, pid);

		if (p->host != host)
			continue;
		if (p->kind == TOPO_V_GPU)
			fail = fill_gpu(g, pid, &a->gpus[a->ngpus++]) < 0;
		else if (p->kind == TOPO_V_HCA && topo_hca_is_nic(p))
			fail = fill_hca(g, p, &a->nics[a->nnics++]) < 0;
		else if (p->kind == TOPO_V_HCA)
			fail = fill_hca(g, p, &a->hcas[a->nhcas++]) < 0;
	}
	if (fail) {
		topo_affinity_free(a);
		return NULL;
	}
	qsort(a->gpus, (size_t)a->ngpus, sizeof(*a->gpus), cmp_gpu);
	qsort(a->hcas, (size_t)a->nhcas, sizeof(*a->hcas), cmp_hca);
	qsort(a->nics, (size_t)a->nnics, sizeof(*a->nics), cmp_hca);
	return a;
}

static void free_hca(topo_affinity_hca *h)
{
	free(h->name);
	free(h->netdev);
	free(h->pci_busid);
	free(h->cpuset);
}

void topo_affinity_free(topo_affinity *a)
{
	if (!a)
		return;
	for (int i = 0; a->gpus && i < a->ngpus; i++) {
		topo_affinity_gpu *gpu = &a->gpus[i];

		free(gpu->name);
		free(gpu->pci_busid);
		free(gpu->model);
		free(gpu->cpuset);
		for (int j = 0; gpu->nearest_hcas && j < gpu->nnearest; j++)
			free(gpu->nearest_hcas[j]);
		free(gpu->nearest_hcas);
	}
	for (int i = 0; a->hcas && i < a->nhcas; i++)
		free_hca(&a->hcas[i]);
	for (int i = 0; a->nics && i < a->nnics; i++)
		free_hca(&a->nics[i]);
	free(a->gpus);
	free(a->hcas);
	free(a->nics);
	free(a->host);
	free(a);
}

/* ---- JSON ---------------------------------------------------------------- */

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *int_or_null(int v, int unknown)
{
	return v == unknown ? json_null() : json_integer(v);
}

/* Set obj[key] = val, stealing val; returns -1 when val is NULL or the set fails. */
static int put(json_t *obj, const char *key, json_t *val)
{
	return val ? json_object_set_new(obj, key, val) : -1;
}

static json_t *gpu_json(const topo_affinity_gpu *gpu)
{
	json_t *o = json_object(), *list = json_array();
	int r = 0;

	if (!o || !list) {
		json_decref(o);
		json_decref(list);
		return NULL;
	}
	for (int i = 0; i < gpu->nnearest; i++)
		r |= json_array_append_new(list, json_string(gpu->nearest_hcas[i]));
	r |= put(o, "name", str_or_null(gpu->name));
	r |= put(o, "index", int_or_null(gpu->index, -1));
	r |= put(o, "pci_busid", str_or_null(gpu->pci_busid));
	r |= put(o, "model", str_or_null(gpu->model));
	r |= put(o, "numa", int_or_null(gpu->numa, -1));
	r |= put(o, "cpuset", str_or_null(gpu->cpuset));
	r |= put(o, "nearest_hca", str_or_null(gpu->nnearest ? gpu->nearest_hcas[0] : NULL));
	r |= put(o, "nearest_hcas", list);
	r |= put(o, "pci_distance", int_or_null(gpu->pci_distance, 0));
	if (r) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *hca_json(const topo_affinity_hca *h, int nic)
{
	json_t *o = json_object();
	char guid[32];
	int r = 0;

	if (!o)
		return NULL;
	snprintf(guid, sizeof(guid), "0x%016" PRIx64, h->guid);
	r |= put(o, "name", str_or_null(h->name));
	r |= put(o, "netdev", str_or_null(h->netdev));
	r |= put(o, "numa", int_or_null(h->numa, -1));
	if (!nic) {
		r |= put(o, "port", int_or_null(h->port, 0));
		r |= put(o, "link_layer", json_string(topo_link_layer_name(h->link_layer)));
	}
	r |= put(o, "pci_busid", str_or_null(h->pci_busid));
	r |= put(o, "cpuset", str_or_null(h->cpuset));
	if (!nic) {
		r |= put(o, "guid", h->guid ? json_string(guid) : json_null());
		r |= put(o, "lid", int_or_null(h->lid, 0));
	}
	if (r) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int topo_affinity_to_json(const topo_affinity *a, json_t **out)
{
	json_t *root = json_object(), *gpus = json_array(), *hcas = json_array(), *nics = json_array();
	int r = 0;

	*out = NULL;
	if (!root || !gpus || !hcas || !nics) {
		json_decref(root);
		json_decref(gpus);
		json_decref(hcas);
		json_decref(nics);
		return -1;
	}
	r |= put(root, "gpus", gpus);
	r |= put(root, "hcas", hcas);
	r |= put(root, "nics", nics);
	for (int i = 0; !r && i < a->ngpus; i++)
		r |= json_array_append_new(gpus, gpu_json(&a->gpus[i]));
	for (int i = 0; !r && i < a->nhcas; i++)
		r |= json_array_append_new(hcas, hca_json(&a->hcas[i], 0));
	for (int i = 0; !r && i < a->nnics; i++)
		r |= json_array_append_new(nics, hca_json(&a->nics[i], 1));
	if (r) {
		json_decref(root);
		return -1;
	}
	*out = root;
	return 0;
}
