/*
 * topo_fattree: a generator of rail-optimized fat-tree fabrics.
 *
 * Used where no real fabric is at hand: the benchmarks (1k-16k hosts), the
 * simulator, and the ibsim netlists of the integration tests. It feeds the
 * same topo_fabric builder as discovery does, so a generated fabric yields
 * exactly the graph that discovering the real thing would.
 *
 * Shape: `groups` scalable units of `hosts_per_group` hosts; each host has
 * `rails` HCAs, HCA r of every host in a group cabled to that group's leaf r
 * (rail-optimized). Each leaf has hosts_per_group down-links and
 * ceil(hosts_per_group / oversub) up-links spread round-robin over `spines`
 * spine switches.
 *
 * Optional: `sharp_spines` N > 0 gives every leaf and the first N spines a
 * SHARP aggregation node (a CA "Aggregation Node" on a spare port, as a real
 * fabric shows it), so only some spines can root a SHARP tree; `nvl_hosts`
 * N > 0 makes each run of N consecutive hosts an NVLink domain (a group
 * "nvl<k>" with group_kind=nvlink, as topo_nvsmi makes from nvidia-smi), as
 * in GB200 NVL72 racks of 18 hosts.
 */
#ifndef TOPO_FATTREE_H
#define TOPO_FATTREE_H

#include "topo_error.h"
#include "topo_graph.h"

typedef struct topo_fattree_spec {
	int groups;
	int hosts_per_group;
	int rails;
	int spines;          /* 0: as many as one leaf has up-links */
	double oversub;      /* leaf down:up bandwidth; 1 = non-blocking */
	int gpus_per_host;   /* GPU vertices per host (one per rail when equal) */
	int width;           /* lanes per cable, default 4 */
	const char *speed;   /* default "NDR" */
	const char *host_prefix; /* default "node" -> node0001 */
	int sharp_spines;    /* spines with SHARP (and then every leaf); 0: none */
	int nvl_hosts;       /* hosts per NVLink domain; 0: none */
	int digits;          /* zero-padded width of host numbers, 1..9, default 4
			      * (digits=3, prefix=n -> n001 as in a slurm.conf) */
	/* Storage for a prefix parsed by topo_fattree_parse(), which points
	 * host_prefix here: re-point it after copying a parsed spec. */
	char host_prefix_buf[48];
} topo_fattree_spec;

/* Fill defaults: 1 rail, 1:1, 4xNDR, 0 GPUs, prefix "node". */
void topo_fattree_spec_init(topo_fattree_spec *spec);

/* Parse "groups=4,hosts=32,rails=8,oversub=2,spines=8,gpus=8" (any order,
 * unknown keys are errors) on top of the defaults. Also accepted:
 * width=4, speed=NDR, prefix=node, digits=4, sharp=N (sharp_spines),
 * nvl=N (nvl_hosts). */
int topo_fattree_parse(const char *text, topo_fattree_spec *spec, topo_error *err);

/* Generate the fabric into `g`. Returns 0 or -1 (err says why). */
int topo_fattree_build(topo_graph *g, const topo_fattree_spec *spec, topo_error *err);

#endif
