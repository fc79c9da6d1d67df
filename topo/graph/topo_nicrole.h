/*
 * topo_nicrole: what a host's NIC is for. Clusters cable one host to
 * several fabrics: a compute fabric (InfiniBand or RoCE) that jobs' NCCL/UCX
 * traffic and topology-aware placement are about, a storage fabric and a
 * management (front-end) network. Mistaking a storage port for a compute
 * port sends collective traffic over the storage network, so every HCA/NIC
 * vertex can carry the attribute TOPO_NIC_ROLE_ATTR ("fabric") = "compute",
 * "storage" or "management", set by discovery or by the admin's rules (in
 * the graph file, or rules given to the tools and the SPANK plugin). A NIC
 * without the attribute is compute.
 */
#ifndef TOPO_NICROLE_H
#define TOPO_NICROLE_H

#include "topo_error.h"
#include "topo_graph.h"

#define TOPO_NIC_ROLE_ATTR "fabric"

typedef enum topo_nic_role {
	TOPO_NIC_COMPUTE = 0,
	TOPO_NIC_STORAGE,
	TOPO_NIC_MANAGEMENT
} topo_nic_role;

/* "compute", "storage", "management"; parse returns -1 for anything else. */
const char *topo_nic_role_name(topo_nic_role r);
int topo_nic_role_parse(const char *s);

/* Rules giving a NIC its role: "ROLE=REGEX" strings, e.g.
 * "storage=^ens(2|3)f", "management=^eth0$". The regex (POSIX extended) is
 * matched against the NIC's netdev and against "SWITCH:PORT" of its cable;
 * the first rule that matches decides, no match is compute. */
typedef struct topo_nic_rules topo_nic_rules;

/* Compile rules[0..n). NULL with err filled on a malformed rule. */
topo_nic_rules *topo_nic_rules_new(const char *const *rules, int n, topo_error *err);
void topo_nic_rules_free(topo_nic_rules *r);
/* The role of a NIC; r may be NULL (everything is compute). */
topo_nic_role topo_nic_rules_role(const topo_nic_rules *r, const char *netdev,
				  const char *switch_port);

/* The role of HCA/NIC vertex v: its attribute, else compute. */
topo_nic_role topo_nic_role_of(const topo_graph *g, int v);

/* Tag every HCA/NIC vertex of g that has no role yet by the rules (matched
 * against its netdev, its device, and its "switch_port" attribute). Returns
 * the number of vertices tagged other than compute, -1 out of memory. */
int topo_nic_rules_apply(topo_graph *g, const topo_nic_rules *r);

#endif
