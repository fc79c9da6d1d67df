/* Unit tests for the placement engine: cluster view, candidates, policies,
 * the model scorer, the scorer hook, and no allocation per decision. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "place.h"
#include "place_scorer.h"
#include "place_graphs.h"

#include "malloc_count.h"
#include "place_request.h"

/* ---- helpers -------------------------------------------------------------- */

/* cmocka 1.1 has no assert_double_equal */
#define assert_near(a, b, eps) assert_near_at((a), (b), (eps), __FILE__, __LINE__)
static void assert_near_at(double a, double b, double eps, const char *file, int line)
{
	if (!(a - b <= eps && b - a <= eps)) {
		print_error("%g != %g (within %g)\n", a, b, eps);
		_fail(file, line);
	}
}

typedef struct fx {
	topo_graph *g;
	place_cluster *c;
	place_state *s;
	place_engine *e;
} fx;

static void fx_open(fx *f, topo_graph *g, double frag_weight)
{
	topo_error err;
	place_config cfg;

	f->g = g;
	f->c = place_cluster_new(g, &err);
	assert_non_null(f->c);
	f->s = place_state_new(f->c);
	assert_non_null(f->s);
	place_config_init(&cfg);
	cfg.frag_weight = frag_weight;
	f->e = place_engine_new(f->c, &cfg, &err);
	assert_non_null(f->e);
}

static void fx_close(fx *f)
{
	place_engine_free(f->e);
	place_state_free(f->s);
	place_cluster_free(f->c);
	topo_graph_free(f->g);
}

/* Hosts of a choice as "n02,n04". */
static const char *names(const place_cluster *c, const place_choice *ch)
{
	static char buf[512];
	size_t k = 0;

	buf[0] = '\0';
	for (int i = 0; i < ch->nhosts && k + 16 < sizeof(buf); i++)
		k += (size_t)snprintf(buf + k, sizeof(buf) - k, "%s%s", i ? "," : "",
				      place_cluster_host_name(c, ch->hosts[i]));
	return buf;
}

static void busy(fx *f, uint32_t id, const int *hosts, int n, place_comm_class cls)
{
	place_comm comm = { cls, PLACE_PATTERN_RING, 1e9, 0.1, 0 };

	assert_int_equal(place_state_add_job(f->s, id, hosts, n, 0, 0, &comm), 0);
}

static place_request req(int n)
{
	return heavy_request(n);
}

static const char *decide(fx *f, const place_request *r, place_policy p, place_decision *d)
{
	int rc = place_decide(f->e, f->s, r, p, PLACE_POLICY_TREE, d);

	return rc == 0 ? names(f->c, &d->chosen) : d->reason;
}

/* ---- cluster ---------------------------------------------------------------- */

static void test_cluster_rail(void **st)
{
	topo_error err;
	topo_graph *g = rail_graph(2);
	place_cluster *c = place_cluster_new(g, &err);

	assert_non_null(c);
	assert_int_equal(place_cluster_nhosts(c), 8);
	assert_int_equal(place_cluster_ngroups(c), 2);
	assert_int_equal(place_cluster_nleaves(c), 4);
	assert_string_equal(place_cluster_host_name(c, 0), "n01");
	assert_string_equal(place_cluster_host_name(c, 7), "n08");
	assert_string_equal(place_cluster_group_name(c, 1), "su2");
	assert_int_equal(place_cluster_host_group(c, 5), 1);
	assert_int_equal(place_cluster_find_host(c, "n06"), 5);
	assert_int_equal(place_cluster_find_host(c, "nope"), -1);
	assert_int_equal(place_cluster_hops(c, 0, 0), 0);
	assert_int_equal(place_cluster_hops(c, 0, 3), 2);
	assert_int_equal(place_cluster_hops(c, 0, 4), 4);
	assert_ptr_equal(place_cluster_graph(c), g);
	place_cluster_free(c);
	topo_graph_free(g);
}

