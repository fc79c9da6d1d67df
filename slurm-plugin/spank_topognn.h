/*
 * spank_topognn.h - the two entry points of spank_topognn.so that are not
 * SPANK callbacks: prep/topognn calls them inside slurmd, at a job's prolog
 * and epilog on each node (docs/node-side.md). prep/topognn finds them with
 * dlsym on the SPANK plugin's handle (Slurm loads plugins RTLD_LOCAL), so
 * these are the types of those look-ups too.
 */
#ifndef TOPOGNN_SPANK_TOPOGNN_H
#define TOPOGNN_SPANK_TOPOGNN_H

/* Once per job per node: plan, IRQ audit (and enforce), report. `job`: the
 * job id; `node`: this node's Slurm name; `env`: the job's variables as
 * "NAME=value", NULL-ended, the first match wins (SLURM_JOB_OVERSUBSCRIBE,
 * then the GRES variables, then spank_job_env). Always 0. */
typedef int (*topognn_spank_job_start_fn)(const char *job, const char *node,
					  const char *const *env);
int topognn_spank_job_start(const char *job, const char *node, const char *const *env);

/* Job end on this node: restore the job's IRQs, remove its marker. Always 0. */
typedef int (*topognn_spank_job_end_fn)(const char *job, const char *node);
int topognn_spank_job_end(const char *job, const char *node);

#endif
