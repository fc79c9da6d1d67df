/* Tests of the gnn scorer (topo/place_gnn.c) with the shipped ensemble
 * (models/default.json and its members): it loads, ranks an obviously
 * better placement first, refreshes embeddings once per state version,
 * refuses a model trained on other features, allocates nothing per
 * decision, and an ensemble whose members disagree keeps the tree set. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "place_features.h"
#include "place_gnn.h"
#include "sim.h"

#ifndef MODELS_DIR
#define MODELS_DIR "models"
#endif
#define MODEL MODELS_DIR "/default.json"
#define MEMBER MODELS_DIR "/default-1.json"

#include <jansson.h>

#include "malloc_count.h"
#include "test_tmp.h"

/* 4 groups x 8 hosts, 4 rails, 4:1 leaves (2 up-links each): hosts of
 * group g are 8g .. 8g+7. */
typedef struct fx {
	topo_graph *g;
	place_cluster *c;
	place_state *s;
} fx;

static const place_comm heavy = {PLACE_COMM_HEAVY, PLACE_PATTERN_RING, 1e8, 1e-3, 0};

static void fx_new(fx *f)
{
	topo_error err;

	f->g = sim_load_graph("fattree", "groups=4,hosts=8,rails=4,oversub=4", &err);
	assert_non_null(f->g);
	f->c = place_cluster_new(f->g, &err);
	assert_non_null(f->c);
	assert_int_equal(place_cluster_nhosts(f->c), 32);
	f->s = place_state_new(f->c);
	assert_non_null(f->s);
	for (int h = 0; h < 32; h++)
		place_state_set_host(f->s, h, 8, 8, 112, 112, 0);
}

static void fx_free(fx *f)
{
	place_state_free(f->s);
	place_cluster_free(f->c);
	topo_graph_free(f->g);
}

/* Running heavy jobs whose rings cross every group's up-links. */
static void congest(fx *f)
{
	static const int jobs[4][2] = {{4, 12}, {10, 18}, {11, 26}, {19, 27}};

	for (int j = 0; j < 4; j++)
		assert_int_equal(place_state_add_job(f->s, 100 + j, jobs[j], 2, 0, 0, &heavy), 0);
}

static void request(place_request *r, int n)
{
	memset(r, 0, sizeof(*r));
	r->job_id = 1;
	r->min_hosts = r->max_hosts = n;
	r->exclusive = 1;
	r->comm = heavy;
}

static void test_ranks_one_group_above_spread(void **state)
{
	fx f;
	topo_error err;
	place_gnn *g;
	place_scorer sc;
	place_request r;
	int one[] = {0, 1, 2, 3}, spread[] = {1, 9, 17, 25};
	place_candidate k[2] = {{one, 4, "group-best-fit", 0, 0, 0, 0, 0, -1},
				{spread, 4, "cover", 0, 0, 0, 0, 0, -1}};
	char why[128];

	(void)state;
	fx_new(&f);
	congest(&f);
	g = place_gnn_new(f.c, MODEL, 8, 1.0, 0.5, &err);
	if (!g)
		fail_msg("%s: %s", err.source, err.text);
	place_gnn_scorer(g, &sc);
	assert_string_equal(sc.name, "gnn");
	assert_int_equal(sc.prepare(sc.ctx, f.c, f.s, why, sizeof(why)), 0);
	request(&r, 4);
	assert_int_equal(sc.score(sc.ctx, f.c, f.s, &r, k, 2, why, sizeof(why)), 0);
	/* lower cost is better: one idle group beats four congested ones */
	assert_true(k[0].cost < k[1].cost);
	/* the analytic estimate stays in the candidate (a set feature) */
	assert_true(k[0].comm_time_s < k[1].comm_time_s);
	place_gnn_free(g);
	fx_free(&f);
}

