/* Unit tests for Slurm-style hostlist expansion, compression and natural order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo_hostlist.h"

/* Expand expr and check the names, in order. */
static void expect_names(const char *expr, const char *const *want, size_t n)
{
	topo_hostlist hl;
	topo_error err;

	topo_hostlist_init(&hl);
	if (topo_hostlist_expand(expr, &hl, "t", 1, &err) != 0)
		fail_msg("%s: %s", expr, err.text);
	assert_int_equal(hl.n, n);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(hl.names[i], want[i]);
	topo_hostlist_free(&hl);
}

static void test_expand_ranges(void **state)
{
	static const char *const a[] = { "n001", "n002", "n003", "n004", "n7", "gpu1x", "gpu2x" };
	static const char *const b[] = { "r1n1", "r1n2", "r1n3", "r2n1", "r2n2", "r2n3" };
	static const char *const c[] = { "n8", "n9", "n10" };
	static const char *const d[] = { "n08", "n09", "n10" };
	static const char *const e[] = { "host", "a", "b" };
	static const char *const f[] = { "1", "2" };
	static const char *const g[] = { "s-1-ib", "s-3-ib", "s-4-ib" };

	(void)state;
	expect_names("n[001-004,7],gpu[1-2]x", a, 7);
	expect_names("r[1-2]n[1-3]", b, 6);
	expect_names("n[8-10]", c, 3);
	expect_names("n[08-10]", d, 3);
	expect_names("host,a,b", e, 3);
	expect_names("[1-2]", f, 2);
	expect_names("s-[1,3-4]-ib", g, 3);
}

static void test_expand_limit(void **state)
{
	topo_hostlist hl;
	topo_error err;

	(void)state;
	topo_hostlist_init(&hl);
	assert_int_equal(topo_hostlist_expand("n[1-1000000]", &hl, "t", 1, &err), 0);
	assert_int_equal(hl.n, 1000000);
	assert_string_equal(hl.names[0], "n1");
	assert_string_equal(hl.names[999999], "n1000000");
	topo_hostlist_free(&hl);
	assert_int_equal(topo_hostlist_expand("r[1-1000]n[1-1000]", &hl, "t", 1, &err), 0);
	assert_int_equal(hl.n, 1000000);
	assert_string_equal(hl.names[1000], "r2n1");
	topo_hostlist_free(&hl);
	/* a caller's lower limit, refused before anything is made */
	assert_int_equal(topo_hostlist_expand_max("n[1-20],m[1-5]", &hl, 25, "t", 1, &err), 0);
	assert_int_equal(hl.n, 25);
	topo_hostlist_free(&hl);
	assert_int_equal(topo_hostlist_expand_max("n[1-20],m[1-6]", &hl, 25, "t", 1, &err), -1);
	assert_string_equal(err.text, "hostlist \"n[1-20],m[1-6]\" expands to more than 25 names at column 9");
	assert_int_equal(hl.n, 0);
	assert_int_equal(topo_hostlist_expand_max("a[1-5]b[1-6]", &hl, 25, "t", 1, &err), -1);
	assert_int_equal(topo_hostlist_expand_max("n[1-26]", &hl, 25, "t", 1, &err), -1);
	assert_string_equal(err.text, "hostlist \"n[1-26]\" has a range of 26 names, more than the limit of 25 at column 3");
	/* a limit above the library's is the library's */
	assert_int_equal(topo_hostlist_expand_max("n[1-1000001]", &hl, (size_t)-1, "t", 1, &err), -1);
	topo_hostlist_free(&hl);
}

/* Expansion of expr must fail with exactly this text, leaving the list as it was. */
static void expect_error(const char *expr, const char *text)
{
	topo_hostlist hl;
	topo_error err;

	topo_hostlist_init(&hl);
	assert_int_equal(topo_hostlist_expand("keep", &hl, "t", 1, &err), 0);
	assert_int_equal(topo_hostlist_expand(expr, &hl, "topology.conf", 7, &err), -1);
	assert_string_equal(err.text, text);
	assert_string_equal(err.source, "topology.conf");
	assert_int_equal(err.line, 7);
	assert_int_equal(hl.n, 1);
	assert_string_equal(hl.names[0], "keep");
	topo_hostlist_free(&hl);
}

static void test_expand_errors(void **state)
{
	(void)state;
	expect_error("n[1-", "hostlist \"n[1-\" has a '[' that is never closed at column 2");
	expect_error("n[3-1]", "hostlist \"n[3-1]\" has a decreasing range 3-1 at column 3");
	expect_error("n[a-b]", "hostlist \"n[a-b]\" expects a number at column 3");
	expect_error("n[1-b]", "hostlist \"n[1-b]\" expects a number at column 5");
	expect_error("", "hostlist is empty");
	expect_error("n[1-2000000]",
		     "hostlist \"n[1-2000000]\" has a range of 2000000 names, more than the limit "
		     "of 1000000 at column 3");
	expect_error("a[1-1000]b[1-1001]",
		     "hostlist \"a[1-1000]b[1-1001]\" expands to more than 1000000 names at column 1");
	expect_error("a[1-600000],b[1-600000]",
		     "hostlist \"a[1-600000],b[1-600000]\" expands to more than 1000000 names at "
		     "column 13");
	expect_error("a,,b", "hostlist \"a,,b\" has an empty name at column 3");
	expect_error("a,", "hostlist \"a,\" has an empty name at column 3");
	expect_error("n]", "hostlist \"n]\" has a ']' with no '[' at column 2");
	expect_error("n[1[2]]", "hostlist \"n[1[2]]\" has a '[' inside brackets at column 4");
	expect_error("n 1", "hostlist \"n 1\" has a blank or control character at column 2");
	expect_error("n[1,]", "hostlist \"n[1,]\" expects a number at column 5");
	expect_error("n[]", "hostlist \"n[]\" expects a number at column 3");
	expect_error("n[1x]", "hostlist \"n[1x]\" expects ',' or '-' between numbers at column 4");
	expect_error("n[1234567890123456789]",
		     "hostlist \"n[1234567890123456789]\" has a number longer than 18 digits at "
		     "column 3");
}

