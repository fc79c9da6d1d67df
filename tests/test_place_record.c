/* Unit tests for the decision log's lines (place_record): every field of
 * the decision record, for a decision that succeeded and one that did not;
 * the commit line and the end event, written to a file and read back by
 * report_log (the one writer and the one reader of the format). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "place.h"
#include "place_record.h"
#include "place_scorer.h"
#include "place_graphs.h"
#include "report_log.h"
#include "test_tmp.h"

/* Job 4242: three whole hosts, n06 among them, with heavy ring traffic. */
static void heavy_request(place_request *r)
{
	static int n06[] = { 5 };

	memset(r, 0, sizeof(*r));
	r->job_id = 4242;
	r->min_hosts = 3;
	r->exclusive = 1;
	r->required = n06;
	r->nrequired = 1;
	r->comm = (place_comm){ PLACE_COMM_HEAVY, PLACE_PATTERN_RING, 2e9, 0.5, 0 };
}

static void test_record_fields(void **st)
{
	topo_error err;
	topo_graph *g = rail_graph(2);
	place_cluster *c = place_cluster_new(g, &err);
	place_state *s = place_state_new(c);
	place_engine *e = place_engine_new(c, NULL, &err);
	place_request r;
	place_decision d;
	int busy[] = { 0 };
	char *line;
	json_t *o, *ch;
	json_error_t jerr;

	assert_non_null(e);
	assert_int_equal(place_state_add_job(s, 1, busy, 1, 0, 0, NULL), 0);
	heavy_request(&r);
	assert_int_equal(place_decide(e, s, &r, PLACE_POLICY_MODEL, PLACE_POLICY_TREE, &d), 0);
	line = place_record_write_mem(c, &r, &d, place_engine_scorer_name(e, PLACE_POLICY_MODEL),
				      1700000000.5);
	assert_non_null(line);
	assert_null(strchr(line, '\n'));
	o = json_loads(line, 0, &jerr);
	assert_non_null(o);
	assert_int_equal(json_integer_value(json_object_get(o, "job")), 4242);
	assert_true(json_real_value(json_object_get(o, "timestamp")) == 1700000000.5);
	assert_true(json_is_true(json_object_get(o, "ok")));
	assert_string_equal(json_string_value(json_object_get(o, "policy")), "model");
	assert_string_equal(json_string_value(json_object_get(o, "baseline_policy")), "tree");
	assert_string_equal(json_string_value(json_object_get(o, "scorer")), "model");
	assert_true(json_real_value(json_object_get(o, "latency_us")) > 0);
	assert_int_equal(json_integer_value(json_object_get(o, "candidates")), d.ncandidates);
	assert_null(json_object_get(o, "queue_position")); /* 0: unknown, not written */
	/* request */
	ch = json_object_get(o, "request");
	assert_int_equal(json_integer_value(json_object_get(ch, "min_hosts")), 3);
	assert_int_equal(json_integer_value(json_object_get(ch, "max_hosts")), 3);
	assert_string_equal(json_string_value(json_array_get(json_object_get(ch, "required"), 0)),
			    "n06");
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(ch, "comm"), "class")), "heavy");
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(ch, "comm"), "pattern")), "ring");
	/* no limit and no prediction told: neither written */
	assert_null(json_object_get(ch, "time_limit_s"));
	assert_null(json_object_get(ch, "predicted_run_s"));
	/* chosen: su2 holds the required n06 */
	ch = json_object_get(o, "chosen");
	assert_int_equal(json_array_size(json_object_get(ch, "hosts")), 3);
	assert_string_equal(json_string_value(json_array_get(json_object_get(ch, "hosts"), 0)),
			    "n05");
	assert_string_equal(json_string_value(json_array_get(json_object_get(ch, "hosts"), 2)),
			    "n07");
	assert_string_equal(json_string_value(json_object_get(ch, "kind")), "group-best-fit");
	assert_int_equal(json_integer_value(json_object_get(ch, "groups")), 1);
	assert_int_equal(json_integer_value(json_object_get(ch, "leaves")), 2);
	assert_int_equal(json_integer_value(json_object_get(ch, "hop_diameter")), 2);
	assert_true(json_real_value(json_object_get(ch, "cost")) == d.chosen.cost);
	assert_non_null(json_object_get(ch, "comm_time_s"));
	assert_non_null(json_object_get(ch, "frag_cost"));
	/* baseline and alternatives */
	ch = json_object_get(o, "baseline");
	assert_true(json_is_object(ch));
	assert_string_equal(json_string_value(json_object_get(ch, "kind")), "tree");
	assert_int_equal(json_array_size(json_object_get(o, "alternatives")), d.nalternatives);
	assert_true(d.nalternatives >= 1);
	json_decref(o);
	free(line);

	/* a request's place in the queue, when the caller knows it */
	r.queue_position = 4;
	line = place_record_write_mem(c, &r, &d, "model", 1700000000.5);
	o = json_loads(line, 0, &jerr);
	assert_non_null(o);
	assert_int_equal(json_integer_value(json_object_get(o, "queue_position")), 4);
	json_decref(o);
	free(line);
	r.queue_position = 0;

	/* what the engine was told of the job's duration, as told */
	r.time_limit_s = 7200;
	r.predicted_runtime_s = 1234.5;
	line = place_record_write_mem(c, &r, &d, "model", 1700000000.5);
	o = json_loads(line, 0, &jerr);
	assert_non_null(o);
	ch = json_object_get(o, "request");
	assert_true(json_real_value(json_object_get(ch, "time_limit_s")) == 7200);
	assert_true(json_real_value(json_object_get(ch, "predicted_run_s")) == 1234.5);
	json_decref(o);
	free(line);
	r.time_limit_s = r.predicted_runtime_s = 0;

	/* a refused request: reason, null choice */
	r.min_hosts = 9;
	assert_int_equal(place_decide(e, s, &r, PLACE_POLICY_MODEL, PLACE_POLICY_TREE, &d), -1);
	line = place_record_write_mem(c, &r, &d, "model", 0);
	o = json_loads(line, 0, &jerr);
	assert_non_null(o);
	assert_true(json_is_false(json_object_get(o, "ok")));
	assert_string_equal(json_string_value(json_object_get(o, "reason")),
			    "needs 9 hosts with 0 free GPUs (whole host); 7 are");
	assert_true(json_is_null(json_object_get(o, "chosen")));
	assert_true(json_is_null(json_object_get(o, "baseline")));
	assert_int_equal(json_array_size(json_object_get(o, "alternatives")), 0);
	assert_true(json_real_value(json_object_get(o, "timestamp")) > 1.6e9);
	json_decref(o);
	free(line);
	assert_string_equal(place_pattern_name(PLACE_PATTERN_ALLTOALL), "alltoall");
	place_engine_free(e);
	place_state_free(s);
	place_cluster_free(c);
	topo_graph_free(g);
}

