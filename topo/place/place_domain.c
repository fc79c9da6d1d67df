/*
 * place_domain: NVLink domains (e.g. GB200 NVL72 racks) as the cluster's
 * innermost level.
 *
 * A domain is a group vertex with group_kind=nvlink (topo_nvsmi.h). When the
 * graph has no fabric, domains are also the cluster's groups
 * (place_cluster.c); with a fabric, the groups stay the fabric's scalable
 * units and the domains sit inside them. Either way the cluster keeps each
 * host's domain, so that the candidates (place_candidates.c) keep a job of
 * at most one domain inside one, and the flow model (place_model.c) sends
 * the traffic between two hosts of one domain over NVLink, not the fabric,
 * at PLACE_NVLINK_GBPS_PER_GPU per GPU each way.
 */
#include "place_internal.h"

#include <stdlib.h>
#include <string.h>

void place_cluster_free_domains(place_cluster *c)
{
	free(c->host_domain);
	free(c->domain_name);
	free(c->domain_off);
	free(c->domain_hosts);
	free(c->host_nvl_gbps);
}

/* Domains are few (one per rack): insertion sort by name. */
static void sort_by_name(const topo_graph *g, int *v, int n)
{
	for (int i = 1; i < n; i++) {
		int x = v[i], j = i;

		while (j > 0 && strcmp(topo_graph_vertex(g, v[j - 1])->name,
				       topo_graph_vertex(g, x)->name) > 0) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = x;
	}
}

int place_cluster_build_domains(place_cluster *c, topo_error *err)
{
	const topo_graph *g = c->g;
	int N = c->nhosts, V = c->nvertices, nd = 0, *dv = NULL, *vid_host = NULL, *fill = NULL;

	c->host_domain = malloc(((size_t)N + 1) * sizeof(int));
	c->host_nvl_gbps = calloc((size_t)N + 1, sizeof(double));
	dv = malloc(((size_t)V + 1) * sizeof(int));
	vid_host = malloc(((size_t)V + 1) * sizeof(int));
	if (!c->host_domain || !c->host_nvl_gbps || !dv || !vid_host)
		goto oom;
	for (int v = 0; v < V; v++) {
		vid_host[v] = -1;
		if (topo_group_is_nvlink(g, v))
			dv[nd++] = v;
	}
	sort_by_name(g, dv, nd);
	for (int h = 0; h < N; h++) {
		vid_host[c->host_vid[h]] = h;
		c->host_domain[h] = -1;
	}
	c->ndomains = nd;
	c->domain_name = calloc((size_t)nd + 1, sizeof(char *));
	c->domain_off = calloc((size_t)nd + 2, sizeof(int));
	fill = calloc((size_t)nd + 1, sizeof(int));
	if (!c->domain_name || !c->domain_off || !fill)
		goto oom;
	for (int d = 0; d < nd; d++) {
		int n;
		const int *inc = topo_graph_incident(g, dv[d], &n);

		c->domain_name[d] = topo_graph_vertex(g, dv[d])->name;
		for (int i = 0; i < n; i++) {
			const topo_edge *e = topo_graph_edge(g, inc[i]);
			int h = e->kind == TOPO_E_MEMBER && e->a == dv[d] ? vid_host[e->b] : -1;

			if (h >= 0 && c->host_domain[h] < 0) {
				c->host_domain[h] = d;
				c->domain_off[d + 1]++;
			}
		}
	}
	for (int d = 0; d < nd; d++)
		c->domain_off[d + 1] += c->domain_off[d];
	c->domain_hosts = malloc(((size_t)c->domain_off[nd] + 1) * sizeof(int));
	if (!c->domain_hosts)
		goto oom;
	for (int h = 0; h < N; h++) { /* ascending per domain */
		int d = c->host_domain[h];

		if (d < 0)
			continue;
		c->domain_hosts[c->domain_off[d] + fill[d]++] = h;
		c->host_nvl_gbps[h] = PLACE_NVLINK_GBPS_PER_GPU *
				      (c->host_gpus[h] > 0 ? c->host_gpus[h] : PLACE_NVLINK_DEFAULT_GPUS);
	}
	free(fill);
	free(dv);
	free(vid_host);
	return 0;
oom:
	free(fill);
	free(dv);
	free(vid_host);
	topo_error_set(err, "", 0, "out of memory building the NVLink domains");
	return -1;
}

int place_cluster_ndomains(const place_cluster *c)
{
	return c->ndomains;
}

int place_cluster_host_domain(const place_cluster *c, int host)
{
	return host >= 0 && host < c->nhosts ? c->host_domain[host] : -1;
}

const char *place_cluster_domain_name(const place_cluster *c, int domain)
{
	return domain >= 0 && domain < c->ndomains ? c->domain_name[domain] : NULL;
}

int place_cluster_domain_nhosts(const place_cluster *c, int domain)
{
	return domain >= 0 && domain < c->ndomains
		       ? c->domain_off[domain + 1] - c->domain_off[domain]
		       : 0;
}

double place_cluster_host_nvlink_gbps(const place_cluster *c, int host)
{
	return host >= 0 && host < c->nhosts ? c->host_nvl_gbps[host] : 0;
}

int place_domains_spanned(const place_cluster *c, const int *hosts, int n, int *mark)
{
	int cnt = 0;

	for (int i = 0; i < n; i++) {
		int d = c->host_domain[hosts[i]];

		if (d >= 0 && !mark[d]++)
			cnt++;
	}
	for (int i = 0; i < n; i++)
		if (c->host_domain[hosts[i]] >= 0)
			mark[c->host_domain[hosts[i]]] = 0;
	return cnt;
}
