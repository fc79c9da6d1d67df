/*
 * Unit tests for the small shared helpers of the graph area: strict number
 * parsing (topo_num), whole-file reading with a limit and a child's output
 * (topo_io), array growth and optional copies (topo_alloc), the error
 * report's column and va_list setter (topo_error), and the membership walks
 * on the graph (group of a host, parts of a host).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "topo_alloc.h"
#include "topo_error.h"
#include "topo_graph.h"
#include "topo_io.h"
#include "topo_num.h"
#include "topo_uf.h"
#include "test_tmp.h"

/* A FIFO, a directory and a symbolic link as inputs (issue 21: a FIFO as
 * GraphFile hung slurmctld in open()). The FIFO has no writer: a blocking
 * open would never return, so this test finishing is the proof. */
static void test_open_input(void **state)
{
	char dir[512], fifo[600], file[600], lnk[600], hard[600];
	size_t len;
	int fd;
	FILE *f;
	topo_error err;

	(void)state;
	assert_non_null(test_mkdtemp(dir, sizeof(dir), "test_open_input.XXXXXX"));
	snprintf(fifo, sizeof(fifo), "%s/graph.json", dir);
	snprintf(file, sizeof(file), "%s/real.json", dir);
	snprintf(lnk, sizeof(lnk), "%s/link.json", dir);
	snprintf(hard, sizeof(hard), "%s/hard.json", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_null(topo_read_file(fifo, 1024, &len, &err));
	assert_string_equal(err.source, fifo);
	assert_string_equal(err.text, "is a FIFO, not a regular file");
	assert_int_equal(topo_open_input(dir, 0, 0, &err), -1);
	assert_string_equal(err.text, "is a directory, not a regular file");

	f = fopen(file, "w");
	assert_non_null(f);
	fputs("{}", f);
	fclose(f);
	assert_int_equal(chmod(file, 0644), 0);
	assert_int_equal(symlink(file, lnk), 0);
	/* a symbolic link is followed unless the caller says no */
	fd = topo_open_input(lnk, 0, 1024, &err);
	assert_true(fd >= 0);
	assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0); /* cleared for the reader */
	close(fd);
	assert_int_equal(topo_open_input(lnk, TOPO_OPEN_NOFOLLOW, 1024, &err), -1);
	assert_string_equal(err.source, lnk);
	assert_string_equal(err.text, "is a symbolic link (not followed)");
	assert_null(topo_read_input(lnk, TOPO_OPEN_NOFOLLOW, 1024, &len, &err));
	/* TRUSTED: only one link, not writable by others, owned by root or us */
	fd = topo_open_input(file, TOPO_OPEN_NOFOLLOW | TOPO_OPEN_TRUSTED, 1024, &err);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(chmod(file, 0666), 0);
	assert_int_equal(topo_open_input(file, TOPO_OPEN_TRUSTED, 1024, &err), -1);
	assert_string_equal(err.text, "is writable by group or others (mode 0666)");
	assert_int_equal(chmod(file, 0644), 0);
	assert_int_equal(link(file, hard), 0);
	assert_int_equal(topo_open_input(file, TOPO_OPEN_TRUSTED, 1024, &err), -1);
	assert_string_equal(err.text, "has 2 hard links (a link to another file?)");
	unlink(hard);
	if (geteuid() == 0) { /* root can give the file away */
		assert_int_equal(chown(file, 65534, 65534), 0);
		assert_int_equal(topo_open_input(file, TOPO_OPEN_TRUSTED, 1024, &err), -1);
		assert_string_equal(err.text, "is owned by uid 65534, neither root nor us");
	}
	assert_int_equal(topo_open_input(file, 0, 1, &err), -1);
	assert_string_equal(err.text, "file is larger than 1 bytes (it has 2)");
	unlink(lnk);
	/* a missing file: errno stays ENOENT (bind_irq tells missing from unreadable) */
	errno = 0;
	assert_int_equal(topo_open_input(lnk, 0, 1024, &err), -1);
	assert_int_equal(errno, ENOENT);
	unlink(file);
	unlink(fifo);
	rmdir(dir);
	/* kernel files: regular, st_size 0, read to EOF within the limit */
	{
		struct stat st;
		char *text;

		assert_int_equal(stat("/proc/self/status", &st), 0);
		assert_int_equal(st.st_size, 0);
		text = topo_read_input("/proc/self/status", 0, 1 << 20, &len, &err);
		assert_non_null(text);
		assert_true(len > 0 && strstr(text, "Name:") == text);
		free(text);
		assert_null(topo_read_input("/proc/self/status", 0, 8, &len, &err));
		assert_string_equal(err.text, "file is larger than 8 bytes");
	}
}

