/*
 * topo_ibnd: live discovery through libibnetdisc (see topo_ibnd.h).
 *
 * Every node ibnd found is declared to the builder, then every cable once
 * (from its lower GUID/port end). Width and speed are decoded from PortInfo
 * the way `ibnetdiscover` prints them ("4xNDR"), so both sources agree.
 */
#include "topo_ibnd.h"

#include <infiniband/ibnetdisc.h>
#include <infiniband/mad.h>
#include <string.h>

#define SRC "<ibnd>"

/* PortInfo CapabilityMask bit 14: IsExtendedSpeedsSupported. */
#define CAP_HAS_EXT_SPEEDS (1u << 14)

static int port_width(const ibnd_port_t *p)
{
	switch (mad_get_field((void *)p->info, 0, IB_PORT_LINK_WIDTH_ACTIVE_F)) {
	case 1: return 1;
	case 2: return 4;
	case 4: return 8;
	case 8: return 12;
	case 16: return 2;
	default: return 0;
	}
}

/* CapabilityMask of a port: switches keep it on port 0 only. */
static uint32_t port_capmask(const ibnd_port_t *p)
{
	const ibnd_node_t *n = p->node;
	const ibnd_port_t *q = p;

	if (n->type == IB_NODE_SWITCH && n->ports && n->ports[0])
		q = n->ports[0];
	return mad_get_field((void *)q->info, 0, IB_PORT_CAPMASK_F);
}

static const char *port_speed(const ibnd_port_t *p)
{
	uint32_t ext = 0;

	if (port_capmask(p) & CAP_HAS_EXT_SPEEDS)
		ext = mad_get_field((void *)p->info, 0, IB_PORT_LINK_SPEED_EXT_ACTIVE_F);
	switch (ext) {
	case 1: return "FDR";
	case 2: return "EDR";
	case 4: return "HDR";
	case 8: return "NDR";
	default: break;
	}
	if (mad_get_field((void *)p->ext_info, 0, IB_MLNX_EXT_PORT_LINK_SPEED_ACTIVE_F) & 1)
		return "FDR10";
	switch (mad_get_field((void *)p->info, 0, IB_PORT_LINK_SPEED_ACTIVE_F)) {
	case 1: return "SDR";
	case 2: return "DDR";
	case 4: return "QDR";
	default: return "";
	}
}

static int add_nodes(topo_fabric *f, ibnd_fabric_t *fab, topo_error *err)
{
	for (ibnd_node_t *n = fab->nodes; n; n = n->next) {
		topo_fabric_node fn = { 0 };

		switch (n->type) {
		case IB_NODE_SWITCH: fn.type = TOPO_FNODE_SWITCH; break;
		case IB_NODE_CA: fn.type = TOPO_FNODE_CA; break;
		case IB_NODE_ROUTER: fn.type = TOPO_FNODE_ROUTER; break;
		default: continue;
		}
		fn.guid = n->guid;
		fn.nports = n->numports;
		fn.desc = n->nodedesc;
		fn.lid = n->type == IB_NODE_SWITCH ? n->smalid : 0;
		if (topo_fabric_add_node(f, &fn, 0, err) < 0)
			return -1;
	}
	return 0;
}

static void fill_end(topo_fabric_end *e, const ibnd_port_t *p)
{
	e->guid = p->node->guid;
	e->port = p->portnum;
	if (p->node->type != IB_NODE_SWITCH) {
		e->port_guid = p->guid;
		e->lid = p->base_lid;
	}
}

/* Is (a) the end a cable is declared from? The lower (GUID, port) end. */
static int first_end(const ibnd_port_t *a, const ibnd_port_t *b)
{
	if (a->node->guid != b->node->guid)
		return a->node->guid < b->node->guid;
	return a->portnum <= b->portnum;
}

static int add_links(topo_fabric *f, ibnd_fabric_t *fab, topo_error *err)
{
	for (ibnd_node_t *n = fab->nodes; n; n = n->next) {
		for (int i = 0; n->ports && i <= n->numports; i++) {
			ibnd_port_t *p = n->ports[i];
			topo_fabric_link k = { 0 };

			if (!p || !p->remoteport || !first_end(p, p->remoteport))
				continue;
			fill_end(&k.a, p);
			fill_end(&k.b, p->remoteport);
			k.width = port_width(p);
			k.speed = port_speed(p);
			k.state = TOPO_LINK_ACTIVE;
			if (topo_fabric_add_link(f, &k, 0, err) < 0)
				return -1;
		}
	}
	return 0;
}

int topo_load_ibnd(topo_graph *g, const char *ca_name, int ca_port, const topo_fabric_opts *opts,
		   topo_error *err)
{
	struct ibnd_config cfg;
	ibnd_fabric_t *fab;
	topo_fabric *f;
	char name[64] = "";
	int rc = -1;

	topo_error_clear(err);
	memset(&cfg, 0, sizeof(cfg));
	if (ca_name)
		snprintf(name, sizeof(name), "%s", ca_name);
	fab = ibnd_discover_fabric(ca_name ? name : NULL, ca_port, NULL, &cfg);
	if (!fab) {
		topo_error_set(err, SRC, 0,
			       "libibnetdisc could not discover the fabric through %s port %d "
			       "(no InfiniBand HCA, port down, or no access to /dev/infiniband/umad*)",
			       ca_name ? ca_name : "the first HCA", ca_port);
		return -1;
	}
	f = topo_fabric_new(g, opts, SRC, err);
	if (f && add_nodes(f, fab, err) == 0 && add_links(f, fab, err) == 0 &&
	    topo_fabric_finish(f, err) == 0)
		rc = 0;
	if (f)
		topo_fabric_free(f);
	ibnd_destroy_fabric(fab);
	return rc;
}
