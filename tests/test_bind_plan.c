/*
 * Tests of the binding planner (bind_plan) on the real lstopo XML fixtures.
 *
 * Expected values come from the hosts' PCIe trees (see test_hwloc.c):
 *   lassen28: GPUs 0,1 (0004:04, 0004:05, NUMA 0, CPUs 8-87) have two equally
 *     near HCAs, mlx5_0 and mlx5_1 (0003:01:00.0/.1); GPUs 2,3 (0035:03,
 *     0035:04, NUMA 8, CPUs 96-175) have mlx5_2 and mlx5_3 (0033:01:00.0/.1).
 *     Rails by PCI bus id: mlx5_0..3 = rails 0..3. Ties are spread over the
 *     step's GPUs, lowest rail first.
 *   conan: one HCA, mlx5_0 (NUMA 1, CPUs 8-15,24-31), nearest to all 4 GPUs;
 *     GPU 0 is on NUMA 0 (CPUs 0-7,16-23).
 *   mirage004: one HCA, mlx4_0, whose port hwloc did not record (port 1 used).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "bind_plan.h"
#include "topo_hwloc.h"

#define HWLOC_DIR FIXTURES_DIR "/hwloc"
#define LASSEN HWLOC_DIR "/llnl-lassen-power9-4v100-4mlx5.xml"
#define CONAN HWLOC_DIR "/hwloc-test-2n8c2t-pci-cuda-mlx5.xml"
#define MIRAGE HWLOC_DIR "/hwloc-test-2n6c2t-pci.xml"

typedef struct host {
	topo_graph *g;
	int id;
} host;

static host load(const char *path, const char *name)
{
	host h;
	topo_error err;

	h.g = topo_graph_new();
	assert_non_null(h.g);
	h.id = topo_load_hwloc_xml(h.g, path, name, &err);
	if (h.id < 0)
		fail_msg("%s: %s", path, err.text);
	return h;
}

/* A fake user environment: "NAME=VALUE" strings, NULL-terminated. */
static const char *fake_getenv(void *ctx, const char *name)
{
	size_t n = strlen(name);

	for (const char *const *e = ctx; e && *e; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

static bind_plan *plan_for(const host *h, const int *gpus, int ngpus, const char *nic,
			   const char *plan)
{
	bind_request req = { gpus, ngpus, NULL, plan, nic, 0, NULL, NULL };
	bind_policy pol = { NULL, 1, 0, NULL, 0 };
	topo_error err;
	bind_plan *p = bind_plan_make(h->g, h->id, &req, &pol, &err);

	if (!p)
		fail_msg("plan: %s", err.text);
	return p;
}

static const char *env(const bind_plan *p, const char *name)
{
	const bind_plan_env *e = bind_plan_find_env(p, name);

	return e ? e->value : NULL;
}

/* Expect the plan's GPUs to map to `hcas` (one per GPU) and its NCCL_IB_HCA. */
static void expect(const bind_plan *p, int ngpus, const char *const *hcas, const char *nccl,
		   const char *ucx)
{
	assert_int_equal(p->ngpus, ngpus);
	for (int i = 0; i < ngpus; i++)
		assert_string_equal(p->gpus[i].hca, hcas[i]);
	assert_string_equal(env(p, "NCCL_IB_HCA"), nccl);
	assert_string_equal(env(p, "UCX_NET_DEVICES"), ucx);
}

static void test_lassen_one_two_all(void **state)
{
	host h = load(LASSEN, "lassen28");
	const int g0[] = { 0 }, g1[] = { 1 }, g3[] = { 3 }, g01[] = { 0, 1 }, g23[] = { 2, 3 },
		  g12[] = { 1, 2 }, all[] = { 0, 1, 2, 3 }, messy[] = { 3, 0, 3 };
	bind_plan *p;

	(void)state;
	p = plan_for(&h, g0, 1, NULL, NULL);
	expect(p, 1, (const char *[]){ "mlx5_0" }, "=mlx5_0:1", "mlx5_0:1");
	assert_string_equal(p->gpus[0].pci_busid, "0004:04:00.0");
	assert_int_equal(p->gpus[0].rail, 0);
	assert_int_equal(p->nhcas, 1);
	assert_string_equal(p->hcas[0].netdev, "hsi0");
	assert_int_equal(p->nenv, 2); /* no NCCL_SOCKET_IFNAME without a policy name */
	bind_plan_free(p);

	/* A lone GPU takes the lowest rail of its two equally near HCAs. */
	p = plan_for(&h, g1, 1, NULL, NULL);
	expect(p, 1, (const char *[]){ "mlx5_0" }, "=mlx5_0:1", "mlx5_0:1");
	bind_plan_free(p);
	p = plan_for(&h, g3, 1, NULL, NULL);
	expect(p, 1, (const char *[]){ "mlx5_2" }, "=mlx5_2:1", "mlx5_2:1");
	assert_string_equal(p->gpus[0].pci_busid, "0035:04:00.0");
	bind_plan_free(p);

	/* Two GPUs sharing two near HCAs get one each. */
	p = plan_for(&h, g01, 2, NULL, NULL);
	expect(p, 2, (const char *[]){ "mlx5_0", "mlx5_1" }, "=mlx5_0:1,mlx5_1:1",
	       "mlx5_0:1,mlx5_1:1");
	bind_plan_free(p);
	p = plan_for(&h, g23, 2, NULL, NULL);
	expect(p, 2, (const char *[]){ "mlx5_2", "mlx5_3" }, "=mlx5_2:1,mlx5_3:1",
	       "mlx5_2:1,mlx5_3:1");
	bind_plan_free(p);
	p = plan_for(&h, g12, 2, NULL, NULL);
	expect(p, 2, (const char *[]){ "mlx5_0", "mlx5_2" }, "=mlx5_0:1,mlx5_2:1",
	       "mlx5_0:1,mlx5_2:1");
	bind_plan_free(p);

	p = plan_for(&h, all, 4, NULL, NULL);
	expect(p, 4, (const char *[]){ "mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3" },
	       "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1", "mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1");
	for (int i = 0; i < 4; i++)
		assert_int_equal(p->gpus[i].rail, i);
	assert_int_equal(p->gpus[2].numa, 8);
	bind_plan_free(p);

	/* Unsorted with a duplicate: GPUs 0 and 3. */
	p = plan_for(&h, messy, 3, NULL, NULL);
	expect(p, 2, (const char *[]){ "mlx5_0", "mlx5_2" }, "=mlx5_0:1,mlx5_2:1",
	       "mlx5_0:1,mlx5_2:1");
	assert_int_equal(p->gpus[1].index, 3);
	bind_plan_free(p);
	topo_graph_free(h.g);
}

static void test_single_hca_hosts(void **state)
{
	host c = load(CONAN, "conan"), m = load(MIRAGE, "mirage004");
	const int g0[] = { 0 }, g2[] = { 2 }, all[] = { 0, 1, 2, 3 }, m12[] = { 1, 2 };
	bind_plan *p;

	(void)state;
	p = plan_for(&c, g0, 1, NULL, NULL);
	expect(p, 1, (const char *[]){ "mlx5_0" }, "=mlx5_0:1", "mlx5_0:1");
	assert_string_equal(p->gpus[0].pci_busid, "0000:03:00.0");
	bind_plan_free(p);
	p = plan_for(&c, g2, 1, NULL, NULL);
	expect(p, 1, (const char *[]){ "mlx5_0" }, "=mlx5_0:1", "mlx5_0:1");
	assert_string_equal(p->gpus[0].pci_busid, "0000:84:00.0");
	bind_plan_free(p);
	/* Ethernet NICs (eth0, eth1) are never HCAs of a plan. */
	p = plan_for(&c, all, 4, NULL, NULL);
	expect(p, 4, (const char *[]){ "mlx5_0", "mlx5_0", "mlx5_0", "mlx5_0" }, "=mlx5_0:1",
	       "mlx5_0:1");
	assert_int_equal(p->nhcas, 1);
	bind_plan_free(p);

	/* mlx4_0's port is unknown to hwloc: port 1. */
	p = plan_for(&m, m12, 2, NULL, NULL);
	expect(p, 2, (const char *[]){ "mlx4_0", "mlx4_0" }, "=mlx4_0:1", "mlx4_0:1");
	assert_int_equal(p->hcas[0].port, 1);
	bind_plan_free(p);
	topo_graph_free(c.g);
	topo_graph_free(m.g);
}

static void test_user_values_kept(void **state)
{
	host h = load(LASSEN, "lassen28");
	const int g01[] = { 0, 1 };
	const char *user[] = { "NCCL_IB_HCA=mlx5_3", "PATH=/bin", NULL };
	bind_request req = { g01, 2, NULL, NULL, NULL, 0, fake_getenv, user };
	bind_policy pol = { "=eth0", 1, 0, NULL, 0 };
	topo_error err;
	bind_plan *p = bind_plan_make(h.g, h.id, &req, &pol, &err);
	const bind_plan_env *e;
	json_t *j, *kept;

	(void)state;
	assert_non_null(p);
	assert_int_equal(p->nenv, 3);
	e = bind_plan_find_env(p, "NCCL_IB_HCA");
	assert_string_equal(e->value, "=mlx5_0:1,mlx5_1:1");
	assert_string_equal(e->user_value, "mlx5_3");
	e = bind_plan_find_env(p, "UCX_NET_DEVICES");
	assert_null(e->user_value);
	assert_string_equal(env(p, "NCCL_SOCKET_IFNAME"), "=eth0");

	assert_int_equal(bind_plan_to_json(p, &j), 0);
	/* The JSON shows what the job will see: the user's value. */
	assert_string_equal(json_string_value(json_object_get(j, "NCCL_IB_HCA")), "mlx5_3");
	assert_string_equal(json_string_value(json_object_get(j, "UCX_NET_DEVICES")),
			    "mlx5_0:1,mlx5_1:1");
	kept = json_object_get(j, "kept");
	assert_int_equal(json_array_size(kept), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(kept, 0), "planned")),
			    "=mlx5_0:1,mlx5_1:1");
	assert_string_equal(
		json_string_value(json_object_get(json_array_get(json_object_get(j, "gpus"), 1),
						  "pci_busid")),
		"0004:05:00.0");
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(json_object_get(j, "gpus"), 1), "hca")),
			    "mlx5_1");
	json_decref(j);
	bind_plan_free(p);
	topo_graph_free(h.g);
}

