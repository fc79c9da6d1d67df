/* Unit tests for the trace simulator: FCFS + EASY backfill on a tiny
 * hand-made trace with hand-checked waits, the fabric's max-min sharing on
 * a 2:1 oversubscribed fat-tree, and determinism (same seed, same metrics). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim.h"
#include "sim_internal.h"
#include "test_tmp.h"

struct world {
	topo_graph *g;
	place_cluster *c;
};

static void world_new(struct world *w, const char *spec)
{
	topo_error err;

	w->g = sim_load_graph("fattree", spec, &err);
	assert_non_null(w->g);
	w->c = place_cluster_new(w->g, &err);
	assert_non_null(w->c);
}

static void world_free(struct world *w)
{
	place_cluster_free(w->c);
	topo_graph_free(w->g);
}

/* Load an SWF text into a trace (1 processor = 1 host). */
static void swf(topo_trace *t, const char *text)
{
	char path[512];
	int fd = test_mkstemp(path, sizeof(path), "test_sim_XXXXXX");
	topo_error err;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	trace_init(t);
	assert_int_equal(trace_load(t, path, &err), 0);
	unlink(path);
	trace_map_hosts(t, 1, 1, 0, 0);
}

#define SWF(id, sub, run, procs, req) \
	#id " " #sub " 0 " #run " " #procs " -1 -1 " #procs " " #req " -1 1 1 1 -1 -1 -1 -1 -1\n"

static void run(struct world *w, const topo_trace *t, place_policy p, sim_metrics *m)
{
	sim_config cfg;
	topo_error err;

	sim_config_init(&cfg);
	cfg.policy = p;
	if (sim_run(w->c, t, &cfg, m, &err))
		fail_msg("sim: %s", err.text);
}

/* 8 hosts. J1 takes 6 until 100. J2 (4 hosts) must wait for J1: its
 * reservation is t=100, leaving 4 spare hosts. J3 (2 hosts, ends at 50 <=
 * 100) backfills at 20. J4 (2 hosts, 200 s) fits the 4 spare hosts: it
 * backfills at 50 when J3 ends. J2 starts at 100.
 * Waits 0, 90, 0, 20; makespan 250 (J4 ends at 250);
 * utilisation (6x100 + 4x50 + 2x30 + 2x200) / (8 x 250) = 0.63. */
static void test_easy_backfill(void **state)
{
	struct world w;
	topo_trace t;
	sim_metrics m;

	world_new(&w, "groups=2,hosts=4,rails=1");
	swf(&t, SWF(1, 0, 100, 6, 100) SWF(2, 10, 50, 4, 50) SWF(3, 20, 30, 2, 30)
		SWF(4, 30, 200, 2, 200));
	run(&w, &t, PLACE_POLICY_LINEAR, &m);
	assert_int_equal(m.started, 4);
	assert_int_equal(m.heavy_jobs, 0);
	assert_true(m.mean_wait_s == (0 + 90 + 0 + 20) / 4.0);
	assert_true(m.p95_wait_s == 90.0);
	assert_true(m.makespan_s == 250.0);
	assert_float_equal(m.utilization, 0.63, 1e-9);
	/* no communication, no slowdown: the busy time is all useful work */
	assert_float_equal(m.useful_utilization, m.utilization, 1e-12);
	assert_true(m.mean_comm_slowdown == 1.0);
	trace_free(&t);
	world_free(&w);
}

/* J2 needs all 8 hosts: its reservation at 100 leaves no spare host. J3
 * ends by its requested time (50) before 100 and backfills at 20; J4 would
 * run past 100 on hosts J2 needs, so it waits for J2 (100..150): wait 120. */
static void test_backfill_respects_reservation(void **state)
{
	struct world w;
	topo_trace t;
	sim_metrics m;

	world_new(&w, "groups=2,hosts=4,rails=1");
	swf(&t, SWF(1, 0, 100, 6, 100) SWF(2, 10, 50, 8, 50) SWF(3, 20, 30, 2, 30)
		SWF(4, 30, 100, 2, 100));
	run(&w, &t, PLACE_POLICY_LINEAR, &m);
	assert_int_equal(m.started, 4);
	assert_true(m.mean_wait_s == (0 + 90 + 0 + 120) / 4.0);
	assert_true(m.makespan_s == 250.0);
	/* a job wider than the cluster is dropped, not queued forever */
	trace_free(&t);
	swf(&t, SWF(1, 0, 100, 9, 100) SWF(2, 5, 10, 1, 10));
	run(&w, &t, PLACE_POLICY_LINEAR, &m);
	assert_int_equal(m.dropped, 1);
	assert_int_equal(m.started, 1);
	assert_true(m.mean_wait_s == 0.0);
	trace_free(&t);
	world_free(&w);
}

