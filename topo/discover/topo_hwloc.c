/*
 * topo_hwloc: builds a host's parts (NUMA nodes, GPUs, HCAs, NICs) and their
 * PCIe locality from an hwloc topology, live or from XML (see topo_hwloc.h).
 */
#include "topo_hwloc.h"

#include <dirent.h>
#include <errno.h>
#include <hwloc.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "topo_alloc.h"
#include "topo_hwloc_xml.h"
#include "topo_io.h"
#include "topo_num.h"

#define LIVE_SOURCE "<hwloc>"
#define PCI_VENDOR_NVIDIA 0x10de
#define PCI_CLASS_VGA 0x0300
#define PCI_CLASS_3D 0x0302
#define IPOIB_ADDR_BYTES 20 /* hardware address length of an IPoIB netdev */
#define ETHER_ADDR_BYTES 6

/* A device placed in the graph, with what the nearest-HCA rule compares. */
typedef struct hw_dev {
	hwloc_obj_t obj;     /* its place in the tree: the PCI device, else the OS device */
	int vid;             /* its vertex */
	int numa;            /* NUMA OS index, -1 unknown */
	hwloc_obj_t package; /* enclosing package, NULL if none */
} hw_dev;

/* State of building one host. */
typedef struct hw_build {
	hwloc_topology_t topo;
	topo_graph *g;
	const char *source;
	topo_error *err;
	int host;
	hw_dev *gpus, *hcas;
	int ngpus, nhcas;
	hwloc_obj_t *claimed; /* network OS devices used as an HCA's netdev */
	int nclaimed;
} hw_build;

static int oom(hw_build *b)
{
	topo_error_set(b->err, b->source, 0, "out of memory while building host %s",
		       topo_graph_vertex(b->g, b->host)->name);
	return -1;
}

/* ---- hwloc tree helpers ------------------------------------------------ */

static int tree_depth(hwloc_obj_t o)
{
	int d = 0;

	for (; o->parent; o = o->parent)
		d++;
	return d;
}

/* Deepest common ancestor of a and b; *hops = edges from a up to it and down to b. */
static hwloc_obj_t common_ancestor(hwloc_obj_t a, hwloc_obj_t b, int *hops)
{
	int da = tree_depth(a), db = tree_depth(b), h = 0;

	for (; da > db; da--, h++)
		a = a->parent;
	for (; db > da; db--, h++)
		b = b->parent;
	while (a != b) {
		a = a->parent;
		b = b->parent;
		h += 2;
	}
	*hops = h;
	return a;
}

static hwloc_obj_t pci_ancestor(hwloc_obj_t o)
{
	for (o = o->parent; o; o = o->parent)
		if (o->type == HWLOC_OBJ_PCI_DEVICE)
			return o;
	return NULL;
}

static const char *info(hwloc_obj_t o, const char *name)
{
	return hwloc_obj_get_info_by_name(o, name);
}

static const char *port_info(hwloc_obj_t o, int port, const char *what)
{
	char key[64];

	snprintf(key, sizeof(key), "Port%d%s", port, what);
	return info(o, key);
}

/* Bytes of a "xx:xx:..." hardware address; 0 if absent. */
static int addr_bytes(hwloc_obj_t netdev)
{
	const char *a = netdev ? info(netdev, "Address") : NULL;

	return a && *a ? (int)(strlen(a) + 1) / 3 : 0;
}

/* The last 16 hex digits of a GID or GUID string, as a number; 0 if none. */
static uint64_t parse_guid(const char *s)
{
	uint64_t v = 0;
	int n = 0;

	if (!s)
		return 0;
	for (; *s; s++) {
		int d = *s >= '0' && *s <= '9' ? *s - '0'
		      : *s >= 'a' && *s <= 'f' ? *s - 'a' + 10
		      : *s >= 'A' && *s <= 'F' ? *s - 'A' + 10 : -1;

		if (d >= 0) {
			v = (v << 4) | (uint64_t)d;
			n++;
		} else if (*s != ':') {
			return 0;
		}
	}
	return n >= 16 ? v : 0;
}

static void busid(hwloc_obj_t pci, char *buf, size_t len)
{
	snprintf(buf, len, "%04x:%02x:%02x.%01x", pci->attr->pcidev.domain, pci->attr->pcidev.bus,
		 pci->attr->pcidev.dev, pci->attr->pcidev.func);
}

