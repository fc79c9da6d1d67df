/*
 * test_report: the pieces of placement-report that read things: the
 * decision log (engine records, plugin lines, end events, torn lines), the
 * running set at a time, slurmrestd replies (v0.0.42 shapes and errors),
 * node-side outcome files, and the metrics text.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "place.h"
#include "report_history.h"
#include "report_log.h"
#include "report_metrics.h"
#include "report_node.h"
#include "report_rest.h"
#include "report_why.h"
#include "test_tmp.h"

static const char *const log_text =
	/* 1: an engine decision record */
	"{\"job\":7,\"timestamp\":100.0,\"request\":{\"min_hosts\":2,\"max_hosts\":2,"
	"\"gpus_per_host\":4,\"cores_per_host\":0,\"exclusive\":false,\"max_groups\":0,"
	"\"comm\":{\"class\":\"heavy\",\"pattern\":\"ring\",\"bytes_per_iter\":2e9,"
	"\"compute_s_per_iter\":0.5}},\"ok\":true,\"policy\":\"model\",\"baseline_policy\":\"tree\","
	"\"scorer\":\"model\",\"candidates\":3,\"latency_us\":41.5,"
	"\"chosen\":{\"hosts\":[\"n05\",\"n06\"],\"kind\":\"group-best-fit\",\"nhosts\":2,"
	"\"groups\":1,\"leaves\":1,\"hop_diameter\":2,\"cost\":1.25,\"comm_time_s\":0.01,"
	"\"frag_cost\":0.25},"
	"\"baseline\":{\"hosts\":[\"n06\",\"n05\"],\"kind\":\"tree\",\"nhosts\":2,\"groups\":1,"
	"\"leaves\":1,\"hop_diameter\":2,\"cost\":1.25,\"comm_time_s\":0.01,\"frag_cost\":0.25},"
	"\"alternatives\":[{\"hosts\":[\"n01\",\"n09\"],\"kind\":\"cover\",\"nhosts\":2,"
	"\"groups\":2,\"leaves\":2,\"hop_diameter\":4,\"cost\":2.5,\"comm_time_s\":0.02,"
	"\"frag_cost\":0}]}\n"
	/* 2: the Slurm plugin's commit line, Slurm did not follow */
	"{\"time\":200,\"job_id\":8,\"name\":\"train\",\"mode\":\"shadow\",\"nodes\":\"n[01-03]\","
	"\"node_count\":3,\"groups\":[\"su1\"],\"ngroups\":1,\"leaves\":1,\"class\":\"heavy\","
	"\"topognn\":{\"policy\":\"model\",\"nodes\":\"n[04-06]\",\"kind\":\"cover\",\"groups\":1,"
	"\"leaves\":1,\"cost\":0.5},\"baseline\":{\"policy\":\"linear\",\"nodes\":\"n[01-03]\","
	"\"groups\":1,\"cost\":0.75},\"followed\":false,\"candidates\":5,\"latency_us\":12.0}\n"
	/* 3: a torn line */
	"{\"job\":9,\"timest\n"
	/* 4: job 7 ends */
	"{\"event\":\"end\",\"job\":7,\"timestamp\":160.0,\"elapsed_s\":60,"
	"\"realised_slowdown\":1.5}\n"
	/* 5: an end without a decision */
	"{\"event\":\"end\",\"job\":99,\"timestamp\":170.0}\n"
	/* 6: something else */
	"[1,2,3]\n"
	"\n";

static void test_log_both_formats(void **state)
{
	report_log log;
	topo_error err;
	const report_decision *d;
	report_decision scored;
	char buf[600];

	(void)state;
	assert_int_equal(report_log_load_mem(log_text, strlen(log_text), "d.log", &log, &err), 0);
	assert_int_equal(log.n, 2);
	assert_int_equal(log.lines, 7);
	assert_int_equal(log.skipped, 2);
	assert_int_equal(log.orphan_ends, 1);
	assert_string_equal(topo_error_format(&log.first_skip, buf, sizeof(buf)),
			    "d.log:3: not JSON (a torn line?)");

	d = report_log_find(&log, 7);
	assert_non_null(d);
	assert_string_equal(d->format, "record");
	assert_int_equal(d->line, 1);
	assert_int_equal(d->gpus_per_host, 4);
	assert_string_equal(d->comm_class, "heavy");
	assert_true(d->bytes_per_iter == 2e9);
	assert_int_equal(d->chosen.nhosts, 2);
	assert_string_equal(d->chosen.hosts[1], "n06");
	assert_int_equal(d->chosen.diameter, 2);
	assert_true(d->chosen.cost == 1.25);
	assert_int_equal(d->nalternatives, 1);
	assert_int_equal(d->alternatives[0].groups, 2);
	assert_true(report_choice_same_hosts(&d->chosen, &d->baseline)); /* order ignored */
	assert_false(report_choice_same_hosts(&d->chosen, &d->alternatives[0]));
	assert_int_equal(d->ended, 1);
	assert_true(d->realised_slowdown == 1.5);
	assert_true(report_predicted_slowdown(d) == 1.0); /* cost 1.25 - frag 0.25 */
	/* a GNN's cost is a score: no slowdown is predicted from it */
	scored = *d;
	snprintf(scored.scorer, sizeof(scored.scorer), "gnn");
	assert_true(isnan(report_predicted_slowdown(&scored)));
	assert_int_equal(d->followed, 1);

	d = report_log_find(&log, 8);
	assert_non_null(d);
	assert_string_equal(d->format, "plugin");
	assert_string_equal(d->policy, "model");
	assert_string_equal(d->baseline_policy, "linear");
	assert_string_equal(d->mode, "shadow");
	assert_int_equal(d->chosen.nhosts, 3);
	assert_string_equal(d->chosen.hosts[0], "n04");
	assert_int_equal(d->nallocated, 3); /* what Slurm gave it */
	assert_string_equal(d->allocated[2], "n03");
	assert_int_equal(d->followed, 0);
	assert_true(isnan(d->chosen.frag_cost));
	assert_null(report_log_find(&log, 9));
	assert_true(report_log_last_time(&log) == 200.0);
	report_log_free(&log);
}

