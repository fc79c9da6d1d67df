/*
 * test_discover_mem: the in-memory entries of the per-host directory readers
 * (topo_load_lldp_mem, topo_load_nvidia_smi_mem; the fuzz targets' entries)
 * read one host's text as the directory readers read its file: the same
 * vertices, the same domain, the same refusals.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "topo_graph.h"
#include "topo_io.h"
#include "topo_lldp.h"
#include "topo_nvsmi.h"

#define NVSMI FIXTURES_DIR "/nvidia-smi/gb200-nvl72x2/gb200-r01-t01.txt"
#define LLDP FIXTURES_DIR "/lldp/netns-2leaf-1spine/rleaf1.json"
/* fuzz_lldp's first finding: a host whose neighbours are all switches made a
 * fabric with no NIC, and qsort got a NULL array (UBSan, -fsanitize=nonnull) */
#define LLDP_NO_NIC FIXTURES_DIR "/lldp/fuzz-switch-only.json"

static char *slurp(const char *path, size_t *len)
{
	topo_error err;
	char *text = topo_read_file(path, 1 << 24, len, &err);

	assert_non_null(text);
	return text;
}

static void test_nvsmi_mem(void **st)
{
	topo_graph *g = topo_graph_new();
	topo_error err;
	size_t len;
	char *text = slurp(NVSMI, &len);
	int host, grp;

	(void)st;
	/* one GB200 tray: one host in one NVLink domain, as in the directory */
	assert_int_equal(topo_load_nvidia_smi_mem(g, "gb200-r01-t01", text, len, "t01.txt", &err),
			 1);
	host = topo_graph_find(g, TOPO_V_HOST, "gb200-r01-t01");
	grp = topo_graph_find(g, TOPO_V_GROUP, "nvl1");
	assert_true(host >= 0 && grp >= 0);
	assert_int_equal(topo_graph_nedges(g), 1);
	topo_graph_free(g);
	/* not nvidia-smi output: refused, named by source */
	g = topo_graph_new();
	assert_int_equal(topo_load_nvidia_smi_mem(g, "h", "hello\n", 6, "h.txt", &err), -1);
	assert_non_null(strstr(err.text, "no \"GPU <bus id>\" section"));
	assert_string_equal(err.source, "h.txt");
	topo_graph_free(g);
	free(text);
}

static void test_lldp_mem(void **st)
{
	topo_graph *g = topo_graph_new();
	topo_error err;
	size_t len;
	char *text = slurp(LLDP, &len);

	(void)st;
	assert_int_equal(topo_load_lldp_mem(g, "rleaf1", text, len, "rleaf1.json", NULL, &err), 0);
	assert_true(topo_graph_nvertices(g) > 0);
	topo_graph_free(g);
	g = topo_graph_new();
	assert_int_equal(topo_load_lldp_mem(g, "h", "{\"x\": 1}", 8, "h.json", NULL, &err), -1);
	assert_non_null(strstr(err.text, "no \"lldp\" object"));
	assert_int_equal(topo_load_lldp_mem(g, "h", "{", 1, "h.json", NULL, &err), -1);
	assert_string_equal(err.source, "h.json");
	topo_graph_free(g);
	free(text);
	/* a loaded graph or an error, no undefined behaviour (sanitizer builds) */
	text = slurp(LLDP_NO_NIC, &len);
	g = topo_graph_new();
	if (topo_load_lldp_mem(g, "host01", text, len, "host01.json", NULL, &err) < 0)
		assert_true(err.text[0] != '\0');
	topo_graph_free(g);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nvsmi_mem),
		cmocka_unit_test(test_lldp_mem),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