static int is_drm_node(const char *name)
{
	return name && (strncmp(name, "card", 4) == 0 || strncmp(name, "renderD", 7) == 0 ||
			strncmp(name, "controlD", 8) == 0);
}

static int is_gpu_pci(hwloc_obj_t pci)
{
	unsigned cls = pci->attr->pcidev.class_id;

	for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling) {
		if (c->type != HWLOC_OBJ_OS_DEVICE)
			continue;
		if (c->attr->osdev.type == HWLOC_OBJ_OSDEV_COPROC)
			return 1;
		if (c->attr->osdev.type == HWLOC_OBJ_OSDEV_GPU && !is_drm_node(c->name))
			return 1;
	}
	return pci->attr->pcidev.vendor_id == PCI_VENDOR_NVIDIA &&
	       (cls == PCI_CLASS_VGA || cls == PCI_CLASS_3D);
}

static int cmp_busid(const void *pa, const void *pb)
{
	const struct hwloc_pcidev_attr_s *a = &(*(hwloc_obj_t const *)pa)->attr->pcidev;
	const struct hwloc_pcidev_attr_s *b = &(*(hwloc_obj_t const *)pb)->attr->pcidev;

	if (a->domain != b->domain)
		return a->domain < b->domain ? -1 : 1;
	if (a->bus != b->bus)
		return a->bus < b->bus ? -1 : 1;
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	return (int)a->func - (int)b->func;
}

/* ---- graph side ----------------------------------------------------------- */

static int add_part(hw_build *b, topo_vkind kind, const char *local)
{
	int id = topo_graph_add_part(b->g, b->host, kind, local);

	if (id < 0) {
		const char *host = topo_graph_vertex(b->g, b->host)->name;
		char name[512];

		snprintf(name, sizeof(name), "%s/%s", host, local);
		if (topo_graph_find(b->g, kind, name) >= 0)
			topo_error_set(b->err, b->source, 0,
				       "host %s already has a %s named %s (was it loaded twice?)", host,
				       topo_vkind_name(kind), local);
		else
			oom(b);
	}
	return id;
}

/* Record where a device sits: NUMA node, cpuset, edge to its NUMA vertex. */
static int place(hw_build *b, hw_dev *d)
{
	hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(b->topo, d->obj);
	topo_vertex *v = topo_graph_vertex_mut(b->g, d->vid);
	int hops = 0, numa_id, e;
	char name[512], *cpus = NULL;

	d->numa = -1;
	d->package = hwloc_get_ancestor_obj_by_type(b->topo, HWLOC_OBJ_PACKAGE, d->obj);
	if (!anc)
		return 0;
	if (anc->nodeset && hwloc_bitmap_weight(anc->nodeset) == 1)
		d->numa = hwloc_bitmap_first(anc->nodeset);
	v->numa = d->numa;
	if (anc->cpuset && !hwloc_bitmap_iszero(anc->cpuset)) {
		if (hwloc_bitmap_list_asprintf(&cpus, anc->cpuset) < 0)
			return oom(b);
		e = topo_set_str(&v->cpuset, cpus);
		free(cpus);
		if (e < 0)
			return oom(b);
	}
	if (d->numa < 0)
		return 0;
	snprintf(name, sizeof(name), "%s/numa%d", topo_graph_vertex(b->g, b->host)->name, d->numa);
	numa_id = topo_graph_find(b->g, TOPO_V_NUMA, name);
	if (numa_id < 0)
		return 0;
	for (hwloc_obj_t o = d->obj; o != anc; o = o->parent)
		hops++;
	e = topo_graph_add_edge(b->g, TOPO_E_PCIE, d->vid, numa_id);
	if (e < 0)
		return oom(b);
	topo_graph_edge_mut(b->g, e)->distance = hops;
	return 0;
}

static int add_numas(hw_build *b)
{
	hwloc_obj_t n = NULL;

	while ((n = hwloc_get_next_obj_by_type(b->topo, HWLOC_OBJ_NUMANODE, n))) {
		char local[32], *cpus = NULL;
		int id, r = 0;

		snprintf(local, sizeof(local), "numa%u", n->os_index);
		id = add_part(b, TOPO_V_NUMA, local);
		if (id < 0)
			return -1;
		topo_graph_vertex_mut(b->g, id)->index = (int)n->os_index;
		if (n->cpuset && !hwloc_bitmap_iszero(n->cpuset)) {
			if (hwloc_bitmap_list_asprintf(&cpus, n->cpuset) < 0)
				return oom(b);
			r = topo_set_str(&topo_graph_vertex_mut(b->g, id)->cpuset, cpus);
			free(cpus);
		}
		if (r < 0)
			return oom(b);
	}
	return 0;
}

