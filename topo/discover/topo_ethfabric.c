/*
 * topo_ethfabric: a name-addressed (Ethernet/RoCE) fabric, built through the
 * one fabric builder topo_fabric (see topo_ethfabric.h).
 *
 * Declarations are only recorded until finish, because stand-in GUIDs and
 * port numbers depend on every name being known: switches and NICs get
 * GUIDs in name order and each switch numbers its ports in natural order of
 * their names ("swp2" before "swp10"), so the graph does not depend on the
 * order a source listed things in.
 */
#define _GNU_SOURCE /* strverscmp */
#include "topo_ethfabric.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo_alloc.h"
#include "topo_fabric.h"

/* A CA's description is "HOST LOCAL"; LOCAL may hold any non-blank. */
#define ETH_HOST_PATTERN "^([^ ]+) ([^ ]+)$"

/* ---- declarations --------------------------------------------------------- */

typedef struct eswitch {
	char *name;
	int tier, line;
	char **ports; /* compute port names, sorted and unique at finish */
	int nports;
	size_t cap;
	uint64_t guid;
	int used;     /* has a compute cable, or no cable at all */
	int any;      /* has any cable */
} eswitch;

typedef struct enic {
	char *host, *netdev, *rdma;
	topo_link_layer ll;
	topo_nic_role role;
	char *switch_port; /* "SWITCH:PORT" */
	uint64_t guid;
	int cabled;        /* has a compute cable */
} enic;

typedef struct elink {
	char *node[2], *port[2];
	char speed[8];
	int line;
} elink;

struct topo_ethfabric {
	topo_graph *g;
	char *source;
	const topo_nic_rules *rules;
	eswitch *sw;
	int nsw;
	size_t swcap;
	enic *nic;
	int nnic;
	size_t niccap;
	elink *link;
	int nlink;
	size_t linkcap;
	int finished;
};

static int oom(topo_ethfabric *f, int line, topo_error *err)
{
	topo_error_set(err, f->source, line, "out of memory");
	return -1;
}

topo_ethfabric *topo_ethfabric_new(topo_graph *g, const char *source, const topo_nic_rules *rules,
				   topo_error *err)
{
	topo_ethfabric *f = calloc(1, sizeof(*f));

	if (!f || !(f->source = strdup(source ? source : ""))) {
		free(f);
		topo_error_set(err, source, 0, "out of memory");
		return NULL;
	}
	f->g = g;
	f->rules = rules;
	return f;
}

void topo_ethfabric_free(topo_ethfabric *f)
{
	if (!f)
		return;
	for (int i = 0; i < f->nsw; i++) {
		for (int p = 0; p < f->sw[i].nports; p++)
			free(f->sw[i].ports[p]);
		free(f->sw[i].ports);
		free(f->sw[i].name);
	}
	for (int i = 0; i < f->nnic; i++) {
		free(f->nic[i].host);
		free(f->nic[i].netdev);
		free(f->nic[i].rdma);
		free(f->nic[i].switch_port);
	}
	for (int i = 0; i < f->nlink; i++)
		for (int k = 0; k < 2; k++) {
			free(f->link[i].node[k]);
			free(f->link[i].port[k]);
		}
	free(f->sw);
	free(f->nic);
	free(f->link);
	free(f->source);
	free(f);
}

static int find_switch(const topo_ethfabric *f, const char *name)
{
	for (int i = 0; i < f->nsw; i++)
		if (strcmp(f->sw[i].name, name) == 0)
			return i;
	return -1;
}

static int find_nic(const topo_ethfabric *f, const char *host, const char *netdev)
{
	for (int i = 0; i < f->nnic; i++)
		if (strcmp(f->nic[i].host, host) == 0 && strcmp(f->nic[i].netdev, netdev) == 0)
			return i;
	return -1;
}

static int bad_name(const char *s)
{
	return !s || !*s || strpbrk(s, " \t\n/\"") != NULL;
}

int topo_ethfabric_add_switch(topo_ethfabric *f, const char *name, int tier, int line,
			      topo_error *err)
{
	int i;

	if (bad_name(name)) {
		topo_error_set(err, f->source, line,
			       "switch name \"%s\" is empty or holds a blank, '/' or '\"'",
			       name ? name : "");
		return -1;
	}
	if ((i = find_switch(f, name)) >= 0) {
		if (tier && f->sw[i].tier && tier != f->sw[i].tier) {
			topo_error_set(err, f->source, line,
				       "switch %s is declared in tier %d and in tier %d (line %d)",
				       name, tier, f->sw[i].tier, f->sw[i].line);
			return -1;
		}
		if (tier)
			f->sw[i].tier = tier;
		return 0;
	}
	if (topo_grow(&f->sw, &f->swcap, (size_t)f->nsw + 1, sizeof(*f->sw), 32) < 0)
		return oom(f, line, err);
	memset(&f->sw[f->nsw], 0, sizeof(*f->sw));
	if (!(f->sw[f->nsw].name = strdup(name)))
		return oom(f, line, err);
	f->sw[f->nsw].tier = tier;
	f->sw[f->nsw].line = line;
	f->nsw++;
	return 0;
}