/* Hosts 0,1 under leaf su1, 2,3 under su2; 2:1 oversubscription leaves one
 * 400G up-link per leaf. Rings {0,2} and {1,3} each send one flow up each
 * leaf: two flows share each up-link, 200 Gb/s each. Alone, one ring gets
 * the full 400. */
static void test_maxmin_sharing(void **state)
{
	struct world w;
	topo_error err;
	sim_net *n;
	sim_flows a = {0}, b = {0};
	sim_flows *both[2] = {&a, &b};
	double rate[2];
	int ha[] = {0, 2}, hb[] = {1, 3}, hc[] = {0, 1};

	world_new(&w, "groups=2,hosts=2,rails=1,oversub=2");
	n = sim_net_new(w.c, &err);
	assert_non_null(n);
	assert_int_equal(sim_net_nleaves(n), 2);
	assert_int_equal(sim_net_host_leaf(n, 0, 0), sim_net_host_leaf(n, 1, 0));
	assert_int_not_equal(sim_net_host_leaf(n, 0, 0), sim_net_host_leaf(n, 2, 0));
	assert_int_equal(sim_net_ring(n, ha, 2, &a), 0);
	assert_int_equal(sim_net_ring(n, hb, 2, &b), 0);
	assert_true(a.flows == 2 && a.cross_leaf == 2 && a.cross_group == 2);
	assert_true(a.cable_gbps == 400.0);
	sim_net_share(n, both, 2, rate);
	assert_float_equal(rate[0], 200.0, 1e-9);
	assert_float_equal(rate[1], 200.0, 1e-9);
	assert_float_equal(sim_net_leaf_util(n, 0), 1.0, 1e-9);
	sim_net_share(n, both, 1, rate);
	assert_float_equal(rate[0], 400.0, 1e-9);
	/* {0,1} stays inside leaf su1 but shares host 0's cable with {0,2}:
	 * the cable, not an up-link, halves both */
	assert_int_equal(sim_net_ring(n, hc, 2, &b), 0);
	assert_true(b.cross_leaf == 0 && b.flows == 2);
	sim_net_share(n, both, 2, rate);
	assert_float_equal(rate[0], 200.0, 1e-9);
	assert_float_equal(rate[1], 200.0, 1e-9);
	sim_flows_free(&a);
	sim_flows_free(&b);
	sim_net_free(n);
	world_free(&w);
}

/* A run with communication profiles; frac: --locality-wait FRAC. */
static void profiled_run(struct world *w, const topo_trace *t, place_policy p, unsigned seed,
			 double frac, const sim_comm_profile *prof, int nprof, sim_metrics *m)
{
	sim_config cfg;
	topo_error err;

	sim_config_init(&cfg);
	cfg.policy = p;
	cfg.place.seed = seed;
	cfg.profiles = prof;
	cfg.nprofiles = nprof;
	cfg.place.locality_wait_frac = frac;
	if (sim_run(w->c, t, &cfg, m, &err))
		fail_msg("sim: %s", err.text);
}

static void kth_run(struct world *w, const topo_trace *t, unsigned seed, sim_metrics *m,
		    const sim_comm_profile *prof, int nprof)
{
	profiled_run(w, t, PLACE_POLICY_TREE, seed, 0, prof, nprof, m);
}

/* The first 100 KTH jobs, 4x scaled, on a 2:1 fat-tree of 512 hosts: the
 * same seed gives the same metrics to the bit (decision latencies aside). */
static void test_determinism(void **state)
{
	struct world w;
	topo_trace t;
	topo_error err;
	sim_comm_profile prof[2];
	sim_metrics a, b;

	world_new(&w, "groups=4,hosts=128,rails=2,oversub=2");
	assert_int_equal(sim_load_profiles(FIXTURES_DIR "/comm", prof, 2, &err), 2);
	trace_init(&t);
	assert_int_equal(trace_load(&t, FIXTURES_DIR "/traces/kth-sp2-head100.swf", &err), 0);
	assert_int_equal(trace_map_hosts(&t, 1, 4, 512, 1), 0);
	kth_run(&w, &t, 7, &a, prof, 2);
	kth_run(&w, &t, 7, &b, prof, 2);
	assert_int_equal(a.started, 100);
	assert_true(a.heavy_jobs > 50);
	assert_true(a.mean_wait_s == b.mean_wait_s);
	assert_true(a.makespan_s == b.makespan_s);
	assert_true(a.cross_leaf_bytes_heavy == b.cross_leaf_bytes_heavy);
	assert_true(a.total_bytes_heavy == b.total_bytes_heavy && a.total_bytes_heavy > 0);
	assert_true(a.mean_comm_slowdown == b.mean_comm_slowdown);
	assert_true(a.mean_comm_slowdown >= 1.0);
	assert_true(a.utilization == b.utilization);
	/* a job slowed by communication is busy at least as long as its work */
	assert_true(a.useful_utilization == b.useful_utilization);
	assert_true(a.useful_utilization > 0 &&
		    a.useful_utilization <= a.utilization * (1 + 1e-12));
	assert_true(a.fragmentation == b.fragmentation);
	/* another seed draws other profiles: other bytes */
	kth_run(&w, &t, 8, &b, prof, 2);
	assert_true(a.total_bytes_heavy != b.total_bytes_heavy);
	trace_free(&t);
	world_free(&w);
}

