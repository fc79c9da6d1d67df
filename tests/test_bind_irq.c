/* Unit tests for bind_cpuset and bind_irq on a fake proc/sys tree that
 * reproduces the incident: two NICs (mlx5_0 on NUMA 0, mlx5_1 on NUMA 1),
 * 8 completion IRQs each, all on core 0; a third NIC (mlx5_2) the job is not
 * given. NUMA0 = CPUs 0-7, NUMA1 = CPUs 8-15. */
#include "bind_fake_tree.h"

/* ---- bind_cpuset ---- */

static void test_cpulist(void **unused)
{
	bind_cpuset s;
	topo_error err;
	char *text;

	bind_cpuset_init(&s);
	assert_int_equal(bind_cpuset_parse(&s, " 0-3,8,10-11\n", "x", 1, &err), 0);
	assert_int_equal(bind_cpuset_count(&s), 7);
	text = bind_cpuset_format(&s);
	assert_string_equal(text, "0-3,8,10-11");
	free(text);
	assert_int_equal(bind_cpuset_parse(&s, "200,64,63,65", "x", 1, &err), 0);
	assert_int_equal(bind_cpuset_count(&s), 4);
	assert_int_equal(bind_cpuset_next(&s, -1), 63);
	assert_int_equal(bind_cpuset_next(&s, 65), 200);
	text = bind_cpuset_format(&s);
	assert_string_equal(text, "63-65,200");
	free(text);
	assert_int_equal(bind_cpuset_parse(&s, "\n", "x", 1, &err), 0);
	assert_int_equal(bind_cpuset_count(&s), 0);
	text = bind_cpuset_format(&s);
	assert_string_equal(text, "");
	free(text);
	assert_int_equal(bind_cpuset_parse(&s, "3-1", "f", 7, &err), -1);
	assert_string_equal(err.source, "f");
	assert_int_equal(err.line, 7);
	assert_non_null(strstr(err.text, "\"3-1\" is not a CPU list"));
	assert_int_equal(bind_cpuset_parse(&s, "1,,2", "f", 1, &err), -1);
	assert_int_equal(bind_cpuset_parse(&s, "zero", "f", 1, &err), -1);
	assert_int_equal(bind_cpuset_parse(&s, "99999", "f", 1, &err), -1);
	assert_int_equal(bind_cpuset_count(&s), 0);
	bind_cpuset_free(&s);
}

/* ---- load and audit ---- */

static void test_load(void **unused)
{
	tree t;
	bind_irq_set *set;
	const bind_nic_info *nic;
	const bind_irq_info *q;
	bind_roots r;
	topo_error err;

	build(&t);
	set = load_given(&t);
	assert_int_equal(bind_irq_set_nnics(set), 2);
	assert_int_equal(bind_irq_set_nirqs(set), 16); /* 108 has no /proc/interrupts line */
	nic = bind_irq_set_nic(set, 1);
	assert_string_equal(nic->name, "mlx5_1");
	assert_string_equal(nic->sysclass, "infiniband");
	assert_string_equal(nic->pci, "0000:84:00.0");
	assert_int_equal(nic->numa, 1);
	assert_int_equal(nic->first, 8);
	assert_int_equal(nic->nirqs, 8);
	q = bind_irq_set_irq(set, 3);
	assert_int_equal(q->irq, 103);
	assert_string_equal(q->desc, "mlx5_comp3@pci:0000:04:00.0");
	assert_int_equal(q->completion, 1);
	assert_int_equal(q->count, 1103);
	assert_int_equal(bind_cpuset_count(&q->used), 1);
	assert_true(bind_cpuset_has(&q->used, 0));
	bind_irq_set_free(set);

	/* every HCA when none is named */
	r = roots_of(&t);
	set = bind_irq_load(&r, NULL, 0, &err);
	assert_non_null(set);
	assert_int_equal(bind_irq_set_nnics(set), 3);
	assert_string_equal(bind_irq_set_nic(set, 2)->name, "mlx5_2");
	assert_int_equal(bind_irq_set_nirqs(set), 24);
	bind_irq_set_free(set);

	/* an Ethernet netdev without msi_irqs: its IRQs found by PCI address */
	{
		char dev[256], link[256];
		bind_nic_req eth = { "eth2", "8-15" };

		snprintf(dev, sizeof(dev), "%s/devices/pci0000:80/0000:85:00.0", t.sys);
		mkdirs(dev);
		snprintf(link, sizeof(link), "%s/class/net/eth2", t.sys);
		mkdirs(link);
		strcat(link, "/device");
		assert_int_equal(symlink(dev, link), 0);
		set = bind_irq_load(&r, &eth, 1, &err);
		assert_non_null(set);
		assert_string_equal(bind_irq_set_nic(set, 0)->sysclass, "net");
		assert_int_equal(bind_irq_set_nic(set, 0)->numa, -1);
		assert_int_equal(bind_irq_set_nirqs(set), 8);
		assert_int_equal(bind_irq_set_irq(set, 7)->irq, 127);
		assert_int_equal(bind_cpuset_count(&bind_irq_set_nic(set, 0)->local), 8);
		bind_irq_set_free(set);
	}

	/* unknown adapter */
	{
		bind_nic_req bad = { "mlx5_9", NULL };

		assert_null(bind_irq_load(&r, &bad, 1, &err));
		assert_non_null(strstr(err.text, "no adapter \"mlx5_9\""));
	}
	destroy(&t);
}