static int nic_get(topo_ethfabric *f, const char *host, const char *netdev)
{
	int i = find_nic(f, host, netdev);
	enic *n;

	if (i >= 0)
		return i;
	if (topo_grow(&f->nic, &f->niccap, (size_t)f->nnic + 1, sizeof(*f->nic), 32) < 0)
		return -1;
	n = &f->nic[f->nnic];
	memset(n, 0, sizeof(*n));
	n->host = strdup(host);
	n->netdev = strdup(netdev);
	if (!n->host || !n->netdev) {
		free(n->host);
		free(n->netdev);
		return -1;
	}
	return f->nnic++;
}

int topo_ethfabric_set_nic(topo_ethfabric *f, const char *host, const char *netdev,
			   const char *rdma_device, topo_link_layer ll, topo_error *err)
{
	int i;

	if (bad_name(host) || bad_name(netdev) || (rdma_device && bad_name(rdma_device))) {
		topo_error_set(err, f->source, 0, "host \"%s\" NIC \"%s\": a bad name",
			       host ? host : "", netdev ? netdev : "");
		return -1;
	}
	if ((i = nic_get(f, host, netdev)) < 0)
		return oom(f, 0, err);
	if (rdma_device && topo_set_str(&f->nic[i].rdma, rdma_device) < 0)
		return oom(f, 0, err);
	f->nic[i].ll = ll;
	return 0;
}

int topo_ethfabric_add_link(topo_ethfabric *f, const topo_eth_end *a, const topo_eth_end *b,
			    const char *speed, int line, topo_error *err)
{
	elink *l;

	for (int k = 0; k < 2; k++) {
		const topo_eth_end *e = k ? b : a;

		if (bad_name(e->node) || bad_name(e->port)) {
			topo_error_set(err, f->source, line,
				       "a cable end \"%s\" port \"%s\" has an empty name or one "
				       "with a blank, '/' or '\"'",
				       e->node ? e->node : "", e->port ? e->port : "");
			return -1;
		}
	}
	if (speed && strlen(speed) >= sizeof(l->speed)) {
		topo_error_set(err, f->source, line, "link speed \"%s\" is too long", speed);
		return -1;
	}
	if (topo_grow(&f->link, &f->linkcap, (size_t)f->nlink + 1, sizeof(*f->link), 32) < 0)
		return oom(f, line, err);
	l = &f->link[f->nlink];
	memset(l, 0, sizeof(*l));
	l->node[0] = strdup(a->node);
	l->port[0] = strdup(a->port);
	l->node[1] = strdup(b->node);
	l->port[1] = strdup(b->port);
	snprintf(l->speed, sizeof(l->speed), "%s", speed ? speed : "");
	l->line = line;
	f->nlink++;
	if (!l->node[0] || !l->port[0] || !l->node[1] || !l->port[1])
		return oom(f, line, err);
	return 0;
}

/* ---- finish --------------------------------------------------------------- */

static int cmp_port(const void *a, const void *b)
{
	return strverscmp(*(char *const *)a, *(char *const *)b);
}

static int switch_add_port(eswitch *s, const char *port)
{
	for (int p = 0; p < s->nports; p++)
		if (strcmp(s->ports[p], port) == 0)
			return 0;
	if (topo_grow(&s->ports, &s->cap, (size_t)s->nports + 1, sizeof(char *), 32) < 0 ||
	    !(s->ports[s->nports] = strdup(port)))
		return -1;
	s->nports++;
	return 0;
}

static int port_number(const eswitch *s, const char *port)
{
	for (int p = 0; p < s->nports; p++)
		if (strcmp(s->ports[p], port) == 0)
			return p + 1;
	return 0;
}