static void test_log_running(void **state)
{
	report_log log;
	topo_error err;
	int n, *run;

	(void)state;
	assert_int_equal(report_log_load_mem(log_text, strlen(log_text), "d.log", &log, &err), 0);
	run = report_log_running(&log, 150.0, &n); /* job 7 runs, job 8 not yet */
	assert_int_equal(n, 1);
	assert_int_equal(log.d[run[0]].job, 7);
	free(run);
	run = report_log_running(&log, 160.0, &n); /* job 7 ended at 160 */
	assert_int_equal(n, 0);
	free(run);
	run = report_log_running(&log, 1e9, &n); /* job 8 has no end: running */
	assert_int_equal(n, 1);
	assert_int_equal(log.d[run[0]].job, 8);
	free(run);
	report_log_free(&log);
}

static void test_log_missing_file(void **state)
{
	report_log log;
	topo_error err;

	(void)state;
	assert_int_equal(report_log_load("/nonexistent/d.log", &log, &err), -1);
	assert_string_equal(err.source, "/nonexistent/d.log");
	assert_non_null(strstr(err.text, "cannot open: No such file"));
}

static void test_rest_jobs_nodes(void **state)
{
	static const char jobs[] =
		"{\"jobs\":[{\"job_id\":12,\"name\":\"a\",\"partition\":\"gpu\","
		"\"job_state\":[\"RUNNING\"],\"nodes\":\"n[01-02]\"},"
		"{\"job_id\":13,\"job_state\":[\"PENDING\"],\"nodes\":\"\"},"
		"{\"name\":\"no id\"}],\"errors\":[],\"warnings\":[]}";
	static const char nodes[] =
		"{\"nodes\":[{\"name\":\"n01\",\"state\":[\"ALLOCATED\"]},"
		"{\"name\":\"n03\",\"state\":[\"IDLE\",\"DRAIN\"]},"
		"{\"name\":\"n04\",\"state\":\"DOWN\"}]}";
	report_rest_snapshot s = {0};
	topo_error err;

	(void)state;
	assert_int_equal(report_rest_parse_jobs(jobs, strlen(jobs), "jobs", &s, &err), 0);
	assert_int_equal(s.njobs, 2);
	assert_int_equal(s.jobs[0].job, 12);
	assert_int_equal(s.jobs[0].running, 1);
	assert_string_equal(s.jobs[0].partition, "gpu");
	assert_int_equal(s.jobs[0].nhosts, 2);
	assert_string_equal(s.jobs[0].hosts[1], "n02");
	assert_string_equal(s.jobs[1].state, "PENDING");
	assert_int_equal(s.jobs[1].running, 0);
	assert_int_equal(s.jobs[1].nhosts, 0);
	assert_int_equal(report_rest_parse_nodes(nodes, strlen(nodes), "nodes", &s, &err), 0);
	assert_int_equal(s.nnodes, 3);
	assert_int_equal(s.nodes[0].flags, 0);
	assert_string_equal(s.nodes[1].state, "IDLE+DRAIN");
	assert_int_equal(s.nodes[1].flags, PLACE_HOST_DRAIN);
	assert_int_equal(s.nodes[2].flags, PLACE_HOST_DOWN);
	report_rest_free(&s);
}

