/* test_bind_job: the node side's once-per-job work without Slurm
 * (topo/node/bind_job.c): one caller per job does the work, markers and
 * reports are never written through planted files or links, and IRQs a
 * crash left moved are restored at the next job end or start. */
#include "bind_fake_tree.h"

#include <fcntl.h>
#include <jansson.h>

#include "bind_job.h"

typedef struct fx {
	tree t;
	char report[192];
	bind_job_conf conf;
} fx;

static int nerrors;

static void count_log(int error, const char *msg)
{
	(void)msg;
	nerrors += error;
}

static void fx_open(fx *f, bind_job_irq irq)
{
	build(&f->t);
	snprintf(f->report, sizeof(f->report), "%s/report", f->t.root);
	memset(&f->conf, 0, sizeof(f->conf));
	f->conf.hwloc = "/nonexistent/topognn-test.xml"; /* no plan: the report says so */
	f->conf.state_dir = f->t.state;
	f->conf.report_dir = f->report;
	f->conf.proc_root = f->t.proc;
	f->conf.sys_root = f->t.sys;
	f->conf.irq = irq;
	f->conf.log = count_log;
	nerrors = 0;
}

static void path_of(const fx *f, char *buf, size_t len, const char *dir, const char *name)
{
	(void)f;
	if (snprintf(buf, len, "%s/%s", dir, name) >= (int)len)
		fail_msg("path too long: %s/%s", dir, name);
}

static int exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

static const char *no_env(void *ctx, const char *name)
{
	(void)ctx;
	(void)name;
	return NULL;
}

/* The first start does the work (marker, report); later ones return; the
 * end removes the marker, so the next job of that id starts afresh. */
static void test_once(void **unused)
{
	fx f;
	char marker[512], rep[512];
	json_error_t jerr;
	json_t *j;

	(void)unused;
	fx_open(&f, BIND_JOB_IRQ_OFF);
	path_of(&f, marker, sizeof(marker), f.t.state, "job-7.boot");
	path_of(&f, rep, sizeof(rep), f.report, "job-7.node1.json");
	assert_int_equal(bind_job_start(&f.conf, no_env, NULL, "7", "node1", NULL, "prolog"), 1);
	assert_true(exists(marker));
	j = json_load_file(rep, 0, &jerr);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "job_id")), "7");
	assert_string_equal(json_string_value(json_object_get(j, "node")), "node1");
	assert_string_equal(json_string_value(json_object_get(j, "from")), "prolog");
	assert_true(json_is_null(json_object_get(j, "plan")));
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "irq"), "mode")),
			    "off");
	json_decref(j);
	assert_int_equal(unlink(rep), 0);
	/* a task of the same job: the marker says it is done */
	assert_int_equal(bind_job_start(&f.conf, no_env, NULL, "7", "node1", NULL, "task"), 0);
	assert_false(exists(rep));
	bind_job_end(&f.conf, "7", "node1");
	assert_false(exists(marker));
	assert_int_equal(bind_job_start(&f.conf, no_env, NULL, "7", "node1", NULL, "task"), 1);
	assert_true(exists(rep));
	destroy(&f.t);
}

/* Job ids and node names that are not safe in a path are refused. */
static void test_refused_names(void **unused)
{
	fx f;

	(void)unused;
	fx_open(&f, BIND_JOB_IRQ_OFF);
	assert_int_equal(bind_job_start(&f.conf, no_env, NULL, "../7", "node1", NULL, "prolog"), 0);
	assert_int_equal(bind_job_start(&f.conf, no_env, NULL, "7", "a/b", NULL, "prolog"), 0);
	assert_int_equal(bind_job_start(&f.conf, no_env, NULL, "7", "..", NULL, "prolog"), 0);
	assert_false(exists(f.report));
	destroy(&f.t);
}

/* A marker name taken by a planted link or file: O_EXCL|O_NOFOLLOW refuses
 * it, nothing is written through the link, no work is done. */
static void test_planted_marker(void **unused)
{
	fx f;
	char marker[512], target[512], rep[512];

	(void)unused;
	fx_open(&f, BIND_JOB_IRQ_OFF);
	path_of(&f, marker, sizeof(marker), f.t.state, "job-8.boot");
	path_of(&f, target, sizeof(target), f.t.root, "target");
	assert_int_equal(symlink(target, marker), 0);
	assert_int_equal(bind_job_start(&f.conf, no_env, NULL, "8", "node1", NULL, "prolog"), 0);
	assert_false(exists(target));
	path_of(&f, rep, sizeof(rep), f.report, "job-8.node1.json");
	assert_false(exists(rep));
	/* a dangling link is not "running": recovery and end leave the target alone */
	bind_job_end(&f.conf, "8", "node1");
	assert_false(exists(target));
	destroy(&f.t);
}

