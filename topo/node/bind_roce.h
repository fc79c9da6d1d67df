/*
 * bind_roce: what NCCL needs to know about a RoCE port that the hwloc model
 * does not hold: which GID table entry is RoCE v2.
 *
 * An RDMA device in RoCE mode has per port a GID table
 * (SYSFS/class/infiniband/DEV/ports/PORT/gids/N) whose entries have a type
 * (gid_attrs/types/N: "IB/RoCE v1" or "RoCE v2"). NCCL uses entry
 * NCCL_IB_GID_INDEX; the wrong one (RoCE v1, or a link-local address that
 * does not route) gives slow or failing jobs, so the planner sets it.
 */
#ifndef BIND_ROCE_H
#define BIND_ROCE_H

/* The index of the RoCE v2 GID of DEV's port to use: the lowest RoCE v2
 * entry holding an IPv4-mapped address (::ffff:a.b.c.d, what routed RoCE
 * v2 fabrics use), else the lowest RoCE v2 entry that is neither zero nor
 * link-local (fe80::), else the lowest RoCE v2 entry that is not zero.
 * -1 when the port has none or sysfs cannot be read. */
int bind_roce_gid_index(const char *sysfs_root, const char *dev, int port);

#endif
