/*
 * bind_irq: audit and (admin opt-in) enforce where the interrupts of a job's
 * network adapters are delivered, and put them back afterwards.
 *
 * Why: NIC completion interrupts land on whatever cores their affinity names.
 * In a classic incident two 100G NICs had all their IRQs on core 0; every
 * completion of both NICs queued behind one core and all-reduce ran three
 * times slower while the neighbouring cores sat idle.
 *
 * Where the facts come from (all under configurable roots, so tests use fake
 * trees):
 *   <sys>/class/infiniband/<hca>/device/msi_irqs/<N>  the adapter's IRQs
 *   <sys>/class/net/<netdev>/device/msi_irqs/<N>      same, Ethernet NICs
 *   <sys>/class/.../device/local_cpulist, numa_node   the adapter's locality
 *   <proc>/interrupts                                 label and per-CPU counts
 *   <proc>/irq/<N>/smp_affinity_list                  allowed CPUs (written by enforce)
 *   <proc>/irq/<N>/effective_affinity_list            where it really fires
 *
 * Enforce saves every file it will change, byte for byte, into
 * <state_dir>/job-<id>.state (a new temp file from mkostemp, fsync, rename,
 * fsync of the directory) before it writes anything; bind_irq_restore() puts the bytes
 * back at job end and bind_irq_recover() does it at the next start for jobs
 * that are gone (a node that crashed mid-job). Files are written with
 * open/write/close, never through a shell.
 *
 * Trust: the state directory must be owned by the caller (root) and not
 * writable by group or others; a state file is read only when it is a
 * regular file (opened O_NOFOLLOW) with the same owner and no group/other
 * write bit; and a restore writes only <proc>/irq/N/smp_affinity_list of an
 * IRQ N that belongs to the adapter the saved line names. A planted, foreign
 * or symlinked state file is refused with an error naming it. Nothing here prints: changes go
 * to the caller's log callback, errors to topo_error.
 */
#ifndef BIND_IRQ_H
#define BIND_IRQ_H

#include <stddef.h>

#include "bind_cpuset.h"
#include "topo_error.h"

/* Where proc and sys live. NULL members mean "/proc" and "/sys". */
typedef struct bind_roots {
	const char *proc;
	const char *sys;
	int fake_tree; /* 1: a test tree; enforce/restore skip the root (euid 0) check */
} bind_roots;

/* Where every change is reported: fn(ctx, one sentence without newline). */
typedef struct bind_log {
	void (*fn)(void *ctx, const char *msg);
	void *ctx;
} bind_log;

/* An adapter the job was given. */
typedef struct bind_nic_req {
	const char *name;       /* "mlx5_0" (class/infiniband) or a netdev "eth2" (class/net) */
	const char *local_cpus; /* its NUMA node's CPUs "0-7"; NULL: read device/local_cpulist */
} bind_nic_req;

/* One IRQ of a chosen adapter, as read. */
typedef struct bind_irq_info {
	int irq;
	size_t nic;              /* index of its adapter in the set */
	char *desc;              /* /proc/interrupts actions, "mlx5_comp0@pci:0000:04:00.0" */
	int completion;          /* 1: a completion (data path) IRQ */
	unsigned long long count; /* interrupts so far, summed over CPUs */
	bind_cpuset affinity;    /* smp_affinity_list */
	bind_cpuset effective;   /* effective_affinity_list, empty when absent */
	int has_effective;
	bind_cpuset used;        /* effective when present and non-empty, else affinity */
} bind_irq_info;

/* One chosen adapter. */
typedef struct bind_nic_info {
	char *name;
	const char *sysclass;   /* "infiniband" or "net" */
	char *pci;              /* "0000:04:00.0", NULL unknown */
	int numa;               /* -1 unknown */
	bind_cpuset local;      /* local CPUs; empty when unknown */
	size_t first, nirqs;    /* its IRQs: bind_irq_set_irq(set, first .. first+nirqs-1) */
} bind_nic_info;

typedef struct bind_irq_set bind_irq_set;

/*
 * Read the IRQs of the adapters in `nics` (n of them; n == 0: every HCA in
 * <sys>/class/infiniband, in name order) with their labels, counts and
 * affinities. An adapter without msi_irqs is matched by its PCI address in
 * /proc/interrupts ("...@pci:0000:04:00.0"). IRQs listed in msi_irqs but
 * absent from /proc/interrupts (allocated, never requested) are left out.
 * Returns NULL and fills `err` (file, line, sentence) when a file cannot be
 * read or is malformed, or an adapter is unknown.
 */
bind_irq_set *bind_irq_load(const bind_roots *roots, const bind_nic_req *nics, size_t n,
			    topo_error *err);

void bind_irq_set_free(bind_irq_set *set);

size_t bind_irq_set_nnics(const bind_irq_set *set);
const bind_nic_info *bind_irq_set_nic(const bind_irq_set *set, size_t i);
size_t bind_irq_set_nirqs(const bind_irq_set *set);
const bind_irq_info *bind_irq_set_irq(const bind_irq_set *set, size_t i);