static void test_cluster_direct(void **st)
{
	topo_error err;
	topo_graph *g = direct_graph(1);
	place_cluster *c = place_cluster_new(g, &err);

	assert_non_null(c);
	assert_int_equal(place_cluster_nhosts(c), 16);
	assert_int_equal(place_cluster_ngroups(c), 2);
	assert_int_equal(place_cluster_nleaves(c), 4);
	assert_int_equal(place_cluster_hops(c, 0, 3), 2);
	assert_int_equal(place_cluster_hops(c, 0, 4), 4);
	assert_int_equal(place_cluster_hops(c, 0, 15), 4);
	place_cluster_free(c);
	topo_graph_free(g);

	/* no groups at all: one pseudo-group per leaf, named after it */
	g = direct_graph(0);
	c = place_cluster_new(g, &err);
	assert_non_null(c);
	assert_int_equal(place_cluster_ngroups(c), 4);
	assert_string_equal(place_cluster_group_name(c, 0), "A1");
	assert_string_equal(place_cluster_group_name(c, 3), "B2");
	assert_int_equal(place_cluster_host_group(c, 5), 1);
	place_cluster_free(c);
	topo_graph_free(g);

	g = topo_graph_new();
	c = place_cluster_new(g, &err);
	assert_null(c);
	assert_non_null(strstr(err.text, "no hosts"));
	topo_graph_free(g);
}

/* ---- candidates and Slurm's policies ---------------------------------------- */

/* su1 = n01-n04, su2 = n05-n08; n01, n03, n06 busy: su1 free n02 n04, su2
 * free n05 n07 n08. */
static void busy_135(fx *f)
{
	int a[] = { 0 }, b[] = { 2 }, c[] = { 5 };

	busy(f, 1, a, 1, PLACE_COMM_NONE);
	busy(f, 2, b, 1, PLACE_COMM_NONE);
	busy(f, 3, c, 1, PLACE_COMM_NONE);
}

static void test_policies_two_hosts(void **st)
{
	fx f;
	place_decision d;
	place_request r = req(2);

	fx_open(&f, rail_graph(2), 1);
	busy_135(&f);
	/* tree: both groups fit 2, the tighter (su1, 2 free) wins */
	assert_string_equal(decide(&f, &r, PLACE_POLICY_TREE, &d), "n02,n04");
	assert_string_equal(d.chosen.kind, "tree");
	/* linear: runs [n02] [n04 n05] [n07 n08]: first smallest sufficient run */
	assert_string_equal(decide(&f, &r, PLACE_POLICY_LINEAR, &d), "n04,n05");
	assert_int_equal(d.chosen.groups, 2);
	assert_int_equal(d.chosen.leaves, 4);
	assert_int_equal(d.chosen.diameter, 4);
	/* baseline of that decision was tree */
	assert_int_equal(d.baseline_policy, PLACE_POLICY_TREE);
	assert_string_equal(names(f.c, &d.baseline), "n02,n04");
	/* model: inside one group, no idle group broken: the tightest group */
	assert_string_equal(decide(&f, &r, PLACE_POLICY_MODEL, &d), "n02,n04");
	assert_string_equal(d.chosen.kind, "group-best-fit");
	assert_int_equal(d.chosen.groups, 1);
	assert_int_equal(d.chosen.leaves, 2);
	assert_int_equal(d.chosen.diameter, 2);
	/* candidates: group su1, group su2, cover variant, linear (tree = su1) */
	assert_int_equal(d.ncandidates, 3);
	assert_true(d.nalternatives == 2);
	assert_true(d.alternatives[0].cost <= d.alternatives[1].cost);
	assert_true(d.chosen.cost <= d.alternatives[0].cost);
	assert_string_equal(names(f.c, &d.alternatives[0]), "n05,n07");
	assert_string_equal(names(f.c, &d.alternatives[1]), "n04,n05");
	assert_true(d.latency_us > 0);
	fx_close(&f);
}

static void test_policies_three_hosts(void **st)
{
	fx f;
	place_decision d;
	place_request r = req(3);

	fx_open(&f, rail_graph(2), 1);
	busy_135(&f);
	assert_string_equal(decide(&f, &r, PLACE_POLICY_TREE, &d), "n05,n07,n08");
	/* linear: no run of 3; the largest [n04 n05] first, then the smallest
	 * sufficient run [n02] */
	assert_string_equal(decide(&f, &r, PLACE_POLICY_LINEAR, &d), "n02,n04,n05");
	assert_string_equal(decide(&f, &r, PLACE_POLICY_MODEL, &d), "n05,n07,n08");
	/* five hosts: all that is usable */
	r = req(5);
	assert_string_equal(decide(&f, &r, PLACE_POLICY_TREE, &d), "n02,n04,n05,n07,n08");
	assert_string_equal(decide(&f, &r, PLACE_POLICY_MODEL, &d), "n02,n04,n05,n07,n08");
	assert_string_equal(d.chosen.kind, "cover");
	fx_close(&f);
}

