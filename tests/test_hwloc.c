/*
 * Tests of the hwloc host loader and the affinity query on real lstopo XML.
 *
 * Expected values were worked out by hand from the PCI trees in the fixtures
 * (see tests/fixtures/hwloc/README.md):
 *   lassen28: GPUs 0004:04, 0004:05 (package 0) and 0035:03, 0035:04
 *     (package 8) sit behind PLX switches on their own host bridges; the
 *     dual-port ConnectX-5 of each package (mlx5_0/1 on 0003:01:00.0/.1,
 *     mlx5_2/3 on 0033:01:00.0/.1) is on another host bridge, so the deepest
 *     common ancestor is the package and both ports are nearest, 5 + 3 = 8
 *     hops away.
 *   conan: mlx5_0 (0000:04:00.0) sits under root port 80:03.0 beside the
 *     K40m (84:00.0) and the Radeon (84:00.1): 2 hops; the M2075 at 83:00.0
 *     shares the host bridge: 4 hops; the M2075 at 03:00.0 is on the other
 *     package: 8 hops through the machine.
 *   mirage004: the only HCA mlx4_0 (05:00.0, package 0) shares the host
 *     bridge with GPU 06:00.0 (4 hops); GPUs 11:00.0 and 14:00.0 are on
 *     package 1 (8 hops). The ATI ES1000 VGA (01:03.0) is not a GPU.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <hwloc.h>
#include <hwloc/export.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "topo_affinity.h"
#include "topo_hwloc.h"
#include "topo_hwloc_xml.h"
#include "test_tmp.h"

#define HWLOC_DIR FIXTURES_DIR "/hwloc"
#define LASSEN HWLOC_DIR "/llnl-lassen-power9-4v100-4mlx5.xml"
#define LASSEN_V1 HWLOC_DIR "/v1/llnl-lassen-power9-4v100-4mlx5.xml"
#define CONAN HWLOC_DIR "/hwloc-test-2n8c2t-pci-cuda-mlx5.xml"
#define MIRAGE HWLOC_DIR "/hwloc-test-2n6c2t-pci.xml"

/* A small machine without I/O and without a HostName info. */
static const char mini_xml[] =
	"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	"<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
	"<topology version=\"2.0\">\n"
	"  <object type=\"Machine\" os_index=\"0\" cpuset=\"0x00000003\" complete_cpuset=\"0x00000003\""
	" allowed_cpuset=\"0x00000003\" nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\""
	" allowed_nodeset=\"0x00000001\" gp_index=\"1\">\n"
	"    <object type=\"NUMANode\" os_index=\"0\" cpuset=\"0x00000003\" complete_cpuset=\"0x00000003\""
	" nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" gp_index=\"2\" local_memory=\"1048576\"/>\n"
	"    <object type=\"PU\" os_index=\"0\" cpuset=\"0x00000001\" complete_cpuset=\"0x00000001\""
	" nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" gp_index=\"3\"/>\n"
	"    <object type=\"PU\" os_index=\"1\" cpuset=\"0x00000002\" complete_cpuset=\"0x00000002\""
	" nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" gp_index=\"4\"/>\n"
	"  </object>\n"
	"</topology>\n";

/* ---- helpers ------------------------------------------------------------- */

static const topo_vertex *part(const topo_graph *g, topo_vkind kind, const char *name)
{
	int id = topo_graph_find(g, kind, name);

	if (id < 0)
		fail_msg("no %s vertex named %s", topo_vkind_name(kind), name);
	return topo_graph_vertex(g, id);
}

/* Distance of the pcie edge between two named vertices; -1 if there is none. */
static int pcie(const topo_graph *g, topo_vkind ka, const char *a, topo_vkind kb, const char *b)
{
	int ia = topo_graph_find(g, ka, a), ib = topo_graph_find(g, kb, b), n;
	const int *inc;

	assert_true(ia >= 0 && ib >= 0);
	inc = topo_graph_incident(g, ia, &n);
	for (int i = 0; i < n; i++) {
		const topo_edge *e = topo_graph_edge(g, inc[i]);

		if (e->kind == TOPO_E_PCIE && topo_edge_other(e, ia) == ib)
			return e->distance;
	}
	return -1;
}

/* Number of pcie edges from a vertex to hca vertices. */
static int nearest_count(const topo_graph *g, const char *gpu)
{
	int id = topo_graph_find(g, TOPO_V_GPU, gpu), n, c = 0;
	const int *inc = topo_graph_incident(g, id, &n);

	for (int i = 0; i < n; i++) {
		const topo_edge *e = topo_graph_edge(g, inc[i]);

		c += e->kind == TOPO_E_PCIE &&
		     topo_graph_vertex(g, topo_edge_other(e, id))->kind == TOPO_V_HCA;
	}
	return c;
}

static topo_graph *load(const char *path, const char *host, int *hid)
{
	topo_graph *g = topo_graph_new();
	topo_error err;
	char buf[1024];

	assert_non_null(g);
	*hid = topo_load_hwloc_xml(g, path, host, &err);
	if (*hid < 0)
		fail_msg("%s", topo_error_format(&err, buf, sizeof(buf)));
	return g;
}

static void assert_gpu(const topo_graph *g, const char *name, int index, const char *bus, int numa,
		       const char *model, const char *cpuset)
{
	const topo_vertex *v = part(g, TOPO_V_GPU, name);

	assert_int_equal(v->index, index);
	assert_string_equal(v->pci_busid, bus);
	assert_int_equal(v->numa, numa);
	if (model)
		assert_string_equal(v->device, model);
	else
		assert_null(v->device);
	assert_string_equal(v->cpuset, cpuset);
}

static void assert_hca(const topo_graph *g, const char *name, const char *netdev, int numa,
		       const char *bus, int port, topo_link_layer ll, uint64_t guid, int lid)
{
	const topo_vertex *v = part(g, TOPO_V_HCA, name);

	assert_string_equal(v->device, strrchr(name, '/') + 1);
	assert_string_equal(v->netdev, netdev);
	assert_int_equal(v->numa, numa);
	assert_string_equal(v->pci_busid, bus);
	assert_int_equal(v->port, port);
	assert_int_equal(v->link_layer, ll);
	assert_true(v->guid == guid);
	assert_int_equal(v->lid, lid);
	assert_false(topo_hca_is_nic(v));
}