static void test_rest_errors(void **state)
{
	static const char denied[] =
		"{\"errors\":[{\"description\":\"Batch job credential invalid\","
		"\"error_number\":1,\"error\":\"Protocol authentication error\"}]}";
	report_rest_snapshot s = {0};
	topo_error err;

	(void)state;
	assert_int_equal(report_rest_parse_jobs(denied, strlen(denied), "u", &s, &err), -1);
	assert_string_equal(err.text,
			    "the reply has no \"jobs\" list: Batch job credential invalid");
	assert_int_equal(report_rest_parse_nodes("{\"nodes\": [", 11, "u", &s, &err), -1);
	assert_non_null(strstr(err.text, "the reply is not JSON"));
	assert_int_equal(err.line, 1);
	/* nothing listens on port 9 */
	assert_int_equal(report_rest_fetch("http://127.0.0.1:9", "t", NULL, 0, &s, &err), -1);
	assert_string_equal(err.source, "http://127.0.0.1:9/slurm/v0.0.42/jobs");
	assert_int_equal(s.njobs, 0);
	/* other schemes are refused before anything is sent (issue 13) */
	assert_int_equal(report_rest_fetch("file:///etc/passwd", "t", NULL, 0, &s, &err), -1);
	assert_non_null(strstr(err.text, "must start with http:// or https:// (or be unix:/path)"));
	assert_int_equal(report_rest_fetch("gopher://example.org:70", "t", NULL, 0, &s, &err), -1);
	assert_non_null(strstr(err.text, "must start with http://"));
	assert_int_equal(report_rest_fetch("unix:relative.sock", "t", NULL, 0, &s, &err), -1);
	assert_non_null(strstr(err.text, "absolute path"));
	/* the JWT does not go over plain http to another host unless allowed */
	assert_int_equal(report_rest_fetch("http://rest.example.org:6820", "t", NULL, 0, &s, &err), -1);
	assert_non_null(strstr(err.text, "is plain http to another host"));
	assert_string_equal(err.source, "");
	assert_int_equal(report_rest_fetch("http://127.evil.invalid:9", "t", NULL, 0, &s, &err), -1);
	assert_non_null(strstr(err.text, "is plain http to another host")); /* issue 21 */
	{ /* a base URL over 2048 characters is refused, not cut (issue 21) */
		char big[3000];

		memset(big, 'a', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		memcpy(big, "https://h/", 10);
		assert_int_equal(report_rest_fetch(big, "t", NULL, 0, &s, &err), -1);
		assert_non_null(strstr(err.text, "is 2999 characters long; at most 2048 are accepted"));
	}
	assert_int_equal(report_rest_fetch("http://user:pw@localhost:9", "t", NULL, 0, &s, &err), -1);
	assert_non_null(strstr(err.text, "must not carry credentials"));
	/* allowed: it is tried (and nothing answers on this unroutable address) */
	assert_int_equal(report_rest_fetch("http://[::1]:9", "t", NULL, 0, &s, &err), -1);
	assert_string_equal(err.source, "http://[::1]:9/slurm/v0.0.42/jobs");
	assert_int_equal(s.njobs, 0);
}

/* write DIR/NAME with text (mode 0644). */
static void put_file(const char *dir, const char *name, const char *text)
{
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(path, 0644), 0);
}

/* why `name` was skipped, or NULL. */
static const char *skip_why(const report_node_skips *s, const char *name)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->file[i], name))
			return s->why[i];
	return NULL;
}

