/*
 * topo_nvsmi: NVLink domains (multi-node NVLink, e.g. GB200 NVL72: 18 hosts
 * and 72 GPUs behind one set of NVLink switches) from each host's
 * `nvidia-smi -q` output.
 *
 * Every GPU section ("GPU 00000008:01:00.0") of `nvidia-smi -q` has a
 * "Fabric" subsection:
 *     Fabric
 *         State                             : Completed
 *         Status                            : Success
 *         CliqueId                          : 32766
 *         ClusterUUID                       : 9c6f3c5e-...
 *         Health
 *             Bandwidth                     : Full
 * GPUs with the same ClusterUUID and CliqueId reach each other over NVLink
 * (NVML's nvmlGpuFabricInfo: the fabric manager registered them in one
 * clique of one cluster). A host whose GPUs all report one (ClusterUUID,
 * CliqueId) with State Completed and Status Success belongs to that domain.
 *
 * Each domain becomes a TOPO_V_GROUP vertex "nvl1".."nvlN" (numbered in the
 * order of their first host's name) with member edges to its hosts and the
 * attributes group_kind=nvlink, cluster_uuid, clique_id. NVLink domains are
 * the innermost groups: `topognn-discover --topology-conf block` makes them
 * Slurm blocks.
 *
 * Anomalies, never silent: "nvlink-fabric-not-ready" (a GPU whose State or
 * Status is not Completed/Success: the host joins no domain),
 * "nvlink-domain-split" (a host's GPUs in different domains: it joins none),
 * "nvlink-degraded" (a GPU whose fabric Bandwidth is not Full; the host
 * stays in its domain). GPUs whose State is N/A (no multi-node NVLink, e.g.
 * a PCIe card) make no domain and no anomaly.
 */
#ifndef TOPO_NVSMI_H
#define TOPO_NVSMI_H

#include "topo_error.h"
#include "topo_graph.h"

/* Read DIR/HOST.txt for every HOST (files not ending in ".txt" are
 * skipped); hosts absent from g are added. Returns the number of NVLink
 * domains made, or -1 with err naming the file, the line and the problem
 * (unreadable file, no GPU section, a Fabric value that is not what
 * nvidia-smi prints, a domain group name already taken). */
int topo_load_nvidia_smi_dir(topo_graph *g, const char *dir, topo_error *err);

/* One host's output, len bytes of text (source names it in messages), by the
 * same parser as each file of the directory reader: the fuzz target's entry
 * (fuzz/fuzz_nvsmi.c), which writes no file per input. Returns the number of
 * NVLink domains made (0 or 1), or -1 with err filled. */
int topo_load_nvidia_smi_mem(topo_graph *g, const char *host, const char *text, size_t len,
			     const char *source, topo_error *err);

#endif