static void test_parse_long(void **state)
{
	long v = 42;

	(void)state;
	assert_int_equal(topo_parse_long("17", 0, 100, &v), 0);
	assert_int_equal(v, 17);
	assert_int_equal(topo_parse_long("-5", -10, 10, &v), 0);
	assert_int_equal(v, -5);
	v = 42;
	/* empty, blanks, trailing junk, out of range, overflow: all errors, v unchanged */
	assert_int_equal(topo_parse_long("", 0, 100, &v), -1);
	assert_int_equal(topo_parse_long(" 7", 0, 100, &v), -1);
	assert_int_equal(topo_parse_long("7 ", 0, 100, &v), -1);
	assert_int_equal(topo_parse_long("7x", 0, 100, &v), -1);
	assert_int_equal(topo_parse_long("101", 0, 100, &v), -1);
	assert_int_equal(topo_parse_long("-1", 0, 100, &v), -1);
	assert_int_equal(topo_parse_long("99999999999999999999999", 0, LONG_MAX, &v), -1);
	assert_int_equal(topo_parse_long(NULL, 0, 100, &v), -1);
	assert_int_equal(v, 42);
}

static void test_parse_int_u64_double(void **state)
{
	int i = 0;
	uint64_t u = 0;
	double d = 0;

	(void)state;
	assert_int_equal(topo_parse_int("2147483647", 0, INT32_MAX, &i), 0);
	assert_int_equal(i, 2147483647);
	assert_int_equal(topo_parse_int("2147483648", 0, INT32_MAX, &i), -1);
	assert_int_equal(topo_parse_u64("18446744073709551615", 10, UINT64_MAX, &u), 0);
	assert_true(u == UINT64_MAX);
	/* strtoul would wrap "-1" and clamp this one; both are errors here */
	assert_int_equal(topo_parse_u64("18446744073709551616", 10, UINT64_MAX, &u), -1);
	assert_int_equal(topo_parse_u64("999999999999999999999", 10, UINT32_MAX, &u), -1);
	assert_int_equal(topo_parse_u64("-1", 10, UINT64_MAX, &u), -1);
	assert_int_equal(topo_parse_u64("4294967296", 10, UINT32_MAX, &u), -1);
	assert_int_equal(topo_parse_u64("0x7cfe9003009e1a2c", 16, UINT64_MAX, &u), 0);
	assert_true(u == 0x7cfe9003009e1a2cULL);
	assert_int_equal(topo_parse_u64("7cfe9003009e1a2c", 16, UINT64_MAX, &u), 0);
	assert_int_equal(topo_parse_u64("0x", 16, UINT64_MAX, &u), -1);
	assert_int_equal(topo_parse_u64("12g", 16, UINT64_MAX, &u), -1);
	assert_int_equal(topo_parse_double("0.25", 0, 1, &d), 0);
	assert_true(d == 0.25);
	assert_int_equal(topo_parse_double("-1e3", -1e4, 0, &d), 0);
	assert_true(d == -1000);
	assert_int_equal(topo_parse_double("1e999", -HUGE_VAL, HUGE_VAL, &d), -1);
	assert_int_equal(topo_parse_double("nan", -HUGE_VAL, HUGE_VAL, &d), -1);
	assert_int_equal(topo_parse_double("inf", -HUGE_VAL, HUGE_VAL, &d), -1);
	assert_int_equal(topo_parse_double("", 0, 1, &d), -1);
	assert_int_equal(topo_parse_double("0.5s", 0, 1, &d), -1);
	assert_int_equal(topo_parse_double("1.5", 0, 1, &d), -1);
	/* length-bounded: a slice of a larger buffer */
	{
		long l = 0;

		assert_int_equal(topo_parse_long_n("123456", 3, 0, 1000, &l), 0);
		assert_int_equal(l, 123);
		assert_int_equal(topo_parse_double_n("2.5,7", 3, 0, 10, &d), 0);
		assert_true(d == 2.5);
		assert_int_equal(topo_parse_long_n("12\0" "3", 4, 0, 1000, &l), -1);
	}
	/* base 0: "0x" is hex, anything else decimal (a sysfs LID, never octal) */
	assert_int_equal(topo_parse_u64("0x1a", 0, UINT16_MAX, &u), 0);
	assert_true(u == 26);
	assert_int_equal(topo_parse_u64("010", 0, UINT16_MAX, &u), 0);
	assert_true(u == 10);
	assert_int_equal(topo_parse_u64("0x10000", 0, UINT16_MAX, &u), -1);
	assert_int_equal(topo_parse_u64("1a", 0, UINT16_MAX, &u), -1);
}