static void test_nic_option(void **state)
{
	host h = load(LASSEN, "lassen28");
	const int g01[] = { 0, 1 };
	bind_request req = { g01, 2, NULL, NULL, "mlx5_9", 0, NULL, NULL };
	bind_policy pol = { "eth0", 1, 0, NULL, 0 };
	topo_error err;
	bind_plan *p;

	(void)state;
	/* none: no NIC variable at all, not even the socket interface. */
	p = plan_for(&h, g01, 2, "none", NULL);
	assert_int_equal(p->nenv, 0);
	assert_int_equal(p->nhcas, 0);
	assert_null(p->gpus[0].hca);
	assert_string_equal(p->nic_mode, "none");
	bind_plan_free(p);

	/* A list is used whole, in its order; each GPU takes its nearest member. */
	p = plan_for(&h, g01, 2, "mlx5_3,mlx5_0", NULL);
	expect(p, 2, (const char *[]){ "mlx5_0", "mlx5_0" }, "=mlx5_3:1,mlx5_0:1",
	       "mlx5_3:1,mlx5_0:1");
	assert_string_equal(p->nic_mode, "list");
	bind_plan_free(p);
	p = plan_for(&h, g01, 2, "mlx5_1:2", NULL);
	expect(p, 2, (const char *[]){ "mlx5_1", "mlx5_1" }, "=mlx5_1:2", "mlx5_1:2");
	bind_plan_free(p);
	p = plan_for(&h, g01, 2, "auto", NULL);
	assert_string_equal(env(p, "NCCL_IB_HCA"), "=mlx5_0:1,mlx5_1:1");
	bind_plan_free(p);

	assert_null(bind_plan_make(h.g, h.id, &req, &pol, &err));
	assert_string_equal(err.text, "\"mlx5_9\" names mlx5_9, which host lassen28 does not have "
				      "(its HCAs: mlx5_0, mlx5_1, mlx5_2, mlx5_3)");
	req.nic = "mlx5_0:x";
	assert_null(bind_plan_make(h.g, h.id, &req, &pol, &err));
	assert_non_null(strstr(err.text, "port \"x\" of mlx5_0 is not a port number"));
	req.nic = ",";
	assert_null(bind_plan_make(h.g, h.id, &req, &pol, &err));
	assert_non_null(strstr(err.text, "names no HCA"));
	topo_graph_free(h.g);
}