/* g_min on the real SuperPOD (8 groups of 10-18 hosts): the largest groups
 * fill first; and on an equal 3 x 4 fat-tree. */
static void test_bound_gmin(void **state)
{
	struct world w;
	topo_error err;
	sim_net *n;
	sim_bound *b;
	int sizes[16] = {0}, ng, sorted[16], total = 0, hosts[3] = {0, 1, 5};

	world_new(&w, "groups=3,hosts=4,rails=2");
	n = sim_net_new(w.c, &err);
	b = sim_bound_new(w.c, n);
	assert_non_null(b);
	assert_int_equal(sim_bound_gmin(b, 1), 1);
	assert_int_equal(sim_bound_gmin(b, 4), 1);
	assert_int_equal(sim_bound_gmin(b, 5), 2);
	assert_int_equal(sim_bound_gmin(b, 9), 3);
	assert_int_equal(sim_bound_groups(b, hosts, 2), 1);
	assert_int_equal(sim_bound_groups(b, hosts, 3), 2);
	sim_bound_free(b);
	sim_net_free(n);
	world_free(&w);

	w.g = sim_load_graph("ibnetdiscover", FIXTURES_DIR "/fabrics/dgx-h100-superpod.ibnetdiscover",
			     &err);
	assert_non_null(w.g);
	w.c = place_cluster_new(w.g, &err);
	assert_non_null(w.c);
	ng = place_cluster_ngroups(w.c);
	assert_true(ng == 8);
	for (int h = 0; h < place_cluster_nhosts(w.c); h++)
		sizes[place_cluster_host_group(w.c, h)]++;
	/* the expected g_min from the group sizes, sorted by hand here */
	memcpy(sorted, sizes, sizeof(sorted));
	for (int i = 0; i < ng; i++)
		for (int k = i + 1; k < ng; k++)
			if (sorted[k] > sorted[i]) {
				int t = sorted[i];

				sorted[i] = sorted[k];
				sorted[k] = t;
			}
	assert_true(sorted[0] == 18 && sorted[ng - 1] == 10);
	n = sim_net_new(w.c, &err);
	b = sim_bound_new(w.c, n);
	assert_non_null(b);
	assert_int_equal(sim_bound_gmin(b, sorted[0]), 1);
	assert_int_equal(sim_bound_gmin(b, sorted[0] + 1), 2);
	assert_int_equal(sim_bound_gmin(b, sorted[0] + sorted[1]), 2);
	assert_int_equal(sim_bound_gmin(b, sorted[0] + sorted[1] + 1), 3);
	for (int i = 0; i < ng; i++)
		total += sorted[i];
	assert_int_equal(total, 119);
	assert_int_equal(sim_bound_gmin(b, total), ng);
	sim_bound_free(b);
	sim_net_free(n);
	world_free(&w);
}

/* 2 groups of 4 hosts, 1 rail, every multi-host job heavy with one profile
 * (1 GB per iteration, 0.1 s compute; 400 Gb/s cables). Under tree: J1 (3
 * hosts) and J2 (3) fill one group each, so J3 (2 hosts, 400 s) is split
 * over hosts 3 and 7: 2 groups where 1 would do (avoidable). J4 (6 hosts,
 * later, alone) needs 2 groups anyway. J3's ring: 2 flows of 1 GB, both
 * crossing, 400 / (0.1 + 8/400) = 3333.3 iterations: 6.667e12 B. J4's: 6
 * flows of 2 x 5/6 GB, 2 crossing, 400 / (0.1 + 0.0333) = 3000 iterations:
 * 1e13 B. The bound places J3 in one group (0 B) and J4 as it went (1e13). */
