/*
 * test_place_sharp: SHARP-aware placement on a fat-tree where only some
 * spines have SHARP, and NVLink domains inside a fabric.
 *
 * The SHARP fabric: 8 groups of 8 hosts, 1 rail, 2:1, 8 spines, SHARP on
 * every leaf and on spines 1-4. A leaf's 4 up-links go to spines
 * (leaf x 4 + u) mod 8, so the leaves of groups 1, 3, 5, 7 reach spines 1-4
 * (SHARP: one aggregation tree joins them) and those of groups 2, 4, 6, 8
 * reach spines 5-8 (no SHARP above them: each of those leaves is a tree
 * of its own only).
 *
 * The NVLink fabric: 4 groups of 36 hosts, 2 NVLink domains of 18 per
 * group (nvl1..nvl8), as GB200 NVL72 racks on an InfiniBand fat-tree.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "place.h"
#include "place_classify.h"
#include "topo_fattree.h"
#include "topo_graph.h"
#include "place_request.h"

#define SHARP_FABRIC "groups=8,hosts=8,rails=1,oversub=2,spines=8,sharp=4,prefix=n,digits=3"
#define NVL_FABRIC "groups=4,hosts=36,rails=2,oversub=1,gpus=4,nvl=18,prefix=gb,digits=3"

typedef struct fixture {
	topo_graph *g;
	place_cluster *c;
	place_state *s;
	place_engine *e;
} fixture;

static void setup_fabric(fixture *f, const char *text)
{
	topo_fattree_spec spec;
	place_config cfg;
	topo_error err;

	f->g = topo_graph_new();
	topo_fattree_spec_init(&spec);
	assert_int_equal(topo_fattree_parse(text, &spec, &err), 0);
	if (topo_fattree_build(f->g, &spec, &err))
		fail_msg("%s: %s", text, err.text);
	f->c = place_cluster_new(f->g, &err);
	assert_non_null(f->c);
	f->s = place_state_new(f->c);
	place_config_init(&cfg);
	f->e = place_engine_new(f->c, &cfg, &err);
	assert_non_null(f->s);
	assert_non_null(f->e);
	for (int h = 0; h < place_cluster_nhosts(f->c); h++)
		place_state_set_host(f->s, h, 4, 4, 0, 0, 0);
}

static void teardown_fabric(fixture *f)
{
	place_engine_free(f->e);
	place_state_free(f->s);
	place_cluster_free(f->c);
	topo_graph_free(f->g);
}

static place_request req(int n, int sharp)
{
	place_request r = heavy_request(n);

	r.comm.sharp = sharp;
	return r;
}

/* Hosts of the given 1-based groups (8 hosts each: n001..n008 is group 1). */
static int group_hosts(const place_cluster *c, const int *groups, int ng, int *out)
{
	int n = 0;

	for (int i = 0; i < ng; i++)
		for (int k = 1; k <= 8; k++) {
			char name[16];

			snprintf(name, sizeof(name), "n%03d", (groups[i] - 1) * 8 + k);
			out[n++] = place_cluster_find_host(c, name);
			assert_true(out[n - 1] >= 0);
		}
	return n;
}

/* The 1-based group of host h (n001..n008: 1). */
static int group_of(const place_cluster *c, int h)
{
	int num = 0;

	sscanf(place_cluster_host_name(c, h), "n%d", &num);
	return (num - 1) / 8 + 1;
}