static void test_rail_plan(void **state)
{
	host h = load(LASSEN, "lassen28");
	const int g0[] = { 0 }, g2[] = { 2 }, g01[] = { 0, 1 };
	bind_request req = { g0, 1, NULL, "su1:n[001-008];rail=1", NULL, 0, NULL, NULL };
	bind_policy off = { NULL, 0, 0, NULL, 0 };
	topo_error err;
	bind_plan *p;

	(void)state;
	/* Rail 1 on every host: GPU 0 takes mlx5_1, not its first tie mlx5_0. */
	p = plan_for(&h, g0, 1, NULL, "su1:n[001-008];rail=1");
	expect(p, 1, (const char *[]){ "mlx5_1" }, "=mlx5_1:1", "mlx5_1:1");
	assert_string_equal(p->rails, "1");
	bind_plan_free(p);
	/* GPU 2 has no rail-1 HCA near it: still rail 1 (the plan wins). */
	p = plan_for(&h, g2, 1, NULL, "rail=1");
	expect(p, 1, (const char *[]){ "mlx5_1" }, "=mlx5_1:1", "mlx5_1:1");
	bind_plan_free(p);
	p = plan_for(&h, g01, 2, NULL, "rail=2-3");
	expect(p, 2, (const char *[]){ "mlx5_2", "mlx5_3" }, "=mlx5_2:1,mlx5_3:1",
	       "mlx5_2:1,mlx5_3:1");
	bind_plan_free(p);
	/* Rails no HCA has: locality, with a note. */
	p = plan_for(&h, g0, 1, NULL, "rail=7");
	expect(p, 1, (const char *[]){ "mlx5_0" }, "=mlx5_0:1", "mlx5_0:1");
	assert_int_equal(p->nnotes, 1);
	assert_non_null(strstr(p->notes[0], "rails 7 match no HCA of host lassen28"));
	bind_plan_free(p);

	/* rail-aligned off: the plan's rails are ignored. */
	p = bind_plan_make(h.g, h.id, &req, &off, &err);
	assert_non_null(p);
	expect(p, 1, (const char *[]){ "mlx5_0" }, "=mlx5_0:1", "mlx5_0:1");
	assert_null(p->rails);
	bind_plan_free(p);

	req.plan = "rail=1-x";
	assert_null(bind_plan_make(h.g, h.id, &req, &off, &err));
	assert_string_equal(err.source, "TOPOGNN_PLAN");
	assert_non_null(strstr(err.text, "rail list \"1-x\""));
	topo_graph_free(h.g);
}

