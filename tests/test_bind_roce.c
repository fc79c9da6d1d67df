/*
 * test_bind_roce: the binding planner on a host cabled to several fabrics:
 * one InfiniBand HCA (mlx5_0), one RoCE port (mlx5_1, ens2f0np1) and one
 * storage port (mlx5_2, ens3f0np2, tagged by a NIC role rule), with a fake
 * sysfs holding the RoCE port's GID table. The storage port must never be
 * planned; the RoCE port brings NCCL_IB_GID_INDEX (its IPv4 RoCE v2 entry)
 * and NCCL_SOCKET_IFNAME.
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bind_plan.h"
#include "bind_roce.h"
#include "topo_graph.h"
#include "topo_nicrole.h"
#include "test_tmp.h"

typedef struct fixture {
	topo_graph *g;
	int host;
	char root[128]; /* under $TMPDIR (test_tmp.h) */
} fixture;

static void write_file(const char *root, const char *rel, const char *text)
{
	char path[512], *slash;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (slash = strchr(path + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* GID table entry N of DEV port 1: its type and address. */
static void gid(const char *root, const char *dev, int n, const char *type, const char *addr)
{
	char rel[256];

	snprintf(rel, sizeof(rel), "class/infiniband/%s/ports/1/gid_attrs/types/%d", dev, n);
	write_file(root, rel, type);
	snprintf(rel, sizeof(rel), "class/infiniband/%s/ports/1/gids/%d", dev, n);
	write_file(root, rel, addr);
}

static int add_hca(topo_graph *g, int host, const char *dev, const char *netdev,
		   topo_link_layer ll, const char *busid, int gpu)
{
	int id = topo_graph_add_part(g, host, TOPO_V_HCA, dev);
	topo_vertex *v;

	assert_true(id >= 0);
	v = topo_graph_vertex_mut(g, id);
	v->port = 1;
	v->numa = 0;
	v->link_layer = ll;
	assert_int_equal(topo_set_str(&v->device, dev), 0);
	assert_int_equal(topo_set_str(&v->netdev, netdev), 0);
	assert_int_equal(topo_set_str(&v->pci_busid, busid), 0);
	if (gpu >= 0) {
		int e = topo_graph_add_edge(g, TOPO_E_PCIE, gpu, id);

		assert_true(e >= 0);
		topo_graph_edge_mut(g, e)->distance = 2;
	}
	return id;
}

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));
	int g0, g1;
	topo_vertex *v;

	assert_non_null(f);
	assert_non_null(test_mkdtemp(f->root, sizeof(f->root), "test_bind_roce.XXXXXX"));
	f->g = topo_graph_new();
	f->host = topo_graph_add_vertex(f->g, TOPO_V_HOST, "node1");
	g0 = topo_graph_add_part(f->g, f->host, TOPO_V_GPU, "gpu0");
	g1 = topo_graph_add_part(f->g, f->host, TOPO_V_GPU, "gpu1");
	assert_true(g0 >= 0 && g1 >= 0);
	for (int i = 0; i < 2; i++) {
		v = topo_graph_vertex_mut(f->g, i ? g1 : g0);
		v->index = i;
		v->numa = 0;
	}
	/* gpu0 is nearest the IB HCA, gpu1 nearest the RoCE port; the storage
	 * port is as near to gpu1, which must not matter */
	add_hca(f->g, f->host, "mlx5_0", "ib0", TOPO_LL_IB, "0000:1a:00.0", g0);
	add_hca(f->g, f->host, "mlx5_1", "ens2f0np1", TOPO_LL_ETH, "0000:2a:00.0", g1);
	add_hca(f->g, f->host, "mlx5_2", "ens3f0np2", TOPO_LL_ETH, "0000:2b:00.0", g1);
	/* the RoCE port's GID table: link-local v1 and v2, then IPv4 v1 and v2 */
	gid(f->root, "mlx5_1", 0, "IB/RoCE v1\n", "fe80:0000:0000:0000:0a42:a1ff:fe0b:5c3e\n");
	gid(f->root, "mlx5_1", 1, "RoCE v2\n", "fe80:0000:0000:0000:0a42:a1ff:fe0b:5c3e\n");
	gid(f->root, "mlx5_1", 2, "IB/RoCE v1\n", "0000:0000:0000:0000:0000:ffff:0a0a:0111\n");
	gid(f->root, "mlx5_1", 3, "RoCE v2\n", "0000:0000:0000:0000:0000:ffff:0a0a:0111\n");
	gid(f->root, "mlx5_1", 4, "RoCE v2\n", "0000:0000:0000:0000:0000:0000:0000:0000\n");
	gid(f->root, "mlx5_2", 0, "RoCE v2\n", "fe80:0000:0000:0000:0a42:a1ff:fe0b:5c3f\n");
	*state = f;
	return 0;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int teardown(void **state)
{
	fixture *f = *state;

	topo_graph_free(f->g);
	nftw(f->root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	free(f);
	return 0;
}

static const char *env(const bind_plan *p, const char *name)
{
	const bind_plan_env *e = bind_plan_find_env(p, name);

	return e ? e->value : NULL;
}

static void tag_storage(fixture *f)
{
	const char *rules[] = { "storage=^ens3f" };
	topo_error err;
	topo_nic_rules *r = topo_nic_rules_new(rules, 1, &err);

	assert_non_null(r);
	assert_int_equal(topo_nic_rules_apply(f->g, r), 1);
	topo_nic_rules_free(r);
}

static void test_gid_index(void **state)
{
	fixture *f = *state;

	assert_int_equal(bind_roce_gid_index(f->root, "mlx5_1", 1), 3);
	assert_int_equal(bind_roce_gid_index(f->root, "mlx5_2", 1), 0); /* link-local only */
	assert_int_equal(bind_roce_gid_index(f->root, "mlx5_0", 1), -1); /* no table */
	assert_int_equal(bind_roce_gid_index(f->root, "mlx5_1", 2), -1); /* no port 2 */
}

static void test_storage_never_planned(void **state)
{
	fixture *f = *state;
	int gpus[] = { 0, 1 };
	bind_request req = { .gpus = gpus, .ngpus = 2 };
	bind_policy pol = { NULL, 1, 0, f->root, 0 };
	topo_error err;
	bind_plan *p;

	tag_storage(f);
	p = bind_plan_make(f->g, f->host, &req, &pol, &err);
	assert_non_null(p);
	assert_string_equal(env(p, "NCCL_IB_HCA"), "=mlx5_0:1,mlx5_1:1");
	assert_string_equal(env(p, "UCX_NET_DEVICES"), "mlx5_0:1,mlx5_1:1");
	assert_string_equal(env(p, "NCCL_IB_GID_INDEX"), "3");
	assert_string_equal(env(p, "NCCL_SOCKET_IFNAME"), "=ens2f0np1");
	assert_string_equal(p->gpus[1].hca, "mlx5_1");
	assert_int_equal(p->hcas[1].rail, 1);
	assert_int_equal(p->hcas[1].gid_index, 3);
	bind_plan_free(p);

	/* the admin's socket interface wins; GPU 1 alone still avoids mlx5_2 */
	pol.socket_ifname = "=eth0";
	req.gpus = gpus + 1;
	req.ngpus = 1;
	p = bind_plan_make(f->g, f->host, &req, &pol, &err);
	assert_non_null(p);
	assert_string_equal(env(p, "NCCL_IB_HCA"), "=mlx5_1:1");
	assert_string_equal(env(p, "NCCL_SOCKET_IFNAME"), "=eth0");
	bind_plan_free(p);

	/* naming the storage port is refused */
	req.nic = "mlx5_1,mlx5_2";
	p = bind_plan_make(f->g, f->host, &req, &pol, &err);
	assert_null(p);
	assert_non_null(strstr(err.text, "names mlx5_2, a storage or management port"));

	/* a step without GPUs gets the compute HCAs only */
	req.nic = NULL;
	req.ngpus = 0;
	p = bind_plan_make(f->g, f->host, &req, &pol, &err);
	assert_non_null(p);
	assert_string_equal(env(p, "NCCL_IB_HCA"), "=mlx5_0:1,mlx5_1:1");
	bind_plan_free(p);
}

static void test_no_sysfs_no_roce_vars(void **state)
{
	fixture *f = *state;
	int gpus[] = { 0, 1 };
	bind_request req = { .gpus = gpus, .ngpus = 2 };
	bind_policy pol = { NULL, 1, 0, NULL, 0 };
	topo_error err;
	bind_plan *p = bind_plan_make(f->g, f->host, &req, &pol, &err);

	assert_non_null(p);
	/* untagged, the storage port is a compute HCA like any other */
	assert_string_equal(env(p, "NCCL_IB_HCA"), "=mlx5_0:1,mlx5_1:1");
	assert_null(env(p, "NCCL_IB_GID_INDEX"));
	assert_null(env(p, "NCCL_SOCKET_IFNAME"));
	bind_plan_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_gid_index, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_sysfs_no_roce_vars, setup, teardown),
		cmocka_unit_test_setup_teardown(test_storage_never_planned, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
