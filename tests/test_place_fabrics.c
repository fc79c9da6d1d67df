/*
 * test_place_fabrics: the placement engine on the graphs the new fabric
 * sources make: NVLink domains as the groups when the graph has no fabric
 * (the model policy keeps a job of at most one domain inside one, with
 * domain 1 half taken; tree needs switches and has none here),
 * fabric groups before NVLink domains when there is a fabric, and storage
 * NICs that never count as a host's ports.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "place.h"
#include "topo_graph.h"
#include "topo_netq.h"
#include "topo_nvsmi.h"
#include "place_request.h"

#define GB200 FIXTURES_DIR "/nvidia-smi/gb200-nvl72x2"
#define NETQ FIXTURES_DIR "/netq/roce-2leaf-1spine.json"

static place_request req(int n)
{
	return heavy_request(n);
}

/* The groups of a decision's hosts, as "nvl2" when all share one. */
static const char *chosen_group(const place_cluster *c, const place_decision *d)
{
	int g = place_cluster_host_group(c, d->chosen.hosts[0]);

	for (int i = 1; i < d->chosen.nhosts; i++)
		if (place_cluster_host_group(c, d->chosen.hosts[i]) != g)
			return "(several)";
	return place_cluster_group_name(c, g);
}

static void test_nvlink_domains_as_groups(void **st)
{
	topo_graph *g = topo_graph_new();
	topo_error err;
	place_cluster *c;
	place_state *s;
	place_engine *e;
	place_config cfg;
	place_decision d;
	place_request r;
	int taken[9];

	(void)st;
	assert_int_equal(topo_load_nvidia_smi_dir(g, GB200, &err), 2);
	assert_int_equal(topo_graph_canonicalize(g), 0);
	c = place_cluster_new(g, &err);
	assert_non_null(c);
	assert_int_equal(place_cluster_ngroups(c), 2);
	assert_string_equal(place_cluster_group_name(c, place_cluster_host_group(
							    c, place_cluster_find_host(c, "gb200-r02-t07"))),
			    "nvl2");
	s = place_state_new(c);
	place_config_init(&cfg);
	e = place_engine_new(c, &cfg, &err);
	assert_non_null(s);
	assert_non_null(e);
	for (int h = 0; h < place_cluster_nhosts(c); h++)
		place_state_set_host(s, h, 4, 4, 0, 0, 0);
	/* half of domain 1 busy: a 12-host job fits only in domain 2 */
	for (int i = 0; i < 9; i++) {
		char name[32];

		snprintf(name, sizeof(name), "gb200-r01-t%02d", i + 1);
		taken[i] = place_cluster_find_host(c, name);
	}
	assert_int_equal(place_state_add_job(s, 1, taken, 9, 0, 0, NULL), 0);
	for (int pol = PLACE_POLICY_MODEL; pol <= PLACE_POLICY_MODEL; pol++) {
		r = req(12);
		if (place_decide(e, s, &r, (place_policy)pol, PLACE_POLICY_TREE, &d) != 0)
			fail_msg("policy %s: %s", place_policy_name((place_policy)pol), d.reason);
		assert_int_equal(d.chosen.nhosts, 12);
		assert_string_equal(chosen_group(c, &d), "nvl2");
		/* a job of at most the free half of domain 1 stays inside one domain */
		r = req(9);
		assert_int_equal(place_decide(e, s, &r, (place_policy)pol, PLACE_POLICY_TREE, &d), 0);
		assert_string_not_equal(chosen_group(c, &d), "(several)");
	}
	place_engine_free(e);
	place_state_free(s);
	place_cluster_free(c);
	topo_graph_free(g);
}

/* NIC role rules are read at every job start (slurmstepd): a pattern that
 * would hold regcomp is refused with the rule named, like a bad one. */
static void expect_bad_rule(const char *rule, const char *fragment)
{
	const char *rules[] = { "compute=^ib", rule };
	topo_error err;

	assert_null(topo_nic_rules_new(rules, 2, &err));
	if (!strstr(err.text, fragment))
		fail_msg("'%s' lacks '%s'", err.text, fragment);
}

static void test_nic_rules_refused(void **st)
{
	(void)st;
	expect_bad_rule("storage=^ens.*++++++++++++",
			"NIC role rule \"storage=^ens.*++++++++++++\": bad regular expression: too complex");
	expect_bad_rule("storage=^ens.*?", "a repetition operator follows another");
	expect_bad_rule("storage=^(ens)\\1", "back-references are not allowed");
	expect_bad_rule("storage=^(ens", "bad regular expression");
	expect_bad_rule("disk=^ens", "is not ROLE=REGEX");
}

static void test_fabric_groups_first_storage_ignored(void **st)
{
	const char *rules[] = { "storage=^ens[34]" };
	topo_graph *g = topo_graph_new();
	topo_nic_rules *r;
	topo_error err;
	place_cluster *c;

	(void)st;
	r = topo_nic_rules_new(rules, 1, &err);
	assert_non_null(r);
	assert_int_equal(topo_load_netq(g, NETQ, r, &err), 0);
	topo_nic_rules_free(r);
	/* an NVLink domain across both leaves must not replace the fabric groups */
	{
		int grp = topo_graph_add_vertex(g, TOPO_V_GROUP, "nvl1");

		assert_int_equal(topo_graph_set_attr(g, grp, TOPO_GROUP_KIND_ATTR, TOPO_GROUP_KIND_NVLINK), 0);
		for (int i = 1; i <= 8; i++) {
			char name[16];

			snprintf(name, sizeof(name), "gpu-%02d", i);
			assert_true(topo_graph_add_edge(g, TOPO_E_MEMBER, grp,
							topo_graph_find(g, TOPO_V_HOST, name)) >= 0);
		}
	}
	assert_int_equal(topo_graph_canonicalize(g), 0); /* nvl1's edges now come first */
	c = place_cluster_new(g, &err);
	assert_non_null(c);
	assert_int_equal(place_cluster_ngroups(c), 2);
	assert_int_equal(place_cluster_nleaves(c), 2);
	assert_string_equal(place_cluster_group_name(c, place_cluster_host_group(
							    c, place_cluster_find_host(c, "gpu-05"))),
			    "su2");
	/* the storage NICs (no cables in the graph) are no ports: two leaves, one hop */
	assert_int_equal(place_cluster_hops(c, place_cluster_find_host(c, "gpu-01"),
					    place_cluster_find_host(c, "gpu-02")), 2);
	place_cluster_free(c);
	topo_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nvlink_domains_as_groups),
		cmocka_unit_test(test_nic_rules_refused),
		cmocka_unit_test(test_fabric_groups_first_storage_ignored),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