/* Comma-separated names of a PCI device's OS devices ("cuda0,nvml0"). */
static int set_osdev_names(hw_build *b, int vid, hwloc_obj_t pci)
{
	char list[512] = "";
	size_t n = 0;

	for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling) {
		if (c->type != HWLOC_OBJ_OS_DEVICE || !c->name)
			continue;
		n += (size_t)snprintf(list + n, n < sizeof(list) ? sizeof(list) - n : 0, "%s%s",
				      n ? "," : "", c->name);
		if (n >= sizeof(list))
			break;
	}
	if (n == 0 || n >= sizeof(list))
		return 0;
	return topo_graph_set_attr(b->g, vid, "os_devices", list) < 0 ? oom(b) : 0;
}

static const char *gpu_model(hwloc_obj_t pci)
{
	for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling)
		if (c->type == HWLOC_OBJ_OS_DEVICE && info(c, "GPUModel"))
			return info(c, "GPUModel");
	return info(pci, "PCIDevice");
}

static int add_gpus(hw_build *b)
{
	hwloc_obj_t pci = NULL, *list;
	int n = 0, cap = 0, r = 0;

	list = NULL;
	while ((pci = hwloc_get_next_pcidev(b->topo, pci))) {
		if (!is_gpu_pci(pci))
			continue;
		if (n == cap) {
			hwloc_obj_t *l = realloc(list, (size_t)(cap = cap ? 2 * cap : 8) * sizeof(*l));

			if (!l) {
				free(list);
				return oom(b);
			}
			list = l;
		}
		list[n++] = pci;
	}
	if (n > 0)
		qsort(list, (size_t)n, sizeof(*list), cmp_busid);
	b->gpus = calloc((size_t)n + 1, sizeof(*b->gpus));
	if (!b->gpus) {
		free(list);
		return oom(b);
	}
	for (int i = 0; i < n && r == 0; i++) {
		char local[32], bus[32];
		topo_vertex *v;
		hw_dev *d = &b->gpus[b->ngpus];

		snprintf(local, sizeof(local), "gpu%d", i);
		d->obj = list[i];
		d->vid = add_part(b, TOPO_V_GPU, local);
		if (d->vid < 0) {
			r = -1;
			break;
		}
		b->ngpus++;
		v = topo_graph_vertex_mut(b->g, d->vid);
		v->index = i;
		busid(list[i], bus, sizeof(bus));
		if (topo_set_str(&v->pci_busid, bus) < 0 ||
		    topo_set_str(&v->device, gpu_model(list[i])) < 0)
			r = oom(b);
		else if (set_osdev_names(b, d->vid, list[i]) < 0 || place(b, d) < 0)
			r = -1;
	}
	free(list);
	return r;
}

/* The network interface of an OpenFabrics device: among the network OS
 * devices of the same PCI device, the IPoIB one, else the one on `port`,
 * else the only one. */
static hwloc_obj_t hca_netdev(hwloc_obj_t ofed, int port)
{
	hwloc_obj_t pci = ofed->parent, only = NULL, on_port = NULL;
	int nnet = 0;

	if (!pci || pci->type != HWLOC_OBJ_PCI_DEVICE)
		return NULL;
	for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling) {
		const char *p;
		int n;

		if (c->type != HWLOC_OBJ_OS_DEVICE || c->attr->osdev.type != HWLOC_OBJ_OSDEV_NETWORK)
			continue;
		if (addr_bytes(c) == IPOIB_ADDR_BYTES)
			return c;
		p = info(c, "Port");
		if (p && port > 0 && topo_parse_int(p, 1, INT_MAX, &n) == 0 && n == port && !on_port)
			on_port = c;
		only = c;
		nnet++;
	}
	return on_port ? on_port : nnet == 1 ? only : NULL;
}

/* A port's LID as sysfs writes it ("0x1a"; decimal accepted), 0 when absent
 * or not a 16-bit LID. */
static int lid_of(const char *lid)
{
	uint64_t v;

	return lid && topo_parse_u64(lid, 0, UINT16_MAX, &v) == 0 ? (int)v : 0;
}

