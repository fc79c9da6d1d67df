/*
 * bind_job: the node side's once-per-job work, without Slurm. The SPANK
 * adapter (slurm-plugin/spank_topognn.c) and prep/topognn's hooks call it;
 * tests call it directly (tests/test_bind_job.c).
 *
 * Per job per node, the first caller (the prolog, else the job's first
 * privileged task) creates the job's marker <state_dir>/job-<id>.boot
 * (O_CREAT|O_EXCL|O_NOFOLLOW: never a planted file or link) holding this
 * boot's id, plans the job's HCAs, audits (and, from the prolog of a job
 * that has the node to itself, enforces) their IRQs, and writes the report
 * <report_dir>/job-<id>.<node>.json atomically (mkostemp, rename; a name
 * rename() cannot replace is put aside under a random name). Later callers
 * find the marker and return. At job end the saved IRQ state is restored
 * and the marker removed; a node that crashed between the two recovers at
 * the next start (bind_job_recover): a marker of another boot means the job
 * is not running, and its saved state is put back.
 *
 * Trust (docs/security.md): the node name comes from the caller or our own
 * process environment (SLURMD_NODENAME), never the job's; state files must
 * be root's; IRQs move and are restored only when we are root.
 *
 * Nothing here fails a job: every problem goes to conf->log.
 */
#ifndef BIND_JOB_H
#define BIND_JOB_H

#include <stddef.h>

#include "bind_plan.h"

/* TOPOGNN_SET_<NAME>: the value the adapter set for NAME in an earlier
 * step; a variable holding it is ours, not the user's. */
#define BIND_JOB_SET_PREFIX "TOPOGNN_SET_"

typedef enum { BIND_JOB_IRQ_OFF, BIND_JOB_IRQ_AUDIT, BIND_JOB_IRQ_ENFORCE } bind_job_irq;

/* The plugin's arguments (plugstack.conf). Paths may hold %n (this node's
 * Slurm name) and %h (its host name). */
typedef struct bind_job_conf {
	const char *hwloc;          /* host model XML; NULL: live hwloc */
	const char *socket_ifname;
	const char *state_dir;      /* markers and saved IRQ state */
	const char *report_dir;     /* reports */
	const char *housekeeping;   /* cores for IRQs; NULL: the adapters' local CPUs */
	const char *proc_root;      /* NULL: /proc */
	const char *sys_root;       /* NULL: /sys */
	const char *const *nic_role; /* "ROLE=REGEX" rules (topo_nicrole.h) */
	int nnic_roles;
	bind_job_irq irq;
	int cpu_bind, rail_aligned, sharp;
	/* error 1: a problem, 0: information. NULL: silent. */
	void (*log)(int error, const char *msg);
} bind_job_conf;

/* The job's (or task's) variables: the value of `name`, or NULL. */
typedef const char *(*bind_job_getenv_fn)(void *ctx, const char *name);

/* This node's name: `given`, else SLURMD_NODENAME from our own
 * environment, else the host name. 0, or -1 (logged) when it is not safe
 * in a path (bind_name_ok). */
int bind_job_node_name(const bind_job_conf *conf, char *buf, size_t len, const char *given);

/* The plan for the GPUs and plan in the variables and `nic` (the user's
 * --topognn-nic, NULL: auto) on host model of `node`; `cores`, `ntasks`
 * for CPU binding (NULL, 0: none). NULL (logged) on error. */
bind_plan *bind_job_plan(const bind_job_conf *conf, bind_job_getenv_fn env, void *ctx,
			 const char *node, const char *cores, int ntasks, const char *nic);

/* Once per job per node (see above). `node`: NULL for bind_job_node_name's
 * own; `task_cpus`: the calling task's CPUs for the audit outside the
 * prolog; `where`: "prolog" or "task", recorded in the report (only the
 * prolog may enforce). Returns 1 when this call did the job's work, 0 when
 * another did (the marker exists) or it was refused (logged). */
int bind_job_start(const bind_job_conf *conf, bind_job_getenv_fn env, void *ctx,
		   const char *job, const char *node, const char *task_cpus, const char *where);

/* Job end: restore the job's IRQs (enforce, as root), remove its marker. */
void bind_job_end(const bind_job_conf *conf, const char *job, const char *node);

/* At start-up (as root, IRQ work on): restore the saved state of every job
 * whose marker is not of this boot. Returns the jobs restored, or -1. */
int bind_job_recover(const bind_job_conf *conf);

#endif