static void test_node_reports(void **state)
{
	char dir[512], path[1024], other[1024];
	report_node_outcome *o;
	report_node_skips sk;
	topo_error err;
	int n;

	(void)state;
	assert_non_null(test_mkdtemp(dir, sizeof(dir), "test_report_XXXXXX"));
	put_file(dir, "42.n10.json", "{\"hca\": \"mlx5_1\", \"irq_moved\": 3}");
	put_file(dir, "42.n9.json", "[1]");
	put_file(dir, "420.n1.json", "{}");
	n = report_node_load(dir, 42, &o, &sk, &err);
	assert_int_equal(n, 2);
	assert_int_equal(sk.n, 0);
	assert_string_equal(o[0].host, "n9"); /* natural order: n9 before n10 */
	assert_string_equal(o[0].problem, "not a JSON object");
	assert_string_equal(o[1].host, "n10");
	assert_int_equal(o[1].nkeys, 2);
	assert_string_equal(o[1].keys[1], "irq_moved");
	assert_string_equal(o[1].values[1], "3");
	report_node_free(o, n);
	assert_int_equal(report_node_load("/nonexistent", 42, &o, NULL, &err), -1);
	assert_non_null(strstr(err.text, "cannot read the node report directory"));

	/* What a user may plant in a shared report_dir (issue 21), beside the
	 * SPANK plugin's put-aside name, which takes its host from the content. */
	put_file(dir, "job-42.n3.0123456789abcdef.json", "{\"job_id\": \"42\", \"node\": \"n3\"}");
	put_file(dir, "secret", "{\"root\": \"only\"}");
	snprintf(other, sizeof(other), "%s/secret", dir);
	snprintf(path, sizeof(path), "%s/job-42.link.json", dir);
	assert_int_equal(symlink(other, path), 0);
	snprintf(path, sizeof(path), "%s/job-42.hard.json", dir);
	assert_int_equal(link(other, path), 0);
	snprintf(path, sizeof(path), "%s/job-42.fifo.json", dir); /* would hang a reader */
	assert_int_equal(mkfifo(path, 0644), 0);
	snprintf(path, sizeof(path), "%s/job-42.dir.json", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	put_file(dir, "job-42.open.json", "{}");
	snprintf(path, sizeof(path), "%s/job-42.open.json", dir);
	assert_int_equal(chmod(path, 0666), 0);
	put_file(dir, "job-42.n4.json", "{\"job_id\": 43, \"node\": \"n4\"}");
	if (geteuid() == 0) { /* root can give a file away, as a user would plant it */
		put_file(dir, "job-42.nobody.json", "{\"job_id\": \"42\", \"node\": \"n2\"}");
		snprintf(path, sizeof(path), "%s/job-42.nobody.json", dir);
		assert_int_equal(chown(path, 65534, 65534), 0);
	}
	n = report_node_load(dir, 42, &o, &sk, &err);
	assert_int_equal(n, 3);
	assert_string_equal(o[0].host, "n3");
	assert_string_equal(o[1].host, "n9");
	assert_string_equal(o[2].host, "n10");
	assert_int_equal(sk.n, geteuid() == 0 ? 7 : 6);
	assert_string_equal(skip_why(&sk, "job-42.link.json"), "is a symbolic link (not followed)");
	assert_string_equal(skip_why(&sk, "job-42.hard.json"), "has 2 hard links (a link to another file?)");
	assert_string_equal(skip_why(&sk, "job-42.fifo.json"), "is a FIFO, not a regular file");
	assert_string_equal(skip_why(&sk, "job-42.dir.json"), "is a directory, not a regular file");
	assert_string_equal(skip_why(&sk, "job-42.open.json"),
			    "is writable by group or others (mode 0666)");
	assert_string_equal(skip_why(&sk, "job-42.n4.json"), "its job_id is another job's");
	if (geteuid() == 0)
		assert_string_equal(skip_why(&sk, "job-42.nobody.json"),
				    "is owned by uid 65534, neither root nor us");
	report_node_free(o, n);
	report_node_skips_free(&sk);
	{
		const char *names[] = { "42.n10.json", "42.n9.json", "420.n1.json", "secret",
					"job-42.n3.0123456789abcdef.json", "job-42.link.json",
					"job-42.hard.json", "job-42.fifo.json", "job-42.open.json",
					"job-42.n4.json", "job-42.nobody.json" };

		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
			unlink(path);
		}
	}
	snprintf(path, sizeof(path), "%s/job-42.dir.json", dir);
	rmdir(path);
	rmdir(dir);
}

static void test_stats_and_metrics(void **state)
{
	report_log log;
	report_stats st;
	topo_error err;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_int_equal(report_log_load_mem(log_text, strlen(log_text), "d.log", &log, &err), 0);
	assert_int_equal(report_stats_compute(&log, -INFINITY, INFINITY, &st), 0);
	assert_int_equal(st.decisions, 2);
	assert_int_equal(st.not_followed, 1);
	assert_int_equal(st.shadow, 2);
	assert_int_equal(st.agree, 1);
	assert_int_equal(st.chosen_cheaper, 1); /* job 8: 0.5 vs 0.75 */
	assert_int_equal(st.realised, 1);
	assert_true(st.latency_p50_us == 12.0);
	assert_int_equal(st.latency_bucket[1], 1); /* <= 25 us */
	assert_int_equal(st.latency_bucket[2], 2); /* <= 50 us */
	f = open_memstream(&text, &len);
	assert_int_equal(report_metrics_write(f, &st, &log, NULL), 0);
	fclose(f);
	assert_non_null(strstr(text, "\ntopognn_decisions_total{policy=\"model\"} 2\n"));
	assert_non_null(strstr(text, "\ntopognn_decisions_not_followed_total 1\n"));
	assert_non_null(strstr(text, "\ntopognn_decision_latency_microseconds_bucket{le=\"25\"} 1\n"));
	assert_non_null(strstr(text, "\ntopognn_decision_latency_microseconds_bucket{le=\"+Inf\"} 2\n"));
	assert_non_null(strstr(text, "\ntopognn_decision_latency_microseconds_sum 53.5\n"));
	assert_non_null(strstr(text, "\ntopognn_shadow_agreement_ratio 0.5\n"));
	assert_non_null(strstr(text, "\ntopognn_decision_log_skipped_lines_total 2\n"));
	assert_null(strstr(text, "topognn_running_jobs")); /* no cluster given */
	assert_non_null(strstr(text, "\ntopognn_decision_log_lines_total 7\n"));
	assert_non_null(strstr(text, "\ntopognn_decision_log_last_timestamp_seconds 200\n"));
	assert_non_null(strstr(text, "\ntopognn_decisions_deferred_total 0\n"));
	assert_non_null(strstr(text, "\ntopognn_heavy_jobs_total 2\n"));
	free(text);
	report_log_free(&log);
}