static void assert_nic(const topo_graph *g, const char *name, int numa, const char *bus)
{
	const topo_vertex *v = part(g, TOPO_V_HCA, name);
	const char *local = strrchr(name, '/') + 1;

	assert_string_equal(v->device, local);
	assert_string_equal(v->netdev, local);
	assert_int_equal(v->link_layer, TOPO_LL_ETH);
	assert_int_equal(v->numa, numa);
	assert_string_equal(v->pci_busid, bus);
	assert_true(topo_hca_is_nic(v));
}

/* Load `data` from memory; expect failure with `fragment` in the text and `line`. */
static void expect_error(const char *data, size_t len, int line, const char *fragment)
{
	topo_graph *g = topo_graph_new();
	topo_error err;

	assert_int_equal(topo_load_hwloc_xml_mem(g, data, len, "bad.xml", NULL, &err), -1);
	assert_string_equal(err.source, "bad.xml");
	assert_int_equal(err.line, line);
	if (!strstr(err.text, fragment))
		fail_msg("error \"%s\" lacks \"%s\"", err.text, fragment);
	topo_graph_free(g);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static void write_file(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
}

/* ---- real machines ------------------------------------------------------- */

static void test_lassen(void **state)
{
	int h;
	topo_graph *g = load(LASSEN, NULL, &h);

	assert_string_equal(topo_graph_vertex(g, h)->name, "lassen28"); /* HostName info */
	assert_int_equal(topo_graph_count(g, TOPO_V_HOST), 1);
	assert_int_equal(topo_graph_count(g, TOPO_V_NUMA), 2);
	assert_int_equal(topo_graph_count(g, TOPO_V_GPU), 4);
	assert_int_equal(topo_graph_count(g, TOPO_V_HCA), 6); /* 4 mlx5 + 2 BCM5719 NICs */
	/* 10 device -> numa edges, 8 gpu -> nearest hca edges */
	assert_int_equal(topo_graph_count_edges(g, TOPO_E_PCIE), 18);
	assert_int_equal(topo_graph_count_edges(g, TOPO_E_MEMBER), 12);

	assert_int_equal(part(g, TOPO_V_NUMA, "lassen28/numa0")->index, 0);
	assert_string_equal(part(g, TOPO_V_NUMA, "lassen28/numa0")->cpuset, "8-87");
	assert_int_equal(part(g, TOPO_V_NUMA, "lassen28/numa8")->index, 8);
	assert_string_equal(part(g, TOPO_V_NUMA, "lassen28/numa8")->cpuset, "96-175");

	assert_gpu(g, "lassen28/gpu0", 0, "0004:04:00.0", 0, "Tesla V100-SXM2-16GB", "8-87");
	assert_gpu(g, "lassen28/gpu1", 1, "0004:05:00.0", 0, "Tesla V100-SXM2-16GB", "8-87");
	assert_gpu(g, "lassen28/gpu2", 2, "0035:03:00.0", 8, "Tesla V100-SXM2-16GB", "96-175");
	assert_gpu(g, "lassen28/gpu3", 3, "0035:04:00.0", 8, "Tesla V100-SXM2-16GB", "96-175");
	/* cuda0 and nvml0 are one GPU */
	assert_string_equal(topo_graph_get_attr(g, topo_graph_find(g, TOPO_V_GPU, "lassen28/gpu0"),
						"os_devices"),
			    "cuda0,nvml0");

	assert_hca(g, "lassen28/mlx5_0", "hsi0", 0, "0003:01:00.0", 1, TOPO_LL_IB,
		   0x506b4b03003ceee8ull, 0x527);
	assert_hca(g, "lassen28/mlx5_1", "hsi1", 0, "0003:01:00.1", 1, TOPO_LL_IB,
		   0x506b4b03003ceee9ull, 0x52e);
	assert_hca(g, "lassen28/mlx5_2", "hsi2", 8, "0033:01:00.0", 1, TOPO_LL_IB,
		   0x506b4b03003ceeeaull, 0xaa2);
	assert_hca(g, "lassen28/mlx5_3", "hsi3", 8, "0033:01:00.1", 1, TOPO_LL_IB,
		   0x506b4b03003ceeebull, 0xaa9);
	assert_nic(g, "lassen28/enP5p1s0f0", 0, "0005:01:00.0");
	assert_nic(g, "lassen28/enP5p1s0f1", 0, "0005:01:00.1");

	/* both ports of the package's ConnectX-5 are equally near */
	for (int i = 0; i < 4; i++) {
		char gpu[32];

		snprintf(gpu, sizeof(gpu), "lassen28/gpu%d", i);
		assert_int_equal(nearest_count(g, gpu), 2);
		assert_int_equal(pcie(g, TOPO_V_GPU, gpu, TOPO_V_HCA,
				      i < 2 ? "lassen28/mlx5_0" : "lassen28/mlx5_2"), 8);
		assert_int_equal(pcie(g, TOPO_V_GPU, gpu, TOPO_V_HCA,
				      i < 2 ? "lassen28/mlx5_1" : "lassen28/mlx5_3"), 8);
		assert_int_equal(pcie(g, TOPO_V_GPU, gpu, TOPO_V_HCA,
				      i < 2 ? "lassen28/mlx5_2" : "lassen28/mlx5_0"), -1);
		assert_int_equal(pcie(g, TOPO_V_GPU, gpu, TOPO_V_NUMA,
				      i < 2 ? "lassen28/numa0" : "lassen28/numa8"), 5);
	}
	assert_int_equal(pcie(g, TOPO_V_HCA, "lassen28/mlx5_0", TOPO_V_NUMA, "lassen28/numa0"), 3);
	/* the ASPEED BMC VGA (0002:02:00.0) is not a GPU */
	assert_int_equal(topo_graph_find(g, TOPO_V_GPU, "lassen28/gpu4"), -1);
	topo_graph_free(g);
}

static void test_conan_v3(void **state)
{
	int h;
	topo_graph *g = load(CONAN, NULL, &h);

	/* format 3.0: HostName is a topology-level info after the root object */
	assert_string_equal(topo_graph_vertex(g, h)->name, "conan");
	assert_int_equal(topo_graph_count(g, TOPO_V_NUMA), 2);
	assert_int_equal(topo_graph_count(g, TOPO_V_GPU), 4);
	assert_int_equal(topo_graph_count(g, TOPO_V_HCA), 3);
	assert_string_equal(part(g, TOPO_V_NUMA, "conan/numa0")->cpuset, "0-7,16-23");
	assert_string_equal(part(g, TOPO_V_NUMA, "conan/numa1")->cpuset, "8-15,24-31");

	/* NVIDIA 3D controllers without OS devices still count; the Matrox VGA does not */
	assert_gpu(g, "conan/gpu0", 0, "0000:03:00.0", 0,
		   "Tesla M2075 Dual-Slot Computing Processor Module", "0-7,16-23");
	assert_gpu(g, "conan/gpu1", 1, "0000:83:00.0", 1,
		   "Tesla M2075 Dual-Slot Computing Processor Module", "8-15,24-31");
	/* the CUDA device's GPUModel wins over the PCI name; card0 merges in */
	assert_gpu(g, "conan/gpu2", 2, "0000:84:00.0", 1, "Tesla K40m", "8-15,24-31");
	assert_string_equal(topo_graph_get_attr(g, topo_graph_find(g, TOPO_V_GPU, "conan/gpu2"),
						"os_devices"),
			    "cuda0,card0");
	/* an AMD GPU with an OpenCL co-processor device */
	assert_gpu(g, "conan/gpu3", 3, "0000:84:00.1", 1, "AMD Radeon R9 200 / HD 7900 Series",
		   "8-15,24-31");

	assert_hca(g, "conan/mlx5_0", "ib0", 1, "0000:04:00.0", 1, TOPO_LL_IB, 0x248a0703001e39feull,
		   1);
	assert_nic(g, "conan/eth0", 1, "0000:81:00.0");
	assert_nic(g, "conan/eth1", 1, "0000:81:00.1");

	assert_int_equal(pcie(g, TOPO_V_GPU, "conan/gpu0", TOPO_V_HCA, "conan/mlx5_0"), 8);
	assert_int_equal(pcie(g, TOPO_V_GPU, "conan/gpu1", TOPO_V_HCA, "conan/mlx5_0"), 4);
	assert_int_equal(pcie(g, TOPO_V_GPU, "conan/gpu2", TOPO_V_HCA, "conan/mlx5_0"), 2);
	assert_int_equal(pcie(g, TOPO_V_GPU, "conan/gpu3", TOPO_V_HCA, "conan/mlx5_0"), 2);
	/* NICs are never a GPU's nearest HCA */
	assert_int_equal(pcie(g, TOPO_V_GPU, "conan/gpu1", TOPO_V_HCA, "conan/eth0"), -1);
	assert_int_equal(topo_graph_count_edges(g, TOPO_E_PCIE), 7 + 4);
	topo_graph_free(g);
}

static void test_mirage_v3(void **state)
{
	int h;
	topo_graph *g = load(MIRAGE, NULL, &h);

	assert_string_equal(topo_graph_vertex(g, h)->name, "mirage004");
	assert_int_equal(topo_graph_count(g, TOPO_V_GPU), 3);
	assert_int_equal(topo_graph_count(g, TOPO_V_HCA), 4);
	assert_string_equal(part(g, TOPO_V_NUMA, "mirage004/numa0")->cpuset,
			    "0,2,4,6,8,10,12,14,16,18,20,22");
	/* no PCIDevice name and no OS device: model unknown */
	assert_gpu(g, "mirage004/gpu0", 0, "0000:06:00.0", 0, NULL, "0,2,4,6,8,10,12,14,16,18,20,22");
	assert_gpu(g, "mirage004/gpu1", 1, "0000:11:00.0", 1, NULL, "1,3,5,7,9,11,13,15,17,19,21,23");
	assert_gpu(g, "mirage004/gpu2", 2, "0000:14:00.0", 1, NULL, "1,3,5,7,9,11,13,15,17,19,21,23");
	/* ConnectX-2 with an IPoIB ib0 and an Ethernet eth2: ib0 is the HCA's
	 * netdev (IB by its 20-byte address), eth2 an Ethernet NIC; no port info */
	assert_hca(g, "mirage004/mlx4_0", "ib0", 0, "0000:05:00.0", 0, TOPO_LL_IB, 0, 0);
	assert_nic(g, "mirage004/eth2", 0, "0000:05:00.0");
	assert_nic(g, "mirage004/eth0", 0, "0000:04:00.0");
	assert_nic(g, "mirage004/eth1", 0, "0000:04:00.1");
	assert_int_equal(topo_graph_find(g, TOPO_V_HCA, "mirage004/ib0"), -1);

	assert_int_equal(pcie(g, TOPO_V_GPU, "mirage004/gpu0", TOPO_V_HCA, "mirage004/mlx4_0"), 4);
	assert_int_equal(pcie(g, TOPO_V_GPU, "mirage004/gpu1", TOPO_V_HCA, "mirage004/mlx4_0"), 8);
	assert_int_equal(pcie(g, TOPO_V_GPU, "mirage004/gpu2", TOPO_V_HCA, "mirage004/mlx4_0"), 8);
	topo_graph_free(g);
}

/* ---- affinity ------------------------------------------------------------ */

static void test_affinity_lassen(void **state)
{
	int h;
	topo_graph *g = load(LASSEN, NULL, &h);
	topo_affinity *a = topo_affinity_of_host(g, h);

	assert_non_null(a);
	assert_string_equal(a->host, "lassen28");
	assert_int_equal(a->ngpus, 4);
	assert_int_equal(a->nhcas, 4);
	assert_int_equal(a->nnics, 2);
	assert_string_equal(a->gpus[2].name, "gpu2");
	assert_string_equal(a->gpus[2].pci_busid, "0035:03:00.0");
	assert_int_equal(a->gpus[2].numa, 8);
	assert_int_equal(a->gpus[2].nnearest, 2);
	assert_string_equal(a->gpus[2].nearest_hcas[0], "mlx5_2");
	assert_string_equal(a->gpus[2].nearest_hcas[1], "mlx5_3");
	assert_int_equal(a->gpus[2].pci_distance, 8);
	assert_string_equal(a->hcas[1].name, "mlx5_1");
	assert_string_equal(a->hcas[1].netdev, "hsi1");
	assert_string_equal(a->nics[0].name, "enP5p1s0f0");
	/* not a host */
	assert_null(topo_affinity_of_host(g, topo_graph_find(g, TOPO_V_GPU, "lassen28/gpu0")));
	assert_null(topo_affinity_of_host(g, 999));
	topo_affinity_free(a);
	topo_graph_free(g);
}

static void test_affinity_json_conan(void **state)
{
	int h;
	topo_graph *g = load(CONAN, NULL, &h);
	topo_affinity *a = topo_affinity_of_host(g, h);
	json_t *j, *gpu, *hca, *nic, *expect;
	json_error_t jerr;

	assert_non_null(a);
	assert_int_equal(topo_affinity_to_json(a, &j), 0);
	assert_int_equal(json_object_size(j), 3);
	assert_int_equal(json_array_size(json_object_get(j, "gpus")), 4);
	assert_int_equal(json_array_size(json_object_get(j, "hcas")), 1);
	assert_int_equal(json_array_size(json_object_get(j, "nics")), 2);

	gpu = json_array_get(json_object_get(j, "gpus"), 2);
	expect = json_loads("{\"name\": \"gpu2\", \"index\": 2, \"pci_busid\": \"0000:84:00.0\","
			    " \"model\": \"Tesla K40m\", \"numa\": 1, \"cpuset\": \"8-15,24-31\","
			    " \"nearest_hca\": \"mlx5_0\", \"nearest_hcas\": [\"mlx5_0\"],"
			    " \"pci_distance\": 2}",
			    0, &jerr);
	assert_non_null(expect);
	assert_true(json_equal(gpu, expect));
	json_decref(expect);

	hca = json_array_get(json_object_get(j, "hcas"), 0);
	expect = json_loads("{\"name\": \"mlx5_0\", \"netdev\": \"ib0\", \"numa\": 1, \"port\": 1,"
			    " \"link_layer\": \"ib\", \"pci_busid\": \"0000:04:00.0\","
			    " \"cpuset\": \"8-15,24-31\", \"guid\": \"0x248a0703001e39fe\", \"lid\": 1}",
			    0, &jerr);
	assert_non_null(expect);
	assert_true(json_equal(hca, expect));
	json_decref(expect);

	nic = json_array_get(json_object_get(j, "nics"), 1);
	expect = json_loads("{\"name\": \"eth1\", \"netdev\": \"eth1\", \"numa\": 1,"
			    " \"pci_busid\": \"0000:81:00.1\", \"cpuset\": \"8-15,24-31\"}",
			    0, &jerr);
	assert_non_null(expect);
	assert_true(json_equal(nic, expect));
	json_decref(expect);
	json_decref(j);
	topo_affinity_free(a);
	topo_graph_free(g);
}

static void test_affinity_json_unknowns(void **state)
{
	int h;
	topo_graph *g = load(MIRAGE, NULL, &h);
	topo_affinity *a = topo_affinity_of_host(g, h);
	json_t *j, *gpu, *hca;

	assert_int_equal(topo_affinity_to_json(a, &j), 0);
	gpu = json_array_get(json_object_get(j, "gpus"), 0);
	assert_true(json_is_null(json_object_get(gpu, "model")));
	assert_string_equal(json_string_value(json_object_get(gpu, "nearest_hca")), "mlx4_0");
	hca = json_array_get(json_object_get(j, "hcas"), 0);
	assert_true(json_is_null(json_object_get(hca, "port")));
	assert_true(json_is_null(json_object_get(hca, "guid")));
	assert_true(json_is_null(json_object_get(hca, "lid")));
	json_decref(j);
	topo_affinity_free(a);
	topo_graph_free(g);

	/* a host without GPUs or HCAs gives empty arrays */
	g = topo_graph_new();
	h = topo_load_hwloc_xml_mem(g, mini_xml, strlen(mini_xml), "mini.xml", NULL, NULL);
	assert_true(h >= 0);
	a = topo_affinity_of_host(g, h);
	assert_int_equal(topo_affinity_to_json(a, &j), 0);
	assert_int_equal(json_array_size(json_object_get(j, "gpus")), 0);
	assert_int_equal(json_array_size(json_object_get(j, "hcas")), 0);
	assert_int_equal(json_array_size(json_object_get(j, "nics")), 0);
	json_decref(j);
	topo_affinity_free(a);
	topo_graph_free(g);
}

/* ---- formats, names, directories ------------------------------------------ */

static void test_v1_format_same_graph(void **state)
{
	int h1, h2;
	topo_graph *g1 = load(LASSEN, NULL, &h1), *g2 = load(LASSEN_V1, NULL, &h2);
	char why[256];

	assert_int_equal(topo_graph_canonicalize(g1), 0);
	assert_int_equal(topo_graph_canonicalize(g2), 0);
	if (!topo_graph_equal(g1, g2, why, sizeof(why)))
		fail_msg("v1 and v2 exports differ: %s", why);
	topo_graph_free(g1);
	topo_graph_free(g2);
}

static void test_hostname_choice(void **state)
{
	int h;
	topo_graph *g = load(LASSEN, "node7", &h);

	assert_string_equal(topo_graph_vertex(g, h)->name, "node7");
	assert_true(topo_graph_find(g, TOPO_V_GPU, "node7/gpu3") >= 0);
	assert_int_equal(topo_graph_find(g, TOPO_V_HOST, "lassen28"), -1);
	topo_graph_free(g);

	/* no HostName info: the file name without ".xml" */
	g = topo_graph_new();
	h = topo_load_hwloc_xml_mem(g, mini_xml, strlen(mini_xml), "/some/dir/mini-node.xml", NULL,
				    NULL);
	assert_true(h >= 0);
	assert_string_equal(topo_graph_vertex(g, h)->name, "mini-node");
	assert_string_equal(part(g, TOPO_V_NUMA, "mini-node/numa0")->cpuset, "0-1");
	assert_int_equal(topo_graph_count(g, TOPO_V_GPU), 0);
	assert_int_equal(topo_graph_count(g, TOPO_V_HCA), 0);
	topo_graph_free(g);
}

static void test_existing_host_and_twice(void **state)
{
	topo_graph *g = topo_graph_new();
	topo_error err;
	int pre = topo_graph_add_vertex(g, TOPO_V_HOST, "lassen28");

	/* an existing host vertex (e.g. from the fabric) gets the parts */
	assert_int_equal(topo_load_hwloc_xml(g, LASSEN, NULL, &err), pre);
	assert_int_equal(topo_graph_count(g, TOPO_V_HOST), 1);
	/* loading the same host again is an error, not a silent merge */
	assert_int_equal(topo_load_hwloc_xml(g, LASSEN, NULL, &err), -1);
	assert_string_equal(err.source, LASSEN);
	assert_non_null(strstr(err.text, "host lassen28 already has a numa named numa0"));
	topo_graph_free(g);
}

static void test_dir(void **state)
{
	topo_graph *g = topo_graph_new();
	topo_error err;

	/* the fixture directory: three HOST.xml, LICENSE files and v1/ ignored */
	assert_int_equal(topo_load_hwloc_dir(g, HWLOC_DIR, &err), 3);
	assert_int_equal(topo_graph_count(g, TOPO_V_HOST), 3);
	assert_true(topo_graph_find(g, TOPO_V_HOST, "hwloc-test-2n6c2t-pci") >= 0);
	assert_true(topo_graph_find(g, TOPO_V_HOST, "hwloc-test-2n8c2t-pci-cuda-mlx5") >= 0);
	assert_true(topo_graph_find(g, TOPO_V_GPU, "llnl-lassen-power9-4v100-4mlx5/gpu3") >= 0);
	assert_int_equal(topo_graph_count(g, TOPO_V_GPU), 4 + 4 + 3);
	assert_int_equal(topo_graph_count(g, TOPO_V_HCA), 6 + 3 + 4);
	topo_graph_free(g);
}

static void test_dir_sorted_and_errors(void **state)
{
	char dir[512], path[1024];
	topo_graph *g = topo_graph_new();
	topo_error err;

	assert_non_null(test_mkdtemp(dir, sizeof(dir), "topo-hwloc-XXXXXX"));
	/* an empty directory */
	assert_int_equal(topo_load_hwloc_dir(g, dir, &err), -1);
	assert_string_equal(err.source, dir);
	assert_non_null(strstr(err.text, "no HOST.xml"));

	snprintf(path, sizeof(path), "%s/b2.xml", dir);
	write_file(path, mini_xml, strlen(mini_xml));
	snprintf(path, sizeof(path), "%s/a1.xml", dir);
	write_file(path, mini_xml, strlen(mini_xml));
	snprintf(path, sizeof(path), "%s/notes.txt", dir);
	write_file(path, "x", 1);
	assert_int_equal(topo_load_hwloc_dir(g, dir, &err), 2);
	/* name order: a1 is created first */
	assert_string_equal(topo_graph_vertex(g, 0)->name, "a1");
	assert_true(topo_graph_find(g, TOPO_V_HOST, "b2") >= 0);
	topo_graph_free(g);

	/* a bad file stops the load and is named */
	g = topo_graph_new();
	snprintf(path, sizeof(path), "%s/c3.xml", dir);
	write_file(path, "<svg/>\n", 7);
	assert_int_equal(topo_load_hwloc_dir(g, dir, &err), -1);
	assert_string_equal(err.source, path);
	assert_non_null(strstr(err.text, "<svg>"));
	topo_graph_free(g);

	unlink(path);
	snprintf(path, sizeof(path), "%s/a1.xml", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/b2.xml", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/notes.txt", dir);
	unlink(path);
	rmdir(dir);

	g = topo_graph_new();
	assert_int_equal(topo_load_hwloc_dir(g, "/nonexistent/hwloc-dir", &err), -1);
	assert_string_equal(err.source, "/nonexistent/hwloc-dir");
	assert_non_null(strstr(err.text, "No such file or directory"));
	topo_graph_free(g);
}

/* ---- live ------------------------------------------------------------------ */

/* Live discovery equals loading hwloc's own XML export of the same machine. */
static void test_live_equals_export(void **state)
{
	topo_graph *live = topo_graph_new(), *file = topo_graph_new();
	hwloc_topology_t topo;
	topo_error err;
	char *xml, why[256];
	int len, h;

	h = topo_load_hwloc_live(live, &err);
	assert_true(h >= 0);
	assert_true(topo_graph_count(live, TOPO_V_NUMA) >= 1);

	assert_int_equal(hwloc_topology_init(&topo), 0);
	hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
	assert_int_equal(hwloc_topology_load(topo), 0);
	assert_int_equal(hwloc_topology_export_xmlbuffer(topo, &xml, &len, 0), 0);
	assert_true(topo_load_hwloc_xml_mem(file, xml, (size_t)len - 1, "<export>",
					    topo_graph_vertex(live, h)->name, &err) >= 0);
	hwloc_free_xmlbuffer(topo, xml);
	hwloc_topology_destroy(topo);

	assert_int_equal(topo_graph_canonicalize(live), 0);
	assert_int_equal(topo_graph_canonicalize(file), 0);
	if (!topo_graph_equal(live, file, why, sizeof(why)))
		fail_msg("live and exported graphs differ: %s", why);
	topo_graph_free(live);
	topo_graph_free(file);
}

/* ---- errors ------------------------------------------------------------------ */

static void test_error_missing_file(void **state)
{
	topo_graph *g = topo_graph_new();
	topo_error err;

	assert_int_equal(topo_load_hwloc_xml(g, HWLOC_DIR "/nosuch.xml", NULL, &err), -1);
	assert_string_equal(err.source, HWLOC_DIR "/nosuch.xml");
	assert_int_equal(err.line, 0);
	assert_string_equal(err.text, "cannot open: No such file or directory");
	assert_int_equal(topo_load_hwloc_xml(g, HWLOC_DIR, NULL, &err), -1);
	assert_non_null(strstr(err.text, "is a directory"));
	assert_int_equal(topo_graph_nvertices(g), 0);
	topo_graph_free(g);
}

static void test_error_not_xml(void **state)
{
	expect_error("", 0, 0, "the file is empty");
	expect_error("  \n\t\n", 5, 0, "the file is empty");
	expect_error("\n\nhello world\n", 14, 3, "not XML: the text starts with \"hello world\"");
	expect_error("{\"gpus\": []}", 12, 1, "not XML");
	expect_error("<topology>\0</topology>", 22, 1, "NUL byte");
}

static void test_error_wrong_xml(void **state)
{
	static const char svg[] =
		"<?xml version=\"1.0\"?>\n<!-- a picture -->\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\"><rect width=\"1\"/></svg>\n";
	static const char v4[] = "<?xml version=\"1.0\"?>\n<topology version=\"4.0\">\n</topology>\n";
	static const char no_complete[] =
		"<topology version=\"2.0\">\n<object type=\"Machine\" cpuset=\"0x1\" complete_cpuset=\"0x1\" "
		"nodeset=\"0x1\" complete_nodeset=\"0x1\">\n"
		"<object type=\"PU\" os_index=\"0\" cpuset=\"0x1\" nodeset=\"0x1\" "
		"complete_nodeset=\"0x1\"/>\n</object>\n</topology>\n";
	static const char unclosed[] =
		"<topology version=\"2.0\">\n<object type=\"Machine\" cpuset=\"0x1\" complete_cpuset=\"0x1\" "
		"nodeset=\"0x1\" complete_nodeset=\"0x1\">\n"
		"<object type=\"PU\" cpuset=\"0x1\" complete_cpuset=\"0x1\" <?xml v?>\n</object>\n</topology>\n";
	static const char crossed[] =
		"<topology version=\"2.0\">\n<object type=\"Machine\" cpuset=\"0x1\" complete_cpuset=\"0x1\" "
		"nodeset=\"0x1\" complete_nodeset=\"0x1\">\n"
		"<info name=\"a\" value=\"b\">\n</object>\n</info>\n</topology>\n";
	static const char bogus[] =
		"<topology version=\"2.0\">\n<object type=\"Machine\" cpuset=\"0x1\" complete_cpuset=\"0x1\" "
		"nodeset=\"0x1\" complete_nodeset=\"0x1\">\n"
		"<object type=\"Bogus\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" "
		"nodeset=\"0x1\" complete_nodeset=\"0x1\"/>\n</object>\n</topology>\n";

	expect_error(svg, strlen(svg), 3, "the root element is <svg>, not <topology>");
	expect_error(v4, strlen(v4), 2, "format version \"4.0\" is not one this loader reads");
	/* hwloc 2.9 itself would crash on this one (found by fuzz_hwloc_xml) */
	expect_error(no_complete, strlen(no_complete), 3, "has a cpuset but no complete_cpuset");
	/* tags we and hwloc might read differently are refused (fuzz findings) */
	expect_error(unclosed, strlen(unclosed), 3, "a malformed tag <object...>");
	expect_error(crossed, strlen(crossed), 4, "</object> does not close the element that is open");
	/* well-formed outline, but hwloc refuses the content */
	expect_error(bogus, strlen(bogus), 0, "hwloc rejected the XML");
}

/* Attributes hwloc's own XML reader cannot read: it stops reading the tag
 * there without an error, and hwloc 2.9 crashed on the Machine or PU left
 * without its complete set (fuzz_hwloc_xml, each one a SEGV before). */
static void test_error_attributes(void **state)
{
#define SETS "cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\""
#define DOC(machine_attrs, pu_attrs) "<topology version=\"2.0\">\n" \
	"<object type=\"Machine\" " machine_attrs ">\n" \
	"<object type=\"NUMANode\" os_index=\"0\" " SETS " local_memory=\"1048576\"/>\n" \
	"<object type=\"PU\" os_index=\"0\" " pu_attrs "/>\n</object>\n</topology>\n"
	static const char *const refused[][2] = {
		{ DOC("cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x0&#xD800;1\"", SETS), "2" },
		{ DOC(SETS, "cpuset=\"0x1\" complete_cpuset=\"0x0&bogus;1\" nodeset=\"0x1\" complete_nodeset=\"0x1\""), "4" },
		{ DOC(SETS, "cpuset=\"0x1\" complete_cpuset=\"0x0&apos;1\" nodeset=\"0x1\" complete_nodeset=\"0x1\""), "4" },
		{ DOC(SETS, "cpuset=\"0x1\" complete_cpuset=\"0x0&#1;1\" nodeset=\"0x1\" complete_nodeset=\"0x1\""), "4" },
		{ DOC("cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset='0x1'", SETS), "2" },
		{ DOC("cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset = \"0x1\"", SETS), "2" },
		{ DOC("x1=\"1\" " SETS, SETS), "2" },
		{ DOC("x-y=\"1\" " SETS, SETS), "2" },
		{ DOC("name=\"a\"\rcomplete_cpuset=\"0x1\" cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\"", SETS), "2" },
		{ DOC("name=\"a>b\" " SETS, SETS), "2" },
	};
	/* the references hwloc writes, and tabs and newlines between attributes, pass */
	static const char fine[] = DOC("name=\"&#10;&#13;&#9;&quot;&lt;&gt;&amp;\"\tcpuset=\"0x1\"\n"
				       "complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\"", SETS);
	topo_graph *g = topo_graph_new();
	topo_error err;

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		const char *doc = refused[i][0];
		int line = atoi(refused[i][1]);

		expect_error(doc, strlen(doc), line, "a malformed tag <object...>");
	}
	assert_true(topo_load_hwloc_xml_mem(g, fine, strlen(fine), "f.xml", "n1", &err) >= 0);
	topo_graph_free(g);
#undef DOC
#undef SETS
}