/* A heavy job deferred for locality: the record says so, why, for how
 * long it expects to wait and its budget (rail_graph(3): su2 frees in
 * 500 s, whole; two groups free now). */
static void test_record_locality(void **st)
{
	topo_error err;
	topo_graph *g = rail_graph(3);
	place_cluster *c = place_cluster_new(g, &err);
	place_state *s = place_state_new(c);
	place_config cfg;
	place_engine *e;
	place_request r;
	place_decision d;
	int a[] = { 0, 1 }, b[] = { 4, 5, 6 }, x[] = { 8, 9, 10, 11 };
	char *line;
	json_t *o, *loc;
	json_error_t jerr;

	place_config_init(&cfg);
	cfg.locality_wait_frac = 0.5;
	e = place_engine_new(c, &cfg, &err);
	assert_non_null(e);
	assert_int_equal(place_state_add_job(s, 1, a, 2, 0, 0, NULL), 0);
	assert_int_equal(place_state_add_job(s, 2, b, 3, 0, 0, NULL), 0);
	assert_int_equal(place_state_add_job(s, 3, x, 4, 0, 0, NULL), 0);
	assert_int_equal(place_state_set_job_end(s, 1, 2000), 0);
	assert_int_equal(place_state_set_job_end(s, 2, 1500), 0);
	memset(&r, 0, sizeof(r));
	r.job_id = 7;
	r.min_hosts = 3;
	r.exclusive = 1;
	r.comm = (place_comm){ PLACE_COMM_HEAVY, PLACE_PATTERN_RING, 2e9, 0.5, 0 };
	r.now_s = 1000;
	r.time_limit_s = 10000;
	r.deferred_s = 120;
	assert_int_equal(place_decide(e, s, &r, PLACE_POLICY_MODEL, PLACE_POLICY_TREE, &d), 0);
	line = place_record_write_mem(c, &r, &d, "model", 1700000000.0);
	o = json_loads(line, 0, &jerr);
	assert_non_null(o);
	loc = json_object_get(o, "locality");
	assert_non_null(loc);
	assert_int_equal(json_integer_value(json_object_get(loc, "min_groups")), 1);
	assert_true(json_is_true(json_object_get(loc, "checked")));
	assert_true(json_is_true(json_object_get(loc, "deferred")));
	assert_true(json_real_value(json_object_get(loc, "waited_s")) == 120);
	assert_true(json_real_value(json_object_get(loc, "budget_s")) == 5000);
	assert_true(json_real_value(json_object_get(loc, "expected_wait_s")) == 500);
	assert_int_equal(json_integer_value(json_object_get(loc, "expected_groups")), 1);
	assert_non_null(strstr(json_string_value(json_object_get(loc, "why")),
			       "best placement now spans 2 groups (needs 1); 1 group predicted"));
	json_decref(o);
	free(line);
	/* once su2 is free it is placed; the record keeps how long it waited */
	assert_int_equal(place_state_remove_job(s, 2), 0);
	r.deferred_s = 500;
	assert_int_equal(place_decide(e, s, &r, PLACE_POLICY_MODEL, PLACE_POLICY_TREE, &d), 0);
	assert_int_equal(d.deferred, 0);
	line = place_record_write_mem(c, &r, &d, "model", 1700000000.0);
	o = json_loads(line, 0, &jerr);
	loc = json_object_get(o, "locality");
	assert_true(json_is_false(json_object_get(loc, "checked")));
	assert_true(json_is_false(json_object_get(loc, "deferred")));
	assert_true(json_real_value(json_object_get(loc, "waited_s")) == 500);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(o, "chosen"), "groups")), 1);
	json_decref(o);
	free(line);
	place_engine_free(e);
	place_state_free(s);
	place_cluster_free(c);
	topo_graph_free(g);
}