/* Waiting for locality: a deferral, then the placement after 300 s. */
static void test_metrics_deferrals(void **state)
{
	static const char *const text =
		"{\"job\":5,\"timestamp\":10,\"queue_position\":2,\"ok\":true,"
		"\"policy\":\"model\",\"latency_us\":9,"
		"\"chosen\":{\"hosts\":[\"a\",\"b\"],\"groups\":2},"
		"\"locality\":{\"min_groups\":1,\"checked\":true,\"deferred\":true,"
		"\"expected_wait_s\":100,\"expected_groups\":1}}\n"
		"{\"job\":5,\"timestamp\":310,\"ok\":true,\"policy\":\"model\",\"latency_us\":9,"
		"\"chosen\":{\"hosts\":[\"c\",\"d\"],\"groups\":1},"
		"\"locality\":{\"min_groups\":1,\"checked\":false,\"waited_s\":300}}\n";
	report_log log;
	report_stats st;
	topo_error err;
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_int_equal(report_log_load_mem(text, strlen(text), "w.log", &log, &err), 0);
	assert_int_equal(log.d[0].deferred, 1);
	assert_true(log.d[1].waited_s == 300);
	assert_int_equal(report_stats_compute(&log, -INFINITY, INFINITY, &st), 0);
	f = open_memstream(&out, &len);
	assert_int_equal(report_metrics_write(f, &st, &log, NULL), 0);
	fclose(f);
	assert_non_null(strstr(out, "\ntopognn_decisions_deferred_total 1\n"));
	assert_non_null(strstr(out, "\ntopognn_decisions_after_wait_total 1\n"));
	/* the hold: behind the head, kept, 300 s got for 100 s predicted */
	assert_non_null(strstr(out, "\ntopognn_holds_total{queue=\"head\"} 0\n"
				    "topognn_holds_total{queue=\"behind\"} 1\n"
				    "topognn_holds_total{queue=\"unknown\"} 0\n"));
	assert_non_null(strstr(out, "\ntopognn_holds_kept_total 1\n"));
	assert_non_null(strstr(out, "\ntopognn_hold_wait_ratio{queue=\"all\"} 3\n"
				    "topognn_hold_wait_ratio{queue=\"head\"} NaN\n"
				    "topognn_hold_wait_ratio{queue=\"behind\"} 3\n"));
	free(out);
	report_log_free(&log);
}

/* `placement-report metrics` of the decision log `text`, given the log
 * itself or, with_log 0, only its statistics. */
static char *metrics_of(const char *text, int with_log)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f;
	report_log log;
	report_stats st;
	topo_error err;

	assert_int_equal(report_log_load_mem(text, strlen(text), "d.log", &log, &err), 0);
	assert_int_equal(report_stats_compute(&log, -INFINITY, INFINITY, &st), 0);
	assert_non_null(f = open_memstream(&out, &len));
	assert_int_equal(report_metrics_write(f, &st, with_log ? &log : NULL, NULL), 0);
	fclose(f);
	report_log_free(&log);
	return out;
}

/* The last day's hold ratio: a hold closed more than a day before the
 * log's newest line counts in the whole log's median, not in the day's. */
static void test_metrics_holds_last_day(void **state)
{
	static const char *const text =
		"{\"job\":5,\"timestamp\":10,\"queue_position\":2,\"ok\":true,"
		"\"policy\":\"model\",\"chosen\":{\"hosts\":[\"a\",\"b\"],\"groups\":2},"
		"\"locality\":{\"min_groups\":1,\"checked\":true,\"deferred\":true,"
		"\"expected_wait_s\":100,\"expected_groups\":1}}\n"
		"{\"job\":5,\"timestamp\":310,\"ok\":true,\"policy\":\"model\","
		"\"chosen\":{\"hosts\":[\"c\",\"d\"],\"groups\":1},"
		"\"locality\":{\"min_groups\":1,\"checked\":false,\"waited_s\":300}}\n"
		"{\"job\":6,\"timestamp\":100000,\"queue_position\":1,\"ok\":true,"
		"\"policy\":\"model\",\"chosen\":{\"hosts\":[\"a\",\"b\"],\"groups\":2},"
		"\"locality\":{\"min_groups\":1,\"checked\":true,\"deferred\":true,"
		"\"expected_wait_s\":200,\"expected_groups\":1}}\n"
		"{\"job\":6,\"timestamp\":100100,\"ok\":true,\"policy\":\"model\","
		"\"chosen\":{\"hosts\":[\"c\",\"d\"],\"groups\":1},"
		"\"locality\":{\"min_groups\":1,\"checked\":false,\"waited_s\":100}}\n";
	char *out;

	(void)state;
	out = metrics_of(text, 1);
	/* the whole log: 3x behind the head, 0.5x at it (of two, the lower) */
	assert_non_null(strstr(out, "\ntopognn_hold_wait_ratio{queue=\"all\"} 0.5\n"
				    "topognn_hold_wait_ratio{queue=\"head\"} 0.5\n"
				    "topognn_hold_wait_ratio{queue=\"behind\"} 3\n"));
	/* the day up to 100100: only job 6 */
	assert_non_null(strstr(out, "\ntopognn_hold_wait_ratio_last_day{queue=\"all\"} 0.5\n"
				    "topognn_hold_wait_ratio_last_day{queue=\"head\"} 0.5\n"
				    "topognn_hold_wait_ratio_last_day{queue=\"behind\"} NaN\n"));
	free(out);
	/* without the log (slurmrestd only) the day's ratios are NaN */
	out = metrics_of(text, 0);
	assert_non_null(strstr(out, "\ntopognn_hold_wait_ratio_last_day{queue=\"all\"} NaN\n"));
	free(out);
}

