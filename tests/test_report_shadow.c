/*
 * test_report_shadow: placement-report shadow's numbers (report_shadow.h)
 * on the hand-made log tests/fixtures/shadow/decisions.jsonl, and its
 * verdict on generated logs.
 *
 * The fixture (heavy jobs: 4 hosts, 1e9 bytes and 1 s compute per
 * iteration, so g > 1 groups cost g x 1.5e9 x run time bytes):
 *   job  learned (gnn)        model               tree-switches       ran  waited
 *   1    n[01-04] 1 group     n[01-04] 1          n[01-04] 1          100  10
 *   2    n[01-02,09-10] 2     n[09-12] 1          n[01-02,09-10] 2    100  20
 *   3    n[05-08] 1           n[05-07,13] 2       n[01,05-07] 2       200  30
 *   4    holds (50 s)         holds (40 s)        n[01-04] 1           50  40
 *   5    n[13-16] 1           n[13-16] 1          holds               (runs) 0
 *   6    light n01            n01                 n02                  10   0
 *   7    enforce mode, no baselines recorded                           40   5
 * vs model: the same action (hosts, or both hold) in jobs 1,4,5,6 = 4/6; both place
 * 1,2,3,5,6 and the same group count in 1,5,6 = 3/5; bytes over the heavy
 * ended jobs both place (1,2,3): learned 3e11 (job 2), model 6e11 (job 3):
 * 0.5; holds 1/5 each (job 4).
 * vs tree-switches: same action 1,2 = 2/6; both place 1,2,3,6, same group
 * count 1,2,6 = 3/4; bytes learned 3e11, tree-switches 3e11 + 6e11: 1/3;
 * holds 1/5 (job 4) and 1/5 (job 5).
 * Slurm's wait over jobs 1-6: 100/6 = 16.667 s; sample sd 16.33, so
 * +-1.96 x 16.33 / sqrt(6) = +-13.07.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "report_log.h"
#include "report_shadow.h"

static void load(report_log *log)
{
	topo_error err;

	assert_int_equal(report_log_load(FIXTURES_DIR "/shadow/decisions.jsonl", log, &err), 0);
	assert_int_equal(log->skipped, 0);
	assert_int_equal(log->n, 7);
}

static void test_fixture_records(void **state)
{
	report_log log;
	const report_decision *d;
	const report_choice *c;

	(void)state;
	load(&log);
	d = report_log_find(&log, 4);
	assert_non_null(d);
	assert_int_equal(d->deferred, 1);
	assert_float_equal(d->expected_wait_s, 50, 1e-9);
	assert_float_equal(d->wait_s, 40, 1e-9);
	assert_int_equal(d->nshadow, 2);
	c = report_decision_shadow(d, "model");
	assert_non_null(c);
	assert_int_equal(c->hold, 1);
	assert_int_equal(c->nhosts, 0);
	assert_float_equal(c->expected_wait_s, 40, 1e-9);
	c = report_decision_shadow(d, "tree-switches");
	assert_int_equal(c->hold, 0);
	assert_int_equal(c->nhosts, 4);
	assert_int_equal(c->groups, 1);
	assert_null(report_decision_shadow(d, "random"));
	d = report_log_find(&log, 7);
	assert_int_equal(d->nshadow, 0);
	report_log_free(&log);
}

static void assert_iv(report_interval r, double est, double lo, double hi)
{
	assert_float_equal(r.est, est, 1e-3);
	assert_float_equal(r.lo, lo, 1e-3);
	assert_float_equal(r.hi, hi, 1e-3);
}

static void test_fixture_numbers(void **state)
{
	report_log log;
	report_shadow s;
	const report_shadow_vs *m, *t;

	(void)state;
	load(&log);
	assert_int_equal(report_shadow_compute(&log, -INFINITY, INFINITY, &s), 0);
	assert_string_equal(s.learned, "gnn");
	assert_int_equal(s.decisions, 7);
	assert_int_equal(s.with_shadow, 6);
	assert_int_equal(s.ended, 5);
	assert_int_equal(s.wait_s.n, 6);
	assert_iv(s.wait_s, 16.667, 16.667 - 13.066, 16.667 + 13.066);

	m = &s.vs[0];
	assert_string_equal(m->baseline, "model");
	assert_int_equal(m->decisions, 6);
	/* Wilson 4/6: centre (p + z^2/2n) / (1 + z^2/n) = 0.6016, half 0.3016 */
	assert_iv(m->agree, 4.0 / 6, 0.300, 0.903);
	assert_float_equal(m->same_groups.est, 0.6, 1e-9);
	assert_int_equal(m->same_groups.n, 5);
	assert_int_equal(m->heavy, 5);
	assert_int_equal(m->compared, 3);
	assert_float_equal(m->learned_bytes, 3e11, 1);
	assert_float_equal(m->baseline_bytes, 6e11, 1);
	assert_float_equal(m->bytes_ratio.est, 0.5, 1e-9);
	assert_float_equal(m->hold_learned.est, 0.2, 1e-9);
	assert_float_equal(m->hold_baseline.est, 0.2, 1e-9);
	assert_float_equal(m->hold_diff.est, 0, 1e-9);
	assert_float_equal(m->expected_wait_learned, 50, 1e-9);
	assert_float_equal(m->expected_wait_baseline, 40, 1e-9);
	assert_int_equal(m->ahead, -1); /* 3 < REPORT_SHADOW_MIN_PAIRS */

	t = &s.vs[1];
	assert_string_equal(t->baseline, "tree-switches");
	assert_float_equal(t->agree.est, 2.0 / 6, 1e-9);
	assert_float_equal(t->same_groups.est, 0.75, 1e-9);
	assert_int_equal(t->same_groups.n, 4);
	assert_float_equal(t->baseline_bytes, 9e11, 1);
	assert_float_equal(t->bytes_ratio.est, 1.0 / 3, 1e-9);
	assert_float_equal(t->hold_baseline.est, 0.2, 1e-9);
	assert_true(isnan(t->expected_wait_baseline)); /* tree-switches predicts no wait */
	assert_int_equal(t->ahead, -1);

	/* a window of jobs 1-3 only */
	assert_int_equal(report_shadow_compute(&log, 1000, 1020, &s), 0);
	assert_int_equal(s.vs[1].decisions, 3);
	assert_float_equal(s.vs[1].bytes_ratio.est, 1.0 / 3, 1e-9);
	report_log_free(&log);
}

