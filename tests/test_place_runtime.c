/* Unit tests for the online run-time predictor (topo/place/place_runtime.c):
 * the last-two baseline and the cold start on hand-checked histories, the
 * estimator the ledger picks when a user alternates two kinds of job, the
 * cap at the limit, groups standing in for new users, and the saved state:
 * the same predictions after a save and a load, and a clear error naming
 * the line and column of a broken file. */
#define _GNU_SOURCE /* open_memstream, fmemopen */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "place_runtime.h"

static place_runtime_job rjob(int user, int group, double limit, int size, uint32_t app)
{
	place_runtime_job j = {user, group, app, limit, size, 0};

	return j;
}

/* A new user: the limit (no global ratio yet); then its last two. */
static void test_last_two_and_cold(void **st)
{
	place_runtime *p = place_runtime_new();
	place_runtime_job j = rjob(7, -1, 3600, 4, 0);

	(void)st;
	assert_non_null(p);
	assert_true(place_runtime_predict(p, &j) == 3600);
	assert_true(place_runtime_last_two(p, &j) == 3600);
	assert_int_equal(place_runtime_observe(p, &j, 100), 0);
	assert_true(place_runtime_last_two(p, &j) == 100);
	assert_int_equal(place_runtime_observe(p, &j, 300), 0);
	assert_true(place_runtime_last_two(p, &j) == 200);
	assert_int_equal(place_runtime_observe(p, &j, 500), 0);
	assert_true(place_runtime_last_two(p, &j) == 400);
	assert_int_equal(place_runtime_observed(p), 3);
	/* a limit below the history caps both */
	j.limit_s = 50;
	assert_true(place_runtime_last_two(p, &j) == 50);
	assert_true(place_runtime_predict(p, &j) <= 50);
	/* a non-positive run time is not learned */
	assert_int_equal(place_runtime_observe(p, &j, 0), 0);
	assert_int_equal(place_runtime_observed(p), 3);
	place_runtime_free(p);
}

/* A user alternates a long job (limit 3600 s, 8 nodes, runs 3000 s) and a
 * short one (limit 600 s, 1 node, runs 60 s). Last-two averages them
 * (1530 s); the ledger learns that the same-signature estimator is right
 * and predicts each kind's own run time. */
static void test_learns_signature(void **st)
{
	place_runtime *p = place_runtime_new();
	place_runtime_job a = rjob(3, 1, 3600, 8, place_runtime_app_hash("train.py"));
	place_runtime_job b = rjob(3, 1, 600, 1, place_runtime_app_hash("eval.py"));

	(void)st;
	for (int i = 0; i < 20; i++) {
		assert_int_equal(place_runtime_observe(p, &a, 3000), 0);
		assert_int_equal(place_runtime_observe(p, &b, 60), 0);
	}
	assert_float_equal(place_runtime_last_two(p, &a), 1530, 1e-9);
	assert_float_equal(place_runtime_predict(p, &a), 3000, 1e-9);
	assert_float_equal(place_runtime_predict(p, &b), 60, 1e-9);
	/* a new user of the same group: the group's history, not the limit */
	a.user = 4;
	assert_true(place_runtime_predict(p, &a) < 3600);
	assert_true(place_runtime_last_two(p, &a) == 3600);
	place_runtime_free(p);
}

static char *saved(const place_runtime *p, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	assert_non_null(f);
	assert_int_equal(place_runtime_save(p, f), 0);
	fclose(f);
	return buf;
}

static int load_text(place_runtime *p, const char *text, topo_error *err)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int rc;

	assert_non_null(f);
	rc = place_runtime_load(p, f, "rt.state", err);
	fclose(f);
	return rc;
}

/* Save, load into another predictor: the same predictions, and the same
 * state saved again, byte for byte. */
static void test_save_load(void **st)
{
	place_runtime *p = place_runtime_new(), *q = place_runtime_new();
	topo_error err;
	size_t n1, n2;
	char *s1, *s2;

	(void)st;
	for (int i = 0; i < 40; i++) {
		place_runtime_job j = rjob(i % 5, i % 2, 600 * (1 + i % 3), 1 + i % 4, (uint32_t)i % 3);

		assert_int_equal(place_runtime_observe(p, &j, 30 + 17 * i), 0);
	}
	s1 = saved(p, &n1);
	assert_int_equal(load_text(q, s1, &err), 0);
	s2 = saved(q, &n2);
	assert_int_equal(n1, n2);
	assert_memory_equal(s1, s2, n1);
	for (int u = 0; u < 7; u++) {
		place_runtime_job j = rjob(u, u % 3, 1200, 2, 1);

		assert_true(place_runtime_predict(p, &j) == place_runtime_predict(q, &j));
		assert_true(place_runtime_last_two(p, &j) == place_runtime_last_two(q, &j));
	}
	assert_int_equal(place_runtime_observed(q), 40);
	free(s1);
	free(s2);
	place_runtime_free(p);
	place_runtime_free(q);
}

static void expect_error(const char *text, int line, const char *what)
{
	place_runtime *p = place_runtime_new();
	topo_error err;

	assert_int_equal(load_text(p, text, &err), -1);
	assert_string_equal(err.source, "rt.state");
	assert_int_equal(err.line, line);
	if (!strstr(err.text, what))
		fail_msg("\"%s\" does not say \"%s\"", err.text, what);
	assert_int_equal(place_runtime_observed(p), 0); /* left empty */
	place_runtime_free(p);
}

#define HDR "topognn-runtime 1 7 16\n"
#define GLOBAL "global 2 0.5 100 1 1 2 3 4 5 6 7 0 0 0\n"

static void test_load_errors(void **st)
{
	topo_error err;
	place_runtime *p = place_runtime_new();

	(void)st;
	assert_int_equal(load_text(p, HDR GLOBAL "user 5 2 0.25 1 1 2 3 4 5 6 7 2 10 600 1 0 30 600 1 0\n",
				   &err), 0);
	assert_int_equal(place_runtime_observed(p), 2);
	{
		place_runtime_job j = rjob(5, -1, 600, 1, 0);

		assert_true(place_runtime_last_two(p, &j) == 20);
	}
	place_runtime_free(p);
	expect_error("hello\n", 1, "not a topognn run-time predictor state");
	expect_error("topognn-runtime 2 7 16\n" GLOBAL, 1, "another version");
	expect_error(HDR, 1, "ends before the \"global\" line");
	expect_error(HDR "global 2 x\n", 2, "ratio: expected a number");
	expect_error(HDR GLOBAL "user 5 2 0.25 1 1 2 3 4 5 6 7 2 10 600 1 0\n", 3,
		     "run time: expected a number");
	expect_error(HDR GLOBAL "user 5 2 0.25 1 1 2 3 4 5 6 7 0\nuser 5 2 0.25 1 1 2 3 4 5 6 7 0\n",
		     4, "listed twice");
	expect_error(HDR GLOBAL "user 5 2 0.25 1 1 2 3 4 5 6 7 0 junk\n", 3, "unexpected text");
	expect_error(HDR GLOBAL "team 5\n", 3, "expected a \"user\" or \"group\" line");
	expect_error(HDR GLOBAL "user 5 2 0.25 1 1 2 3 4 5 6 7 17\n", 3, "past jobs");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_last_two_and_cold),
		cmocka_unit_test(test_learns_signature),
		cmocka_unit_test(test_save_load),
		cmocka_unit_test(test_load_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
