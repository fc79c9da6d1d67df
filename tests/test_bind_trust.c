/* Regression tests for issue 13 (a job's user must not steer root) on the
 * fake tree of bind_fake_tree.h: state files root would read or write through
 * a planted, foreign, writable or symlinked file; a saved line naming an IRQ
 * of no adapter or of another adapter; an untrusted state directory; names
 * with "/" or ".."; and which jobs may enforce on which CPUs (the prolog's
 * job CPU set), with the exact files enforce leaves. Each of the state tests
 * failed on the code before the fix (it read, wrote or followed the file). */
#include "bind_fake_tree.h"

#include <fcntl.h>

/* A valid state file for job `job` saving `irq` (of adapter `hca`) as "5\n". */
static void plant_state(const tree *t, const char *path, const char *job, const char *hca, int irq)
{
	char text[512];

	snprintf(text, sizeof(text),
		 "topognn-irq-state 1\njob %s\nsave %d %s 350a %s/irq/%d/smp_affinity_list\nend 1\n",
		 job, irq, hca, t->proc, irq);
	put(path, text);
}

static void state_file(const tree *t, const char *job, char *buf, size_t len)
{
	snprintf(buf, len, "%s/job-%s.state", t->state, job);
}

/* Group/other-writable, foreign-owned and symlinked state files are refused. */
static void test_untrusted_state_files(void **unused)
{
	tree t;
	bind_roots r;
	topo_error err;
	char path[256], elsewhere[256];

	build(&t);
	r = roots_of(&t);
	state_file(&t, "50", path, sizeof(path));
	plant_state(&t, path, "50", "mlx5_0", 101);

	assert_int_equal(chmod(path, 0666), 0);
	assert_int_equal(bind_irq_restore(&r, t.state, "50", NULL, &err), -1);
	assert_non_null(strstr(err.text, "not trusted"));
	assert_non_null(strstr(err.text, "mode 0666"));
	assert_int_equal(changed_files(&t), 0);

	assert_int_equal(chmod(path, 0600), 0);
	if (geteuid() == 0) {
		assert_int_equal(chown(path, 65534, 65534), 0);
		assert_int_equal(bind_irq_restore(&r, t.state, "50", NULL, &err), -1);
		assert_non_null(strstr(err.text, "it is uid 65534"));
		assert_int_equal(changed_files(&t), 0);
		assert_int_equal(chown(path, 0, 0), 0);
	}

	/* a symlink to a well-formed, trusted state file elsewhere */
	snprintf(elsewhere, sizeof(elsewhere), "%s/planted.state", t.root);
	assert_int_equal(rename(path, elsewhere), 0);
	assert_int_equal(symlink(elsewhere, path), 0);
	assert_int_equal(bind_irq_restore(&r, t.state, "50", NULL, &err), -1);
	assert_non_null(strstr(err.text, "is a symbolic link (not followed)"));
	assert_int_equal(bind_irq_recover(&r, t.state, NULL, NULL, NULL, &err), -1);
	assert_int_equal(changed_files(&t), 0);

	/* the same file, ours and in place: restored */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rename(elsewhere, path), 0);
	assert_int_equal(bind_irq_restore(&r, t.state, "50", NULL, &err), 1);
	{
		char *now = affinity(&t, 101);

		assert_string_equal(now, "5\n");
		free(now);
	}
	destroy(&t);
}

/* A saved line may only restore an IRQ of the adapter it names. */
static void test_state_irq_outside_adapter(void **unused)
{
	tree t;
	bind_roots r;
	topo_error err;
	char path[256];

	build(&t);
	r = roots_of(&t);
	state_file(&t, "51", path, sizeof(path));
	plant_state(&t, path, "51", "mlx5_0", 0); /* the timer: no adapter's */
	assert_int_equal(bind_irq_restore(&r, t.state, "51", NULL, &err), -1);
	assert_non_null(strstr(err.text, "irq 0 is not an IRQ of adapter mlx5_0"));
	assert_int_equal(changed_files(&t), 0);

	plant_state(&t, path, "51", "mlx5_0", 120); /* mlx5_2's IRQ */
	assert_int_equal(bind_irq_recover(&r, t.state, NULL, NULL, NULL, &err), -1);
	assert_non_null(strstr(err.text, "irq 120 is not an IRQ of adapter mlx5_0"));
	assert_int_equal(changed_files(&t), 0);

	plant_state(&t, path, "51", "../../x", 101); /* not an adapter name */
	assert_int_equal(bind_irq_restore(&r, t.state, "51", NULL, &err), -1);
	assert_int_equal(changed_files(&t), 0);
	destroy(&t);
}

