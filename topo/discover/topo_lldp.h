/*
 * topo_lldp: an Ethernet/RoCE fabric from LLDP, as lldpd's
 * `lldpcli -f json show neighbors details` prints it on each machine.
 *
 * Each machine's output lists, per local interface, the neighbor's chassis
 * (its system name, and capabilities: Bridge or Router enabled makes it a
 * switch), the neighbor's port (its ifname when the port id is one, else the
 * port description, which lldpd fills with the ifname) and the link's MAU
 * type ("100GbaseCR4 - ...", giving "100G"). Files from switches (machines
 * some neighbor reports as a switch) add the switch-to-switch cables and the
 * cables to hosts that have no file; hosts' own files give their cables.
 * Everything is built through topo_ethfabric, so it gives the same graph
 * kinds as ibnetdiscover and NetQ (levels, groups, anomalies) and the NIC
 * role rules apply.
 *
 * The host's side comes from sysfs when a root is given:
 * ROOT/class/net/IF/device/infiniband/DEV names the NIC's RDMA device (the
 * HCA vertex is then named after it, as hwloc names it) and
 * ROOT/class/net/IF/speed (Mb/s) gives the speed when LLDP has none.
 *
 * A neighbor that is not a switch (a host cabled straight to a host) is an
 * anomaly "host-to-host-link". A neighbor name with a domain ("leaf01.dc")
 * that matches a file's host name up to its first dot is that host.
 */
#ifndef TOPO_LLDP_H
#define TOPO_LLDP_H

#include "topo_error.h"
#include "topo_ethfabric.h"
#include "topo_graph.h"

/* Load DIR/HOST.json for every host (HOST from the file name). sysfs_dir,
 * when not NULL, holds one sysfs copy per host: SYSFS_DIR/HOST/class/net/...
 * Returns 0, or -1 with err naming the file and the problem. */
int topo_load_lldp_dir(topo_graph *g, const char *dir, const char *sysfs_dir,
		       const topo_nic_rules *rules, topo_error *err);

/* One host's output, len bytes of text (source names it in messages), read
 * by the same code as each file of the directory reader, without sysfs: the
 * fuzz target's entry (fuzz/fuzz_lldp.c), which writes no file per input. */
int topo_load_lldp_mem(topo_graph *g, const char *host, const char *text, size_t len,
		       const char *source, const topo_nic_rules *rules, topo_error *err);

/* This machine: run `lldpcli [-u SOCKET] -f json show neighbors details`
 * (a fixed argument list, no shell; killed after timeout_ms) and load its
 * output as host `hostname` (NULL: gethostname()), with sysfs at sysfs_root
 * (NULL: "/sys"). Returns 0, or -1 with err saying what failed. */
int topo_load_lldp_live(topo_graph *g, const char *hostname, const char *socket,
			const char *sysfs_root, const topo_nic_rules *rules, int timeout_ms,
			topo_error *err);

/* The speed in a MAU type as lldpd prints it: "10GbaseT - Four-pair..." ->
 * "10G", "1000BaseTFD" -> "1G"; "" when there is none. */
void topo_lldp_mau_speed(const char *mau, char *out, size_t len);

#endif