/* Sets hwloc 2.9 cannot read or does not check before using them; each
 * crashed it (fuzz_hwloc_xml): a bitmap starting with ',' (an assert in
 * hwloc_bitmap_sscanf), a 1.x NUMANode without sets (a NULL complete cpuset
 * compared). Bitmaps as hwloc writes them pass. */
static void test_error_sets(void **state)
{
#define SETS "cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\""
#define DOC(version, numa_attrs, pu_cpuset) "<topology version=\"" version "\">\n" \
	"<object type=\"Machine\" " SETS ">\n" \
	"<object type=\"NUMANode\" os_index=\"0\" " numa_attrs " local_memory=\"1048576\"/>\n" \
	"<object type=\"PU\" os_index=\"0\" cpuset=\"" pu_cpuset "\" complete_cpuset=\"" pu_cpuset \
	"\" nodeset=\"0x1\" complete_nodeset=\"0x1\"/>\n</object>\n</topology>\n"
	static const struct {
		const char *doc;
		int line;
		const char *error;
	} refused[] = {
		{ DOC("2.0", SETS, ",x1"), 4, "cpuset=\",x1\" is not an hwloc bitmap" },
		{ DOC("2.0", SETS, ",0x1"), 4, "is not an hwloc bitmap" },
		{ DOC("2.0", SETS, "0x1,,"), 4, "is not an hwloc bitmap" },
		{ DOC("2.0", SETS, "0x1,"), 4, "is not an hwloc bitmap" },
		{ DOC("2.0", SETS, "0x123456789"), 4, "is not an hwloc bitmap" },
		{ DOC("2.0", SETS, "0xf...f0x1"), 4, "is not an hwloc bitmap" },
		{ DOC("2.0", SETS, " 0x1"), 4, "is not an hwloc bitmap" },
		{ DOC("1.0", "nodeset=\"0x1\" complete_nodeset=\"0x1\"", "0x1"), 3,
		  "an <object> of type NUMANode has no cpuset" },
		{ DOC("2.0", "cpuset=\"0x1\" complete_cpuset=\"0x1\"", "0x1"), 3,
		  "an <object> of type NUMANode has no nodeset" },
		/* hwloc reads a type as any case and any prefix of two letters or
		 * more: "NU" is a NUMANode */
		{ "<topology version=\"2.0\">\n<object type=\"Machine\" " SETS ">\n"
		  "<object type=\"nu\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\"/>\n"
		  "</object>\n</topology>\n", 3, "an <object> of type nu has no nodeset" },
		/* a NUMANode under a Machine without a nodeset, and a root without
		 * a type (hwloc takes it for its Machine): hwloc 2.9 dereferenced
		 * the Machine's NULL nodeset in hwloc_insert_object_by_parent
		 * (fuzz_hwloc_xml, regress-machine-without-nodeset) */
		{ "<topology>\n<object type=\"Machine\" cpuset=\"0x1\" complete_cpuset=\"0x1\">\n"
		  "<object type=\"NUMANode\" os_index=\"0\" " SETS "/>\n</object>\n</topology>\n", 2,
		  "an <object> of type Machine has no nodeset" },
		{ "<topology>\n<object cpuset=\"0x1\" complete_cpuset=\"0x1\">\n"
		  "<object type=\"NUMANode\" os_index=\"0\" " SETS "/>\n</object>\n</topology>\n", 2,
		  "an <object> has no type" },
		/* a PU's or NUMANode's index is a bit hwloc sets: without one (2^32 - 1
		 * to hwloc) or with a huge one, a 512 MB bitmap and seconds of work
		 * (fuzz_hwloc_xml) */
		{ "<topology version=\"2.0\">\n<object type=\"Machine\" " SETS ">\n"
		  "<object type=\"NUMANode\" " SETS "/>\n</object>\n</topology>\n", 3,
		  "an <object> of type NUMANode has no os_index" },
		{ "<topology version=\"2.0\">\n<object type=\"Machine\" " SETS ">\n"
		  "<object type=\"PU\" os_index=\"4294967295\" " SETS "/>\n</object>\n</topology>\n", 3,
		  "os_index=\"4294967295\" is not a number from 0 to 1048575" },
		{ "<topology version=\"2.0\">\n<object type=\"Machine\" " SETS ">\n"
		  "<object type=\"Core\" os_index=\"-1\" " SETS "/>\n</object>\n</topology>\n", 3,
		  "os_index=\"-1\" is not a number" },		/* the root keeps no PU: hwloc 2.9 found the topology empty and then
		 * dereferenced its NULL root (fuzz_hwloc_xml) */
		{ "<topology version=\"2.0\">\n<object type=\"Machine\" cpuset=\"0xa\" "
		  "complete_cpuset=\"0xff\" allowed_cpuset=\"0x1\" nodeset=\"0x1\" "
		  "complete_nodeset=\"0x1\"/>\n</topology>\n", 2,
		  "the root <object> has no PU in its cpuset, complete_cpuset and allowed_cpuset" },
		{ "<topology version=\"3.0\">\n<object type=\"NUMANode\" os_index=\"0\" " SETS "/>\n"
		  "</topology>\n", 2, "the root <object> is of type NUMANode, not Machine" },
		/* an attribute twice: hwloc reads the last copy, the checks the
		 * first (a broken second allowed_cpuset crashed hwloc) */
		{ "<topology version=\"2.0\">\n<object type=\"Machine\" " SETS " allowed_cpuset=\"0x1\" "
		  "allowed_cpuset=\"0x2\">\n</object>\n</topology>\n", 2, "a malformed tag <object...>" },
	};
	/* hwloc reads these (the first two to the end), the others pass the outline */
	static const char *const loaded[] = { DOC("2.0", SETS, "0x00000001"), DOC("1.0", SETS, "0x1") };
	static const char *const outlined[] = { DOC("2.0", SETS, "0xf...f,0x00000001"),
						DOC("2.0", SETS, "0x1,0x00000000"),
						DOC("2.0", SETS, "0x000000ff,,0x0"),
						DOC("2.0", SETS, "0xf...f,,0x1") };
	topo_error err;
	size_t len;
	char *out;

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		expect_error(refused[i].doc, strlen(refused[i].doc), refused[i].line, refused[i].error);
	for (size_t i = 0; i < sizeof(loaded) / sizeof(loaded[0]); i++) {
		topo_graph *g = topo_graph_new();

		if (topo_load_hwloc_xml_mem(g, loaded[i], strlen(loaded[i]), "f.xml", "n1", &err) < 0)
			fail_msg("document %zu refused: %s", i, err.text);
		topo_graph_free(g);
	}
	for (size_t i = 0; i < sizeof(outlined) / sizeof(outlined[0]); i++) {
		if (topo_hwloc_xml_prepare(outlined[i], strlen(outlined[i]), "f.xml", &out, &len, &err) < 0)
			fail_msg("bitmap %zu refused: %s", i, err.text);
		free(out);
	}
#undef DOC
#undef SETS
}