/* A state directory others may write is refused by enforce, restore, recover. */
static void test_untrusted_state_dir(void **unused)
{
	tree t;
	bind_roots r;
	topo_error err;
	bind_irq_set *set;
	bind_enforce_opts o = { "52", "2-5,10-13", NULL, NULL };
	char path[256];

	build(&t);
	r = roots_of(&t);
	o.state_dir = t.state;
	state_file(&t, "53", path, sizeof(path));
	plant_state(&t, path, "53", "mlx5_0", 101);
	assert_int_equal(chmod(t.state, 0777), 0);
	assert_int_equal(bind_irq_recover(&r, t.state, NULL, NULL, NULL, &err), -1);
	assert_non_null(strstr(err.text, "not trusted: want a directory"));
	assert_int_equal(bind_irq_restore(&r, t.state, "53", NULL, &err), -1);
	set = load_given(&t);
	assert_int_equal(bind_irq_enforce(&r, set, &o, NULL, &err), -1);
	assert_non_null(strstr(err.text, "mode 0777"));
	bind_irq_set_free(set);
	assert_int_equal(changed_files(&t), 0);
	assert_int_equal(access(path, F_OK), 0); /* not consumed */
	destroy(&t);
}

/* The temp file of a save is a new name: a planted job-ID.state.tmp symlink
 * is neither followed nor truncated. */
static void test_state_write_no_follow(void **unused)
{
	tree t;
	bind_roots r;
	topo_error err;
	bind_irq_set *set;
	bind_enforce_opts o = { "54", "2-5,10-13", NULL, NULL };
	char link[256], target[256];
	char *text;

	build(&t);
	r = roots_of(&t);
	o.state_dir = t.state;
	snprintf(target, sizeof(target), "%s/root-secret", t.root);
	put(target, "secret\n");
	snprintf(link, sizeof(link), "%s/job-54.state.tmp", t.state);
	assert_int_equal(symlink(target, link), 0);
	set = load_given(&t);
	assert_int_equal(bind_irq_enforce(&r, set, &o, NULL, &err), 14);
	bind_irq_set_free(set);
	text = get(target);
	assert_string_equal(text, "secret\n");
	free(text);
	assert_true(state_exists(&t, "54"));
	{
		struct stat st;
		char path[256];

		state_file(&t, "54", path, sizeof(path));
		assert_int_equal(lstat(path, &st), 0);
		assert_true(S_ISREG(st.st_mode));
		assert_int_equal(st.st_mode & 0777, 0600);
	}
	/* recover removes the planted name like any unfinished save, not its target */
	assert_int_equal(bind_irq_recover(&r, t.state, NULL, NULL, NULL, &err), 1);
	assert_int_equal(changed_files(&t), 0);
	assert_int_equal(access(link, F_OK), -1);
	text = get(target);
	assert_string_equal(text, "secret\n");
	free(text);
	destroy(&t);
}

static void test_name_ok(void **unused)
{
	static const char *const good[] = { "n001", "gpu-a.rack_2", "42", "x" };
	static const char *const bad[] = { "", "..", ".", "../../tmp/evil", "n001/../x", "a/b",
					   ".hidden", "a..b", "n 1", "n\n1",
					   "0123456789012345678901234567890123456789012345678901234567890123456789" };

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_true(bind_name_ok(good[i]));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (bind_name_ok(bad[i]))
			fail_msg("\"%s\" accepted", bad[i]);
	assert_false(bind_name_ok(NULL));
}

/* Who may enforce (defect 3) and on which CPUs (defect 4): only a job with
 * the node to itself, whose CPUs are every online CPU; then enforce puts the
 * IRQs on housekeeping cores only, and with none it changes nothing. */