static void test_audit_incident(void **unused)
{
	tree t;
	bind_irq_set *set;
	bind_audit a;
	topo_error err;

	build(&t);
	set = load_given(&t);
	assert_int_equal(bind_irq_audit(set, "2-5,10-13", &a, &err), 0);
	assert_int_equal(count_kind(&a, BIND_SHARED_CORE), 16);
	assert_int_equal(count_kind(&a, BIND_REMOTE_NUMA), 8);
	assert_int_equal(count_kind(&a, BIND_ON_JOB_CORES), 0);
	assert_int_equal(count_kind(&a, BIND_ALL_ON_ONE_CORE), 2);
	assert_int_equal(a.n, 26);
	/* first finding: irq 100 shares core 0 with mlx5_1's 8 IRQs */
	assert_string_equal(a.v[0].kind, BIND_SHARED_CORE);
	assert_int_equal(a.v[0].irq, 100);
	assert_string_equal(a.v[0].hca, "mlx5_0");
	assert_string_equal(a.v[0].cpus, "0");
	assert_string_equal(a.v[0].text,
			    "irq 100 (mlx5_0) shares core(s) 0 with 8 IRQ(s) of another adapter (mlx5_1)");
	/* every remote-numa finding is an mlx5_1 IRQ */
	for (size_t i = 0; i < a.n; i++)
		if (strcmp(a.v[i].kind, BIND_REMOTE_NUMA) == 0) {
			assert_string_equal(a.v[i].hca, "mlx5_1");
			assert_true(a.v[i].irq >= 110 && a.v[i].irq <= 117);
		}
	assert_string_equal(a.v[24].kind, BIND_ALL_ON_ONE_CORE);
	assert_int_equal(a.v[24].irq, -1);
	assert_string_equal(a.v[24].text, "all 8 completion IRQs of mlx5_0 fire on core 0");
	bind_audit_free(&a);

	/* a job computing on core 0 also gets all 16 on-job-cores findings */
	assert_int_equal(bind_irq_audit(set, "0-3", &a, &err), 0);
	assert_int_equal(count_kind(&a, BIND_ON_JOB_CORES), 16);
	assert_int_equal(a.n, 42);
	bind_audit_free(&a);

	assert_int_equal(bind_irq_audit(set, "0-x", &a, &err), -1);
	assert_string_equal(err.source, "job CPUs");
	assert_int_equal(a.n, 0);
	bind_irq_set_free(set);
	destroy(&t);
}

/* ---- enforce, restore, recover ---- */

static const char *const spread[] = { /* after enforce with job CPUs 2-5,10-13 */
	"0\n", "1\n", "6\n", "7\n", "0\n", "1\n", "6\n", "7\n",    /* mlx5_0: 100-107 */
	"8\n", "9\n", "14\n", "15\n", "8\n", "9\n", "14\n", "15\n" /* mlx5_1: 110-117 */
};