static void test_bound_and_avoidable(void **state)
{
	struct world w;
	topo_trace t;
	sim_metrics m;
	sim_config cfg;
	topo_error err;
	sim_comm_profile prof;
	json_t *j;

	memset(&prof, 0, sizeof(prof));
	prof.comm = (place_comm){PLACE_COMM_HEAVY, PLACE_PATTERN_RING, 1e9, 0.1, 0};
	world_new(&w, "groups=2,hosts=4,rails=1");
	swf(&t, SWF(1, 0, 1000, 3, 1000) SWF(2, 1, 1000, 3, 1000) SWF(3, 2, 400, 2, 400)
		SWF(4, 5000, 400, 6, 400));
	sim_config_init(&cfg);
	cfg.policy = PLACE_POLICY_TREE;
	cfg.profiles = &prof;
	cfg.nprofiles = 1;
	if (sim_run(w.c, &t, &cfg, &m, &err))
		fail_msg("sim: %s", err.text);
	assert_int_equal(m.heavy_jobs, 4);
	assert_int_equal(m.multi_group_heavy, 2);
	assert_int_equal(m.avoidable_multi_group, 1);
	assert_int_equal(m.bound_multi_group_heavy, 1);
	assert_float_equal(m.cross_group_bytes_heavy, 400 / 0.12 * 2e9 + 1e13, 1e3);
	assert_float_equal(m.cross_leaf_bytes_heavy, m.cross_group_bytes_heavy, 1e3);
	assert_float_equal(m.bound_cross_group_bytes_heavy, 1e13, 1e3);
	assert_float_equal(m.bound_cross_leaf_bytes_heavy, 1e13, 1e3);
	/* the JSON carries the same numbers */
	j = sim_bound_json(&m);
	assert_float_equal(json_real_value(json_object_get(j, "cross_group_bytes_heavy")), 1e13, 1e3);
	assert_int_equal(json_integer_value(json_object_get(j, "multi_group_heavy")), 1);
	json_decref(j);
	j = sim_metrics_json(&m);
	assert_int_equal(json_integer_value(json_object_get(j, "avoidable_multi_group")), 1);
	json_decref(j);
	trace_free(&t);
	world_free(&w);
}

/* SHARP: on 4 groups of 4 hosts (1 rail, 2 up-links per leaf, 4 spines,
 * SHARP on every leaf and spines 1-2), groups 1 and 3 share spines 1-2.
 * A job on 2 hosts of group 1 and 2 of group 3 as a ring: 4 flows, 2 of
 * them between leaves; reduced in the network: 4 host streams, one per
 * leaf (2) crossing. A job on groups 2 and 4 (spines 3-4, no SHARP) is not
 * eligible; the simulator then uses the ring. */
static void test_sharp_streams(void **state)
{
	struct world w;
	topo_error err;
	sim_net *n;
	sim_flows f = {0};
	int h13[4], h24[4];

	(void)state;
	world_new(&w, "groups=4,hosts=4,rails=1,oversub=2,spines=4,sharp=2,prefix=n,digits=2");
	n = sim_net_new(w.c, &err);
	assert_non_null(n);
	for (int i = 0; i < 2; i++) {
		char name[8];

		snprintf(name, sizeof(name), "n%02d", 1 + i);
		h13[i] = place_cluster_find_host(w.c, name);
		snprintf(name, sizeof(name), "n%02d", 9 + i);
		h13[2 + i] = place_cluster_find_host(w.c, name);
		snprintf(name, sizeof(name), "n%02d", 5 + i);
		h24[i] = place_cluster_find_host(w.c, name);
		snprintf(name, sizeof(name), "n%02d", 13 + i);
		h24[2 + i] = place_cluster_find_host(w.c, name);
	}
	assert_int_equal(place_cluster_sharp_eligible(w.c, h13, 4), 1);
	assert_int_equal(place_cluster_sharp_eligible(w.c, h24, 4), 0);
	assert_true(place_cluster_sharp_root(w.c, h13, 4, 0) >= 0);
	assert_int_equal(place_cluster_sharp_root(w.c, h24, 4, 0), -1);
	assert_int_equal(sim_net_ring(n, h13, 4, &f), 0);
	assert_true(f.flows == 4 && f.cross_leaf == 2 && f.cross_group == 2 && !f.fast);
	assert_int_equal(sim_net_sharp(n, h13, 4, &f), 0);
	assert_true(f.flows == 4 && f.cross_leaf == 2 && f.cross_group == 2 && f.fast);
	/* 4 host cables x 2 directions + 2 leaf cables x 2 directions */
	assert_int_equal(f.nres, 12);
	for (int i = 0; i < f.nres; i++)
		assert_float_equal(f.cnt[i], 1.0, 1e-12);
	sim_flows_free(&f);
	sim_net_free(n);
	world_free(&w);
}