static void test_parse_prefix(void **state)
{
	const char *rest = "unchanged";
	long l = 42;
	double d = 42;

	(void)state;
	/* a number, then whatever the caller reads next */
	assert_int_equal(topo_parse_double_prefix("25G", 0, HUGE_VAL, &d, &rest), 0);
	assert_true(d == 25);
	assert_string_equal(rest, "G");
	assert_int_equal(topo_parse_double_prefix("1000BaseTFD", 0, HUGE_VAL, &d, &rest), 0);
	assert_true(d == 1000);
	assert_string_equal(rest, "BaseTFD");
	assert_int_equal(topo_parse_long_prefix("1State", 1, 100, &l, &rest), 0);
	assert_int_equal(l, 1);
	assert_string_equal(rest, "State");
	assert_int_equal(topo_parse_long_prefix("7", 1, 100, &l, &rest), 0);
	assert_string_equal(rest, "");
	/* the number itself stays strict; failures leave both outputs alone */
	l = 42;
	d = 42;
	rest = "unchanged";
	assert_int_equal(topo_parse_double_prefix(" 25G", 0, HUGE_VAL, &d, &rest), -1);
	assert_int_equal(topo_parse_double_prefix("G", 0, HUGE_VAL, &d, &rest), -1);
	assert_int_equal(topo_parse_double_prefix("infG", 0, HUGE_VAL, &d, &rest), -1);
	assert_int_equal(topo_parse_double_prefix("1e999G", 0, HUGE_VAL, &d, &rest), -1);
	assert_int_equal(topo_parse_double_prefix("-1G", 0, HUGE_VAL, &d, &rest), -1);
	assert_int_equal(topo_parse_long_prefix("State", 1, 100, &l, &rest), -1);
	assert_int_equal(topo_parse_long_prefix("0State", 1, 100, &l, &rest), -1);
	assert_int_equal(topo_parse_long_prefix("99999999999999999999x", 1, LONG_MAX, &l, &rest), -1);
	assert_int_equal(topo_parse_long_prefix(NULL, 1, 100, &l, &rest), -1);
	assert_int_equal(l, 42);
	assert_true(d == 42);
	assert_string_equal(rest, "unchanged");
}

static void test_cmp_quantile(void **state)
{
	int iv[] = { 5, -3, 2147483647, -2147483647 - 1, 0 };
	double dv[] = { 4, 1, 3, 2, 5, 6, 7, 8, 9, 10 };

	(void)state;
	qsort(iv, 5, sizeof(int), topo_cmp_int); /* no overflow at the extremes */
	assert_int_equal(iv[0], -2147483647 - 1);
	assert_int_equal(iv[1], -3);
	assert_int_equal(iv[4], 2147483647);
	topo_sort_doubles(dv, 10);
	assert_true(dv[0] == 1 && dv[9] == 10);
	assert_true(topo_quantile(dv, 10, 0.5) == 5);   /* nearest rank: ceil(5) - 1 */
	assert_true(topo_quantile(dv, 10, 0.95) == 10);
	assert_true(topo_quantile(dv, 10, 0.0) == 1);
	assert_true(topo_quantile(dv, 10, 1.0) == 10);
	assert_true(topo_quantile(dv, 1, 0.99) == 1);
	assert_true(isnan(topo_quantile(dv, 0, 0.5)));   /* no data: NaN, documented */
}

static char *temp_file(const char *content, size_t len)
{
	char *path = malloc(512);
	int fd;

	assert_non_null(path);
	fd = test_mkstemp(path, 512, "topo_io.XXXXXX");
	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, len), (ssize_t)len);
	close(fd);
	return path;
}