static void test_enforce_restore(void **unused)
{
	tree t;
	bind_irq_set *set;
	bind_audit a;
	topo_error err;
	bind_roots r;
	bind_log log;
	bind_enforce_opts o = { "42", "2-5,10-13", NULL, NULL };
	int n;

	build(&t);
	r = roots_of(&t);
	log.fn = collect;
	log.ctx = &t;
	o.state_dir = t.state;
	set = load_given(&t);
	n = bind_irq_enforce(&r, set, &o, &log, &err);
	assert_int_equal(n, 14); /* 100 and 104 already sit on core 0 */
	assert_int_equal(t.nlog, 14);
	assert_true(state_exists(&t, "42"));
	{
		char want[256];

		snprintf(want, sizeof(want),
			 "irq 101 (mlx5_0) smp_affinity_list 0 -> 1, saved in %s/job-42.state",
			 t.state);
		assert_string_equal(t.log[0], want);
	}
	for (int i = 0; i < 16; i++) {
		int irq = i < 8 ? 100 + i : 110 + i - 8;
		char *now = affinity(&t, irq);

		if (irq == 100 || irq == 104)
			assert_string_equal(now, "0\n");
		else
			assert_string_equal(now, spread[i]);
		free(now);
	}
	/* mlx5_2 (not given), the timer and acpi: untouched */
	for (size_t i = 0; i < NALL; i++)
		if (all_irqs[i] < 100 || all_irqs[i] >= 120) {
			char *now = affinity(&t, all_irqs[i]);

			assert_string_equal(now, t.saved[i]);
			free(now);
		}
	bind_irq_set_free(set);

	/* the incident is gone */
	set = load_given(&t);
	assert_int_equal(bind_irq_audit(set, "2-5,10-13", &a, &err), 0);
	assert_int_equal(a.n, 0);
	bind_audit_free(&a);

	/* a second enforce for the same job would save changed values: refused */
	assert_int_equal(bind_irq_enforce(&r, set, &o, &log, &err), -1);
	assert_non_null(strstr(err.text, "job 42 already has saved IRQ state"));
	bind_irq_set_free(set);

	/* restore: every file byte for byte, state file gone */
	t.nlog = 0;
	assert_int_equal(bind_irq_restore(&r, t.state, "42", &log, &err), 14);
	assert_int_equal(changed_files(&t), 0);
	assert_false(state_exists(&t, "42"));
	assert_int_equal(t.nlog, 15);
	assert_non_null(strstr(t.log[2], "irq 103 (mlx5_0) smp_affinity_list 7 -> 0, restored from"));
	assert_int_equal(bind_irq_restore(&r, t.state, "42", &log, &err), 0);
	destroy(&t);
}

static void test_housekeeping(void **unused)
{
	tree t;
	bind_irq_set *set;
	topo_error err;
	bind_roots r;
	bind_enforce_opts o = { "7", "0-15", "6,7", NULL };

	build(&t);
	r = roots_of(&t);
	o.state_dir = t.state;
	set = load_given(&t);
	/* mlx5_0 takes local core 6, mlx5_1 (nothing local in 6,7) gets core 7 */
	assert_int_equal(bind_irq_enforce(&r, set, &o, NULL, &err), 16);
	for (int i = 0; i < 8; i++) {
		char *a = affinity(&t, 100 + i), *b = affinity(&t, 110 + i);

		assert_string_equal(a, "6\n");
		assert_string_equal(b, "7\n");
		free(a);
		free(b);
	}
	bind_irq_set_free(set);

	/* job 8 given mlx5_1 too: its IRQs are held by job 7's state, refused, nothing changed */
	{
		bind_enforce_opts o8 = { "8", "0-15", "1", NULL };
		char *before = affinity(&t, 110), *after;

		o8.state_dir = t.state;
		set = load_given(&t);
		assert_int_equal(bind_irq_enforce(&r, set, &o8, NULL, &err), -1);
		assert_non_null(strstr(err.text, "irq 100 is held by job 7's saved state"));
		assert_false(state_exists(&t, "8"));
		after = affinity(&t, 110);
		assert_string_equal(before, after);
		free(before);
		free(after);
		bind_irq_set_free(set);
	}
	/* no free local core and no housekeeping: adapters left alone */
	{
		bind_enforce_opts o9 = { "9", "0-15", NULL, NULL };

		o9.state_dir = t.state;
		set = load_given(&t);
		assert_int_equal(bind_irq_enforce(&r, set, &o9, NULL, &err), 0);
		assert_false(state_exists(&t, "9"));
		bind_irq_set_free(set);
	}
	assert_int_equal(bind_irq_restore(&r, t.state, "7", NULL, &err), 16);
	assert_int_equal(changed_files(&t), 0);
	destroy(&t);
}

