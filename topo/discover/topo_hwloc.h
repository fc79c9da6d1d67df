/*
 * topo_hwloc: the inside of a host (NUMA nodes, GPUs, InfiniBand HCAs,
 * Ethernet NICs and their PCIe locality) from hwloc, live or from lstopo XML.
 *
 * Each host becomes (see topo_graph.h) a host vertex, created if absent, and
 * these parts of it:
 *   - numaN   one per NUMA node, N = OS index; cpuset "0-15,32-47";
 *   - gpuN    one per GPU PCI device, numbered in PCI bus id order (the
 *             order CUDA_DEVICE_ORDER=PCI_BUS_ID gives); device = model;
 *   - mlx5_0  one per OpenFabrics device (an InfiniBand HCA, or an RDMA NIC
 *             in RoCE mode); netdev = its network interface ("ib0");
 *   - eth0    one per other network interface (an Ethernet NIC), as an hca
 *             vertex with link layer ETH and device = netdev = its name.
 * and TOPO_E_PCIE edges: gpu -> numa and hca -> numa (distance = I/O levels
 * between the device and the CPU-side object it hangs off), and gpu -> each
 * of its nearest OpenFabrics HCAs (distance = tree hops from the GPU up to
 * their deepest common ancestor and down to the HCA).
 *
 * Nearest HCA: the HCA whose deepest common ancestor with the GPU in the
 * hwloc tree is deepest; ties go to an HCA on the GPU's NUMA node, then on
 * its package; HCAs still tied are all nearest.
 *
 * A GPU is a PCI device with a co-processor OS device (CUDA, OpenCL, ...)
 * or a GPU OS device other than a DRM node (NVML, RSMI, ...; a "card0" alone
 * is also what a server's BMC VGA shows), or, with no such OS device, an
 * NVIDIA (vendor 0x10de) display or 3D controller. Several OS devices of one
 * PCI device ("cuda0" and "nvml0") are one GPU.
 *
 * Link layer of an HCA: the Port<N>LinkLayer info when hwloc recorded one;
 * else IB when the port has a LID or its netdev has a 20-byte IPoIB address;
 * else ETH when its netdev has a 6-byte Ethernet address. Port: the netdev's
 * "Port" info, else the lowest port the OpenFabrics device describes.
 * GUID: the interface id of Port<N>GID0, else NodeGUID. LID: Port<N>LID.
 *
 * No function prints: hwloc's own XML diagnostics stay off unless the user
 * sets HWLOC_XML_VERBOSE.
 */
#ifndef TOPO_HWLOC_H
#define TOPO_HWLOC_H

#include <stddef.h>

#include "topo_error.h"
#include "topo_graph.h"

/* Load one host's lstopo XML (hwloc formats 1.x, 2.x and 3.x) into g.
 * hostname: NULL takes the XML's HostName info, else the file name without
 * its directory and ".xml". Returns the host vertex id, or -1 with err
 * filled (missing file, not XML, not a <topology>, truncated, rejected by
 * hwloc, or the host already has these parts). On error g may hold the
 * vertices added before the failure. */
int topo_load_hwloc_xml(topo_graph *g, const char *path, const char *hostname, topo_error *err);

/* The same from memory: data[0..len) is the XML, source names it in error
 * reports and, with hostname NULL and no HostName info, gives the host name. */
int topo_load_hwloc_xml_mem(topo_graph *g, const char *data, size_t len, const char *source,
			    const char *hostname, topo_error *err);

/* Discover this machine with hwloc (PCI and OS devices included) and load
 * it into g; the host is named by hwloc's HostName info (else gethostname).
 * Returns the host vertex id or -1 (err source "<hwloc>"). */
int topo_load_hwloc_live(topo_graph *g, topo_error *err);

/* Load every "HOST.xml" of directory dir, in name order, each as host HOST.
 * Other files are ignored; a directory without any .xml is an error.
 * Returns the number of hosts loaded, or -1 with err naming the bad file. */
int topo_load_hwloc_dir(topo_graph *g, const char *dir, topo_error *err);

#endif