/* Sort out each cable's ends: switch or host NIC, the NIC's role. */
static int classify_links(topo_ethfabric *f, topo_error *err)
{
	for (int i = 0; i < f->nlink; i++) {
		elink *l = &f->link[i];
		int s0 = find_switch(f, l->node[0]), s1 = find_switch(f, l->node[1]);
		int h = s0 < 0 ? 0 : 1, s = s0 < 0 ? s1 : s0, n;
		char where[600];

		if (s0 < 0 && s1 < 0) {
			topo_error_set(err, f->source, l->line,
				       "a cable between %s and %s, neither of them a switch",
				       l->node[0], l->node[1]);
			return -1;
		}
		f->sw[s0 >= 0 ? s0 : s1].any = 1;
		if (s0 >= 0 && s1 >= 0) {
			f->sw[s0].any = f->sw[s1].any = f->sw[s0].used = f->sw[s1].used = 1;
			if (switch_add_port(&f->sw[s0], l->port[0]) < 0 ||
			    switch_add_port(&f->sw[s1], l->port[1]) < 0)
				return oom(f, l->line, err);
			continue;
		}
		if ((n = nic_get(f, l->node[h], l->port[h])) < 0)
			return oom(f, l->line, err);
		snprintf(where, sizeof(where), "%s:%s", f->sw[s].name, l->port[1 - h]);
		if (!f->nic[n].switch_port && topo_set_str(&f->nic[n].switch_port, where) < 0)
			return oom(f, l->line, err);
		f->nic[n].role = topo_nic_rules_role(f->rules, f->nic[n].netdev, where);
		if (f->nic[n].role != TOPO_NIC_COMPUTE)
			continue;
		f->nic[n].cabled = 1;
		f->sw[s].used = 1;
		if (switch_add_port(&f->sw[s], l->port[1 - h]) < 0)
			return oom(f, l->line, err);
	}
	for (int i = 0; i < f->nsw; i++)
		if (!f->sw[i].any)
			f->sw[i].used = 1; /* a declared switch without cables still exists */
	return 0;
}

static int cmp_sw(const void *a, const void *b)
{
	return strcmp(((const eswitch *)a)->name, ((const eswitch *)b)->name);
}

static int cmp_nic(const void *pa, const void *pb)
{
	const enic *a = pa, *b = pb;
	int c = strcmp(a->host, b->host);

	return c ? c : strverscmp(a->netdev, b->netdev);
}

static const char *nic_local(const enic *n)
{
	return n->rdma ? n->rdma : n->netdev;
}

/* Declare the compute switches and NICs to topo_fabric, GUIDs in name order. */
static int declare_nodes(topo_ethfabric *f, topo_fabric *fb, topo_error *err)
{
	uint64_t guid = 0;
	char desc[600];

	/* qsort's array may not be NULL, even with no element (a fabric of
	 * switches only has no NIC array: found by fuzz_lldp) */
	if (f->nsw > 0)
		qsort(f->sw, (size_t)f->nsw, sizeof(*f->sw), cmp_sw);
	if (f->nnic > 0)
		qsort(f->nic, (size_t)f->nnic, sizeof(*f->nic), cmp_nic);
	for (int i = 0; i < f->nsw; i++) {
		eswitch *s = &f->sw[i];
		topo_fabric_node n = { TOPO_FNODE_SWITCH, 0, 0, s->name, 0 };

		if (!s->used)
			continue;
		if (s->nports > 0)
			qsort(s->ports, (size_t)s->nports, sizeof(char *), cmp_port);
		s->guid = n.guid = ++guid;
		n.nports = s->nports > 0 ? s->nports : 1;
		if (n.nports > 255) {
			topo_error_set(err, f->source, s->line, "switch %s has %d ports (at most 255)",
				       s->name, s->nports);
			return -1;
		}
		if (topo_fabric_add_node(fb, &n, s->line, err) < 0)
			return -1;
	}
	for (int i = 0; i < f->nnic; i++) {
		enic *c = &f->nic[i];
		topo_fabric_node n = { TOPO_FNODE_CA, 0, 1, desc, 0 };

		if (!c->cabled)
			continue;
		snprintf(desc, sizeof(desc), "%s %s", c->host, nic_local(c));
		c->guid = n.guid = ++guid;
		if (topo_fabric_add_node(fb, &n, 0, err) < 0)
			return -1;
	}
	return 0;
}

static int declare_links(topo_ethfabric *f, topo_fabric *fb, topo_error *err)
{
	for (int i = 0; i < f->nlink; i++) {
		const elink *l = &f->link[i];
		topo_fabric_link fl = { .width = 1, .speed = l->speed, .state = TOPO_LINK_ACTIVE };
		topo_fabric_end *e[2] = { &fl.a, &fl.b };

		for (int k = 0; k < 2; k++) {
			int s = find_switch(f, l->node[k]), n;

			if (s >= 0) {
				e[k]->guid = f->sw[s].guid;
				e[k]->port = port_number(&f->sw[s], l->port[k]);
				continue;
			}
			n = find_nic(f, l->node[k], l->port[k]);
			if (n < 0 || !f->nic[n].cabled)
				break;
			e[k]->guid = f->nic[n].guid;
			e[k]->port = 1;
		}
		if (!fl.a.guid || !fl.b.guid)
			continue; /* a storage or management cable */
		if (topo_fabric_add_link(fb, &fl, l->line, err) < 0)
			return -1;
	}
	return 0;
}