/* SHARP: NCCL_COLLNET_ENABLE=1 only for a plan that says sharp=1 and an
 * admin policy that allows it (plugstack.conf sharp=yes); a user's own
 * value is kept. */
static void test_sharp_collnet(void **state)
{
	host h = load(LASSEN, "lassen28");
	const int g0[] = { 0 };
	const char *user[] = { "NCCL_COLLNET_ENABLE=0", NULL };
	bind_request req = { g0, 1, NULL, "su1:n[001-008];sharp=1", NULL, 0, NULL, NULL };
	bind_policy on = { NULL, 1, 0, NULL, 1 }, off = { NULL, 1, 0, NULL, 0 };
	const bind_plan_env *e;
	topo_error err;
	bind_plan *p;

	(void)state;
	assert_int_equal(bind_plan_sharp("su1:n[001-008];sharp=1"), 1);
	assert_int_equal(bind_plan_sharp(" sharp=0;rail=0-3"), 0);
	assert_int_equal(bind_plan_sharp("sharp=10"), 0);
	assert_int_equal(bind_plan_sharp(NULL), 0);
	p = bind_plan_make(h.g, h.id, &req, &on, &err);
	assert_non_null(p);
	assert_string_equal(env(p, "NCCL_COLLNET_ENABLE"), "1");
	assert_string_equal(env(p, "NCCL_IB_HCA"), "=mlx5_0:1");
	bind_plan_free(p);
	/* --topognn-nic=none still gets the collective algorithm */
	req.nic = "none";
	p = bind_plan_make(h.g, h.id, &req, &on, &err);
	assert_string_equal(env(p, "NCCL_COLLNET_ENABLE"), "1");
	assert_null(env(p, "NCCL_IB_HCA"));
	bind_plan_free(p);
	req.nic = NULL;
	/* the admin has not enabled it */
	p = bind_plan_make(h.g, h.id, &req, &off, &err);
	assert_null(env(p, "NCCL_COLLNET_ENABLE"));
	bind_plan_free(p);
	/* not eligible, or no SHARP item */
	req.plan = "su1:n[001-008];sharp=0";
	p = bind_plan_make(h.g, h.id, &req, &on, &err);
	assert_null(env(p, "NCCL_COLLNET_ENABLE"));
	bind_plan_free(p);
	req.plan = "su1:n[001-008]";
	p = bind_plan_make(h.g, h.id, &req, &on, &err);
	assert_null(env(p, "NCCL_COLLNET_ENABLE"));
	bind_plan_free(p);
	/* the user's value wins (the caller logs it) */
	req.plan = "sharp=1";
	req.getenv = fake_getenv;
	req.getenv_ctx = (void *)user;
	p = bind_plan_make(h.g, h.id, &req, &on, &err);
	e = bind_plan_find_env(p, "NCCL_COLLNET_ENABLE");
	assert_non_null(e);
	assert_string_equal(e->user_value, "0");
	bind_plan_free(p);
	topo_graph_free(h.g);
}