static void test_enforce_scope(void **unused)
{
	static const char *const shared[] = { "YES", "USER", "MCS", "TOPO", "OK", "", "no" };
	tree t;
	bind_roots r;
	topo_error err;
	bind_irq_set *set;
	char why[256], path[256];
	char *cpus;

	build(&t);
	r = roots_of(&t);
	snprintf(path, sizeof(path), "%s/devices/system/cpu", t.sys);
	mkdirs(path);
	snprintf(path, sizeof(path), "%s/devices/system/cpu/online", t.sys);
	put(path, "0-15\n");

	for (size_t i = 0; i < sizeof(shared) / sizeof(shared[0]); i++) {
		assert_int_equal(bind_enforce_scope(&r, shared[i], &cpus, why, sizeof(why), &err), 0);
		assert_null(cpus);
		assert_non_null(strstr(why, "may share the node"));
	}
	assert_int_equal(bind_enforce_scope(&r, NULL, &cpus, why, sizeof(why), &err), 0);
	assert_string_equal(why, "the job may share the node (SLURM_JOB_OVERSUBSCRIBE=unset): IRQs are only audited");
	assert_int_equal(bind_enforce_scope(&r, "NO", &cpus, why, sizeof(why), &err), 1);
	assert_string_equal(cpus, "0-15");

	/* the job owns every core: without housekeeping nothing moves */
	{
		bind_enforce_opts o = { "60", NULL, NULL, NULL };

		o.job_cpus = cpus;
		o.state_dir = t.state;
		set = load_given(&t);
		assert_int_equal(bind_irq_enforce(&r, set, &o, NULL, &err), 0);
		bind_irq_set_free(set);
		assert_int_equal(changed_files(&t), 0);
		assert_false(state_exists(&t, "60"));
	}
	/* housekeeping 6,7: exactly these files change, to these bytes */
	{
		bind_enforce_opts o = { "61", NULL, "6,7", NULL };

		o.job_cpus = cpus;
		o.state_dir = t.state;
		set = load_given(&t);
		assert_int_equal(bind_irq_enforce(&r, set, &o, NULL, &err), 16);
		bind_irq_set_free(set);
		for (size_t i = 0; i < NALL; i++) {
			int irq = all_irqs[i];
			char *now = affinity(&t, irq);

			if (irq >= 100 && irq <= 107)
				assert_string_equal(now, "6\n");
			else if (irq >= 110 && irq <= 117)
				assert_string_equal(now, "7\n");
			else
				assert_string_equal(now, t.saved[i]);
			free(now);
		}
		assert_int_equal(bind_irq_restore(&r, t.state, "61", NULL, &err), 16);
		assert_int_equal(changed_files(&t), 0);
	}
	free(cpus);

	/* unreadable online list: an error naming it, no CPU set */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(bind_enforce_scope(&r, "NO", &cpus, why, sizeof(why), &err), -1);
	assert_null(cpus);
	assert_non_null(strstr(err.source, "/devices/system/cpu/online"));
	destroy(&t);
}

/* The job CPU set decides the cores: a job on 0-3,8-11 gets mlx5_0's IRQs on
 * 4-7 and mlx5_1's on 12-15, round-robin, never on its own cores. */
static void test_enforce_job_cpus_exact(void **unused)
{
	tree t;
	bind_roots r;
	topo_error err;
	bind_irq_set *set;
	bind_enforce_opts o = { "62", "0-3,8-11", NULL, NULL };

	build(&t);
	r = roots_of(&t);
	o.state_dir = t.state;
	set = load_given(&t);
	assert_int_equal(bind_irq_enforce(&r, set, &o, NULL, &err), 16);
	bind_irq_set_free(set);
	for (int i = 0; i < 8; i++) {
		char want[8], *a = affinity(&t, 100 + i), *b = affinity(&t, 110 + i);

		snprintf(want, sizeof(want), "%d\n", 4 + i % 4);
		assert_string_equal(a, want);
		snprintf(want, sizeof(want), "%d\n", 12 + i % 4);
		assert_string_equal(b, want);
		free(a);
		free(b);
	}
	assert_int_equal(bind_irq_restore(&r, t.state, "62", NULL, &err), 16);
	assert_int_equal(changed_files(&t), 0);
	destroy(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_untrusted_state_files),
		cmocka_unit_test(test_state_irq_outside_adapter),
		cmocka_unit_test(test_untrusted_state_dir),
		cmocka_unit_test(test_state_write_no_follow),
		cmocka_unit_test(test_name_ok),
		cmocka_unit_test(test_enforce_scope),
		cmocka_unit_test(test_enforce_job_cpus_exact),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