static void test_leaf_and_group_fit_direct(void **st)
{
	fx f;
	place_decision d;
	place_request r = req(4);
	int h01[] = { 0 };

	fx_open(&f, direct_graph(1), 1);
	busy(&f, 1, h01, 1, PLACE_COMM_NONE);
	/* A1 has 3 free; A2, B1, B2 have 4: the tightest leaf that fits is A2;
	 * Slurm's tree (one switch per leaf here) makes the same choice */
	assert_string_equal(decide(&f, &r, PLACE_POLICY_TREE, &d), "h05,h06,h07,h08");
	assert_int_equal(d.chosen.leaves, 1);
	assert_int_equal(d.chosen.groups, 1);
	/* the model prefers the one leaf over su1's first hosts h02-h05 */
	assert_string_equal(decide(&f, &r, PLACE_POLICY_MODEL, &d), "h05,h06,h07,h08");
	assert_string_equal(d.chosen.kind, "leaf-best-fit");
	/* linear: one run h02..h16, first 4 */
	assert_string_equal(decide(&f, &r, PLACE_POLICY_LINEAR, &d), "h02,h03,h04,h05");
	assert_int_equal(d.chosen.diameter, 4);
	assert_int_equal(d.chosen.leaves, 2);
	fx_close(&f);
}

/* ---- request constraints ---------------------------------------------------- */

static void test_required_excluded(void **st)
{
	fx f;
	place_decision d;
	place_request r = req(2);
	int need[] = { 6 }, ex[] = { 1 };

	fx_open(&f, rail_graph(2), 1);
	busy_135(&f);
	r.required = need;
	r.nrequired = 1;
	assert_string_equal(decide(&f, &r, PLACE_POLICY_TREE, &d), "n05,n07");
	assert_string_equal(decide(&f, &r, PLACE_POLICY_LINEAR, &d), "n07,n08");
	assert_string_equal(decide(&f, &r, PLACE_POLICY_MODEL, &d), "n05,n07");
	for (int i = 0; i < d.nalternatives; i++) {
		int has = 0;

		for (int j = 0; j < d.alternatives[i].nhosts; j++)
			has |= d.alternatives[i].hosts[j] == 6;
		assert_true(has);
	}
	r = req(2);
	r.excluded = ex;
	r.nexcluded = 1;
	assert_string_equal(decide(&f, &r, PLACE_POLICY_TREE, &d), "n05,n07");
	assert_string_equal(decide(&f, &r, PLACE_POLICY_MODEL, &d), "n05,n07");
	/* required and excluded at once */
	r.required = ex;
	r.nrequired = 1;
	assert_int_equal(place_decide(f.e, f.s, &r, PLACE_POLICY_MODEL, PLACE_POLICY_MODEL, &d),
			 -1);
	assert_string_equal(d.reason, "required host n02 is also excluded");
	fx_close(&f);
}

static void test_max_groups(void **st)
{
	fx f;
	place_decision d;
	place_request r = req(5);

	fx_open(&f, rail_graph(2), 1);
	busy_135(&f);
	r.max_groups = 1;
	assert_int_equal(place_decide(f.e, f.s, &r, PLACE_POLICY_MODEL, PLACE_POLICY_TREE, &d), -1);
	assert_string_equal(d.reason, "no host set within 1 group has 5 usable hosts");
	assert_int_equal(place_decide(f.e, f.s, &r, PLACE_POLICY_TREE, PLACE_POLICY_TREE, &d), -1);
	assert_non_null(strstr(d.reason, "tree: Slurm's tree choice uses 2 leaf switches"));
	/* 2 hosts with max 1 group: every policy stays in one group */
	r = req(2);
	r.max_groups = 1;
	assert_string_equal(decide(&f, &r, PLACE_POLICY_MODEL, &d), "n02,n04");
	for (int i = 0; i < d.nalternatives; i++)
		assert_int_equal(d.alternatives[i].groups, 1);
	assert_int_equal(place_decide(f.e, f.s, &r, PLACE_POLICY_LINEAR, PLACE_POLICY_TREE, &d),
			 -1);
	assert_non_null(strstr(d.reason, "linear"));
	fx_close(&f);
}