static int running_only(void *ctx, const char *job)
{
	return strcmp(job, (const char *)ctx) == 0;
}

static void test_crash_recover(void **unused)
{
	tree t;
	bind_irq_set *set;
	topo_error err;
	bind_roots r;
	bind_enforce_opts o = { "42", "2-5,10-13", NULL, NULL };
	char tmp[256];

	build(&t);
	r = roots_of(&t);
	o.state_dir = t.state;
	set = load_given(&t);
	assert_int_equal(bind_irq_enforce(&r, set, &o, NULL, &err), 14);
	bind_irq_set_free(set);
	/* the crash: only part of the writes had happened (undo the rest by
	 * hand), and an unfinished save of another job was left behind */
	set_affinity(&t, 111, "0\n");
	set_affinity(&t, 112, "0\n");
	set_affinity(&t, 113, "0\n\n");
	snprintf(tmp, sizeof(tmp), "%s/job-43.state.tmp", t.state);
	put(tmp, "topognn-irq-state 1\njob 43\n");
	assert_int_equal(changed_files(&t), 11);

	/* job 42 still running: nothing restored */
	assert_int_equal(bind_irq_recover(&r, t.state, running_only, "42", NULL, &err), 0);
	assert_int_equal(changed_files(&t), 11);
	assert_true(state_exists(&t, "42"));

	/* next start, job 42 gone: restored byte for byte, leftovers removed */
	assert_int_equal(bind_irq_recover(&r, t.state, running_only, "99", NULL, &err), 1);
	assert_int_equal(changed_files(&t), 0);
	assert_false(state_exists(&t, "42"));
	assert_int_equal(access(tmp, F_OK), -1);
	destroy(&t);
}

/* ---- unreadable and malformed files change nothing ---- */

static void expect_load_error(tree *t, const char *source_end, int line, const char *text)
{
	bind_roots r = roots_of(t);
	topo_error err;
	bind_irq_set *set = bind_irq_load(&r, given, 2, &err);
	size_t n = strlen(err.source), m = strlen(source_end);

	assert_null(set);
	if (n < m || strcmp(err.source + n - m, source_end) != 0)
		fail_msg("error source %s does not end with %s", err.source, source_end);
	assert_int_equal(err.line, line);
	if (!strstr(err.text, text))
		fail_msg("error text \"%s\" lacks \"%s\"", err.text, text);
}