/* topo_cmp_str sorts C strings; union-find roots are the smallest member,
 * whatever the order of the unions; topo_graph_is_switch */
static void test_str_uf_switch(void **state)
{
	const char *names[] = {"leaf10", "b", "leaf2", "a"};
	int parent[6] = {0, 1, 2, 3, 4, 5};
	topo_graph *g = topo_graph_new();

	(void)state;
	qsort(names, 4, sizeof(*names), topo_cmp_str);
	assert_string_equal(names[0], "a");
	assert_string_equal(names[1], "b");
	assert_string_equal(names[2], "leaf10");
	assert_string_equal(names[3], "leaf2");
	topo_uf_union(parent, 4, 5);
	topo_uf_union(parent, 5, 2);
	topo_uf_union(parent, 3, 1);
	assert_int_equal(topo_uf_find(parent, 5), 2);
	assert_int_equal(topo_uf_find(parent, 4), 2);
	assert_int_equal(topo_uf_find(parent, 3), 1);
	assert_int_equal(topo_uf_find(parent, 0), 0);
	topo_uf_union(parent, 4, 3);
	assert_int_equal(topo_uf_find(parent, 2), 1);
	assert_int_equal(topo_uf_find(parent, 5), 1);
	assert_non_null(g);
	int sw = topo_graph_add_vertex(g, TOPO_V_SWITCH, "sw");
	int h = topo_graph_add_vertex(g, TOPO_V_HOST, "h");
	assert_true(topo_graph_is_switch(g, sw));
	assert_false(topo_graph_is_switch(g, h));
	assert_false(topo_graph_is_switch(g, 99));
	topo_graph_free(g);
}

static void test_read_file(void **state)
{
	static const char text[] = "line one\nline two\n";
	char *path = temp_file(text, sizeof(text) - 1), *buf;
	size_t len = 0;
	topo_error err;

	(void)state;
	buf = topo_read_file(path, 1024, &len, &err);
	assert_non_null(buf);
	assert_int_equal(len, sizeof(text) - 1);
	assert_string_equal(buf, text);
	free(buf);
	/* exactly at the limit is fine; one byte less is refused, naming the file */
	buf = topo_read_file(path, sizeof(text) - 1, &len, &err);
	assert_non_null(buf);
	free(buf);
	assert_null(topo_read_file(path, sizeof(text) - 2, &len, &err));
	assert_string_equal(err.source, path);
	assert_non_null(strstr(err.text, "larger than 17 bytes"));
	unlink(path);
	assert_null(topo_read_file(path, 1024, &len, &err));
	assert_non_null(strstr(err.text, "cannot open"));
	free(path);
	/* an empty file is an empty, NUL-terminated buffer */
	path = temp_file("", 0);
	buf = topo_read_file(path, 1024, &len, &err);
	assert_non_null(buf);
	assert_int_equal(len, 0);
	assert_string_equal(buf, "");
	free(buf);
	unlink(path);
	free(path);
}

static void test_spawn_reader(void **state)
{
	char *echo[] = { "echo", "one", "two", NULL };
	char *missing[] = { "topognn-no-such-program", NULL };
	const char *why = NULL;
	char buf[32] = "";
	ssize_t got;
	int fd, status;
	pid_t pid;

	(void)state;
	fd = topo_spawn_reader(echo, &pid, &why);
	assert_true(fd >= 0);
	got = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_int_equal(got, 8);
	assert_string_equal(buf, "one two\n");
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* a program that is not on PATH: -1, errno and the step that failed */
	assert_int_equal(topo_spawn_reader(missing, &pid, &why), -1);
	assert_int_equal(errno, ENOENT);
	assert_string_equal(why, "cannot be started");
}