static void test_cpu_lists(void **state)
{
	host h = load(LASSEN, "lassen28"), c = load(CONAN, "conan");
	const int g02[] = { 0, 2 }, c01[] = { 0, 1 };
	bind_request req = { g02, 2, "8-15,96-103", NULL, NULL, 0, NULL, NULL };
	bind_policy pol = { NULL, 1, 1, NULL, 0 };
	topo_error err;
	bind_plan *p;

	(void)state;
	p = bind_plan_make(h.g, h.id, &req, &pol, &err);
	assert_non_null(p);
	assert_int_equal(p->ntasks, 2);
	assert_int_equal(p->tasks[0].gpu, 0);
	assert_string_equal(p->tasks[0].cpus, "8-15");
	assert_int_equal(p->tasks[1].gpu, 2);
	assert_string_equal(p->tasks[1].cpus, "96-103");
	bind_plan_free(p);

	/* Four tasks on two GPUs: round-robin; cores unknown: all local CPUs. */
	req.cores = NULL;
	req.ntasks = 4;
	p = bind_plan_make(h.g, h.id, &req, &pol, &err);
	assert_int_equal(p->ntasks, 4);
	assert_string_equal(p->tasks[2].cpus, "8-87");
	assert_string_equal(p->tasks[3].cpus, "96-175");
	bind_plan_free(p);

	/* Allocated cores all remote: the task keeps them, with a note. */
	req.cores = "0-3";
	req.ntasks = 1;
	p = bind_plan_make(h.g, h.id, &req, &pol, &err);
	assert_string_equal(p->tasks[0].cpus, "0-3");
	assert_int_equal(p->nnotes, 1);
	bind_plan_free(p);

	/* conan: GPU 0 shares no CPU with mlx5_0 (other socket): GPU's CPUs. */
	req.gpus = c01;
	req.cores = NULL;
	req.ntasks = 0;
	p = bind_plan_make(c.g, c.id, &req, &pol, &err);
	assert_string_equal(p->tasks[0].cpus, "0-7,16-23");
	assert_string_equal(p->tasks[1].cpus, "8-15,24-31");
	bind_plan_free(p);

	req.cores = "1-";
	assert_null(bind_plan_make(c.g, c.id, &req, &pol, &err));
	assert_string_equal(err.source, "allocated cores");
	topo_graph_free(h.g);
	topo_graph_free(c.g);
}