static void test_eligibility(void **st)
{
	fixture f;
	int hosts[64], n;

	(void)st;
	setup_fabric(&f, SHARP_FABRIC);
	assert_true(place_cluster_has_sharp(f.c));
	n = group_hosts(f.c, (int[]){ 1, 3 }, 2, hosts);
	assert_int_equal(place_cluster_sharp_eligible(f.c, hosts, n), 1);
	n = group_hosts(f.c, (int[]){ 1, 3, 5, 7 }, 4, hosts);
	assert_int_equal(place_cluster_sharp_eligible(f.c, hosts, n), 1);
	n = group_hosts(f.c, (int[]){ 2, 4 }, 2, hosts);
	assert_int_equal(place_cluster_sharp_eligible(f.c, hosts, n), 0); /* spines 5-8 */
	n = group_hosts(f.c, (int[]){ 1, 2 }, 2, hosts);
	assert_int_equal(place_cluster_sharp_eligible(f.c, hosts, n), 0); /* no shared spine */
	n = group_hosts(f.c, (int[]){ 2 }, 1, hosts);
	assert_int_equal(place_cluster_sharp_eligible(f.c, hosts, n), 1); /* its leaf alone */
	teardown_fabric(&f);
}

/* Make every other host of the given groups busy, from host `first` (0 or
 * 1) of the list, each as its own job numbered from id. */
static void busy_every_other(fixture *f, const int *groups, int ng, int first, uint32_t id)
{
	int busy[64], n = group_hosts(f->c, groups, ng, busy);

	for (int i = first; i < n; i += 2)
		assert_int_equal(place_state_add_job(f->s, id + (uint32_t)i, &busy[i], 1, 0, 0, NULL),
				 0);
}

/* A 12-host heavy job (SHARP wanted) under model, tree as the baseline. */
static void decide_12(fixture *f, place_decision *d)
{
	place_request r = req(12, 1);

	if (place_decide(f->e, f->s, &r, PLACE_POLICY_MODEL, PLACE_POLICY_TREE, d))
		fail_msg("%s", d->reason);
	assert_int_equal(d->chosen.nhosts, 12);
}

static void test_sharp_job_under_sharp_spine(void **st)
{
	fixture f;
	place_decision d;
	int busy[64], n;

	(void)st;
	setup_fabric(&f, SHARP_FABRIC);
	/* groups 1 and 3 half busy: the tightest two-leaf fits are elsewhere */
	busy_every_other(&f, (int[]){ 1, 3 }, 2, 0, 1);
	/* 12 hosts need two leaves: the SHARP user goes under spines 1-4 */
	decide_12(&f, &d);
	assert_int_equal(d.chosen.sharp, 1);
	for (int i = 0; i < d.chosen.nhosts; i++)
		assert_int_equal(group_of(f.c, d.chosen.hosts[i]) % 2, 1);
	/* tree knows nothing of SHARP: its choice is recorded as it is */
	assert_int_equal(d.baseline.nhosts, 12);
	assert_int_equal(d.baseline.sharp,
			 place_cluster_sharp_eligible(f.c, d.baseline.hosts, d.baseline.nhosts));
	/* fallback: with groups 3, 5 and 7 busy, no SHARP tree holds 12 free
	 * hosts; the job is still placed, and the placement says not eligible */
	n = group_hosts(f.c, (int[]){ 5, 7 }, 2, busy);
	assert_int_equal(place_state_add_job(f.s, 500, busy, n, 0, 0, NULL), 0);
	busy_every_other(&f, (int[]){ 3 }, 1, 1, 600);
	decide_12(&f, &d);
	assert_int_equal(d.chosen.sharp, 0);
	teardown_fabric(&f);
}