static int set_nic_vertex(topo_ethfabric *f, int id, const enic *c)
{
	topo_vertex *v = topo_graph_vertex_mut(f->g, id);

	v->guid = 0;
	v->lid = 0;
	v->port = 1;
	v->link_layer = c->ll != TOPO_LL_UNKNOWN ? c->ll : TOPO_LL_ETH;
	if (topo_set_str(&v->device, nic_local(c)) < 0 || topo_set_str(&v->netdev, c->netdev) < 0 ||
	    topo_set_str(&v->desc, NULL) < 0 ||
	    topo_graph_set_attr(f->g, id, TOPO_NIC_ROLE_ATTR, topo_nic_role_name(c->role)) < 0 ||
	    (c->switch_port && topo_graph_set_attr(f->g, id, "switch_port", c->switch_port) < 0))
		return -1;
	return 0;
}

/* Compute NICs lose their stand-in GUIDs; the others join their hosts. */
static int fix_nics(topo_ethfabric *f)
{
	char name[600];

	for (int i = 0; i < f->nnic; i++) {
		const enic *c = &f->nic[i];
		int host, id;

		snprintf(name, sizeof(name), "%s/%s", c->host, nic_local(c));
		id = topo_graph_find(f->g, TOPO_V_HCA, name);
		if (c->cabled) {
			if (id >= 0 && set_nic_vertex(f, id, c) < 0)
				return -1;
			continue; /* absent: an anomalous host, already reported */
		}
		if (id >= 0)
			continue;
		host = topo_graph_find(f->g, TOPO_V_HOST, c->host);
		if (host < 0 && (host = topo_graph_add_vertex(f->g, TOPO_V_HOST, c->host)) < 0)
			return -1;
		id = topo_graph_add_part(f->g, host, TOPO_V_HCA, nic_local(c));
		if (id < 0 || set_nic_vertex(f, id, c) < 0)
			return -1;
	}
	return 0;
}

static topo_level tier_level(int tier)
{
	return tier == 1 ? TOPO_LEVEL_LEAF : tier == 2 ? TOPO_LEVEL_SPINE : TOPO_LEVEL_CORE;
}

/* Switches lose their stand-in GUIDs; a claimed tier fills an unknown level
 * and one the cabling contradicts is an anomaly. */
static int fix_switches(topo_ethfabric *f)
{
	for (int i = 0; i < f->nsw; i++) {
		const eswitch *s = &f->sw[i];
		int id = topo_graph_find(f->g, TOPO_V_SWITCH, s->name);
		topo_vertex *v;

		if (id < 0)
			continue;
		v = topo_graph_vertex_mut(f->g, id);
		v->guid = 0;
		v->nports = s->nports;
		if (topo_set_str(&v->desc, NULL) < 0)
			return -1;
		if (s->tier <= 0)
			continue;
		if (v->level == TOPO_LEVEL_UNKNOWN)
			v->level = tier_level(s->tier);
		else if (v->level != tier_level(s->tier) &&
			 topo_graph_add_anomaly(f->g, "tier-mismatch", s->name,
						"switch %s is in tier %d, but its cables make it a %s switch",
						s->name, s->tier, topo_level_name(v->level)) < 0)
			return -1;
	}
	return 0;
}

static int has_switches(const topo_graph *g)
{
	return topo_graph_count(g, TOPO_V_SWITCH) > 0;
}

int topo_ethfabric_finish(topo_ethfabric *f, topo_error *err)
{
	topo_fabric_opts opts = { .host_pattern = ETH_HOST_PATTERN };
	topo_fabric *fb;
	int any = 0;

	if (f->finished) {
		topo_error_set(err, f->source, 0, "the fabric was already finished");
		return -1;
	}
	f->finished = 1;
	topo_error_clear(err);
	if (classify_links(f, err) < 0)
		return -1;
	for (int i = 0; i < f->nsw; i++)
		any |= f->sw[i].used;
	if (any && has_switches(f->g)) {
		topo_error_set(err, f->source, 0,
			       "the graph already holds a fabric: a second compute fabric is not "
			       "supported; tag these NICs storage or management (NIC role rules)");
		return -1;
	}
	if (any) {
		if (!(fb = topo_fabric_new(f->g, &opts, f->source, err)))
			return -1;
		if (declare_nodes(f, fb, err) < 0 || declare_links(f, fb, err) < 0 ||
		    topo_fabric_finish(fb, err) < 0) {
			topo_fabric_free(fb);
			return -1;
		}
		topo_fabric_free(fb);
	}
	if (fix_switches(f) < 0 || fix_nics(f) < 0)
		return oom(f, 0, err);
	return 0;
}