/* What a heavy request's locality weighed, read back: the budget, the
 * engine's sentence, the learned gate's probability and its features by
 * name in record order; a record without them says "unknown". */
static void test_log_locality_gate(void **state)
{
	static const char *const text =
		"{\"job\":7,\"timestamp\":10,\"ok\":true,\"policy\":\"gnn\","
		"\"chosen\":{\"hosts\":[\"a\",\"b\"],\"groups\":2},"
		"\"locality\":{\"min_groups\":1,\"checked\":true,\"deferred\":true,"
		"\"waited_s\":0,\"budget_s\":3600,\"expected_wait_s\":101,"
		"\"expected_groups\":1,\"hold_gate\":0.94,\"hold_features\":"
		"{\"analytic_hold\":1,\"better_set\":1,\"wait_per_gain\":0.06},"
		"\"why\":\"held: the gate gives 0.94\"}}\n"
		"{\"job\":7,\"timestamp\":110,\"queue_position\":2,\"ok\":true,\"policy\":\"gnn\","
		"\"chosen\":{\"hosts\":[\"c\",\"d\"],\"groups\":1},"
		"\"locality\":{\"min_groups\":1,\"checked\":false,\"waited_s\":100}}\n";
	report_log log;
	topo_error err;
	const report_decision *d;

	(void)state;
	assert_int_equal(report_log_load_mem(text, strlen(text), "g.log", &log, &err), 0);
	d = &log.d[0];
	assert_true(d->locality_checked && d->deferred);
	assert_int_equal(d->min_groups, 1);
	assert_int_equal(d->expected_groups, 1);
	assert_true(d->budget_s == 3600 && d->expected_wait_s == 101);
	assert_true(d->hold_gate == 0.94);
	assert_int_equal(d->nhold_features, 3);
	assert_string_equal(d->hold_feature[0], "analytic_hold");
	assert_string_equal(d->hold_feature[2], "wait_per_gain");
	assert_true(d->hold_value[2] == 0.06);
	assert_string_equal(d->locality_why, "held: the gate gives 0.94");
	d = &log.d[1]; /* the placement after it: no gate, no budget */
	assert_false(d->locality_checked || d->deferred);
	assert_true(d->waited_s == 100);
	assert_true(isnan(d->hold_gate) && isnan(d->budget_s));
	assert_int_equal(d->nhold_features, 0);
	assert_int_equal(d->expected_groups, -1);
	assert_string_equal(d->locality_why, "");
	assert_ptr_equal(report_log_find(&log, 7), &log.d[1]);
	report_log_free(&log);
}

/* History's holds: job 7 held twice (the first deferral is the promise)
 * and placed on the 1 group it waited for after 300 s; job 8 held for 1
 * group, placed over 2 after 50 s (not kept); job 9 placed after waiting
 * with no deferral in the log (not a hold it can judge); job 7's decision
 * at 500 lies outside the window [0, 400]. */