static void test_classify_sharp(void **st)
{
	const char *conf = "ClassRule=account=llm class=heavy sharp=yes\n"
			   "ClassRule=account=cv class=heavy sharp=no\n";
	topo_error err;
	place_classifier *k = place_classifier_load_mem(conf, "topognn.conf", &err);
	place_job_info j = { .nodes = 4, .gpus = 32 };
	int sharp = -1;

	(void)st;
	assert_non_null(k);
	j.account = "llm";
	assert_int_equal(place_classify_job(k, &j, &sharp, NULL), PLACE_COMM_HEAVY);
	assert_int_equal(sharp, 1);
	j.account = "cv";
	place_classify_job(k, &j, &sharp, NULL);
	assert_int_equal(sharp, 0);
	j.account = "other";
	place_classify_job(k, &j, &sharp, NULL);
	assert_int_equal(sharp, 0); /* defaults make no SHARP users */
	j.comment = "run 7 comm=heavy,sharp";
	assert_int_equal(place_classify_job(k, &j, &sharp, NULL), PLACE_COMM_HEAVY);
	assert_int_equal(sharp, 1);
	j.account = "llm";
	j.comment = "comm=light"; /* the tag wins, without sharp */
	assert_int_equal(place_classify_job(k, &j, &sharp, NULL), PLACE_COMM_LIGHT);
	assert_int_equal(sharp, 0);
	j.comment = "comm=heavy,sharpish";
	place_classify_job(k, &j, &sharp, NULL);
	assert_int_equal(sharp, 0);
	place_classifier_free(k);
	assert_null(place_classifier_load_mem("\nClassRule=account=x class=heavy sharp=maybe\n",
					   "topognn.conf", &err));
	assert_int_equal(err.line, 2);
	assert_non_null(strstr(err.text, "sharp must be yes or no"));
}

/* The NVLink domain of every chosen host, or -2 when they differ. */
static int one_domain(const place_cluster *c, const place_decision *d)
{
	int dom = place_cluster_host_domain(c, d->chosen.hosts[0]);

	for (int i = 1; i < d->chosen.nhosts; i++)
		if (place_cluster_host_domain(c, d->chosen.hosts[i]) != dom)
			return -2;
	return dom;
}

static void test_nvlink_domains_in_fabric(void **st)
{
	fixture f;
	place_decision d;
	place_request r;
	int busy[20];

	(void)st;
	setup_fabric(&f, NVL_FABRIC);
	assert_int_equal(place_cluster_ngroups(f.c), 4); /* the fabric's units stay the groups */
	assert_int_equal(place_cluster_ndomains(f.c), 8);
	assert_string_equal(place_cluster_domain_name(f.c, place_cluster_host_domain(
							      f.c, place_cluster_find_host(f.c, "gb019"))),
			    "nvl2");
	assert_int_equal(place_cluster_domain_nhosts(f.c, 0), 18);
	/* nvl1 has 6 hosts busy (12 free): a 10-host job stays inside one domain */
	for (int i = 0; i < 6; i++) {
		char name[16];

		snprintf(name, sizeof(name), "gb%03d", i + 1);
		busy[i] = place_cluster_find_host(f.c, name);
	}
	assert_int_equal(place_state_add_job(f.s, 1, busy, 6, 0, 0, NULL), 0);
	for (int pol = PLACE_POLICY_MODEL; pol <= PLACE_POLICY_MODEL; pol++) {
		r = req(10, 0);
		if (place_decide(f.e, f.s, &r, (place_policy)pol, PLACE_POLICY_TREE, &d))
			fail_msg("%s", d.reason);
		assert_true(one_domain(f.c, &d) >= 0);
		assert_int_equal(d.chosen.domains, 1);
		/* 18 hosts fit only in a whole free domain */
		r = req(18, 0);
		assert_int_equal(place_decide(f.e, f.s, &r, (place_policy)pol, PLACE_POLICY_TREE, &d),
				 0);
		assert_true(one_domain(f.c, &d) >= 0);
		/* 36 hosts: two whole domains of one group (under its two leaves) */
		r = req(36, 0);
		assert_int_equal(place_decide(f.e, f.s, &r, (place_policy)pol, PLACE_POLICY_TREE, &d),
				 0);
		assert_int_equal(d.chosen.domains, 2);
		assert_int_equal(d.chosen.groups, 1);
		assert_int_equal(d.chosen.leaves, 2); /* one per rail */
	}
	teardown_fabric(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_eligibility),
		cmocka_unit_test(test_sharp_job_under_sharp_spine),
		cmocka_unit_test(test_classify_sharp),
		cmocka_unit_test(test_nvlink_domains_in_fabric),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
