/*
 * bind_plan: which InfiniBand HCAs, environment variables and CPUs one job
 * step should use on one host, from the host's hwloc model (topo_affinity).
 *
 * Why: placing a job on the right hosts is half the story; inside each host
 * every GPU should talk through the HCA nearest to it, on the same rail index
 * on every host of a rail-optimized fabric, and its task should run on cores
 * local to both. NCCL and UCX are told through their environment variables.
 *
 * The rules (docs/node-side.md explains them with examples):
 *   - The step's GPUs are indices in PCI bus id order (SLURM_STEP_GPUS, else
 *     SLURM_JOB_GPUS, else CUDA_VISIBLE_DEVICES; see bind_gpus_from_env()).
 *   - An HCA's rail is the graph's rail index when the fabric loader set one,
 *     else its position among the host's RDMA HCAs in PCI bus id order.
 *   - Each GPU gets one of its nearest HCAs (topo_affinity: deepest common
 *     PCIe ancestor). When several are equally near (Lassen: two per GPU
 *     pair), the step's GPUs are spread over them: each GPU takes the one the
 *     fewest earlier GPUs of the step took, ties to the lowest rail. So GPUs
 *     0,1 get mlx5_0, mlx5_1, and GPU 1 alone gets mlx5_0, on every host.
 *   - With a rail plan from the controller (TOPOGNN_PLAN "rail=0-3") and the
 *     rail-aligned policy, only HCAs of those rails are used: a GPU none of
 *     whose nearest HCAs is on a planned rail takes a planned-rail HCA on its
 *     NUMA node, else any planned-rail HCA (spread the same way).
 *   - A step without GPUs gets the HCAs local to its allocated cores (all
 *     HCAs when none is, or when the cores are unknown).
 *   - The user's --topognn-nic: "auto" (default) as above; "none" plans no
 *     NIC variable at all; a list "mlx5_0,mlx5_2" is used as given (each GPU
 *     takes the nearest of the list).
 *   - Environment: NCCL_IB_HCA "=mlx5_0:1,mlx5_1:1" (NCCL's exact match, so
 *     mlx5_1 does not also select mlx5_10..mlx5_19), UCX_NET_DEVICES
 *     "mlx5_0:1,mlx5_1:1", NCCL_SOCKET_IFNAME from the admin policy. HCAs are
 *     listed in rail order (a --topognn-nic list: in its order); port 1 when
 *     the model does not know the port. A variable the user already set is
 *     kept: the plan marks it so the caller logs it instead of setting it.
 *   - Several fabrics: an HCA/NIC whose graph vertex has the role storage or
 *     management (topo_nicrole.h) is never planned, takes no rail position,
 *     and naming it in --topognn-nic is an error.
 *   - RoCE (policy sysfs_root set, HCAs with the Ethernet link layer):
 *     NCCL_IB_GID_INDEX is the planned RoCE ports' RoCE v2 GID index
 *     (bind_roce.h; the first port's when they differ, with a note), and
 *     NCCL_SOCKET_IFNAME, when the admin policy sets none, "=" and their
 *     netdevs.
 *   - SHARP (policy collnet set): NCCL_COLLNET_ENABLE=1 when the plan
 *     says "sharp=1" (a SHARP user whose allocation lies under one SHARP
 *     aggregation tree, docs/job-plan.md); never otherwise.
 *   - Task t's CPU list: the CPUs local to both its GPU (GPU t mod n of the
 *     step) and that GPU's HCA (just the GPU's when they share none), within
 *     the allocated cores; the allocated cores when that leaves nothing.
 *
 * Slurm-independent: the SPANK plugin and topognn-bind both call it. Nothing
 * here prints; problems the caller should log are in plan->notes.
 */
#ifndef BIND_PLAN_H
#define BIND_PLAN_H

#include <jansson.h>

#include "topo_error.h"
#include "topo_graph.h"

/* Admin policy (plugstack.conf arguments). */
typedef struct bind_policy {
	const char *socket_ifname; /* NCCL_SOCKET_IFNAME value ("eth0", "=eth0"); NULL: not set */
	int rail_aligned;          /* 1: honour the plan's rails; 0: locality only */
	int cpu_bind;              /* 1: plan per-task CPU lists */
	const char *sysfs_root;    /* RoCE planning: "/sys" (NCCL_IB_GID_INDEX from its GID
				    * tables); NULL: none */
	int collnet;               /* 1: NCCL_COLLNET_ENABLE=1 when the plan says sharp=1
				    * (plugstack.conf sharp=yes) */
} bind_policy;

/* Reads a variable of the job's environment; NULL when unset. */
typedef const char *(*bind_getenv_fn)(void *ctx, const char *name);

/* One step on one host. */
typedef struct bind_request {
	const int *gpus;         /* step GPU indices (PCI bus id order); may repeat or be unsorted */
	int ngpus;               /* 0: the step has no GPUs (or none are known) */
	const char *cores;       /* allocated CPUs as a CPU list; NULL: unknown (no limit) */
	const char *plan;        /* the controller's plan (TOPOGNN_PLAN); NULL: none */
	const char *nic;         /* --topognn-nic: NULL or "auto", "none", "mlx5_0,mlx5_2[:port]" */
	int ntasks;              /* tasks of the step on this host; 0: one per GPU (1 without GPUs) */
	bind_getenv_fn getenv;   /* the user's environment; NULL: nothing is user-set */
	void *getenv_ctx;
} bind_request;