static void test_no_gpus_and_errors(void **state)
{
	host h = load(LASSEN, "lassen28");
	const int bad[] = { 0, 4 };
	bind_request req = { NULL, 0, "96-99", NULL, NULL, 0, NULL, NULL };
	topo_error err;
	bind_plan *p;

	(void)state;
	p = bind_plan_make(h.g, h.id, &req, NULL, &err);
	assert_non_null(p);
	assert_string_equal(env(p, "NCCL_IB_HCA"), "=mlx5_2:1,mlx5_3:1");
	bind_plan_free(p);
	req.cores = NULL;
	p = bind_plan_make(h.g, h.id, &req, NULL, &err);
	assert_string_equal(env(p, "UCX_NET_DEVICES"), "mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1");
	bind_plan_free(p);

	req.gpus = bad;
	req.ngpus = 2;
	assert_null(bind_plan_make(h.g, h.id, &req, NULL, &err));
	assert_string_equal(err.text, "GPU 4 is not on host lassen28, which has 4 GPU(s) "
				      "(indices in PCI bus id order)");
	assert_null(bind_plan_make(h.g, h.id + 1, &req, NULL, &err));
	assert_non_null(strstr(err.text, "is not a host"));
	topo_graph_free(h.g);
}

static void test_gpu_lists(void **state)
{
	int *v, n;
	const char *from;
	topo_error err;
	const char *both[] = { "CUDA_VISIBLE_DEVICES=3", "SLURM_JOB_GPUS=0,1", NULL };
	const char *cuda[] = { "CUDA_VISIBLE_DEVICES=2,3", NULL };
	char *rails;

	(void)state;
	assert_int_equal(bind_parse_gpu_list(" 0-2, 5 ", "x", &v, &n, &err), 0);
	assert_int_equal(n, 4);
	assert_int_equal(v[2], 2);
	assert_int_equal(v[3], 5);
	free(v);
	assert_int_equal(bind_parse_gpu_list("NoDevFiles", "x", &v, &n, &err), 0);
	assert_int_equal(n, 0);
	assert_null(v);
	assert_int_equal(bind_parse_gpu_list("", "x", &v, &n, &err), 0);
	assert_int_equal(n, 0);
	assert_int_equal(bind_parse_gpu_list("0,GPU-8d2c", "CUDA_VISIBLE_DEVICES", &v, &n, &err),
			 -1);
	assert_string_equal(err.source, "CUDA_VISIBLE_DEVICES");
	assert_non_null(strstr(err.text, "\"GPU-8d2c\" is not a GPU index"));
	assert_int_equal(bind_parse_gpu_list("3-1", "x", &v, &n, &err), -1);
	assert_int_equal(bind_parse_gpu_list("1,,2", "x", &v, &n, &err), -1);

	/* SLURM_JOB_GPUS (global indices) wins over CUDA_VISIBLE_DEVICES. */
	assert_int_equal(bind_gpus_from_env(fake_getenv, both, &v, &n, &from, &err), 0);
	assert_string_equal(from, "SLURM_JOB_GPUS");
	assert_int_equal(n, 2);
	assert_int_equal(v[1], 1);
	free(v);
	assert_int_equal(bind_gpus_from_env(fake_getenv, cuda, &v, &n, &from, &err), 0);
	assert_string_equal(from, "CUDA_VISIBLE_DEVICES");
	assert_int_equal(v[0], 2);
	free(v);
	assert_int_equal(bind_gpus_from_env(fake_getenv, NULL, &v, &n, &from, &err), 0);
	assert_null(from);
	assert_int_equal(n, 0);

	assert_int_equal(bind_plan_rails("su1:n[001-008];rail=0-3;su2:n009", &rails, &err), 4);
	assert_string_equal(rails, "0-3");
	free(rails);
	assert_int_equal(bind_plan_rails("su1:n[001-008]", &rails, &err), 0);
	assert_null(rails);
	assert_int_equal(bind_plan_rails(NULL, &rails, &err), 0);
	assert_int_equal(bind_plan_rails("rail=a", &rails, &err), -1);
	assert_string_equal(err.text, "plan \"rail=a\": rail list \"a\" is not like 0-3 or 1,3");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lassen_one_two_all),
		cmocka_unit_test(test_single_hca_hosts),
		cmocka_unit_test(test_user_values_kept),
		cmocka_unit_test(test_nic_option),
		cmocka_unit_test(test_rail_plan),
		cmocka_unit_test(test_sharp_collnet),
		cmocka_unit_test(test_cpu_lists),
		cmocka_unit_test(test_no_gpus_and_errors),
		cmocka_unit_test(test_gpu_lists),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