/* The same jobs with and without SHARP users, and with and without NVLink
 * domains: in-network reduction moves fewer bytes between leaves, and a
 * ring inside a domain moves none over the fabric, at the same or better
 * slowdown; the physics do not depend on the policy. */
static void test_sharp_and_nvlink_runs(void **state)
{
	struct world w, wn;
	topo_trace t;
	sim_metrics m0, m1, mt0, mt1;
	sim_config cfg;
	topo_error err;
	sim_comm_profile prof;

	(void)state;
	memset(&prof, 0, sizeof(prof));
	prof.comm = (place_comm){PLACE_COMM_HEAVY, PLACE_PATTERN_RING, 1e9, 0.1, 0};
	world_new(&w, "groups=4,hosts=4,rails=1,oversub=2,spines=4,sharp=2");
	swf(&t, SWF(1, 0, 1000, 8, 1000) SWF(2, 1, 1000, 4, 1000) SWF(3, 2, 400, 4, 400));
	for (int sh = 0; sh < 2; sh++)
		for (int p = 0; p < 2; p++) {
			sim_config_init(&cfg);
			cfg.policy = p ? PLACE_POLICY_MODEL : PLACE_POLICY_TREE;
			cfg.profiles = &prof;
			cfg.nprofiles = 1;
			cfg.sharp_share = sh;
			if (sim_run(w.c, &t, &cfg, sh ? (p ? &m1 : &mt1) : (p ? &m0 : &mt0), &err))
				fail_msg("sim: %s", err.text);
		}
	assert_true(m1.cross_leaf_bytes_heavy < m0.cross_leaf_bytes_heavy);
	assert_true(m1.mean_comm_slowdown < m0.mean_comm_slowdown);
	assert_true(mt1.cross_leaf_bytes_heavy <= mt0.cross_leaf_bytes_heavy);
	trace_free(&t);
	world_free(&w);

	/* 2 domains of 8 hosts over the same fabric shape */
	world_new(&w, "groups=2,hosts=8,rails=1,oversub=2,gpus=4");
	world_new(&wn, "groups=2,hosts=8,rails=1,oversub=2,gpus=4,nvl=8");
	assert_int_equal(place_cluster_ndomains(wn.c), 2);
	assert_float_equal(place_cluster_host_nvlink_gbps(wn.c, 0), 4 * 7200.0, 1e-9);
	swf(&t, SWF(1, 0, 1000, 8, 1000) SWF(2, 1, 1000, 4, 1000) SWF(3, 2, 400, 4, 400));
	sim_config_init(&cfg);
	cfg.policy = PLACE_POLICY_MODEL;
	cfg.profiles = &prof;
	cfg.nprofiles = 1;
	if (sim_run(w.c, &t, &cfg, &m0, &err) || sim_run(wn.c, &t, &cfg, &m1, &err))
		fail_msg("sim: %s", err.text);
	assert_true(m0.total_bytes_heavy > 0);
	assert_float_equal(m1.total_bytes_heavy, 0, 1e-9); /* every job inside one domain */
	assert_true(m1.mean_comm_slowdown < m0.mean_comm_slowdown);
	trace_free(&t);
	world_free(&w);
	world_free(&wn);
}

static void locality_run(struct world *w, const topo_trace *t, place_policy p, double frac,
			 const sim_comm_profile *prof, int nprof, sim_metrics *m)
{
	profiled_run(w, t, p, 1, frac, prof, nprof, m);
}

/* Two groups of 4 hosts. J1 (3 hosts, until 100) takes su1's 0-2, J2 (3
 * hosts, until 1000) su2's 4-6. J3 (2 hosts, heavy, limit 50) arrives at
 * 10: hosts 3 and 7 are free, two groups where one would do; su1 frees at
 * 100 (J1's requested end), 90 s, within its budget of 2 x 50 s: deferred.
 * J5 (one host, requested 500 s) arrives at 20; it would run past J3's
 * expected start, so the reservation keeps su1 for J3 and J5 takes host 7.
 * J3 starts at 100 in su1. Waits 0, 0, 90, 0; no byte crosses a group.
 * Without the wait: J3 at 10 over both groups, J5 waits for it (until 60).
 * tree never waits, whatever LocalityWait says. */
