/*
 * route_split.c - TopologyParam=RouteTree as Slurm's own testsuite checks it
 * (testsuite/python/tests/test_133_1.c, Copyright (C) 2014 Bull S. A. S.,
 * GPL-2.0-or-later with the OpenSSL exception, as Slurm): the test logic is
 * copied, not the file. Through libslurm, the topology plugin slurm.conf
 * names splits each hostlist of a test case file the way slurmd and srun
 * forward a message, and every sublist must be the expected one, in order.
 *
 *   route_split TESTCASES
 *
 * SLURM_CONF names the slurm.conf. TESTCASES: cases separated by blank
 * lines, '#' comments; a case's first line is the hostlist, each further
 * line one expected sublist (ranged). Prints each case's result and last
 * "Total test cases N, Failed cases M". Exit 0 when M is 0.
 * Built by tests/slurm/test_topo_parity.sh against the Slurm under test
 * (libslurmfull, Slurm's internal headers), as Slurm's testsuite builds it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"

#include "src/common/hostlist.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/interfaces/topology.h"

#define MAX_CASE_LINES 64
#define MAX_LINE 256

/* One case: split lines[0], compare with lines[1..n-1]; 0 when equal. */
static int _run_case(char **lines, int n)
{
	hostlist_t *hl = hostlist_create(lines[0]);
	hostlist_t **sp_hl = NULL;
	int count = 0, rc = 0;

	if (topology_g_split_hostlist(hl, &sp_hl, &count, 0) == SLURM_ERROR) {
		printf("FAIL %s: cannot split\n", lines[0]);
		hostlist_destroy(hl);
		return 1;
	}
	if (count != n - 1)
		rc = 1;
	printf("%s %s ->", rc ? "FAIL" : "case", lines[0]);
	for (int i = 0; i < count; i++) {
		char *list = hostlist_ranged_string_xmalloc(sp_hl[i]);

		if (i < n - 1 && strcmp(list, lines[i + 1]))
			rc = 1;
		printf(" %s", list);
		xfree(list);
		hostlist_destroy(sp_hl[i]);
	}
	printf("%s\n", rc ? " (not as expected)" : "");
	xfree(sp_hl);
	hostlist_destroy(hl);
	return rc;
}

int main(int argc, char **argv)
{
	char *lines[MAX_CASE_LINES], buf[MAX_LINE];
	int n = 0, cases = 0, failed = 0;
	FILE *f;

	if (argc != 2 || !(f = fopen(argv[1], "r"))) {
		fprintf(stderr, "usage: %s TESTCASES (SLURM_CONF set)\n", argv[0]);
		return 2;
	}
	/* As slurmd and Slurm's own topology unit test set up a process that
	 * routes: the node table first, then the plugin and its config. From
	 * 25.05 on topology/tree's split reads the config it built here (it
	 * has no context of its own before topology_g_build_config). */
	slurm_init(NULL);
	init_node_conf();
	build_all_nodeline_info(false, 0);
	rehash_node();
	if (topology_g_init() != SLURM_SUCCESS || topology_g_build_config() != SLURM_SUCCESS) {
		fprintf(stderr, "failed to initialize topology plugins\n");
		return 2;
	}
	for (;;) {
		char *got = fgets(buf, sizeof(buf), f);

		if (got && buf[0] == '#')
			continue;
		if (got)
			buf[strcspn(buf, "\n")] = '\0';
		if (!got || !buf[0]) {
			if (n) {
				cases++;
				failed += _run_case(lines, n);
				for (int i = 0; i < n; i++)
					free(lines[i]);
				n = 0;
			}
			if (!got)
				break;
			continue;
		}
		if (n < MAX_CASE_LINES)
			lines[n++] = strdup(buf);
	}
	fclose(f);
	printf("Total test cases %d, Failed cases %d\n", cases, failed);
	return failed ? 1 : 0;
}