/* A decision committed as an allocation (as the Slurm plugin does), a job
 * Slurm placed itself and an end event, written through place_record and
 * read back with report_log: one format, both ways. */
static void test_commit_read_back(void **st)
{
	topo_error err;
	topo_graph *g = rail_graph(2);
	place_cluster *c = place_cluster_new(g, &err);
	place_state *s = place_state_new(c);
	place_engine *e = place_engine_new(c, NULL, &err);
	const char *groups[] = { "su2" };
	/* shadow mode's baselines: model holds, tree-switches places */
	const place_shadow_choice shadow[2] = {
		{ "model", "n[01-03]", 1, 1, 30.0 },
		{ "tree-switches", "n[01-02,05]", 2, 0, -1 },
	};
	const report_choice *sc;
	place_commit cm = { 0 };
	place_request r;
	place_decision d;
	const report_decision *rd;
	report_log log;
	char path[512];
	FILE *f;
	int fd;

	(void)st;
	assert_non_null(e);
	heavy_request(&r);
	r.time_limit_s = 7200;
	r.predicted_runtime_s = 900;
	assert_int_equal(place_decide(e, s, &r, PLACE_POLICY_MODEL, PLACE_POLICY_TREE, &d), 0);
	fd = test_mkstemp(path, sizeof(path), "test_place_record-XXXXXX");
	assert_true(fd >= 0);
	close(fd);

	/* the engine chose n05-n07 and Slurm allocated them (followed) */
	cm.job_id = 4242;
	cm.time = 1700000100;
	cm.name = "train";
	cm.mode = "enforce";
	cm.nodes = "n[05-07]";
	cm.node_count = 3;
	cm.groups = groups;
	cm.ngroups = 1;
	cm.leaves = 2;
	cm.running_jobs = 1;
	cm.policy = "model";
	cm.cluster = c;
	cm.req = &r;
	cm.dec = &d;
	cm.scorer = "model";
	cm.kind = d.chosen.kind;
	cm.chosen_nodes = "n[05-07]";
	cm.baseline_nodes = "n[05-07]";
	cm.has_wait = 1;
	cm.wait_s = 12.5;
	cm.shadow = shadow;
	cm.nshadow = 2;
	assert_int_equal(place_record_write_commit(path, &cm, &err), 0);
	/* a job Slurm placed itself */
	memset(&cm, 0, sizeof(cm));
	cm.job_id = 4243;
	cm.time = 1700000200;
	cm.name = "\xff-not-utf8"; /* the user's name for it: the line is still written */
	cm.mode = "enforce";
	cm.nodes = "n01";
	cm.node_count = 1;
	cm.policy = "model";
	cm.fallback = "contiguous jobs are placed by Slurm";
	assert_int_equal(place_record_write_commit(path, &cm, &err), 0);
	f = fopen(path, "a");
	assert_non_null(f);
	assert_int_equal(place_record_write_end(f, 4242, 1700003700.0, 3600.0, 1.25), 0);
	fclose(f);
	/* the plugin's way: by path, in one write */
	assert_int_equal(place_record_write_end_path(path, 4243, 1700000300.0, 100.0, NAN, &err), 0);

	assert_int_equal(report_log_load(path, &log, &err), 0);
	assert_int_equal(log.lines, 4);
	assert_int_equal(log.n, 2);
	assert_int_equal(log.skipped, 0);
	rd = report_log_find(&log, 4242);
	assert_non_null(rd);
	assert_string_equal(rd->format, "plugin");
	assert_int_equal(rd->ok, 1);
	assert_true(rd->timestamp == 1700000100.0);
	assert_string_equal(rd->mode, "enforce");
	assert_string_equal(rd->policy, "model");
	assert_string_equal(rd->baseline_policy, "tree");
	assert_int_equal(rd->followed, 1);
	assert_int_equal(rd->nallocated, 3);
	assert_string_equal(rd->allocated[0], "n05");
	/* the commit's view of the choice ... */
	assert_int_equal(rd->chosen.nhosts, 3);
	assert_string_equal(rd->chosen.hosts[2], "n07");
	assert_string_equal(rd->chosen.policy, "model");
	assert_string_equal(rd->chosen.kind, "group-best-fit");
	assert_true(rd->chosen.cost == d.chosen.cost);
	/* ... and what only the decision record inside it holds */
	assert_string_equal(rd->scorer, "model");
	assert_int_equal(rd->min_hosts, 3);
	assert_string_equal(rd->comm_class, "heavy");
	assert_true(rd->bytes_per_iter == 2e9);
	assert_true(rd->time_limit_s == 7200 && rd->predicted_run_s == 900);
	assert_int_equal(rd->chosen.diameter, 2);
	assert_true(rd->chosen.frag_cost == d.chosen.frag_cost);
	assert_int_equal(rd->nalternatives, d.nalternatives);
	assert_int_equal(rd->candidates, d.ncandidates);
	/* the end event */
	assert_int_equal(rd->ended, 1);
	assert_true(rd->elapsed_s == 3600.0);
	assert_true(rd->realised_slowdown == 1.25);
	/* the wait and shadow mode's baselines (a hold has no hosts) */
	assert_true(rd->wait_s == 12.5);
	assert_int_equal(rd->nshadow, 2);
	sc = report_decision_shadow(rd, "model");
	assert_int_equal(sc->hold, 1);
	assert_int_equal(sc->nhosts, 0);
	assert_int_equal(sc->groups, -1);
	assert_true(sc->expected_wait_s == 30.0);
	sc = report_decision_shadow(rd, "tree-switches");
	assert_int_equal(sc->hold, 0);
	assert_int_equal(sc->nhosts, 3);
	assert_string_equal(sc->hosts[2], "n05");
	assert_int_equal(sc->groups, 2);
	assert_true(isnan(sc->expected_wait_s));
	/* the job Slurm placed: not ok, the reason, its allocation */
	rd = report_log_find(&log, 4243);
	assert_non_null(rd);
	assert_true(isnan(rd->wait_s));
	assert_true(isnan(rd->time_limit_s) && isnan(rd->predicted_run_s)); /* no record */
	assert_int_equal(rd->nshadow, 0);
	assert_int_equal(rd->ended, 1);
	assert_true(rd->elapsed_s == 100.0);
	assert_true(isnan(rd->realised_slowdown));
	assert_int_equal(rd->ok, 0);
	assert_string_equal(rd->reason, "contiguous jobs are placed by Slurm");
	assert_int_equal(rd->nallocated, 1);
	assert_int_equal(rd->min_hosts, 1);
	report_log_free(&log);

	/* a log that cannot be opened: the file and the reason */
	assert_int_equal(place_record_write_commit("/nonexistent-dir/d.log", &cm, &err), -1);
	assert_string_equal(err.source, "/nonexistent-dir/d.log");
	assert_non_null(strstr(err.text, "No such file"));
	unlink(path);
	place_engine_free(e);
	place_state_free(s);
	place_cluster_free(c);
	topo_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record_fields),
		cmocka_unit_test(test_record_locality),
		cmocka_unit_test(test_commit_read_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