static void test_locality_wait(void **state)
{
	struct world w;
	topo_trace t;
	topo_error err;
	sim_comm_profile prof[2];
	sim_metrics m, off, tree, tree_lw;

	world_new(&w, "groups=2,hosts=4,rails=1");
	assert_int_equal(sim_load_profiles(FIXTURES_DIR "/comm", prof, 2, &err), 2);
	swf(&t, SWF(1, 0, 100, 3, 100) SWF(2, 0, 1000, 3, 1000) SWF(3, 10, 50, 2, 50)
		SWF(5, 20, 30, 1, 500));
	locality_run(&w, &t, PLACE_POLICY_MODEL, 2.0, prof, 2, &m);
	assert_int_equal(m.started, 4);
	assert_int_equal(m.deferred_jobs, 1);
	assert_true(m.deferrals >= 1);
	assert_float_equal(m.mean_defer_s, 90.0, 1e-9);
	assert_float_equal(m.mean_wait_s, 90.0 / 4, 1e-9);
	assert_true(m.cross_group_bytes_heavy == 0);
	locality_run(&w, &t, PLACE_POLICY_MODEL, 0, prof, 2, &off);
	assert_int_equal(off.deferred_jobs, 0);
	assert_float_equal(off.mean_wait_s, 40.0 / 4, 1e-9);
	assert_true(off.cross_group_bytes_heavy > 0);
	/* a budget too small for the 90 s: placed at once, as without */
	locality_run(&w, &t, PLACE_POLICY_MODEL, 1.0, prof, 2, &m);
	assert_int_equal(m.deferred_jobs, 0);
	assert_true(m.mean_wait_s == off.mean_wait_s);
	locality_run(&w, &t, PLACE_POLICY_TREE, 0, prof, 2, &tree);
	locality_run(&w, &t, PLACE_POLICY_TREE, 2.0, prof, 2, &tree_lw);
	assert_int_equal(tree_lw.deferrals, 0);
	assert_true(tree.mean_wait_s == tree_lw.mean_wait_s);
	assert_true(tree.cross_group_bytes_heavy == tree_lw.cross_group_bytes_heavy);
	assert_true(tree.cross_group_bytes_heavy > 0);
	trace_free(&t);
	world_free(&w);
}

/* The teacher weighs a defer its base policy cannot see: the same two
 * groups, but J1 really ends at 20 (it asked for 100). J3 (heavy, limit
 * 50) arrives at 10 with hosts 3 and 7 free. LocalityWait 1 x 50 s: the
 * engine predicts su1 free only at 100, past the budget, so `model`
 * starts J3 at once over both groups. `lookahead-model` forks both: now,
 * or held to the next event; at 20 su1 frees and J3 starts there, 10 s
 * later and with no byte across groups. With no budget (frac 0) the
 * teacher has no defer to weigh, and told predictions (+pred) it has no
 * reason to. */
static void test_lookahead_defer(void **state)
{
	struct world w;
	topo_trace t;
	topo_error err;
	sim_comm_profile prof[2];
	sim_metrics la, model, la_off, la_pred;
	sim_config cfg;

	(void)state;
	world_new(&w, "groups=2,hosts=4,rails=1");
	assert_int_equal(sim_load_profiles(FIXTURES_DIR "/comm", prof, 2, &err), 2);
	swf(&t, SWF(1, 0, 20, 3, 100) SWF(2, 0, 1000, 3, 1000) SWF(3, 10, 50, 2, 50));
	locality_run(&w, &t, PLACE_POLICY_MODEL, 1.0, prof, 2, &model);
	assert_int_equal(model.deferred_jobs, 0);
	assert_true(model.cross_group_bytes_heavy > 0);
	assert_float_equal(model.mean_wait_s, 0, 1e-9);
	for (int lw = 1; lw >= 0; lw--) {
		sim_metrics *m = lw ? &la : &la_off;

		sim_config_init(&cfg);
		assert_int_equal(sim_config_set_policy(&cfg, "lookahead-model"), 0);
		cfg.place.seed = 1;
		cfg.profiles = prof;
		cfg.nprofiles = 2;
		cfg.place.locality_wait_frac = lw;
		if (sim_run(w.c, &t, &cfg, m, &err))
			fail_msg("sim: %s", err.text);
		assert_int_equal(m->started, 3);
	}
	assert_int_equal(la.deferred_jobs, 1);
	assert_int_equal(la.lookahead_changed, 1);
	assert_true(la.cross_group_bytes_heavy == 0);
	assert_float_equal(la.mean_defer_s, 10.0, 1e-9);
	assert_float_equal(la.mean_wait_s, 10.0 / 3, 1e-9);
	assert_int_equal(la_off.deferred_jobs, 0);
	assert_true(la_off.cross_group_bytes_heavy == model.cross_group_bytes_heavy);
	/* Told only predictions, the teacher cannot see J1 end early: nothing
	 * has ended when J3 arrives, so J1's prediction is its limit, and its
	 * forks run J1 to 100 as the engine expects. Holding J3 only costs
	 * wait, and it starts at once over both groups, as under `model`. */
	sim_config_init(&cfg);
	assert_int_equal(sim_config_set_policy(&cfg, "lookahead-model+pred"), 0);
	assert_string_equal(sim_config_policy_name(&cfg), "lookahead-model+pred");
	cfg.place.seed = 1;
	cfg.profiles = prof;
	cfg.nprofiles = 2;
	cfg.place.locality_wait_frac = 1;
	if (sim_run(w.c, &t, &cfg, &la_pred, &err))
		fail_msg("sim: %s", err.text);
	assert_int_equal(la_pred.started, 3);
	assert_int_equal(la_pred.deferred_jobs, 0);
	assert_int_equal(la_pred.lookahead_changed, 0);
	assert_true(la_pred.cross_group_bytes_heavy == model.cross_group_bytes_heavy);
	assert_float_equal(la_pred.mean_wait_s, 0, 1e-9);
	trace_free(&t);
	world_free(&w);
}