static void test_malformed(void **unused)
{
	tree t;
	char path[256];
	char *orig;

	build(&t);
	/* a non-numeric affinity list */
	set_affinity(&t, 105, "zero\n");
	expect_load_error(&t, "/proc/irq/105/smp_affinity_list", 1, "\"zero\" is not a CPU list");
	set_affinity(&t, 105, "0\n");

	/* a directory where the file should be */
	affinity_path(&t, 106, path, sizeof(path));
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkdir(path, 0755), 0);
	expect_load_error(&t, "/proc/irq/106/smp_affinity_list", 0,
			  "is a directory, not a regular file");
	assert_int_equal(rmdir(path), 0);

	/* a FIFO: refused at once (topo_open_input), never read (it would block) */
	assert_int_equal(mkfifo(path, 0644), 0);
	expect_load_error(&t, "/proc/irq/106/smp_affinity_list", 0, "is a FIFO, not a regular file");
	assert_int_equal(unlink(path), 0);

	/* a missing file */
	expect_load_error(&t, "/proc/irq/106/smp_affinity_list", 0,
			  "cannot open: No such file or directory");
	put(path, "0\n");

	/* /proc/interrupts: a bad per-CPU count on line 5, then a line without "IRQ:" */
	snprintf(path, sizeof(path), "%s/interrupts", t.proc);
	orig = get(path);
	put(path, orig);
	{
		char *bad = malloc(strlen(orig) + 64);
		char *third = strchr(strchr(strchr(orig, '\n') + 1, '\n') + 1, '\n') + 1;

		/* line 4 is irq 100: replace its second count */
		memcpy(bad, orig, (size_t)(third - orig));
		sprintf(bad + (third - orig), " 100: 5 x%s", strchr(third, '\n'));
		put(path, bad);
		expect_load_error(&t, "/proc/interrupts", 4, "irq 100: per-CPU count 2 of 16 is \"x\"");
		sprintf(bad + (third - orig), "garbage here%s", strchr(third, '\n'));
		put(path, bad);
		expect_load_error(&t, "/proc/interrupts", 4, "expected \"IRQ:\" at the start");
		put(path, "no header\n");
		expect_load_error(&t, "/proc/interrupts", 1, "header should list CPU columns");
		free(bad);
	}
	put(path, orig);
	free(orig);
	assert_int_equal(changed_files(&t), 0);

	/* a file that breaks after load: enforce reads before it writes, so nothing changes */
	{
		bind_irq_set *set = load_given(&t);
		bind_roots r = roots_of(&t);
		bind_enforce_opts o = { "5", "2-5,10-13", NULL, NULL };
		topo_error err;

		o.state_dir = t.state;
		affinity_path(&t, 113, path, sizeof(path));
		assert_int_equal(unlink(path), 0);
		assert_int_equal(mkdir(path, 0755), 0);
		assert_int_equal(bind_irq_enforce(&r, set, &o, NULL, &err), -1);
		assert_non_null(strstr(err.source, "/irq/113/smp_affinity_list"));
		assert_false(state_exists(&t, "5"));
		assert_int_equal(rmdir(path), 0);
		put(path, "0\n\n");
		assert_int_equal(changed_files(&t), 0);

		/* a malformed state file: restore names file and line, writes nothing */
		assert_int_equal(bind_irq_enforce(&r, set, &o, NULL, &err), 14);
		snprintf(path, sizeof(path), "%s/job-5.state", t.state);
		orig = get(path);
		{
			char *bad = strdup(orig);
			char *save = strstr(bad, "save 101");

			save[5] = 'X';
			put(path, bad);
			free(bad);
		}
		set_affinity(&t, 101, "3\n"); /* would be overwritten by a restore */
		assert_int_equal(bind_irq_restore(&r, t.state, "5", NULL, &err), -1);
		assert_int_equal(err.line, 4);
		assert_non_null(strstr(err.text, "expected \"save IRQ ADAPTER HEXBYTES PATH\""));
		{
			char *now = affinity(&t, 101);

			assert_string_equal(now, "3\n");
			free(now);
		}
		put(path, orig);
		free(orig);
		assert_int_equal(bind_irq_restore(&r, t.state, "5", NULL, &err), 14);
		assert_int_equal(changed_files(&t), 0);
		bind_irq_set_free(set);
	}
	destroy(&t);
}

/* A write the kernel refuses (as for a managed IRQ: EIO) after 9 good ones:
 * those are undone, the state file removed, the error names the file. */
static void test_write_failure(void **unused)
{
	tree t;
	bind_irq_set *set;
	topo_error err;
	bind_roots r;
	bind_log log;
	bind_enforce_opts o = { "42", "2-5,10-13", NULL, NULL };
	char path[256];

	build(&t);
	r = roots_of(&t);
	log.fn = collect;
	log.ctx = &t;
	o.state_dir = t.state;
	set = load_given(&t);
	affinity_path(&t, 113, path, sizeof(path));
	assert_int_equal(unlink(path), 0);
	assert_int_equal(symlink("/proc/version", path), 0); /* readable, write gives EIO */
	assert_int_equal(bind_irq_enforce(&r, set, &o, &log, &err), -1);
	assert_non_null(strstr(err.source, "/irq/113/smp_affinity_list"));
	assert_non_null(strstr(err.text, "cannot write 3 bytes: Input/output error"));
	assert_false(state_exists(&t, "42"));
	assert_int_equal(t.nlog, 10); /* 9 changes, then the undo */
	assert_string_equal(t.log[9], "irq 113 (mlx5_1): write failed, 9 earlier change(s) undone");
	assert_int_equal(unlink(path), 0);
	put(path, "0\n\n");
	assert_int_equal(changed_files(&t), 0);
	bind_irq_set_free(set);
	destroy(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpulist),
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_audit_incident),
		cmocka_unit_test(test_enforce_restore),
		cmocka_unit_test(test_housekeeping),
		cmocka_unit_test(test_crash_recover),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_write_failure),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