static void test_refresh_once_per_state_version(void **state)
{
	fx f;
	topo_error err;
	place_config cfg;
	place_engine *e;
	place_gnn *g;
	place_scorer sc;
	place_request r;
	place_decision d;
	int extra[] = {30, 31};

	(void)state;
	fx_new(&f);
	place_config_init(&cfg);
	e = place_engine_new(f.c, &cfg, &err);
	assert_non_null(e);
	g = place_gnn_new(f.c, MODEL, cfg.candidates + 1, 1.0, 0.5, &err);
	assert_non_null(g);
	place_gnn_scorer(g, &sc);
	assert_int_equal(place_engine_set_scorer(e, PLACE_POLICY_GNN, &sc), 0);
	request(&r, 4);
	assert_int_equal(place_gnn_refreshes(g), 0);
	for (int i = 0; i < 5; i++)
		assert_int_equal(place_decide(e, f.s, &r, PLACE_POLICY_GNN, PLACE_POLICY_TREE, &d), 0);
	assert_int_equal(place_gnn_refreshes(g), 1);
	assert_int_equal(d.chosen.nhosts, 4);
	assert_int_equal(place_state_add_job(f.s, 7, extra, 2, 0, 0, &heavy), 0);
	assert_int_equal(place_decide(e, f.s, &r, PLACE_POLICY_GNN, PLACE_POLICY_TREE, &d), 0);
	assert_int_equal(place_decide(e, f.s, &r, PLACE_POLICY_GNN, PLACE_POLICY_TREE, &d), 0);
	assert_int_equal(place_gnn_refreshes(g), 2);
#if COUNT_MALLOC
	/* neither a decision nor a refresh (new state version) allocates */
	assert_int_equal(place_state_remove_job(f.s, 7), 0);
	allocations = 0;
	counting = 1;
	place_decide(e, f.s, &r, PLACE_POLICY_GNN, PLACE_POLICY_TREE, &d);
	place_decide(e, f.s, &r, PLACE_POLICY_GNN, PLACE_POLICY_TREE, &d);
	counting = 0;
	assert_int_equal(allocations, 0);
	assert_int_equal(place_gnn_refreshes(g), 3);
#endif
	place_engine_free(e);
	place_gnn_free(g);
	fx_free(&f);
}

/* place_config.model_path: the engine loads the model itself. */
static void test_engine_model_path(void **state)
{
	fx f;
	topo_error err;
	place_config cfg;
	place_engine *e;
	place_request r;
	place_decision d;

	(void)state;
	fx_new(&f);
	congest(&f);
	place_config_init(&cfg);
	cfg.model_path = MODEL;
	e = place_engine_new(f.c, &cfg, &err);
	assert_non_null(e);
	request(&r, 8);
	assert_int_equal(place_decide(e, f.s, &r, PLACE_POLICY_GNN, PLACE_POLICY_TREE, &d), 0);
	assert_int_equal(d.ok, 1);
	assert_int_equal(d.chosen.nhosts, 8);
	/* free hosts per group: 7, 5, 6, 6, so 8 hosts need two groups; tree
	 * (the baseline) takes two; the gnn's pick is its cheapest candidate */
	assert_int_equal(d.baseline.groups, 2);
	assert_true(d.chosen.groups >= 2);
	assert_true(d.nalternatives > 0);
	assert_true(d.chosen.cost <= d.alternatives[0].cost);
	place_engine_free(e);
	cfg.model_path = MODELS_DIR "/no-such-model.json";
	assert_null(place_engine_new(f.c, &cfg, &err));
	assert_non_null(strstr(err.source, "no-such-model.json"));
	fx_free(&f);
}

/* place_engine_refresh brings the scorers up to date once per state version;
 * a decision after it then reports no refresh time of its own. */