/* Lowest port number an OpenFabrics device describes ("Port1State"), 0 if none. */
static int hca_first_port(hwloc_obj_t ofed)
{
	int best = 0;

	for (unsigned i = 0; i < ofed->infos_count; i++) {
		const char *name = ofed->infos[i].name, *rest;
		long p;

		if (name && strncmp(name, "Port", 4) == 0 &&
		    topo_parse_long_prefix(name + 4, 1, INT_MAX - 1, &p, &rest) == 0 &&
		    (best == 0 || p < best))
			best = (int)p;
	}
	return best;
}

static topo_link_layer hca_link_layer(hwloc_obj_t ofed, int port, hwloc_obj_t netdev)
{
	const char *ll = port_info(ofed, port, "LinkLayer");
	const char *lid = port_info(ofed, port, "LID");

	if (ll && strcmp(ll, "InfiniBand") == 0)
		return TOPO_LL_IB;
	if (ll && strcmp(ll, "Ethernet") == 0)
		return TOPO_LL_ETH;
	if (lid_of(lid) > 0)
		return TOPO_LL_IB;
	if (addr_bytes(netdev) == IPOIB_ADDR_BYTES)
		return TOPO_LL_IB;
	if (addr_bytes(netdev) == ETHER_ADDR_BYTES)
		return TOPO_LL_ETH;
	return TOPO_LL_UNKNOWN;
}

static int claim(hw_build *b, hwloc_obj_t netdev)
{
	hwloc_obj_t *c = realloc(b->claimed, (size_t)(b->nclaimed + 1) * sizeof(*c));

	if (!c)
		return oom(b);
	b->claimed = c;
	b->claimed[b->nclaimed++] = netdev;
	return 0;
}

static int is_claimed(const hw_build *b, hwloc_obj_t netdev)
{
	for (int i = 0; i < b->nclaimed; i++)
		if (b->claimed[i] == netdev)
			return 1;
	return 0;
}

static int fill_hca(hw_build *b, hw_dev *d, hwloc_obj_t ofed, hwloc_obj_t pci)
{
	topo_vertex *v = topo_graph_vertex_mut(b->g, d->vid);
	int port = hca_first_port(ofed);
	hwloc_obj_t netdev = hca_netdev(ofed, port);
	const char *p = netdev ? info(netdev, "Port") : NULL, *lid;
	char bus[32];
	int n;

	if (p && topo_parse_int(p, 1, INT_MAX, &n) == 0)
		port = n;
	v->port = port;
	v->link_layer = hca_link_layer(ofed, port, netdev);
	v->guid = parse_guid(port_info(ofed, port, "GID0"));
	if (!v->guid)
		v->guid = parse_guid(info(ofed, "NodeGUID"));
	lid = port_info(ofed, port, "LID");
	v->lid = lid_of(lid);
	if (topo_set_str(&v->device, ofed->name) < 0)
		return oom(b);
	if (netdev && (topo_set_str(&v->netdev, netdev->name) < 0 || claim(b, netdev) < 0))
		return oom(b);
	if (pci) {
		busid(pci, bus, sizeof(bus));
		if (topo_set_str(&v->pci_busid, bus) < 0)
			return oom(b);
	}
	return place(b, d);
}

static int add_hcas(hw_build *b)
{
	hwloc_obj_t os = NULL;
	int n = 0;

	while ((os = hwloc_get_next_osdev(b->topo, os)))
		n += os->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS;
	b->hcas = calloc((size_t)n + 1, sizeof(*b->hcas));
	if (!b->hcas)
		return oom(b);
	while ((os = hwloc_get_next_osdev(b->topo, os))) {
		hwloc_obj_t pci;
		hw_dev *d = &b->hcas[b->nhcas];

		if (os->attr->osdev.type != HWLOC_OBJ_OSDEV_OPENFABRICS || !os->name || !*os->name)
			continue;
		pci = pci_ancestor(os);
		d->obj = pci ? pci : os;
		d->vid = add_part(b, TOPO_V_HCA, os->name);
		if (d->vid < 0)
			return -1;
		b->nhcas++;
		if (fill_hca(b, d, os, pci) < 0)
			return -1;
	}
	return 0;
}