static void test_bytes_and_wilson(void **state)
{
	report_interval r;

	(void)state;
	assert_float_equal(report_shadow_bytes(1, 4, 1e9, 1, 100), 0, 0);
	assert_float_equal(report_shadow_bytes(2, 4, 1e9, 1, 100), 3e11, 1);
	assert_float_equal(report_shadow_bytes(3, 8, 1e9, 0, 10), 3 * 2.0 * 7 / 8 * 1e10, 1);
	assert_float_equal(report_shadow_bytes(2, 1, 1e9, 1, 100), 0, 0);
	r = report_wilson(0, 0);
	assert_true(isnan(r.est));
	r = report_wilson(10, 10);
	assert_float_equal(r.hi, 1, 1e-12);
	assert_float_equal(r.lo, 0.7225, 1e-3);
}

/* A log of n heavy decisions: the learned policy on lg groups, the
 * baselines on bg, holding in `holds` of them where the baselines do not. */
static char *gen_log(int n, int lg, int bg, int holds)
{
	size_t cap = (size_t)n * 1024 + 1, len = 0;
	char *s = malloc(cap);

	assert_non_null(s);
	for (int i = 0; i < n; i++) {
		int hold = i < holds;
		const char *l = lg > 1 ? "n[01-02,09-10]" : "n[01-04]";
		const char *b = bg > 1 ? "n[05-06,13-14]" : "n[05-08]";

		len += (size_t)snprintf(s + len, cap - len,
			"{\"time\":%d,\"job_id\":%d,\"mode\":\"shadow\",\"nodes\":\"%s\",\"node_count\":4,"
			"\"wait_s\":1,\"class\":\"heavy\",\"topognn\":{\"policy\":\"gnn\",\"nodes\":\"%s\","
			"\"groups\":%d},\"decision\":{\"job\":%d,\"request\":{\"min_hosts\":4,\"max_hosts\":4,"
			"\"comm\":{\"class\":\"heavy\",\"bytes_per_iter\":1e9,\"compute_s_per_iter\":1}},"
			"\"ok\":true,\"locality\":{\"deferred\":%s}},\"shadow\":["
			"{\"policy\":\"model\",\"nodes\":\"%s\",\"groups\":%d,\"hold\":false},"
			"{\"policy\":\"tree-switches\",\"nodes\":\"%s\",\"groups\":%d,\"hold\":false}]}\n"
			"{\"event\":\"end\",\"job\":%d,\"timestamp\":%d,\"elapsed_s\":%d}\n",
			1000 + i, i + 1, b, l, lg, i + 1, hold ? "true" : "false", b, bg, b, bg, i + 1,
			1100 + i, 10 + i % 7);
	}
	return s;
}

static int verdict(int n, int lg, int bg, int holds, int which)
{
	report_log log;
	report_shadow s;
	topo_error err;
	char *text = gen_log(n, lg, bg, holds);

	assert_int_equal(report_log_load_mem(text, strlen(text), "gen", &log, &err), 0);
	assert_int_equal(log.skipped, 0);
	assert_int_equal(report_shadow_compute(&log, -INFINITY, INFINITY, &s), 0);
	report_log_free(&log);
	free(text);
	return s.vs[which].ahead;
}

static void test_verdicts(void **state)
{
	(void)state;
	/* one group against two, every time: ratio 0, interval [0, 0] */
	assert_int_equal(verdict(30, 1, 2, 0, 0), 1);
	assert_int_equal(verdict(30, 1, 2, 0, 1), 1);
	/* the same placements: ratio 1, interval [1, 1] */
	assert_int_equal(verdict(30, 2, 2, 0, 1), 0);
	/* fewer bytes bought with more holds: not ahead */
	assert_int_equal(verdict(40, 1, 2, 10, 1), 0);
	/* more bytes */
	assert_int_equal(verdict(30, 2, 1, 0, 0), 0);
	/* too few */
	assert_int_equal(verdict(REPORT_SHADOW_MIN_PAIRS - 1, 1, 2, 0, 0), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture_records), cmocka_unit_test(test_fixture_numbers),
		cmocka_unit_test(test_bytes_and_wilson), cmocka_unit_test(test_verdicts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