/* Compress names and check the expression. */
static void expect_compressed(const char *const *names, size_t n, const char *want)
{
	topo_error err;
	char *s = topo_hostlist_compress(names, n, &err);

	if (!s)
		fail_msg("compress: %s", err.text);
	assert_string_equal(s, want);
	free(s);
}

static void test_compress(void **state)
{
	static const char *const a[] = { "n007", "n003", "n001", "n004", "n002", "n003" };
	static const char *const b[] = { "n10", "n8", "n9" };
	static const char *const c[] = { "n09", "n10" };
	static const char *const d[] = { "n9", "n010" };
	static const char *const e[] = { "n1", "gpu2x", "gpu1x" };
	static const char *const f[] = { "b", "a1", "a" };
	static const char *const g[] = { "r1n1", "r2n1", "r1n2" };
	static const char *const h[] = { "n2", "n10", "n1" };
	static const char *const i[] = { "dgx-07", "dgx-01", "dgx-02", "dgx-03", "login" };

	(void)state;
	expect_compressed(a, 6, "n[001-004,007]");
	expect_compressed(b, 3, "n[8-10]");
	expect_compressed(c, 2, "n[09-10]");
	expect_compressed(d, 2, "n[9,010]");
	expect_compressed(e, 3, "gpu[1-2]x,n1");
	expect_compressed(f, 3, "a,a1,b");
	expect_compressed(g, 3, "r1n[1-2],r2n1");
	expect_compressed(h, 3, "n[1-2,10]");
	expect_compressed(i, 5, "dgx-[01-03,07],login");
	expect_compressed(NULL, 0, "");
}

static void test_compress_errors(void **state)
{
	static const char *const a[] = { "n1", "a,b" };
	static const char *const b[] = { "n[1]" };
	static const char *const c[] = { "" };
	topo_error err;

	(void)state;
	assert_null(topo_hostlist_compress(a, 2, &err));
	assert_string_equal(err.text, "host name \"a,b\" cannot be written in a hostlist");
	assert_null(topo_hostlist_compress(b, 1, &err));
	assert_string_equal(err.text, "host name \"n[1]\" cannot be written in a hostlist");
	assert_null(topo_hostlist_compress(c, 1, &err));
	assert_string_equal(err.text, "host name \"\" cannot be written in a hostlist");
}

static int cmp_natural(const void *a, const void *b)
{
	return topo_hostname_cmp(*(char *const *)a, *(char *const *)b);
}

/* expand(compress(x)) gives x sorted and without duplicates, for 200 pseudo-random sets. */
static void test_roundtrip(void **state)
{
	static const char *const prefixes[] = { "n", "gpu", "r1n", "" };
	uint32_t seed = 12345;

	(void)state;
	for (int round = 0; round < 200; round++) {
		char *names[64], *s;
		size_t n = 1 + round % 60, m = 0;
		topo_hostlist hl;
		topo_error err;

		for (size_t i = 0; i < n; i++) {
			char buf[32];

			seed = seed * 1103515245u + 12345u;
			snprintf(buf, sizeof(buf), "%s%0*u%s", prefixes[(seed >> 8) % 4],
				 (int)((seed >> 12) % 3) + 1, (seed >> 16) % 40,
				 (seed >> 20) % 5 == 0 ? "x" : "");
			names[i] = strdup(buf);
		}
		s = topo_hostlist_compress((const char *const *)names, n, &err);
		assert_non_null(s);
		qsort(names, n, sizeof(*names), cmp_natural);
		for (size_t i = 0; i < n; i++)
			if (m == 0 || strcmp(names[m - 1], names[i]) != 0)
				names[m++] = names[i];
			else
				free(names[i]);
		topo_hostlist_init(&hl);
		if (topo_hostlist_expand(s, &hl, "t", 1, &err) != 0)
			fail_msg("%s: %s", s, err.text);
		qsort(hl.names, hl.n, sizeof(*hl.names), cmp_natural);
		assert_int_equal(hl.n, m);
		for (size_t i = 0; i < m; i++) {
			assert_string_equal(hl.names[i], names[i]);
			free(names[i]);
		}
		topo_hostlist_free(&hl);
		free(s);
	}
}

static void test_natural_order(void **state)
{
	(void)state;
	assert_true(topo_hostname_cmp("n2", "n10") < 0);
	assert_true(topo_hostname_cmp("n10", "n2") > 0);
	assert_true(topo_hostname_cmp("n1", "n01") < 0);
	assert_true(topo_hostname_cmp("n01", "n1") > 0);
	assert_true(topo_hostname_cmp("a", "a1") < 0);
	assert_true(topo_hostname_cmp("su8", "su10") < 0);
	assert_true(topo_hostname_cmp("r2n1", "r10n0") < 0);
	assert_int_equal(topo_hostname_cmp("dgx-01", "dgx-01"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_expand_ranges),  cmocka_unit_test(test_expand_limit),
		cmocka_unit_test(test_expand_errors),  cmocka_unit_test(test_compress),
		cmocka_unit_test(test_compress_errors), cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_natural_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