/* The SuperPOD dump has hosts with fewer than 4 HCAs. A ring's rails are
 * those all of its hosts have, whichever host comes first, and no flow is
 * dropped: every host sends on each of them. The work (iterations) of a
 * job is the trace's: the same on any hosts. */
static void test_ring_rails(void **state)
{
	struct world w;
	topo_error err;
	sim_net *n;
	sim_flows a = {0}, b = {0};
	int shortr = -1, full = -1, ha[2], hb[2];
	double bpf_a, bpf_b, ti_a, ti_b;

	(void)state;
	w.g = sim_load_graph("ibnetdiscover", FIXTURES_DIR "/fabrics/dgx-h100-superpod.ibnetdiscover",
			     &err);
	assert_non_null(w.g);
	w.c = place_cluster_new(w.g, &err);
	assert_non_null(w.c);
	n = sim_net_new(w.c, &err);
	assert_non_null(n);
	assert_int_equal(sim_net_nrails(n), 4);
	for (int h = 0; h < place_cluster_nhosts(w.c); h++) {
		int k = 0;

		for (int r = 0; r < 4; r++)
			k += sim_net_host_leaf(n, h, r) >= 0;
		if (k == 4 && full < 0)
			full = h;
		if (k > 0 && k < 4 && shortr < 0)
			shortr = h;
	}
	assert_true(shortr >= 0 && full >= 0);
	ha[0] = hb[1] = shortr;
	ha[1] = hb[0] = full;
	assert_int_equal(sim_net_ring(n, ha, 2, &a), 0);
	assert_int_equal(sim_net_ring(n, hb, 2, &b), 0);
	assert_true(a.rails < 4 && a.rails >= 1);
	assert_true(a.rails == b.rails && a.flows == b.flows);
	assert_true(a.flows == 2 * a.rails); /* two ring edges, one flow per shared rail */
	sim_ring_cost(n, &a, 2, 1e9, &bpf_a, &ti_a);
	sim_ring_cost(n, &b, 2, 1e9, &bpf_b, &ti_b);
	assert_true(bpf_a * a.flows == bpf_b * b.flows);
	assert_float_equal(bpf_a * a.flows, 2 * 1e9, 1e-3); /* 2 (n-1)/n x bytes x n */
	/* the reference collective: 4 rails at the fastest cable */
	assert_float_equal(ti_a, 1e9 / 4 * 8 / (sim_net_ref_gbps(n) * 1e9), 1e-12);
	assert_true(ti_a == ti_b);
	sim_flows_free(&a);
	sim_flows_free(&b);
	sim_net_free(n);
	world_free(&w);
}

static void switches_run(struct world *w, const topo_trace *t, double frac,
			 const sim_comm_profile *prof, sim_metrics *m)
{
	sim_config cfg;
	topo_error err;

	sim_config_init(&cfg);
	assert_int_equal(sim_config_set_policy(&cfg, "tree-switches"), 0);
	assert_string_equal(sim_config_policy_name(&cfg), "tree-switches");
	cfg.profiles = prof;
	cfg.nprofiles = 2;
	cfg.place.locality_wait_frac = frac;
	if (sim_run(w->c, t, &cfg, m, &err))
		fail_msg("sim: %s", err.text);
	assert_string_equal(m->policy, "tree-switches");
}