static void test_impossible(void **st)
{
	fx f;
	place_decision d;
	place_request r = req(6);
	int need[] = { 0 };

	fx_open(&f, rail_graph(2), 1);
	busy_135(&f);
	assert_int_equal(place_decide(f.e, f.s, &r, PLACE_POLICY_MODEL, PLACE_POLICY_TREE, &d), -1);
	assert_int_equal(d.ok, 0);
	assert_string_equal(d.reason, "needs 6 hosts with 0 free GPUs (whole host); 5 are");
	r = req(2);
	r.required = need;
	r.nrequired = 1;
	assert_int_equal(place_decide(f.e, f.s, &r, PLACE_POLICY_MODEL, PLACE_POLICY_TREE, &d), -1);
	assert_string_equal(d.reason, "required host n01 is in use");
	place_state_set_host(f.s, 0, 2, 2, 0, 0, PLACE_HOST_DOWN);
	assert_int_equal(place_decide(f.e, f.s, &r, PLACE_POLICY_MODEL, PLACE_POLICY_TREE, &d), -1);
	assert_string_equal(d.reason, "required host n01 is down");
	r = req(0);
	assert_int_equal(place_decide(f.e, f.s, &r, PLACE_POLICY_MODEL, PLACE_POLICY_TREE, &d), -1);
	assert_non_null(strstr(d.reason, "invalid request"));
	/* a shared request asking for 3 GPUs on 2-GPU hosts */
	r = req(1);
	r.exclusive = 0;
	r.gpus_per_host = 3;
	assert_int_equal(place_decide(f.e, f.s, &r, PLACE_POLICY_MODEL, PLACE_POLICY_TREE, &d), -1);
	assert_string_equal(d.reason, "needs 1 hosts with 3 free GPUs; 0 are");
	fx_close(&f);
}

static void test_down_drained_avoided(void **st)
{
	fx f;
	place_decision d;
	place_request r = req(4);

	fx_open(&f, rail_graph(2), 1);
	place_state_set_host(f.s, 1, 2, 2, 0, 0, PLACE_HOST_DRAIN);
	place_state_set_host(f.s, 6, 2, 2, 0, 0, PLACE_HOST_DOWN);
	/* su1 and su2 have 3 usable each: 4 hosts must span both */
	assert_string_equal(decide(&f, &r, PLACE_POLICY_TREE, &d), "n01,n03,n04,n05");
	assert_string_equal(decide(&f, &r, PLACE_POLICY_LINEAR, &d), "n03,n04,n05,n06");
	assert_string_equal(decide(&f, &r, PLACE_POLICY_MODEL, &d), "n01,n03,n04,n05");
	place_state_set_host(f.s, 1, 2, 2, 0, 0, 0);
	assert_string_equal(decide(&f, &r, PLACE_POLICY_MODEL, &d), "n01,n02,n03,n04");
	/* shared requests: free GPUs count */
	r = req(1);
	r.exclusive = 0;
	r.gpus_per_host = 1;
	place_state_set_host(f.s, 0, 2, 0, 0, 0, 0);
	/* runs n02-n06 and n08: linear best fit takes the smallest run */
	assert_string_equal(decide(&f, &r, PLACE_POLICY_LINEAR, &d), "n08");
	place_state_set_host(f.s, 7, 2, 0, 0, 0, 0);
	assert_string_equal(decide(&f, &r, PLACE_POLICY_LINEAR, &d), "n02");
	fx_close(&f);
}

/* ---- the model scorer -------------------------------------------------------- */