/* Network interfaces no HCA claimed, except IPoIB ones, are Ethernet NICs. */
static int add_nics(hw_build *b)
{
	hwloc_obj_t os = NULL;

	while ((os = hwloc_get_next_osdev(b->topo, os))) {
		hwloc_obj_t pci;
		hw_dev d = { 0 };
		topo_vertex *v;
		char bus[32];

		if (os->attr->osdev.type != HWLOC_OBJ_OSDEV_NETWORK || !os->name || !*os->name ||
		    is_claimed(b, os) || addr_bytes(os) == IPOIB_ADDR_BYTES)
			continue;
		pci = pci_ancestor(os);
		d.obj = pci ? pci : os;
		d.vid = add_part(b, TOPO_V_HCA, os->name);
		if (d.vid < 0)
			return -1;
		v = topo_graph_vertex_mut(b->g, d.vid);
		v->link_layer = TOPO_LL_ETH;
		if (topo_set_str(&v->device, os->name) < 0 || topo_set_str(&v->netdev, os->name) < 0)
			return oom(b);
		if (pci) {
			busid(pci, bus, sizeof(bus));
			if (topo_set_str(&v->pci_busid, bus) < 0)
				return oom(b);
		}
		if (place(b, &d) < 0)
			return -1;
	}
	return 0;
}

/* Compare nearness keys {common ancestor depth, same NUMA, same package}. */
static int key_cmp(const int *a, const int *b)
{
	for (int i = 0; i < 3; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

static void nearness(const hw_dev *gpu, const hw_dev *hca, int *key, int *hops)
{
	key[0] = tree_depth(common_ancestor(gpu->obj, hca->obj, hops));
	key[1] = gpu->numa >= 0 && gpu->numa == hca->numa;
	key[2] = gpu->package && gpu->package == hca->package;
}

/* Edges from each GPU to its nearest HCA(s); see topo_hwloc.h for the rule. */
static int link_nearest(hw_build *b)
{
	for (int i = 0; i < b->ngpus; i++) {
		const hw_dev *gpu = &b->gpus[i];
		int best[3] = { -1, -1, -1 }, key[3], hops, e;

		for (int j = 0; j < b->nhcas; j++) {
			nearness(gpu, &b->hcas[j], key, &hops);
			if (key_cmp(key, best) > 0)
				memcpy(best, key, sizeof(best));
		}
		for (int j = 0; j < b->nhcas; j++) {
			nearness(gpu, &b->hcas[j], key, &hops);
			if (key_cmp(key, best) != 0)
				continue;
			e = topo_graph_add_edge(b->g, TOPO_E_PCIE, gpu->vid, b->hcas[j].vid);
			if (e < 0)
				return oom(b);
			topo_graph_edge_mut(b->g, e)->distance = hops;
		}
	}
	return 0;
}

static int build_host(hwloc_topology_t topo, topo_graph *g, const char *hostname,
		      const char *source, topo_error *err)
{
	hw_build b = { .topo = topo, .g = g, .source = source, .err = err };
	int r;

	if (!*hostname || strchr(hostname, '/')) {
		topo_error_set(err, source, 0, "\"%s\" cannot name a host (empty or contains '/')",
			       hostname);
		return -1;
	}
	b.host = topo_graph_find(g, TOPO_V_HOST, hostname);
	if (b.host < 0)
		b.host = topo_graph_add_vertex(g, TOPO_V_HOST, hostname);
	if (b.host < 0) {
		topo_error_set(err, source, 0, "out of memory while adding host %s", hostname);
		return -1;
	}
	r = add_numas(&b);
	if (r == 0)
		r = add_gpus(&b);
	if (r == 0)
		r = add_hcas(&b);
	if (r == 0)
		r = add_nics(&b);
	if (r == 0)
		r = link_nearest(&b);
	free(b.gpus);
	free(b.hcas);
	free(b.claimed);
	return r < 0 ? -1 : b.host;
}

/* ---- loaders ------------------------------------------------------------- */

/* "dir/lassen28.xml" -> "lassen28" */
static void name_from_path(const char *path, char *buf, size_t len)
{
	const char *base = strrchr(path, '/');
	size_t n;

	base = base ? base + 1 : path;
	n = strlen(base);
	if (n > 4 && strcmp(base + n - 4, ".xml") == 0)
		n -= 4;
	snprintf(buf, len, "%.*s", (int)n, base);
}

int topo_load_hwloc_xml_mem(topo_graph *g, const char *data, size_t len, const char *source,
			    const char *hostname, topo_error *err)
{
	hwloc_topology_t topo;
	char *xml, name[256];
	size_t xlen;
	const char *h;
	int r;

	topo_error_clear(err);
	if (topo_hwloc_xml_prepare(data, len, source, &xml, &xlen, err) < 0)
		return -1;
	if (xlen >= INT_MAX) {
		free(xml);
		topo_error_set(err, source, 0, "the XML is too large for hwloc (%zu bytes)", xlen);
		return -1;
	}
	if (hwloc_topology_init(&topo) < 0) {
		free(xml);
		topo_error_set(err, source, 0, "hwloc could not create a topology: %s", strerror(errno));
		return -1;
	}
	hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_ALL);
	if (hwloc_topology_set_xmlbuffer(topo, xml, (int)xlen + 1) < 0 ||
	    hwloc_topology_load(topo) < 0) {
		topo_error_set(err, source, 0,
			       "hwloc rejected the XML: an object, attribute or set in it is malformed, "
			       "or it holds no PU or NUMA node (hwloc gives no line number; "
			       "HWLOC_XML_VERBOSE=1 makes it say more on stderr)");
		hwloc_topology_destroy(topo);
		free(xml);
		return -1;
	}
	free(xml);
	h = hostname ? hostname : info(hwloc_get_root_obj(topo), "HostName");
	if (!h) {
		name_from_path(source, name, sizeof(name));
		h = name;
	}
	r = build_host(topo, g, h, source, err);
	hwloc_topology_destroy(topo);
	return r;
}

int topo_load_hwloc_xml(topo_graph *g, const char *path, const char *hostname, topo_error *err)
{
	size_t len;
	char *data;
	struct stat st;
	int r;

	topo_error_clear(err);
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		topo_error_set(err, path, 0, "is a directory, not an hwloc XML file (see --hwloc-dir)");
		return -1;
	}
	data = topo_read_file(path, TOPO_IO_MAX_BYTES, &len, err);
	if (!data)
		return -1;
	r = topo_load_hwloc_xml_mem(g, data, len, path, hostname, err);
	free(data);
	return r;
}

