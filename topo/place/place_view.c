/* place_view: read-only accessors on a place_cluster (see place_view.h). */
#include "place_view.h"

#include "place_internal.h"

static int host_ok(const place_cluster *c, int host)
{
	return c && host >= 0 && host < c->nhosts;
}

static int leaf_ok(const place_cluster *c, int leaf)
{
	return c && leaf >= 0 && leaf < c->nleaves;
}

int place_cluster_nrails(const place_cluster *c)
{
	return c ? c->nrails : 0;
}

int place_cluster_host_leaf(const place_cluster *c, int host, int rail)
{
	if (!host_ok(c, host) || rail < 0 || rail >= c->nrails)
		return -1;
	return c->host_leaf[host * c->nrails + rail];
}

int place_cluster_host_gpus(const place_cluster *c, int host)
{
	return host_ok(c, host) ? c->host_gpus[host] : -1;
}

const char *place_cluster_leaf_name(const place_cluster *c, int leaf)
{
	return leaf_ok(c, leaf) ? c->leaf_name[leaf] : NULL;
}

int place_cluster_leaf_group(const place_cluster *c, int leaf)
{
	return leaf_ok(c, leaf) ? c->leaf_group[leaf] : -1;
}

const int *place_cluster_leaf_spines(const place_cluster *c, int leaf, int *n)
{
	*n = 0;
	if (!leaf_ok(c, leaf))
		return NULL;
	*n = c->leaf_spine_off[leaf + 1] - c->leaf_spine_off[leaf];
	return c->leaf_spines + c->leaf_spine_off[leaf];
}