/* Report names taken in a shared report_dir: a link is replaced, not
 * followed; a directory rename() cannot replace puts the report aside. */
static void test_planted_report(void **unused)
{
	fx f;
	char rep[512], outside[512], inside[512], cmd[512];
	struct stat st;
	FILE *fp;
	int found = 0;

	(void)unused;
	fx_open(&f, BIND_JOB_IRQ_OFF);
	mkdirs(f.report);
	path_of(&f, outside, sizeof(outside), f.t.root, "outside");
	put(outside, "precious\n");
	path_of(&f, rep, sizeof(rep), f.report, "job-9.node1.json");
	assert_int_equal(symlink(outside, rep), 0);
	assert_int_equal(bind_job_start(&f.conf, no_env, NULL, "9", "node1", NULL, "prolog"), 1);
	assert_int_equal(lstat(rep, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0644);
	{
		char *kept = get(outside);

		assert_string_equal(kept, "precious\n");
		free(kept);
	}
	path_of(&f, rep, sizeof(rep), f.report, "job-10.node1.json");
	path_of(&f, inside, sizeof(inside), rep, "x");
	mkdirs(rep);
	put(inside, "someone's\n");
	assert_int_equal(bind_job_start(&f.conf, no_env, NULL, "10", "node1", NULL, "prolog"), 1);
	assert_true(exists(inside));
	snprintf(cmd, sizeof(cmd), "ls '%s' | grep -E '^job-10\\.node1\\.[0-9a-f]{16}\\.json$'",
		 f.report);
	fp = popen(cmd, "r");
	assert_non_null(fp);
	while (fgets(cmd, sizeof(cmd), fp))
		found++;
	pclose(fp);
	assert_int_equal(found, 1);
	destroy(&f.t);
}

/* Enforce as the prolog would have (the job's marker, then its IRQs moved
 * and their old values saved), then a crash before job end. */
static void applied(fx *f, const char *job)
{
	bind_roots r = roots_of(&f->t);
	bind_enforce_opts o = { job, "2-5,10-13", NULL, f->t.state };
	bind_irq_set *set;
	topo_error err;

	assert_int_equal(bind_job_start(&f->conf, no_env, NULL, job, "node1", NULL, "prolog"), 1);
	set = load_given(&f->t);
	assert_int_equal(bind_irq_enforce(&r, set, &o, NULL, &err), 14);
	bind_irq_set_free(set);
	assert_int_equal(changed_files(&f->t), 14);
	assert_true(state_exists(&f->t, job));
}

/* A crash between "applied" and "restored": slurmd restarts on the same
 * boot (the job still runs: its end restores), or the node reboots (the
 * next start recovers). Root only, as on a node. */
static void test_crash_recovered(void **unused)
{
	fx f;
	char marker[512];

	(void)unused;
	if (geteuid() != 0) {
		fprintf(stderr, "test_crash_recovered: skipped, needs root (restores only as root)\n");
		skip();
	}
	setenv("SLURMD_NODENAME", "node1", 1);
	fx_open(&f, BIND_JOB_IRQ_ENFORCE);
	applied(&f, "42");
	/* slurmd restarted, same boot: job 42 still runs, nothing restored */
	assert_int_equal(bind_job_recover(&f.conf), 0);
	assert_int_equal(changed_files(&f.t), 14);
	/* its end restores byte for byte and removes state and marker */
	bind_job_end(&f.conf, "42", "node1");
	assert_int_equal(changed_files(&f.t), 0);
	assert_false(state_exists(&f.t, "42"));
	path_of(&f, marker, sizeof(marker), f.t.state, "job-42.boot");
	assert_false(exists(marker));

	/* the node rebooted mid-job: the marker is of another boot */
	applied(&f, "43");
	path_of(&f, marker, sizeof(marker), f.t.state, "job-43.boot");
	put(marker, "00000000-0000-0000-0000-000000000000\n");
	assert_int_equal(bind_job_recover(&f.conf), 1);
	assert_int_equal(changed_files(&f.t), 0);
	assert_false(state_exists(&f.t, "43"));
	destroy(&f.t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_once),
		cmocka_unit_test(test_refused_names),
		cmocka_unit_test(test_planted_marker),
		cmocka_unit_test(test_planted_report),
		cmocka_unit_test(test_crash_recovered),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