static void test_history_holds(void **state)
{
	static const char *const text =
		"{\"job\":7,\"timestamp\":10,\"queue_position\":1,\"ok\":true,\"chosen\":{\"hosts\":[\"a\",\"b\"],"
		"\"groups\":2},\"locality\":{\"min_groups\":1,\"checked\":true,\"deferred\":true,"
		"\"expected_wait_s\":100,\"expected_groups\":1}}\n"
		"{\"job\":8,\"timestamp\":20,\"queue_position\":3,\"ok\":true,\"chosen\":{\"hosts\":[\"a\",\"b\"],"
		"\"groups\":2},\"locality\":{\"min_groups\":1,\"checked\":true,\"deferred\":true,"
		"\"expected_wait_s\":200,\"expected_groups\":1}}\n"
		"{\"job\":7,\"timestamp\":110,\"queue_position\":2,\"ok\":true,\"chosen\":{\"hosts\":[\"a\",\"b\"],"
		"\"groups\":2},\"locality\":{\"min_groups\":1,\"checked\":true,\"deferred\":true,"
		"\"expected_wait_s\":10,\"expected_groups\":1}}\n"
		"{\"job\":8,\"timestamp\":70,\"ok\":true,\"chosen\":{\"hosts\":[\"c\",\"d\"],"
		"\"groups\":2},\"locality\":{\"min_groups\":1,\"checked\":true,\"waited_s\":50}}\n"
		"{\"job\":7,\"timestamp\":310,\"ok\":true,\"chosen\":{\"hosts\":[\"c\",\"d\"],"
		"\"groups\":1},\"locality\":{\"min_groups\":1,\"checked\":false,\"waited_s\":300}}\n"
		"{\"job\":9,\"timestamp\":320,\"ok\":true,\"chosen\":{\"hosts\":[\"e\",\"f\"],"
		"\"groups\":1},\"locality\":{\"min_groups\":1,\"checked\":false,\"waited_s\":30}}\n"
		"{\"job\":7,\"timestamp\":500,\"ok\":true,\"chosen\":{\"hosts\":[\"a\",\"b\"],"
		"\"groups\":2},\"locality\":{\"min_groups\":1,\"checked\":true,\"deferred\":true,"
		"\"expected_wait_s\":10,\"expected_groups\":1}}\n"
		"{\"job\":7,\"timestamp\":600,\"ok\":true,\"chosen\":{\"hosts\":[\"c\",\"d\"],"
		"\"groups\":1},\"locality\":{\"min_groups\":1,\"checked\":false,\"waited_s\":100}}\n";
	report_log log;
	report_stats st;
	topo_error err;

	(void)state;
	assert_int_equal(report_log_load_mem(text, strlen(text), "h.log", &log, &err), 0);
	assert_int_equal(report_stats_compute(&log, 0, 400, &st), 0);
	assert_int_equal(st.holds, 2);
	assert_int_equal(st.holds_kept, 1);
	assert_true(st.hold_realised_sum_s == 350);
	/* medians by nearest rank, as the latency quantiles: the lower of two */
	assert_true(st.hold_predicted_median_s == 100); /* of 100 and 200 */
	assert_true(st.hold_realised_median_s == 50);   /* of 300 and 50 */
	assert_true(st.hold_ratio_median == 0.25);      /* of 3 and 0.25 */
	/* by the place in the queue of the hold's first deferral: job 7 at
	 * the head (its later deferral behind it does not count), job 8 third */
	assert_int_equal(st.holds_at[0], 1);
	assert_int_equal(st.holds_at[1], 1);
	assert_true(st.hold_ratio_median_at[0] == 3 && st.hold_ratio_median_at[1] == 0.25);
	assert_int_equal(report_stats_compute(&log, -INFINITY, INFINITY, &st), 0);
	assert_int_equal(st.holds, 3); /* job 7 requeued: its second hold from 500 */
	assert_int_equal(st.holds_kept, 2);
	assert_true(st.hold_ratio_median == 3);         /* of 3, 0.25 and 10 */
	/* the hold from 500 has no place in the queue: counted in neither */
	assert_int_equal(st.holds_at[0] + st.holds_at[1], 2);
	assert_true(st.hold_ratio_median_at[0] == 3 && st.hold_ratio_median_at[1] == 0.25);
	assert_int_equal(report_stats_compute(&log, 0, 5, &st), 0);
	assert_int_equal(st.holds, 0);
	assert_true(isnan(st.hold_ratio_median) && isnan(st.hold_realised_median_s));
	assert_int_equal(st.holds_at[0] + st.holds_at[1], 0);
	assert_true(isnan(st.hold_ratio_median_at[0]) && isnan(st.hold_ratio_median_at[1]));
	assert_int_equal(log.d[0].queue_position, 1);
	assert_int_equal(log.d[3].queue_position, 0); /* absent: unknown */
	report_log_free(&log);
}

static void drop_file(const char *dir, const char *name)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_int_equal(unlink(path), 0);
}

/* Every node's newest report summarised, and its metrics. */
static void test_node_summary_metrics(void **state)
{
	static const char *const names[] = {"job-7.n1.json", "job-9.n1.json", "job-7.n2.json",
					    "job-8.n2.json", ".job-9.n2.json.Ab12Cd", "notes.txt"};
	char dir[512], *out = NULL;
	report_node_summary s;
	topo_error err;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_non_null(test_mkdtemp(dir, sizeof(dir), "test_report_XXXXXX"));
	put_file(dir, names[0], "{\"time\": 100, \"irq\": {\"mode\": \"enforce\", \"status\": \"ok\","
				" \"findings\": [{\"kind\": \"shared-core\"}, {\"kind\": \"shared-core\"}]}}");
	put_file(dir, names[1], "{\"time\": 200, \"irq\": {\"mode\": \"enforce\", \"status\": \"error\","
				" \"error\": \"/proc/interrupts: unreadable\"}}");
	put_file(dir, names[2], "{\"time\": 100, \"irq\": {\"mode\": \"audit\", \"status\": \"ok\","
				" \"findings\": [{\"kind\": \"all-on-one-core\"}, {\"kind\": \"new-kind\"}]}}");
	put_file(dir, names[3], "{\"time\": 300, \"irq\""); /* torn: not counted as newest */
	put_file(dir, names[4], "{}");
	put_file(dir, names[5], "{}");
	assert_int_equal(report_node_summarise(dir, &s, &err), 0);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.reports, 4);
	assert_int_equal(s.unreadable, 1);
	assert_int_equal(s.jobs, 2); /* 7 and 9 */
	assert_string_equal(s.nodes[0].host, "n1");
	assert_int_equal(s.nodes[0].job, 9);
	assert_string_equal(s.nodes[0].status, "error");
	assert_int_equal(s.nodes[0].findings[0], 0);
	assert_string_equal(s.nodes[1].host, "n2");
	assert_int_equal(s.nodes[1].findings[3], 1);
	f = open_memstream(&out, &len);
	assert_int_equal(report_metrics_write_nodes(f, &s), 0);
	fclose(f);
	assert_non_null(strstr(out, "\ntopognn_node_report_jobs_total 2\n"));
	assert_non_null(strstr(out, "\ntopognn_node_reports_unreadable 1\n"));
	assert_non_null(strstr(out, "\ntopognn_node_irq_failed{node=\"n1\",mode=\"enforce\"} 1\n"));
	assert_non_null(strstr(out, "\ntopognn_node_irq_failed{node=\"n2\",mode=\"audit\"} 0\n"));
	assert_non_null(strstr(out, "\ntopognn_node_irq_findings{node=\"n2\",kind=\"all-on-one-core\"} 1\n"));
	assert_non_null(strstr(out, "\ntopognn_node_irq_findings{node=\"n1\",kind=\"shared-core\"} 0\n"));
	assert_non_null(strstr(out, "\ntopognn_node_report_timestamp_seconds{node=\"n1\"} 200\n"));
	free(out);
	report_node_summary_free(&s);
	for (int i = 0; i < 6; i++)
		drop_file(dir, names[i]);
	rmdir(dir);
	assert_int_equal(report_node_summarise("/nonexistent", &s, &err), -1);
	assert_non_null(strstr(err.text, "cannot read the node report directory"));
}