static void test_grow_strdup_opt(void **state)
{
	int *v = NULL, fail = 0;
	size_t cap = 0;
	char *s;

	(void)state;
	assert_int_equal(topo_grow(&v, &cap, 1, sizeof(*v), 16), 0);
	assert_int_equal(cap, 16);
	v[15] = 7;
	assert_int_equal(topo_grow(&v, &cap, 16, sizeof(*v), 16), 0); /* fits: unchanged */
	assert_int_equal(cap, 16);
	assert_int_equal(topo_grow(&v, &cap, 17, sizeof(*v), 16), 0); /* doubles */
	assert_int_equal(cap, 32);
	assert_int_equal(topo_grow(&v, &cap, 100, sizeof(*v), 16), 0); /* as often as needed */
	assert_int_equal(cap, 128);
	assert_int_equal(v[15], 7);
	/* a size that overflows: refused, the array and its capacity kept */
	assert_int_equal(topo_grow(&v, &cap, SIZE_MAX / 2, sizeof(*v), 16), -1);
	assert_int_equal(cap, 128);
	assert_int_equal(v[15], 7);
	free(v);

	assert_null(topo_strdup_opt(NULL, &fail));
	assert_int_equal(fail, 0);
	s = topo_strdup_opt("rail0", &fail);
	assert_string_equal(s, "rail0");
	assert_int_equal(fail, 0);
	free(s);
}

static void wrapped(topo_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void wrapped(topo_error *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	topo_error_vset(err, "x.conf", 3, 14, fmt, ap);
	va_end(ap);
}

static void test_error_column(void **state)
{
	topo_error err;
	char buf[256];

	(void)state;
	wrapped(&err, "bad %s", "value");
	assert_int_equal(err.line, 3);
	assert_int_equal(err.column, 14);
	assert_string_equal(topo_error_format(&err, buf, sizeof(buf)), "x.conf:3:14: bad value");
	topo_error_set(&err, "x.conf", 3, "no column");
	assert_int_equal(err.column, 0);
	assert_string_equal(topo_error_format(&err, buf, sizeof(buf)), "x.conf:3: no column");
	topo_error_clear(&err);
	assert_int_equal(err.column, 0);
	assert_int_equal(err.line, 0);
}

static void test_members(void **state)
{
	topo_graph *g = topo_graph_new();
	int h = topo_graph_add_vertex(g, TOPO_V_HOST, "n1");
	int h2 = topo_graph_add_vertex(g, TOPO_V_HOST, "n2");
	int gb = topo_graph_add_vertex(g, TOPO_V_GROUP, "su2");
	int ga = topo_graph_add_vertex(g, TOPO_V_GROUP, "su10");
	int hca0 = topo_graph_add_part(g, h, TOPO_V_HCA, "mlx5_0");
	int gpu0 = topo_graph_add_part(g, h, TOPO_V_GPU, "gpu0");
	int hca1 = topo_graph_add_part(g, h, TOPO_V_HCA, "mlx5_1");
	int got[4], n = 0;

	(void)state;
	topo_graph_add_edge(g, TOPO_E_MEMBER, ga, h);
	topo_graph_add_edge(g, TOPO_E_MEMBER, gb, h);
	topo_graph_add_edge(g, TOPO_E_MEMBER, gb, h2);
	for (int it = 0, m; (m = topo_graph_next_member(g, h, TOPO_V_HCA, &it)) >= 0 && n < 4;)
		got[n++] = m;
	assert_int_equal(n, 2);
	assert_int_equal(got[0], hca0);
	assert_int_equal(got[1], hca1);
	assert_int_equal(topo_graph_count_members(g, h, TOPO_V_GPU), 1);
	assert_int_equal(topo_graph_count_members(g, h, TOPO_V_NKINDS), 3);
	assert_int_equal(topo_graph_count_members(g, gb, TOPO_V_HOST), 2);
	assert_int_equal(topo_graph_count_members(g, h2, TOPO_V_NKINDS), 0);
	/* a part is not a container of its host */
	assert_int_equal(topo_graph_count_members(g, gpu0, TOPO_V_NKINDS), 0);
	/* two groups hold n1: the first by host-name order (su2 < su10) */
	assert_int_equal(topo_graph_group_of(g, h), gb);
	assert_int_equal(topo_graph_group_of(g, h2), gb);
	assert_int_equal(topo_graph_group_of(g, hca0), -1);
	assert_int_equal(topo_graph_group_of(g, 999), -1);
	topo_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_long),
		cmocka_unit_test(test_parse_int_u64_double),
		cmocka_unit_test(test_parse_prefix),
		cmocka_unit_test(test_cmp_quantile),
		cmocka_unit_test(test_str_uf_switch),
		cmocka_unit_test(test_read_file),
		cmocka_unit_test(test_spawn_reader),
		cmocka_unit_test(test_grow_strdup_opt),
		cmocka_unit_test(test_error_column),
		cmocka_unit_test(test_members),
		cmocka_unit_test(test_open_input),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
