/*
 * sim_comm_profile: communication profiles of real training workloads, read
 * from astra-sim's text workload files, for the simulator's multi-node jobs.
 *
 * An astra-sim workload file is: a first line naming the parallelism
 * ("DATA", "HYBRID_TRANSFORMER\tmodel_parallel_NPU_group: 4", ...), a line
 * with the layer count, then one tab-separated line per layer:
 *   name  reserved  fwd_compute fwd_comm fwd_bytes  ig_compute ig_comm
 *   ig_bytes  wg_compute wg_comm wg_bytes  update_time
 * Compute times are astra-sim cycles, read here at 1 GHz (1 cycle = 1 ns).
 *
 * Mapping to place_comm: bytes_per_iter = the weight-gradient collectives
 * (the data-parallel all-reduce between hosts: 102,011,648 B for
 * ResNet-50); the forward and input-gradient collectives of a hybrid model
 * run inside a model-parallel group of at most one host's GPUs (NVLink) and
 * do not cross the fabric. compute_s_per_iter = the sum of the three compute
 * times of every layer. Pattern: ring all-reduce; class: heavy.
 */
#ifndef SIM_COMM_PROFILE_H
#define SIM_COMM_PROFILE_H

#include <stdint.h>

#include "place.h"
#include "topo_error.h"

typedef struct sim_comm_profile {
	char name[64];        /* file's base name without "astra-sim_" and ".txt" */
	char parallelism[32]; /* "DATA", "HYBRID_TRANSFORMER", ... */
	int layers;
	double fabric_bytes;  /* weight-gradient collective bytes per iteration */
	double local_bytes;   /* forward/input-gradient bytes (inside a host) */
	double compute_cycles;
	place_comm comm;
} sim_comm_profile;

/* Read one astra-sim workload file. Returns 0 or -1 (err: file, line). */
int sim_comm_profile_load(sim_comm_profile *p, const char *path, topo_error *err);

/* Draw a profile for job `job_id` deterministically from (seed, job_id):
 * the same seed gives every job the same profile in every run and under
 * every policy. Returns an index in [0, n). */
int sim_comm_profile_draw(int n, uint64_t seed, uint64_t job_id);

#endif