/* Finding kinds. */
#define BIND_SHARED_CORE "shared-core"         /* IRQs of two different adapters on one core */
#define BIND_REMOTE_NUMA "remote-numa"         /* IRQ entirely off its adapter's local CPUs */
#define BIND_ON_JOB_CORES "on-job-cores"       /* IRQ on cores the job computes on */
#define BIND_ALL_ON_ONE_CORE "all-on-one-core" /* all of an adapter's completion IRQs on one core */

typedef struct bind_finding {
	const char *kind; /* one of the BIND_* kinds above */
	int irq;          /* -1 for adapter-wide findings (all-on-one-core) */
	const char *hca;  /* adapter name (points into the set) */
	char *cpus;       /* the cores concerned, CPU list */
	char *text;       /* one sentence */
} bind_finding;

typedef struct bind_audit {
	bind_finding *v;
	size_t n;
} bind_audit;

/*
 * Audit the set. A core counts for an IRQ when the IRQ fires there
 * (effective affinity, else smp_affinity_list). Findings, in IRQ order:
 *   shared-core    one per IRQ sharing a core with an IRQ of another adapter;
 *   remote-numa    one per IRQ whose cores are all off its adapter's local CPUs;
 *   on-job-cores   one per IRQ on a core of `job_cpus` (NULL or "": none);
 *   all-on-one-core one per adapter whose 2+ completion IRQs all fire on one core.
 * Returns 0, or -1 with `err` filled (a malformed job CPU list, out of memory).
 */
int bind_irq_audit(const bind_irq_set *set, const char *job_cpus, bind_audit *out,
		   topo_error *err);

void bind_audit_free(bind_audit *a);

/*
 * A name root may put into a path: 1-64 letters, digits, '.', '_', '-', not
 * starting with '.', no "..", so never '/' (job ids, Slurm node names).
 * Returns 1 if `name` is one.
 */
int bind_name_ok(const char *name);

/*
 * May the prolog enforce for this job, and which CPUs are the job's? Only a
 * job that has the node to itself may: `oversubscribe` is Slurm's
 * SLURM_JOB_OVERSUBSCRIBE from the prolog environment, which slurmd builds
 * from the signed job credential ("NO": --exclusive or an
 * OverSubscribe=EXCLUSIVE partition). Then no other job's HCA or cores are
 * on the node, and the job's CPUs are all online CPUs
 * (<sys>/devices/system/cpu/online): enforce moves IRQs only to housekeeping
 * cores. Returns 1 with *job_cpus (malloc'd CPU list), 0 with `why` (a
 * sentence) when enforce must not run, or -1 with err filled (the online
 * list is unreadable or malformed).
 */
int bind_enforce_scope(const bind_roots *roots, const char *oversubscribe, char **job_cpus,
		       char *why, size_t whylen, topo_error *err);

/* What enforce may use. */
typedef struct bind_enforce_opts {
	const char *job_id;       /* [A-Za-z0-9._-]+, names the state file */
	const char *job_cpus;     /* the job's compute CPUs; NULL none */
	const char *housekeeping; /* admin-named cores for IRQs; NULL: each adapter's local CPUs minus the job's */
	const char *state_dir;    /* e.g. "/var/lib/topognn/irq" (must exist) */
} bind_enforce_opts;

/*
 * Spread the set's IRQs: each adapter's IRQs round-robin (in IRQ order, one
 * per core where there are enough cores) over its candidate cores — the
 * housekeeping cores local to it (all housekeeping cores if none is local),
 * else its local CPUs the job does not use — splitting cores between adapters
 * so two adapters share a core only when they have fewer cores than adapters.
 * An adapter with no candidate core is left alone (and logged).
 *
 * Order: root check (unless roots->fake_tree), read every file to be changed,
 * refuse if any of those IRQs is held in another job's saved state, save the
 * originals durably, then write <proc>/irq/N/smp_affinity_list. Each write is
 * logged. If a write fails, the writes already made are undone and the state
 * file is removed. Returns the number of files changed (0: nothing needed
 * changing, no state file), or -1 with `err` filled and nothing changed.
 */
int bind_irq_enforce(const bind_roots *roots, const bind_irq_set *set,
		     const bind_enforce_opts *opts, const bind_log *log, topo_error *err);

/*
 * Put back, byte for byte, every file saved for `job_id` in `state_dir`, then
 * remove the state file. No state file: nothing to do, returns 0. Returns the
 * number of files restored, or -1 with `err` filled (state file kept so a later
 * recover can retry).
 */
int bind_irq_restore(const bind_roots *roots, const char *state_dir, const char *job_id,
		     const bind_log *log, topo_error *err);

/* Returns 1 if job `job_id` is still running on this node, 0 if not. */
typedef int (*bind_job_running_fn)(void *ctx, const char *job_id);

/*
 * At start-up: restore the saved state of every job in `state_dir` that is
 * not running (`running` NULL: none is), and remove leftover temp files.
 * Returns the number of jobs restored, or -1 with `err` filled (the first
 * failure; the other jobs are still attempted).
 */
int bind_irq_recover(const bind_roots *roots, const char *state_dir, bind_job_running_fn running,
		     void *ctx, const bind_log *log, topo_error *err);

#endif