typedef struct bind_plan_gpu {
	int index;         /* PCI bus id order */
	char *pci_busid;   /* NULL unknown */
	int numa;          /* -1 unknown */
	char *hca;         /* the HCA it uses; NULL with --topognn-nic=none or no HCA */
	int rail;          /* that HCA's rail; -1 none */
} bind_plan_gpu;

typedef struct bind_plan_hca {
	char *name;        /* "mlx5_0" */
	int port;          /* as used in the variables (1 when unknown) */
	int rail;
	int numa;          /* -1 unknown */
	char *netdev;      /* NULL unknown */
	int roce;          /* 1: an RDMA device on Ethernet (RoCE) */
	int gid_index;     /* RoCE v2 GID index from sysfs; -1 unknown */
} bind_plan_hca;

typedef struct bind_plan_env {
	char *name;        /* "NCCL_IB_HCA" */
	char *value;       /* the planned value */
	char *user_value;  /* the value the user had set (then it is kept), else NULL */
} bind_plan_env;

typedef struct bind_plan_task {
	int task;          /* local task id */
	int gpu;           /* GPU index, -1 none */
	char *cpus;        /* CPU list; "" when nothing is known (leave the binding alone) */
} bind_plan_task;

typedef struct bind_plan {
	char *host;
	char *nic_mode;    /* "auto", "none" or "list" */
	char *rails;       /* the plan's rails as a list "0-3", NULL none (or not honoured) */
	int ngpus;
	bind_plan_gpu *gpus;   /* in step order, sorted by index, no duplicates */
	int nhcas;
	bind_plan_hca *hcas;   /* in variable order */
	int nenv;
	bind_plan_env *env;    /* NCCL_IB_HCA, UCX_NET_DEVICES, NCCL_SOCKET_IFNAME as planned */
	int ntasks;
	bind_plan_task *tasks; /* empty unless policy->cpu_bind */
	int nnotes;
	char **notes;          /* sentences the caller should log (fallbacks taken) */
} bind_plan;

/*
 * Parse a GPU index list: "0,1,3", ranges "0-3", white space around items.
 * "" and "NoDevFiles" (what Slurm sets when a step has no GPU) give 0 GPUs.
 * GPU UUIDs or MIG names ("GPU-...", "MIG-...") and other non-numbers are an
 * error naming the item. *out is malloc'd (NULL when *n is 0).
 * Returns 0, or -1 with err filled (source, line 0).
 */
int bind_parse_gpu_list(const char *text, const char *source, int **out, int *n,
			topo_error *err);

/*
 * The step's GPUs from its environment: SLURM_STEP_GPUS, else SLURM_JOB_GPUS,
 * else CUDA_VISIBLE_DEVICES (the first that is set). *from names the variable
 * used (NULL when none is set: 0 GPUs). Returns 0, or -1 with err filled.
 */
int bind_gpus_from_env(bind_getenv_fn getenv_fn, void *ctx, int **out, int *n, const char **from,
		       topo_error *err);

/*
 * The rails a controller plan names. The plan is ';'-separated items; the
 * item "rail=LIST" (LIST a CPU-list-style index list, "0-3" or "1,3") gives
 * the rails; other items (the topology plugin's "GROUP:NODES") are skipped.
 * Returns the number of rails (0: the plan names none) with *rails a list
 * string (malloc'd, NULL when 0), or -1 with err filled (a malformed list).
 */
int bind_plan_rails(const char *plan, char **rails, topo_error *err);

/* 1 when the plan has the item "sharp=1" (the last sharp= item counts),
 * else 0. */
int bind_plan_sharp(const char *plan);

/*
 * Plan step `req` on host vertex `host` of g (loaded by topo_load_hwloc_xml
 * or topo_load_hwloc_live). Returns the plan (free with bind_plan_free), or
 * NULL with err filled: host is not a host, a GPU index the host does not
 * have, a --topognn-nic list naming an HCA it does not have, a malformed core
 * list or plan, or memory ran out.
 */
bind_plan *bind_plan_make(const topo_graph *g, int host, const bind_request *req,
			  const bind_policy *policy, topo_error *err);

void bind_plan_free(bind_plan *p);

/* The planned value of variable `name`, NULL when not planned. */
const bind_plan_env *bind_plan_find_env(const bind_plan *p, const char *name);

/*
 * The plan as JSON: {"host", "nic", "rails", "NCCL_IB_HCA", "UCX_NET_DEVICES",
 * "env": {NAME: value}, "kept": [{"name", "user_value", "planned"}],
 * "gpus": [{"index", "pci_busid", "numa", "hca", "rail"}],
 * "hcas": [{"name", "port", "rail", "numa", "netdev"}],
 * "tasks": [{"task", "gpu", "cpus"}], "notes": [...]}. "NCCL_IB_HCA" and
 * "UCX_NET_DEVICES" are the value the job will see (the user's when kept),
 * null when not planned. Returns 0 with *out a new reference, -1 out of memory.
 */
int bind_plan_to_json(const bind_plan *p, json_t **out);

#endif
