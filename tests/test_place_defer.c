/* Unit tests for waiting for locality (topo/place/place_defer.c) and the
 * model's class-aware packing: when a heavy job is deferred, for how long,
 * which groups it expects, when it is not (budget, policy, class, unknown
 * ends), the LocalityWait parser, and where a light job goes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "place.h"
#include "place_graphs.h"
#include "place_internal.h"
#include "place_request.h"

typedef struct fx {
	topo_graph *g;
	place_cluster *c;
	place_state *s;
	place_engine *e;
} fx;

/* rail_graph(3): su1 = n01..n04, su2 = n05..n08, su3 = n09..n12. */
static void fx_open(fx *f, double frac, double cap_s)
{
	topo_error err;
	place_config cfg;

	f->g = rail_graph(3);
	f->c = place_cluster_new(f->g, &err);
	assert_non_null(f->c);
	f->s = place_state_new(f->c);
	assert_non_null(f->s);
	place_config_init(&cfg);
	cfg.locality_wait_frac = frac;
	cfg.locality_wait_cap_s = cap_s;
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

static void job(fx *f, uint32_t id, const int *hosts, int n, double end)
{
	place_comm comm = { PLACE_COMM_NONE, PLACE_PATTERN_RING, 0, 0, 0 };

	assert_int_equal(place_state_add_job(f->s, id, hosts, n, 0, 0, &comm), 0);
	assert_int_equal(place_state_set_job_end(f->s, id, end), 0);
}

static place_request heavy(int n, double limit, double deferred)
{
	place_request r = heavy_request(n);

	r.now_s = 1000;
	r.time_limit_s = limit;
	r.deferred_s = deferred;
	return r;
}

/* su1: n01,n02 busy until 2000; su2: n05..n07 busy until 1500; su3 busy
 * until 101000. Free now: n03, n04, n08 (two groups). */
static void fragmented(fx *f)
{
	int a[] = { 0, 1 }, b[] = { 4, 5, 6 }, c[] = { 8, 9, 10, 11 };

	job(f, 1, a, 2, 2000);
	job(f, 2, b, 3, 1500);
	job(f, 3, c, 4, 101000);
}

static void test_defer_until_group_frees(void **st)
{
	fx f;
	place_decision d;
	place_request r = heavy(3, 10000, 0);

	fx_open(&f, 0.5, 0);
	fragmented(&f);
	assert_int_equal(place_decide(f.e, f.s, &r, PLACE_POLICY_MODEL, PLACE_POLICY_TREE, &d), 0);
	assert_int_equal(d.ok, 1);
	assert_int_equal(d.chosen.groups, 2);
	assert_int_equal(d.min_groups, 1);
	assert_int_equal(d.locality_checked, 1);
	assert_int_equal(d.deferred, 1);
	/* su2 frees first (1500 - 1000 s), whole: one group */
	assert_true(d.defer_wait_s == 500);
	assert_int_equal(d.defer_groups, 1);
	assert_true(d.defer_budget_s == 5000);
	assert_non_null(d.defer_group_mask);
	assert_int_equal(d.defer_group_mask[0], 0);
	assert_int_equal(d.defer_group_mask[1], 1);
	assert_int_equal(d.defer_group_mask[2], 0);
	assert_non_null(strstr(d.defer_why, "predicted to free in 500 s"));
	/* gnn's scorer is not needed for this: tree never defers */
	assert_int_equal(place_decide(f.e, f.s, &r, PLACE_POLICY_TREE, PLACE_POLICY_TREE, &d), 0);
	assert_int_equal(d.deferred, 0);
	assert_int_equal(d.locality_checked, 0);
	assert_int_equal(d.min_groups, 1);
	fx_close(&f);
}

static void test_defer_budget(void **st)
{
	fx f;
	place_decision d;
	place_request r = heavy(3, 10000, 4700);

	fx_open(&f, 0.5, 0);
	fragmented(&f);
	/* 300 s left: su2's 500 s is too late, and nothing earlier helps */
	assert_int_equal(place_decide(f.e, f.s, &r, PLACE_POLICY_MODEL, PLACE_POLICY_TREE, &d), 0);
	assert_int_equal(d.deferred, 0);
	assert_int_equal(d.locality_checked, 1);
	assert_non_null(strstr(d.defer_why, "within the 300 s left"));
	/* spent: it takes the best placement there is */
	r.deferred_s = 5000;
	assert_int_equal(place_decide(f.e, f.s, &r, PLACE_POLICY_MODEL, PLACE_POLICY_TREE, &d), 0);
	assert_int_equal(d.deferred, 0);
	assert_int_equal(d.chosen.nhosts, 3);
	assert_non_null(strstr(d.defer_why, "budget of 5000 s spent"));
	fx_close(&f);
	/* the cap bounds the budget: 0.5 x 10000 capped at 400 s */
	fx_open(&f, 0.5, 400);
	fragmented(&f);
	r.deferred_s = 0;
	assert_int_equal(place_decide(f.e, f.s, &r, PLACE_POLICY_MODEL, PLACE_POLICY_TREE, &d), 0);
	assert_int_equal(d.deferred, 0);
	assert_true(d.defer_budget_s == 400);
	fx_close(&f);
}

/* With a run-time prediction, a hold must be shorter than the
 * communication share of the predicted run time (the most the better set
 * could save the job): su2 frees in 500 s. The share is the analytic
 * model's collective time of the set chosen now against the job's compute
 * per iteration. A prediction never replaces the limit in the budget. */
/* The fragmented cluster and a heavy 3-host request with a 100000 s
 * limit, deferred without a prediction; returns the communication share of
 * the set chosen now. */
static double fragmented_share(fx *f, place_request *r)
{
	place_decision d;

	*r = heavy(3, 100000, 0);
	fx_open(f, 0.5, 0);
	fragmented(f);
	assert_int_equal(place_decide(f->e, f->s, r, PLACE_POLICY_MODEL, PLACE_POLICY_TREE, &d), 0);
	assert_int_equal(d.deferred, 1);
	assert_true(d.chosen.comm_time_s > 0);
	return d.chosen.comm_time_s / (r->comm.compute_s_per_iter + d.chosen.comm_time_s);
}

static void test_defer_own_gain(void **st)
{
	fx f;
	place_decision d;
	place_request r;
	double share = fragmented_share(&f, &r);

	/* 500 s is within the share of a predicted 2 x 500 / share */
	r.predicted_runtime_s = 2 * 500 / share;
	assert_int_equal(place_decide(f.e, f.s, &r, PLACE_POLICY_MODEL, PLACE_POLICY_TREE, &d), 0);
	assert_int_equal(d.deferred, 1);
	assert_true(d.defer_budget_s == 50000);
	assert_null(strstr(d.defer_why, "queue")); /* its own share was enough */
	/* but not of a predicted 0.5 x 500 / share: placed now */
	r.predicted_runtime_s = 0.5 * 500 / share;
	assert_int_equal(place_decide(f.e, f.s, &r, PLACE_POLICY_MODEL, PLACE_POLICY_TREE, &d), 0);
	assert_int_equal(d.deferred, 0);
	assert_int_equal(d.chosen.groups, 2);
	assert_non_null(strstr(d.defer_why, "communication in its predicted run time"));
	fx_close(&f);
}

/* While at least 8 jobs wait, a predicted hold may also last as long as
 * the queue is predicted to wait anyway: the time by which the hosts free
 * (3 now, su2's 3 at 500 s, su1's 2 at 1000 s) cover the hosts it asks
 * for. Fewer jobs, or a queue that fits now: the job's own share only.
 * The why says what the queue was predicted to wait and how many jobs
 * waited, in full (not cut off by defer_why's size). */
static void test_defer_queue_drain(void **st)
{
	fx f;
	place_decision d;
	place_request r;
	double share = fragmented_share(&f, &r);

	r.predicted_runtime_s = 0.5 * 500 / share; /* its own share: 250 s */
	place_state_set_queue(f.s, 8, 8);          /* drains at 1000 s */
	assert_int_equal(place_decide(f.e, f.s, &r, PLACE_POLICY_MODEL, PLACE_POLICY_TREE, &d), 0);
	assert_int_equal(d.deferred, 1);
	assert_true(d.defer_wait_s == 500);
	assert_non_null(strstr(d.defer_why, "of its locality wait and the queue's predicted 1000 s "
				   "(8 jobs waiting)"));
	place_state_set_queue(f.s, 123456789, 8);  /* the longest number still fits */
	assert_int_equal(place_decide(f.e, f.s, &r, PLACE_POLICY_MODEL, PLACE_POLICY_TREE, &d), 0);
	assert_non_null(strstr(d.defer_why, "(123456789 jobs waiting)"));
	place_state_set_queue(f.s, 8, 6);          /* drains at 500 s: still */
	assert_int_equal(place_decide(f.e, f.s, &r, PLACE_POLICY_MODEL, PLACE_POLICY_TREE, &d), 0);
	assert_int_equal(d.deferred, 1);
	place_state_set_queue(f.s, 8, 3);          /* fits now */
	assert_int_equal(place_decide(f.e, f.s, &r, PLACE_POLICY_MODEL, PLACE_POLICY_TREE, &d), 0);
	assert_int_equal(d.deferred, 0);
	assert_non_null(strstr(d.defer_why, "the queue's predicted 0 s (8 jobs waiting): placed "
				   "now over 2"));
	place_state_set_queue(f.s, 7, 8);          /* too few jobs waiting */
	assert_int_equal(place_decide(f.e, f.s, &r, PLACE_POLICY_MODEL, PLACE_POLICY_TREE, &d), 0);
	assert_int_equal(d.deferred, 0);
	assert_non_null(strstr(d.defer_why, "(7 jobs waiting): placed now over 2"));
	fx_close(&f);
}

/* The hold features of fragmented()'s heavy probe with every duration k
 * times as long (the jobs' remaining times, the limit, the prediction),
 * with a loaded queue so that every feature is set. */
static void hold_features_scaled(double k, float feat[PLACE_HOLD_FEATURES])
{
	fx f;
	place_decision d;
	place_request r;
	double share = fragmented_share(&f, &r);
	int a[] = { 0, 1 }, b[] = { 4, 5, 6 }, c[] = { 8, 9, 10, 11 };

	place_state_free(f.s);
	f.s = place_state_new(f.c);
	assert_non_null(f.s);
	job(&f, 1, a, 2, 1000 + k * 1000);
	job(&f, 2, b, 3, 1000 + k * 500);
	job(&f, 3, c, 4, 1000 + k * 100000);
	place_state_set_queue(f.s, 9, 8);
	r.time_limit_s = k * 100000;
	r.predicted_runtime_s = k * 2 * 500 / share;
	assert_int_equal(place_decide(f.e, f.s, &r, PLACE_POLICY_MODEL, PLACE_POLICY_TREE, &d), 0);
	assert_int_equal(d.hold_weighed, 1);
	assert_true(d.defer_wait_s == k * 500);
	memcpy(feat, d.hold_feat, sizeof(d.hold_feat));
	fx_close(&f);
}

/* The gate sees ratios, not times: a trace replayed 1000 times faster
 * (bench/slurm.sh) gives it the features of the real one. */
static void test_hold_features_scale_free(void **st)
{
	float one[PLACE_HOLD_FEATURES], fast[PLACE_HOLD_FEATURES], slow[PLACE_HOLD_FEATURES];

	hold_features_scaled(1, one);
	hold_features_scaled(0.01, fast); /* a hold of 5 s */
	hold_features_scaled(1000, slow); /* of 6 days */
	for (int i = 0; i < PLACE_HOLD_FEATURES; i++) {
		assert_float_equal(one[i], fast[i], 1e-6);
		assert_float_equal(one[i], slow[i], 1e-5);
	}
	assert_true(one[5] > 0); /* drain_per_wait: the queue was seen */
}

/* A fixed probability for the hold gate (test_hold_gate). */
static double fixed_p(void *ctx, const float *feat)
{
	(void)feat;
	return *(const double *)ctx;
}

/* The hold decision's features, and a gnn scorer's hold gate deciding in
 * place of the analytic rule: only under gnn, only with a prediction, and
 * only when a better set is predicted to free in time. */
static void test_hold_gate(void **st)
{
	fx f;
	place_decision d;
	place_request r;
	place_scorer sc;
	place_model *m;
	double p = 0.1, share = fragmented_share(&f, &r);

	/* the model's analytic rule holds a predicted 2 x 500 / share */
	r.predicted_runtime_s = 2 * 500 / share;
	assert_int_equal(place_decide(f.e, f.s, &r, PLACE_POLICY_MODEL, PLACE_POLICY_TREE, &d), 0);
	assert_int_equal(d.deferred, 1);
	assert_true(d.hold_p == -1);
	assert_int_equal(d.hold_weighed, 1);
	assert_true(d.hold_feat[0] == 1);     /* analytic_hold */
	assert_true(d.hold_feat[1] == 1);     /* better_set */
	/* wait_per_gain: 500 s against the 1000 s its communication could save */
	assert_float_equal(d.hold_feat[2], log1p(0.5), 1e-6);
	assert_true(d.hold_feat[3] == 0.5f);  /* groups_saved: 2 -> 1 */
	assert_float_equal(d.hold_feat[4], share, 1e-6); /* comm_share */
	assert_true(d.hold_feat[5] == 0);     /* drain_per_wait: no queue */
	assert_float_equal(d.hold_feat[6], log1p(500 * share / 1000), 1e-6); /* wait_per_duration */
	assert_true(d.hold_feat[7] == 1);     /* budget_left: none spent */
	/* against the running jobs' mean time left: (1000 + 500 + 100000) / 3 */
	assert_float_equal(d.hold_feat[10], log1p(1000 / share / (101500 / 3.0)), 1e-6);
	assert_float_equal(d.hold_feat[11], log1p(500 / (101500 / 3.0)), 1e-6);
	/* gnn with a gate of 0.1: started now, and the why says so */
	m = place_model_new(f.c, 1.0, 0.5);
	assert_non_null(m);
	place_model_scorer(m, &sc);
	sc.name = "gnn";
	sc.hold = (place_hold_gate){ .p = fixed_p, .ctx = &p };
	assert_int_equal(place_engine_set_scorer(f.e, PLACE_POLICY_GNN, &sc), 0);
	assert_int_equal(place_decide(f.e, f.s, &r, PLACE_POLICY_GNN, PLACE_POLICY_TREE, &d), 0);
	assert_int_equal(d.deferred, 0);
	assert_true(d.hold_p == 0.1);
	assert_non_null(strstr(d.defer_why, "learned hold gate gives a hold 0.10: placed now"));
	/* a gate of 0.9 holds where the analytic rule would not (0.5 x 500 /
	 * share: longer than its own communication share) */
	p = 0.9;
	r.predicted_runtime_s = 0.5 * 500 / share;
	assert_int_equal(place_decide(f.e, f.s, &r, PLACE_POLICY_MODEL, PLACE_POLICY_TREE, &d), 0);
	assert_int_equal(d.deferred, 0);
	assert_true(d.hold_feat[0] == 0);
	assert_int_equal(place_decide(f.e, f.s, &r, PLACE_POLICY_GNN, PLACE_POLICY_TREE, &d), 0);
	assert_int_equal(d.deferred, 1);
	assert_true(d.defer_wait_s == 500);
	assert_int_equal(d.defer_groups, 1);
	assert_non_null(strstr(d.defer_why, "learned hold gate gives a hold 0.90"));
	/* no prediction: what the gate was not trained on; the analytic rule
	 * decides (holds) even with a gate of 0.1 */
	p = 0.1;
	r.predicted_runtime_s = 0;
	assert_int_equal(place_decide(f.e, f.s, &r, PLACE_POLICY_GNN, PLACE_POLICY_TREE, &d), 0);
	assert_int_equal(d.deferred, 1);
	assert_true(d.hold_p == -1);
	/* no better set in time (300 s left, su2 frees in 500 s): nothing to
	 * gate, placed now */
	r.predicted_runtime_s = 2 * 500 / share;
	r.deferred_s = 50000 - 300;
	assert_int_equal(place_decide(f.e, f.s, &r, PLACE_POLICY_GNN, PLACE_POLICY_TREE, &d), 0);
	assert_int_equal(d.deferred, 0);
	assert_true(d.hold_p == -1);
	assert_true(d.hold_feat[1] == 0);
	assert_float_equal(d.hold_feat[7], 300.0 / 50000, 1e-6);
	fx_close(&f);
	place_model_free(m);
}

static void test_defer_not_applicable(void **st)
{
	fx f;
	place_decision d;
	place_request r = heavy(3, 10000, 0);

	/* LocalityWait off */
	fx_open(&f, 0, 0);
	fragmented(&f);
	assert_int_equal(place_decide(f.e, f.s, &r, PLACE_POLICY_MODEL, PLACE_POLICY_TREE, &d), 0);
	assert_int_equal(d.deferred, 0);
	assert_int_equal(d.locality_checked, 0);
	fx_close(&f);
	fx_open(&f, 0.5, 0);
	fragmented(&f);
	/* no time limit known */
	r.time_limit_s = 0;
	assert_int_equal(place_decide(f.e, f.s, &r, PLACE_POLICY_MODEL, PLACE_POLICY_TREE, &d), 0);
	assert_int_equal(d.deferred, 0);
	/* a light job is never deferred */
	r = heavy(3, 10000, 0);
	r.comm.cls = PLACE_COMM_LIGHT;
	assert_int_equal(place_decide(f.e, f.s, &r, PLACE_POLICY_MODEL, PLACE_POLICY_TREE, &d), 0);
	assert_int_equal(d.deferred, 0);
	assert_int_equal(d.min_groups, 0);
	/* --switches keeps Slurm's own rule */
	r = heavy(3, 10000, 0);
	r.max_groups = 2;
	assert_int_equal(place_decide(f.e, f.s, &r, PLACE_POLICY_MODEL, PLACE_POLICY_TREE, &d), 0);
	assert_int_equal(d.deferred, 0);
	/* unknown ends never free: su2's job without an end; su1 at 2000 */
	r = heavy(3, 10000, 0);
	assert_int_equal(place_state_set_job_end(f.s, 2, 0), 0);
	assert_int_equal(place_decide(f.e, f.s, &r, PLACE_POLICY_MODEL, PLACE_POLICY_TREE, &d), 0);
	assert_int_equal(d.deferred, 1);
	assert_true(d.defer_wait_s == 1000);
	assert_int_equal(d.defer_group_mask[0], 1);
	assert_int_equal(d.defer_group_mask[1], 0);
	assert_int_equal(place_state_set_job_end(f.s, 99, 10), -1);
	fx_close(&f);
}

/* As in Slurm, the request offers only the free hosts (node_map): busy
 * hosts still count as what may free; `eligible` (the job's partition)
 * rules hosts out for good. */
static void test_defer_slurm_node_map(void **st)
{
	fx f;
	place_decision d;
	place_request r = heavy(3, 10000, 0);
	uint8_t offered[12] = { 0 }, part[12] = { 0 };

	offered[2] = offered[3] = offered[7] = 1; /* n03 n04 n08 */
	for (int h = 0; h < 8; h++)
		part[h] = h < 4 || h == 7; /* su1 and n08: su2 mostly elsewhere */
	fx_open(&f, 0.5, 0);
	fragmented(&f);
	r.allowed = offered;
	assert_int_equal(place_decide(f.e, f.s, &r, PLACE_POLICY_MODEL, PLACE_POLICY_TREE, &d), 0);
	assert_int_equal(d.min_groups, 1);
	assert_int_equal(d.deferred, 1);
	assert_true(d.defer_wait_s == 500);
	r.eligible = part;
	assert_int_equal(place_decide(f.e, f.s, &r, PLACE_POLICY_MODEL, PLACE_POLICY_TREE, &d), 0);
	assert_int_equal(d.deferred, 1);
	assert_true(d.defer_wait_s == 1000); /* su1, not su2 */
	assert_int_equal(d.defer_group_mask[0], 1);
	fx_close(&f);
}

static void test_locality_wait_parse(void **st)
{
	double f = -1, cap = -1;
	char why[256];

	assert_int_equal(place_locality_wait_parse("0.25,2h", &f, &cap, why, sizeof(why)), 0);
	assert_true(f == 0.25 && cap == 7200);
	assert_int_equal(place_locality_wait_parse("0.5,90m", &f, &cap, why, sizeof(why)), 0);
	assert_true(f == 0.5 && cap == 5400);
	assert_int_equal(place_locality_wait_parse("1,600", &f, &cap, why, sizeof(why)), 0);
	assert_true(f == 1 && cap == 600);
	assert_int_equal(place_locality_wait_parse("0.1", &f, &cap, why, sizeof(why)), 0);
	assert_true(f == 0.1 && cap == 0);
	assert_int_equal(place_locality_wait_parse("off", &f, &cap, why, sizeof(why)), 0);
	assert_true(f == 0 && cap == 0);
	assert_int_equal(place_locality_wait_parse("-1", &f, &cap, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "from 0 to 10"));
	assert_int_equal(place_locality_wait_parse("0.5,2d", &f, &cap, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "unexpected \"d\""));
	assert_int_equal(place_locality_wait_parse("0.5,", &f, &cap, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "cap must be a duration"));
	assert_int_equal(place_locality_wait_parse("", &f, &cap, why, sizeof(why)), -1);
}

/* A one-host job of class none, 10000 s limit at t=1000. su1: n01..n03
 * until 1100 (about to free whole); su2: n05, n06 until 100000; su3 idle.
 * Knowing the ends, it goes to su2 (its neighbours outlast it) rather than
 * pin su1; without a time limit, to su1's last host (tightest). */
/* The hold sorts hosts by the time they free with a radix sort: the same
 * order as the heap sort it replaced (by key, ties by host index), for keys
 * from 0 to ~1e9 with many ties, including the empty and all-zero cases. */
static void test_sort_radix_matches_heap(void **st)
{
	enum { N = 5000 };
	static int key[N], a[N], b[N], tmp[N];
	unsigned long long r = 42;
	const int span[] = {0, 1, 200, 70000, 1000000000};

	(void)st;
	for (size_t k = 0; k < sizeof(span) / sizeof(span[0]); k++) {
		for (int i = 0; i < N; i++) {
			r = r * 6364136223846793005ull + 1442695040888963407ull;
			key[i] = span[k] ? (int)((r >> 33) % (unsigned long long)span[k]) : 0;
			a[i] = b[i] = i;
		}
		place_sort_by_key(a, N, key);
		place_sort_radix(b, N, key, tmp);
		assert_memory_equal(a, b, sizeof(a));
		for (int i = 1; i < N; i++)
			assert_true(key[b[i - 1]] < key[b[i]] ||
				    (key[b[i - 1]] == key[b[i]] && b[i - 1] < b[i]));
	}
	place_sort_radix(b, 0, key, tmp);
}

static void test_packing_light(void **st)
{
	fx f;
	place_decision d;
	place_request r = heavy(1, 10000, 0);
	int a[] = { 0, 1, 2 }, b[] = { 4, 5 };

	fx_open(&f, 0.5, 0);
	job(&f, 1, a, 3, 1100);
	job(&f, 2, b, 2, 100000);
	r.comm.cls = PLACE_COMM_NONE;
	assert_int_equal(place_decide(f.e, f.s, &r, PLACE_POLICY_MODEL, PLACE_POLICY_TREE, &d), 0);
	assert_int_equal(place_cluster_host_group(f.c, d.chosen.hosts[0]), 1);
	assert_true(d.chosen.frag_cost > 0.12 && d.chosen.frag_cost < 0.13); /* tight 0.25 / 2 */
	r.time_limit_s = 0;
	assert_int_equal(place_decide(f.e, f.s, &r, PLACE_POLICY_MODEL, PLACE_POLICY_TREE, &d), 0);
	assert_string_equal(place_cluster_host_name(f.c, d.chosen.hosts[0]), "n04");
	assert_true(d.chosen.frag_cost == 0);
	fx_close(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defer_until_group_frees),
		cmocka_unit_test(test_defer_budget),
		cmocka_unit_test(test_defer_own_gain),
		cmocka_unit_test(test_defer_queue_drain),
		cmocka_unit_test(test_hold_features_scale_free),
		cmocka_unit_test(test_hold_gate),
		cmocka_unit_test(test_defer_not_applicable),
		cmocka_unit_test(test_defer_slurm_node_map),
		cmocka_unit_test(test_locality_wait_parse),
		cmocka_unit_test(test_packing_light),
		cmocka_unit_test(test_sort_radix_matches_heap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
