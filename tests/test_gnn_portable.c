/*
 * test_gnn_portable: the instruction-set clones of the hot loops (AVX2,
 * AVX-512, picked for this CPU) and the baseline code give the same bits:
 * gnn_dump built against libgnn and gnn_dump_portable built with
 * -DGNN_NO_CLONES must write identical files.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_tmp.h"

static void run(const char *prog, const char *out)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "%s/tests/%s %s", BUILD_DIR, prog, out);
	assert_int_equal(system(cmd), 0);
}

static void test_same_bits(void **state)
{
	char a[512], b[512];
	char cmd[1200];
	int fa = test_mkstemp(a, sizeof(a), "test_gnn_portable_a_XXXXXX");
	int fb = test_mkstemp(b, sizeof(b), "test_gnn_portable_b_XXXXXX");

	close(fa);
	close(fb);
	run("gnn_dump", a);
	run("gnn_dump_portable", b);
	snprintf(cmd, sizeof(cmd), "cmp -s %s %s", a, b);
	assert_int_equal(system(cmd), 0);
	unlink(a);
	unlink(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_bits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