/* tree-switches, Slurm's --switches=1@budget, on two groups of 4 hosts
 * (4 rails: a tree leaf switch is a group). J1 (3 hosts, until 100) takes
 * su1's 0-2, J2 (3 hosts, until 1000) su2's 4-6. J3 (2 hosts, heavy,
 * limit 50) arrives at 10: it fits on hosts 3 and 7, over two leaf
 * switches. Its wait starts at its first evaluation (10).
 * - budget 2 x 50 s: it stays pending (best_switch false); backfill plans
 *   it at 100 on su1 (J1's limit); it starts there at 100, wait 90, no byte
 *   across groups.
 * - budget 1 x 50 s: at 60 the wait is over: it takes hosts 3 and 7 then.
 * - no budget: tree's own answer at 10. */
static void test_tree_switches(void **state)
{
	struct world w;
	topo_trace t;
	topo_error err;
	sim_comm_profile prof[2];
	sim_metrics m, tree;

	(void)state;
	world_new(&w, "groups=2,hosts=4,rails=4");
	assert_int_equal(sim_load_profiles(FIXTURES_DIR "/comm", prof, 2, &err), 2);
	swf(&t, SWF(1, 0, 100, 3, 100) SWF(2, 0, 1000, 3, 1000) SWF(3, 10, 50, 2, 50));
	switches_run(&w, &t, 2.0, prof, &m);
	assert_int_equal(m.started, 3);
	assert_int_equal(m.deferred_jobs, 1);
	assert_float_equal(m.mean_defer_s, 90.0, 1e-9);
	assert_float_equal(m.mean_wait_s, 90.0 / 3, 1e-9);
	assert_true(m.cross_group_bytes_heavy == 0);
	switches_run(&w, &t, 1.0, prof, &m);
	assert_int_equal(m.deferred_jobs, 1);
	assert_float_equal(m.mean_wait_s, 50.0 / 3, 1e-9);
	assert_true(m.cross_group_bytes_heavy > 0);
	switches_run(&w, &t, 0, prof, &m);
	profiled_run(&w, &t, PLACE_POLICY_TREE, 1, 0, prof, 2, &tree);
	assert_int_equal(m.deferred_jobs, 0);
	assert_true(m.mean_wait_s == tree.mean_wait_s && tree.mean_wait_s == 0);
	assert_true(m.cross_group_bytes_heavy == tree.cross_group_bytes_heavy);
	trace_free(&t);
	world_free(&w);
}

/* A held head's backfill (every policy's): J1 (3 hosts, until 100) on
 * su1's 0-2, J2 (2 hosts, until 1000) on su2's 4-5 (tree's tightest
 * fit); J3 (4 hosts, heavy) arrives at 10 and waits for one group
 * (tree-switches, budget 2 x 100 s): backfill plans it on su1's hosts 0-3
 * from 100. J4 (1 host, limit 500, at 20) would go to host 3 (tree's
 * tightest fit) but may not use su1, as it would run past 100: it takes
 * host 6. J5 (1 host, limit 50, at 30) ends before 100 and may use host 3.
 * J3 starts at 100 on su1. Without the reservation J4 would hold host 3
 * until 520, and J3 would wait out its budget (210) and cross groups. */
static void test_held_reservation(void **state)
{
	struct world w;
	topo_trace t;
	topo_error err;
	sim_comm_profile prof[2];
	sim_metrics m;

	(void)state;
	world_new(&w, "groups=2,hosts=4,rails=4");
	assert_int_equal(sim_load_profiles(FIXTURES_DIR "/comm", prof, 2, &err), 2);
	swf(&t, SWF(1, 0, 100, 3, 100) SWF(2, 0, 1000, 2, 1000) SWF(3, 10, 100, 4, 100)
		SWF(4, 20, 500, 1, 500) SWF(5, 30, 50, 1, 50));
	switches_run(&w, &t, 2.0, prof, &m);
	assert_int_equal(m.started, 5);
	assert_int_equal(m.deferred_jobs, 0); /* it never fitted before 100 */
	/* waits: J3 90, the others 0 */
	assert_float_equal(m.mean_wait_s, 90.0 / 5, 1e-9);
	assert_true(m.cross_group_bytes_heavy == 0);
	trace_free(&t);
	world_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_easy_backfill),
		cmocka_unit_test(test_backfill_respects_reservation),
		cmocka_unit_test(test_maxmin_sharing),
		cmocka_unit_test(test_determinism),
		cmocka_unit_test(test_bound_gmin),
		cmocka_unit_test(test_bound_and_avoidable),
		cmocka_unit_test(test_locality_wait),
		cmocka_unit_test(test_lookahead_defer),
		cmocka_unit_test(test_sharp_streams),
		cmocka_unit_test(test_sharp_and_nvlink_runs),
		cmocka_unit_test(test_ring_rails),
		cmocka_unit_test(test_tree_switches),
		cmocka_unit_test(test_held_reservation),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