static void test_model_avoids_congested_group(void **st)
{
	fx f;
	place_decision d;
	place_request r = req(6);
	int bg[] = { 6, 7, 12, 13 };

	/* su2 and su4 carry a heavy job's ring across their leaf up-links */
	r.comm.compute_s_per_iter = 0;
	fx_open(&f, rail_graph(4), 0.5);
	busy(&f, 9, bg, 4, PLACE_COMM_HEAVY);
	assert_string_equal(decide(&f, &r, PLACE_POLICY_TREE, &d), "n01,n02,n03,n04,n05,n06");
	assert_string_equal(decide(&f, &r, PLACE_POLICY_LINEAR, &d), "n01,n02,n03,n04,n05,n06");
	assert_string_equal(decide(&f, &r, PLACE_POLICY_MODEL, &d), "n01,n02,n03,n04,n09,n10");
	assert_near(d.chosen.frag_cost, 0.5, 1e-9);
	assert_near(d.chosen.cost, 1.5, 1e-3);
	/* tree's choice shares su2's leaf up-links with the background ring:
	 * half of a 400 Gb/s up-link -> twice the idle time, no fragmentation */
	assert_string_equal(names(f.c, &d.baseline), "n01,n02,n03,n04,n05,n06");
	assert_near(d.baseline.cost, 2.0, 1e-3);
	assert_near(d.baseline.frag_cost, 0, 0);
	/* 6 hosts, 2 rails: 2*5/6 * 1e9 bytes / 2 rails at 200 Gb/s */
	assert_near(d.baseline.comm_time_s, 2.0 * 5 / 6 * 1e9 / 2 * 8 / 200e9, 1e-4);
	/* without the background job the tightest cover wins again */
	assert_int_equal(place_state_remove_job(f.s, 9), 0);
	assert_int_equal(place_state_remove_job(f.s, 9), -1);
	assert_string_equal(decide(&f, &r, PLACE_POLICY_MODEL, &d), "n01,n02,n03,n04,n05,n06");
	fx_close(&f);
}

static void test_model_telemetry_overlay(void **st)
{
	fx f;
	place_decision d;
	place_request r = req(6);
	uint64_t v;

	fx_open(&f, rail_graph(3), 1);
	assert_string_equal(decide(&f, &r, PLACE_POLICY_MODEL, &d), "n01,n02,n03,n04,n05,n06");
	v = place_state_version(f.s);
	assert_int_equal(place_state_set_leaf_uplink_util(f.s, "su2-0", 0.9), 0);
	assert_int_equal(place_state_set_leaf_uplink_util(f.s, "su2-1", 0.9), 0);
	assert_int_equal(place_state_set_leaf_uplink_util(f.s, "no-such-leaf", 0.5), 1);
	assert_int_equal(place_state_unknown_leaves(f.s), 1);
	assert_true(place_state_version(f.s) == v + 2);
	assert_string_equal(decide(&f, &r, PLACE_POLICY_MODEL, &d), "n01,n02,n03,n04,n09,n10");
	assert_string_equal(names(f.c, &d.baseline), "n01,n02,n03,n04,n05,n06");
	assert_true(d.baseline.cost > d.chosen.cost + 1);
	fx_close(&f);
}

static void test_model_fragmentation(void **st)
{
	fx f;
	place_decision d;
	place_request r = req(1);
	int a[] = { 4, 5 };

	/* a one-host job goes to the partly used group, not a whole idle one */
	fx_open(&f, rail_graph(3), 1);
	busy(&f, 1, a, 2, PLACE_COMM_NONE);
	assert_string_equal(decide(&f, &r, PLACE_POLICY_MODEL, &d), "n07");
	assert_near(d.chosen.frag_cost, 0, 0);
	assert_string_equal(decide(&f, &r, PLACE_POLICY_LINEAR, &d), "n01");
	assert_near(d.chosen.frag_cost, 1, 0);
	fx_close(&f);
}

/* ---- gnn hook, random --------------------------------------------------------- */

static int prepares;

static int fake_prepare(void *ctx, const place_cluster *c, const place_state *s, char *reason,
			size_t len)
{
	prepares++;
	return 0;
}

/* Prefers sets with higher host indices. */
static int fake_score(void *ctx, const place_cluster *c, const place_state *s,
		      const place_request *r, place_candidate *k, int n, char *reason, size_t len)
{
	for (int i = 0; i < n; i++)
		k[i].cost = -(double)k[i].hosts[k[i].nhosts - 1] - 0.01 * k[i].hosts[0];
	return 0;
}