static void test_explicit_refresh(void **state)
{
	fx f;
	topo_error err;
	place_config cfg;
	place_engine *e;
	place_request r;
	place_decision d;
	char why[128];

	(void)state;
	fx_new(&f);
	congest(&f);
	place_config_init(&cfg);
	cfg.model_path = MODEL;
	e = place_engine_new(f.c, &cfg, &err);
	assert_non_null(e);
	assert_int_equal(place_engine_refresh(e, f.s, why, sizeof(why)), 1);
	assert_int_equal(place_engine_refresh(e, f.s, why, sizeof(why)), 0);
	request(&r, 4);
	assert_int_equal(place_decide(e, f.s, &r, PLACE_POLICY_GNN, PLACE_POLICY_GNN, &d), 0);
	assert_true(d.refresh_us == 0.0);
	place_engine_free(e);
	fx_free(&f);
}

static char *slurp(const char *path)
{
	FILE *fp = fopen(path, "rb");
	long n;
	char *buf;

	assert_non_null(fp);
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	rewind(fp);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, fp), (size_t)n);
	buf[n] = '\0';
	fclose(fp);
	return buf;
}

static void test_feature_mismatch_refused(void **state)
{
	fx f;
	topo_error err;
	char path[512], *text = slurp(MEMBER), *at;
	int fd;

	(void)state;
	fx_new(&f);
	at = strstr(text, "\"max_port_flows\"");
	assert_non_null(at);
	memcpy(at, "\"max_port_flowz\"", 16);
	fd = test_mkstemp(path, sizeof(path), "test_place_gnn_XXXXXX");
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	assert_null(place_gnn_new(f.c, path, 8, 1.0, 0.5, &err));
	assert_string_equal(err.source, path);
	assert_non_null(strstr(err.text, "trained on other features"));
	assert_non_null(strstr(err.text, "max_port_flow"));
	unlink(path);
	free(text);
	fx_free(&f);
}

