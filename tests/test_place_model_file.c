/*
 * test_place_model_file: where the shipped model is found (place_model_file.h).
 * A test program runs from the build tree, so the lookup must give the
 * source tree's models/ (not $(pkgdatadir), which may hold an older model or
 * none), name the file configure.ac chose, and report a missing file as -1
 * with the path it looked at.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "place_model_file.h"

static void test_default_model_in_source_tree(void **state)
{
	char want[PATH_MAX + 64], src[PATH_MAX], got[PATH_MAX + 64];

	(void)state;
	assert_non_null(realpath(FIXTURES_DIR "/../..", src));
	snprintf(want, sizeof(want), "%s/models/%s", src, place_default_model_name());
	assert_int_equal(place_default_model_path(got, sizeof(got)), 0);
	assert_string_equal(got, want);
	assert_string_equal(place_default_model_name(), "default.json");
}

static void test_missing_file(void **state)
{
	char src[PATH_MAX], want[PATH_MAX + 64], got[PATH_MAX + 64];

	(void)state;
	assert_non_null(realpath(FIXTURES_DIR "/../..", src));
	snprintf(want, sizeof(want), "%s/models/no-such-model.json", src);
	errno = 0;
	assert_int_equal(place_data_path("models", "no-such-model.json", got, sizeof(got)), -1);
	assert_int_equal(errno, ENOENT);
	assert_string_equal(got, want);
}

static void test_short_buffer(void **state)
{
	char got[8];

	(void)state;
	assert_int_equal(place_default_model_path(got, sizeof(got)), -1);
	assert_int_equal(errno, ENAMETOOLONG);
}

static void test_shipped_profiles(void **state)
{
	char got[PATH_MAX];

	(void)state;
	assert_int_equal(place_data_path("tests/fixtures", "comm", got, sizeof(got)), 0);
	assert_non_null(strstr(got, "/tests/fixtures/comm"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_model_in_source_tree),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_short_buffer),
		cmocka_unit_test(test_shipped_profiles),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