static void test_gnn_hook(void **st)
{
	fx f;
	place_decision d;
	place_request r = req(2);
	place_scorer sc = { "fake-gnn", fake_prepare, fake_score, NULL };
	int one[] = { 0 };

	fx_open(&f, rail_graph(2), 1);
	assert_int_equal(place_decide(f.e, f.s, &r, PLACE_POLICY_GNN, PLACE_POLICY_TREE, &d), -1);
	assert_string_equal(d.reason, "no GNN model loaded");
	assert_int_equal(place_engine_set_scorer(f.e, PLACE_POLICY_TREE, &sc), -1);
	assert_int_equal(place_engine_set_scorer(f.e, PLACE_POLICY_GNN, &sc), 0);
	prepares = 0;
	assert_string_equal(decide(&f, &r, PLACE_POLICY_GNN, &d), "n05,n06");
	/* the baseline (tree) is costed by the same scorer */
	assert_string_equal(names(f.c, &d.baseline), "n01,n02");
	assert_near(d.baseline.cost, -1.0, 1e-9);
	assert_near(d.chosen.cost, -5.04, 1e-9);
	assert_string_equal(decide(&f, &r, PLACE_POLICY_GNN, &d), "n05,n06");
	assert_int_equal(prepares, 1); /* once per state version */
	busy(&f, 1, one, 1, PLACE_COMM_NONE);
	assert_string_equal(decide(&f, &r, PLACE_POLICY_GNN, &d), "n05,n06");
	assert_int_equal(prepares, 2);
	/* the model policy is unaffected by the gnn scorer */
	assert_string_equal(decide(&f, &r, PLACE_POLICY_MODEL, &d), "n02,n03");
	assert_int_equal(prepares, 2);
	fx_close(&f);
}

static void test_random_reproducible(void **st)
{
	fx f1, f2;
	place_decision d1, d2;
	place_request r = req(3);
	char first[64];

	fx_open(&f1, rail_graph(4), 1);
	fx_open(&f2, rail_graph(4), 1);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(place_decide(f1.e, f1.s, &r, PLACE_POLICY_RANDOM,
					      PLACE_POLICY_RANDOM, &d1), 0);
		assert_int_equal(place_decide(f2.e, f2.s, &r, PLACE_POLICY_RANDOM,
					      PLACE_POLICY_RANDOM, &d2), 0);
		snprintf(first, sizeof(first), "%s", names(f1.c, &d1.chosen));
		assert_string_equal(first, names(f2.c, &d2.chosen));
		assert_int_equal(d1.chosen.nhosts, 3);
		assert_string_equal(d1.chosen.kind, "random");
	}
	fx_close(&f1);
	fx_close(&f2);
}

/* ---- no allocation per decision ------------------------------------------------ */

static void test_no_allocation(void **st)
{
#if COUNT_MALLOC
	fx f;
	place_decision d;
	place_request r = req(5);
	int bg[] = { 6, 7, 12, 13 };

	fx_open(&f, rail_graph(4), 1);
	/* the counter works: adding a job allocates */
	allocations = 0;
	counting = 1;
	busy(&f, 9, bg, 4, PLACE_COMM_HEAVY);
	counting = 0;
	assert_true(allocations > 0);
	allocations = 0;
	counting = 1;
	for (int p = 0; p < PLACE_POLICY_COUNT; p++) {
		place_decide(f.e, f.s, &r, (place_policy)p, PLACE_POLICY_TREE, &d);
		place_decide(f.e, f.s, &r, (place_policy)p, PLACE_POLICY_MODEL, &d);
	}
	counting = 0;
	assert_int_equal(allocations, 0);
	fx_close(&f);
#else
	skip();
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cluster_rail),
		cmocka_unit_test(test_cluster_direct),
		cmocka_unit_test(test_policies_two_hosts),
		cmocka_unit_test(test_policies_three_hosts),
		cmocka_unit_test(test_leaf_and_group_fit_direct),
		cmocka_unit_test(test_required_excluded),
		cmocka_unit_test(test_max_groups),
		cmocka_unit_test(test_impossible),
		cmocka_unit_test(test_down_drained_avoided),
		cmocka_unit_test(test_model_avoids_congested_group),
		cmocka_unit_test(test_model_telemetry_overlay),
		cmocka_unit_test(test_model_fragmentation),
		cmocka_unit_test(test_gnn_hook),
		cmocka_unit_test(test_random_reproducible),
		cmocka_unit_test(test_no_allocation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