/* A choice on hosts hosts[0..n) with the given structure and costs. */
static report_choice choice(char **hosts, int n, int groups, int leaves, int hops, double cost,
			    double frag)
{
	report_choice c;

	memset(&c, 0, sizeof(c));
	c.hosts = hosts;
	c.nhosts = n;
	c.groups = groups;
	c.leaves = leaves;
	c.diameter = hops;
	c.cost = cost;
	c.frag_cost = frag;
	return c;
}

static void test_why_lost(void **state)
{
	char *a[2] = { "n01", "n02" }, *b[2] = { "n01", "n09" }, why[256];
	report_choice ch = choice(a, 2, 1, 1, 2, 1.0, 0.25);
	report_choice alt = choice(b, 2, 2, 2, 4, 1.5, 0.20);

	(void)state;
	/* communication cost 1.3 vs 0.75, fragmentation 0.20 vs 0.25 */
	report_why_lost(&ch, &alt, why, sizeof(why));
	assert_string_equal(why, "communication +0.55, fragmentation -0.05 (groups 2 vs 1, leaves 2 vs 1, hops 4 vs 2)");
	/* fragmentation is what cost it most */
	alt = choice(b, 2, 1, 1, 2, 1.5, 0.75);
	report_why_lost(&ch, &alt, why, sizeof(why));
	assert_string_equal(why, "fragmentation +0.5");
	alt = choice(a, 2, 1, 1, 2, 3.0, 0.25);
	report_why_lost(&ch, &alt, why, sizeof(why));
	assert_string_equal(why, "same hosts as the choice");
	alt = choice(b, 2, 1, 1, 2, 1.0, 0.25);
	report_why_lost(&ch, &alt, why, sizeof(why));
	assert_string_equal(why, "tie on cost, ranked after the choice");
	alt = choice(b, 2, 1, 1, 2, 0.5, 0.25);
	report_why_lost(&ch, &alt, why, sizeof(why));
	assert_string_equal(why, "cheaper by 0.5 but not chosen (the policy picks itself)");
	alt = choice(b, 2, 1, 1, 2, NAN, NAN);
	report_why_lost(&ch, &alt, why, sizeof(why));
	assert_string_equal(why, "not costed");
	/* no fragmentation term known: the total, then the structure */
	ch.frag_cost = NAN;
	alt = choice(b, 2, 3, 1, 2, 2.0, NAN);
	report_why_lost(&ch, &alt, why, sizeof(why));
	assert_string_equal(why, "cost +1 (groups 3 vs 1)");
	/* a short buffer is cut, not overrun */
	alt = choice(b, 2, 2, 2, 4, 1.5, 0.20);
	ch.frag_cost = 0.25;
	report_why_lost(&ch, &alt, why, 12);
	assert_string_equal(why, "communicati");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_log_both_formats), cmocka_unit_test(test_log_running),
		cmocka_unit_test(test_log_missing_file), cmocka_unit_test(test_rest_jobs_nodes),
		cmocka_unit_test(test_rest_errors),      cmocka_unit_test(test_node_reports),
		cmocka_unit_test(test_stats_and_metrics), cmocka_unit_test(test_metrics_deferrals),
		cmocka_unit_test(test_metrics_holds_last_day),
		cmocka_unit_test(test_log_locality_gate), cmocka_unit_test(test_history_holds),
		cmocka_unit_test(test_node_summary_metrics), cmocka_unit_test(test_why_lost),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