int topo_load_hwloc_live(topo_graph *g, topo_error *err)
{
	hwloc_topology_t topo;
	const char *h;
	char name[256];
	int r;

	topo_error_clear(err);
	if (hwloc_topology_init(&topo) < 0) {
		topo_error_set(err, LIVE_SOURCE, 0, "hwloc could not create a topology: %s",
			       strerror(errno));
		return -1;
	}
	hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
	if (hwloc_topology_load(topo) < 0) {
		topo_error_set(err, LIVE_SOURCE, 0, "hwloc could not discover this machine: %s",
			       strerror(errno));
		hwloc_topology_destroy(topo);
		return -1;
	}
	h = info(hwloc_get_root_obj(topo), "HostName");
	if (!h) {
		if (gethostname(name, sizeof(name)) < 0)
			snprintf(name, sizeof(name), "localhost");
		name[sizeof(name) - 1] = '\0';
		h = name;
	}
	r = build_host(topo, g, h, LIVE_SOURCE, err);
	hwloc_topology_destroy(topo);
	return r;
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int topo_load_hwloc_dir(topo_graph *g, const char *dir, topo_error *err)
{
	DIR *d;
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int loaded = 0;

	topo_error_clear(err);
	d = opendir(dir);
	if (!d) {
		topo_error_set(err, dir, 0, "cannot open the hwloc XML directory: %s", strerror(errno));
		return -1;
	}
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);

		if (l <= 4 || strcmp(de->d_name + l - 4, ".xml") != 0 || de->d_name[0] == '.')
			continue;
		if (topo_grow(&names, &cap, n + 1, sizeof(*names), 16) < 0)
			goto nomem;
		names[n] = strdup(de->d_name);
		if (!names[n])
			goto nomem;
		n++;
	}
	closedir(d);
	if (n == 0) {
		free(names);
		topo_error_set(err, dir, 0, "the directory holds no HOST.xml file");
		return -1;
	}
	qsort(names, n, sizeof(*names), topo_cmp_str);
	for (size_t i = 0; i < n; i++) {
		char path[PATH_MAX], host[256];

		if (snprintf(path, sizeof(path), "%s/%s", dir, names[i]) >= (int)sizeof(path)) {
			topo_error_set(err, dir, 0, "the path of %s is too long", names[i]);
			free_names(names, n);
			return -1;
		}
		name_from_path(names[i], host, sizeof(host));
		if (topo_load_hwloc_xml(g, path, host, err) < 0) {
			free_names(names, n);
			return -1;
		}
		loaded++;
	}
	free_names(names, n);
	return loaded;

nomem:
	closedir(d);
	free_names(names, n);
	topo_error_set(err, dir, 0, "out of memory listing the directory");
	return -1;
}