/* Write text to a new temporary file in dir; path receives its name. */
static void write_temp(const char *dir, const char *text, char *path, size_t len)
{
	int fd;

	snprintf(path, len, "%s/test_place_gnn_XXXXXX", dir);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* A member whose scores are minus the shipped member's: its last layer
 * negated. */
static void write_negated(const char *dir, char *path, size_t len)
{
	json_error_t je;
	json_t *m = json_load_file(MEMBER, 0, &je), *layers, *last;
	char *text;

	assert_non_null(m);
	layers = json_object_get(m, "layers");
	last = json_array_get(layers, json_array_size(layers) - 1);
	assert_string_equal(json_string_value(json_object_get(last, "type")), "linear");
	for (size_t i = 0; i < json_array_size(json_object_get(last, "weight")); i++) {
		json_t *row = json_array_get(json_object_get(last, "weight"), i);

		json_array_set_new(row, 0, json_real(-json_number_value(json_array_get(row, 0))));
	}
	json_array_set_new(json_object_get(last, "bias"), 0,
			   json_real(-json_number_value(json_array_get(
				   json_object_get(last, "bias"), 0))));
	text = json_dumps(m, 0);
	write_temp(dir, text, path, len);
	free(text);
	json_decref(m);
}

/* Score one-group vs spread (the spread set flagged as tree's) with the
 * ensemble file `ens`; returns the scorer's index of the cheapest. */
static int ensemble_pick(fx *f, const char *ens, place_candidate *k)
{
	topo_error err;
	place_gnn *g = place_gnn_new(f->c, ens, 8, 1.0, 0.5, &err);
	place_scorer sc;
	place_request r;
	char why[128];

	if (!g)
		fail_msg("%s: %s", err.source, err.text);
	place_gnn_scorer(g, &sc);
	assert_int_equal(sc.prepare(sc.ctx, f->c, f->s, why, sizeof(why)), 0);
	request(&r, 4);
	assert_int_equal(sc.score(sc.ctx, f->c, f->s, &r, k, 2, why, sizeof(why)), 0);
	place_gnn_free(g);
	return k[0].cost < k[1].cost ? 0 : 1;
}

static void test_ensemble(void **state)
{
	fx f;
	topo_error err;
	place_config cfg;
	place_engine *e;
	place_gnn *g;
	int one[] = {0, 1, 2, 3}, spread[] = {1, 9, 17, 25};
	place_candidate k[2] = {{one, 4, "group-best-fit", 0, 0, 0, 0, 0, 0},
				{spread, 4, "tree", 0, 1, 0, 0, 0, 0}};
	char neg[256], ens[256], text[1024];
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

	(void)state;
	fx_new(&f);
	congest(&f);
	/* the shipped default is an ensemble of three */
	g = place_gnn_new(f.c, MODEL, 8, 1.0, 0.5, &err);
	if (!g)
		fail_msg("%s: %s", err.source, err.text);
	assert_int_equal(place_gnn_nmodels(g), 3);
	place_gnn_free(g);
	/* three copies of one member agree: its pick, confidence 1 */
	snprintf(text, sizeof(text),
		 "{\"format\": \"topognn-ensemble\", \"version\": 1, \"models\": "
		 "[\"%s\", \"%s\", \"%s\"]}", MEMBER, MEMBER, MEMBER);
	write_temp(tmp, text, ens, sizeof(ens));
	assert_int_equal(ensemble_pick(&f, ens, k), 0);
	assert_true(k[0].confidence == 1.0 && k[1].confidence == 0.0);
	unlink(ens);
	/* a member and its negation disagree on every pick: the tree set
	 * stays, with the share of members that preferred it */
	write_negated(tmp, neg, sizeof(neg));
	snprintf(text, sizeof(text),
		 "{\"format\": \"topognn-ensemble\", \"version\": 1, \"models\": "
		 "[\"%s\", \"%s\"], \"agreement\": 1}", MEMBER, neg);
	write_temp(tmp, text, ens, sizeof(ens));
	assert_int_equal(ensemble_pick(&f, ens, k), 1);
	assert_true(k[1].confidence == 0.5);
	/* the engine copies the confidence into the decision */
	place_config_init(&cfg);
	cfg.model_path = ens;
	e = place_engine_new(f.c, &cfg, &err);
	assert_non_null(e);
	{
		place_request r;
		place_decision d;

		request(&r, 4);
		assert_int_equal(place_decide(e, f.s, &r, PLACE_POLICY_GNN, PLACE_POLICY_TREE, &d), 0);
		assert_true(d.chosen.confidence >= 0 && d.chosen.confidence <= 1);
		/* they disagree on every pick: the choice is tree's */
		assert_int_equal(d.chosen.nhosts, d.baseline.nhosts);
		assert_memory_equal(d.chosen.hosts, d.baseline.hosts, 4 * sizeof(int));
	}
	place_engine_free(e);
	unlink(ens);
	unlink(neg);
	/* bad ensemble files name the file and the key */
	write_temp(tmp, "{\"format\": \"topognn-ensemble\", \"version\": 1}", ens,
		   sizeof(ens));
	assert_null(place_gnn_new(f.c, ens, 8, 1.0, 0.5, &err));
	assert_string_equal(err.source, ens);
	assert_non_null(strstr(err.text, "models"));
	unlink(ens);
	write_temp(tmp,
		   "{\"format\": \"topognn-ensemble\", \"version\": 1, \"models\": [\"nope.json\"]}",
		   ens, sizeof(ens));
	assert_null(place_gnn_new(f.c, ens, 8, 1.0, 0.5, &err));
	assert_non_null(strstr(err.source, "nope.json"));
	unlink(ens);
	fx_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ranks_one_group_above_spread),
		cmocka_unit_test(test_refresh_once_per_state_version),
		cmocka_unit_test(test_explicit_refresh),
		cmocka_unit_test(test_engine_model_path),
		cmocka_unit_test(test_feature_mismatch_refused),
		cmocka_unit_test(test_ensemble),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