static void test_error_truncated(void **state)
{
	size_t len, cut;
	char *data = slurp(LASSEN, &len);

	/* cut in the middle of a tag on line 47 */
	expect_error(data, 5000, 47, "ends inside a tag: the file looks truncated");
	/* cut after line 100 */
	cut = 0;
	for (int lines = 0; lines < 100; cut++)
		lines += data[cut] == '\n';
	expect_error(data, cut, 100, "ends without </topology>: the file looks truncated");
	/* just the declaration */
	expect_error(data, 39, 1, "ends before its root element");
	free(data);

	/* a truncated format 3.0 file is caught before the rewrite */
	data = slurp(MIRAGE, &len);
	expect_error(data, len - 12, 212, "ends without </topology>");
	free(data);
}

/* ---- the 3.0 -> 2.0 rewrite ------------------------------------------------- */

static void test_v3_rewrite(void **state)
{
	static const char v3[] =
		"<?xml version=\"1.0\"?>\n<topology version=\"3.0\">\n"
		"<object type=\"Machine\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" "
		"complete_nodeset=\"0x1\" id=\"obj1\">\n"
		"<object type=\"OSDev\" name=\"mlx5_0\" osdev_type=\"48\"/>\n"
		"<object type=\"OSDev\" name=\"cuda0\" osdev_type=\"12\"/>\n"
		"<object type=\"OSDev\" name=\"card0\" osdev_type=\"4\"/>\n"
		"<object type=\"OSDev\" name=\"eth0\" osdev_type=\"16\"/>\n"
		"<object type=\"OSDev\" name=\"sda\" osdev_type=\"1\"/>\n"
		"</object>\n"
		"<info name=\"HostName\" value=\"n1\"/>\n"
		"<pci_locality domain=\"0x0\" bus_min=\"0x0\" bus_max=\"0x5\" cpuset=\"0x1\"/>\n"
		"</topology>\n";
	char *out;
	size_t len;
	topo_error err;

	assert_int_equal(topo_hwloc_xml_prepare(v3, strlen(v3), "v3.xml", &out, &len, &err), 0);
	assert_int_equal(strlen(out), len);
	assert_non_null(strstr(out, "<topology version=\"2.0\">"));
	/* the topology info moves to the start of the root object */
	assert_non_null(strstr(out, "id=\"obj1\"><info name=\"HostName\" value=\"n1\"/>\n"));
	assert_non_null(strstr(out, "name=\"mlx5_0\" osdev_type=\"3\""));
	assert_non_null(strstr(out, "name=\"cuda0\" osdev_type=\"5\""));
	assert_non_null(strstr(out, "name=\"card0\" osdev_type=\"1\""));
	assert_non_null(strstr(out, "name=\"eth0\" osdev_type=\"2\""));
	assert_non_null(strstr(out, "name=\"sda\" osdev_type=\"0\""));
	assert_null(strstr(out, "pci_locality"));
	assert_null(strstr(out, "</object>\n<info"));
	free(out);

	/* 2.0 passes through unchanged */
	assert_int_equal(topo_hwloc_xml_prepare(mini_xml, strlen(mini_xml), "m.xml", &out, &len, &err),
			 0);
	assert_string_equal(out, mini_xml);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lassen),
		cmocka_unit_test(test_conan_v3),
		cmocka_unit_test(test_mirage_v3),
		cmocka_unit_test(test_affinity_lassen),
		cmocka_unit_test(test_affinity_json_conan),
		cmocka_unit_test(test_affinity_json_unknowns),
		cmocka_unit_test(test_v1_format_same_graph),
		cmocka_unit_test(test_hostname_choice),
		cmocka_unit_test(test_existing_host_and_twice),
		cmocka_unit_test(test_dir),
		cmocka_unit_test(test_dir_sorted_and_errors),
		cmocka_unit_test(test_live_equals_export),
		cmocka_unit_test(test_error_missing_file),
		cmocka_unit_test(test_error_not_xml),
		cmocka_unit_test(test_error_wrong_xml),
		cmocka_unit_test(test_error_attributes),
		cmocka_unit_test(test_error_sets),
		cmocka_unit_test(test_error_truncated),
		cmocka_unit_test(test_v3_rewrite),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
