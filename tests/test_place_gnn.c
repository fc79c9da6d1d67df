/* Tests of the gnn scorer (topo/place_gnn.c) with the shipped ensemble
 * (models/default.json and its members): it loads, ranks an obviously
 * better placement first, refreshes embeddings once per state version,
 * refuses a model trained on other features, allocates nothing per
 * decision, an ensemble whose members disagree keeps the tree set, and the
 * fast refresh scores exactly as the straightforward one over a random
 * sequence of state changes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "place_features.h"
#include "place_gnn.h"
#include "place_scorer.h"
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

/* place_gnn_register: the set-up loads the model and installs it as the engine's
 * gnn scorer; the engine owns it and names it in decisions. */
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
	e = place_engine_new(f.c, &cfg, &err);
	assert_non_null(e);
	assert_int_equal(place_gnn_register(e, MODEL, &err), 0);
	assert_string_equal(place_engine_model_path(e), MODEL);
	request(&r, 8);
	assert_int_equal(place_decide(e, f.s, &r, PLACE_POLICY_GNN, PLACE_POLICY_TREE, &d), 0);
	assert_int_equal(d.ok, 1);
	assert_string_equal(d.model, MODEL);
	assert_int_equal(d.chosen.nhosts, 8);
	/* free hosts per group: 7, 5, 6, 6, so 8 hosts need two groups; tree
	 * (the baseline) takes two; the gnn's pick is its cheapest candidate */
	assert_int_equal(d.baseline.groups, 2);
	assert_true(d.chosen.groups >= 2);
	assert_true(d.nalternatives > 0);
	assert_true(d.chosen.cost <= d.alternatives[0].cost);
	place_engine_free(e);
	/* a bad model is refused at registration and leaves the engine as it
	 * was: the gnn policy has no scorer */
	e = place_engine_new(f.c, &cfg, &err);
	assert_non_null(e);
	assert_int_equal(place_gnn_register(e, MODELS_DIR "/no-such-model.json", &err), -1);
	assert_non_null(strstr(err.source, "no-such-model.json"));
	assert_null(place_engine_model_path(e));
	assert_int_equal(place_decide(e, f.s, &r, PLACE_POLICY_GNN, PLACE_POLICY_TREE, &d), -1);
	assert_string_equal(d.reason, "no GNN model loaded");
	/* registering no model is a no-op */
	assert_int_equal(place_gnn_register(e, NULL, &err), 0);
	place_engine_free(e);
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
	e = place_engine_new(f.c, &cfg, &err);
	assert_non_null(e);
	assert_int_equal(place_gnn_register(e, MODEL, &err), 0);
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
	e = place_engine_new(f.c, &cfg, &err);
	assert_non_null(e);
	assert_int_equal(place_gnn_register(e, ens, &err), 0);
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

/* A gate file with `names` as its feature list (NULL: this build's), the
 * first weight w0 over a scale of scale0, and bias b; others 0. */
static void write_gate(const char *dir, const char *const *names, double w0, double scale0,
		       double b, char *path, size_t len)
{
	json_t *g = json_pack("{s:s, s:i}", "format", "topognn-hold", "version", 1);
	json_t *n = json_array(), *mean = json_array(), *scale = json_array(), *w = json_array();
	char *text;

	for (int i = 0; i < PLACE_HOLD_FEATURES; i++) {
		json_array_append_new(n, json_string(names ? names[i] : place_hold_feature_names[i]));
		json_array_append_new(mean, json_real(0));
		json_array_append_new(scale, json_real(i ? 1 : scale0));
		json_array_append_new(w, json_real(i ? 0 : w0));
	}
	json_object_set_new(g, "features", n);
	json_object_set_new(g, "mean", mean);
	json_object_set_new(g, "scale", scale);
	json_object_set_new(g, "weights", w);
	json_object_set_new(g, "bias", json_real(b));
	text = json_dumps(g, 0);
	write_temp(dir, text, path, len);
	free(text);
	json_decref(g);
}

/* An ensemble of the first shipped member and the gate file `gate`. */
static void gate_ensemble(const char *dir, const char *gate, char *ens, size_t len)
{
	char text[1024];

	snprintf(text, sizeof(text), "{\"format\": \"topognn-ensemble\", \"version\": 1, "
		 "\"models\": [\"%s\"], \"hold\": \"%s\"}", MEMBER, gate);
	write_temp(dir, text, ens, len);
}

/* The gnn scorer of ensemble `ens` (NULL with err on a bad file). */
static place_gnn *gate_scorer(fx *f, const char *ens, place_scorer *sc, topo_error *err)
{
	place_gnn *g = place_gnn_new(f->c, ens, 8, 1.0, 0.5, err);

	if (g)
		place_gnn_scorer(g, sc);
	return g;
}

/* The hold gate an ensemble names (place_hold.h): the shipped one, its
 * arithmetic, and bad gate files named with the problem. */
static void test_hold_gate_file(void **state)
{
	fx f;
	topo_error err;
	place_scorer sc;
	place_gnn *g;
	float x[PLACE_HOLD_FEATURES] = { 0 };
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	const char *bad[PLACE_HOLD_FEATURES];
	char gate[256], ens[512], text[1024];

	(void)state;
	fx_new(&f);
	/* the shipped ensemble has one; a probability */
	g = gate_scorer(&f, MODEL, &sc, &err);
	if (!g)
		fail_msg("%s: %s", err.source, err.text);
	assert_non_null(sc.hold.p);
	x[0] = x[1] = 1;
	assert_true(sc.hold.p(sc.hold.ctx, x) > 0 && sc.hold.p(sc.hold.ctx, x) < 1);
	place_gnn_free(g);
	/* a member alone has none: the analytic rule decides */
	g = gate_scorer(&f, MEMBER, &sc, &err);
	assert_non_null(g);
	assert_null(sc.hold.p);
	place_gnn_free(g);
	/* p = 1 / (1 + exp(-(b + w0 x0 / scale0))) */
	write_gate(tmp, NULL, 2, 4, -1, gate, sizeof(gate));
	gate_ensemble(tmp, gate, ens, sizeof(ens));
	g = gate_scorer(&f, ens, &sc, &err);
	if (!g)
		fail_msg("%s: %s", err.source, err.text);
	x[0] = 3;
	assert_float_equal(sc.hold.p(sc.hold.ctx, x), 1 / (1 + exp(-(-1 + 2 * 3 / 4.0))), 1e-12);
	place_gnn_free(g);
	unlink(gate);
	/* a gate trained on other features: the first difference named */
	for (int i = 0; i < PLACE_HOLD_FEATURES; i++)
		bad[i] = place_hold_feature_names[i];
	bad[3] = "nope";
	write_gate(tmp, bad, 2, 4, -1, gate, sizeof(gate));
	unlink(ens);
	gate_ensemble(tmp, gate, ens, sizeof(ens));
	assert_null(place_gnn_new(f.c, ens, 8, 1.0, 0.5, &err));
	assert_string_equal(err.source, gate);
	assert_non_null(strstr(err.text, "features[3] is \"nope\""));
	unlink(gate);
	/* a scale of 0 */
	write_gate(tmp, NULL, 2, 0, -1, gate, sizeof(gate));
	unlink(ens);
	gate_ensemble(tmp, gate, ens, sizeof(ens));
	assert_null(place_gnn_new(f.c, ens, 8, 1.0, 0.5, &err));
	assert_string_equal(err.source, gate);
	assert_non_null(strstr(err.text, "scale[0]: expected a positive number"));
	unlink(gate);
	/* no such file */
	assert_null(place_gnn_new(f.c, ens, 8, 1.0, 0.5, &err));
	assert_string_equal(err.source, gate);
	unlink(ens);
	/* "hold" not a file name */
	snprintf(text, sizeof(text), "{\"format\": \"topognn-ensemble\", \"version\": 1, "
		 "\"models\": [\"%s\"], \"hold\": 5}", MEMBER);
	write_temp(tmp, text, ens, sizeof(ens));
	assert_null(place_gnn_new(f.c, ens, 8, 1.0, 0.5, &err));
	assert_string_equal(err.source, ens);
	assert_non_null(strstr(err.text, "hold: expected a file name"));
	unlink(ens);
	fx_free(&f);
}

static unsigned next_rand(unsigned *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return (*seed >> 8) % 1000003u;
}

/* One random state change of the kinds a cluster sees: a job starts (some
 * with expected ends) or ends, a host goes down or is partly used, the
 * clock moves and an end is updated, the queue changes. */
static void random_change(place_state *s, int nhosts, unsigned *seed, uint32_t *ids, int *nids,
			  uint32_t id)
{
	const place_comm light = {PLACE_COMM_LIGHT, PLACE_PATTERN_RING, 1e6, 1e-3, 0};
	int op = (int)(next_rand(seed) % 10), hosts[16];

	if (op < 4 || *nids == 0) {
		int n = 1 + (int)(next_rand(seed) % 12), first = (int)(next_rand(seed) % (unsigned)(nhosts - n));

		for (int k = 0; k < n; k++) /* some gaps: jobs span leaves and groups */
			hosts[k] = first + k + (k > 0 && next_rand(seed) % 3 == 0);
		if (hosts[n - 1] >= nhosts)
			n--;
		if (place_state_add_job(s, id, hosts, n, 0, 0, next_rand(seed) % 3 ? &heavy : &light) == 0) {
			ids[(*nids)++] = id;
			if (next_rand(seed) % 4)
				place_state_set_job_end(s, id, 1.0 + next_rand(seed) % (48 * 3600));
		}
	} else if (op < 7) {
		int k = (int)(next_rand(seed) % (unsigned)*nids);

		assert_int_equal(place_state_remove_job(s, ids[k]), 0);
		ids[k] = ids[--*nids];
	} else if (op < 8) {
		place_state_set_host(s, (int)(next_rand(seed) % (unsigned)nhosts), 8,
				     (int)(next_rand(seed) % 9), 112, 112, next_rand(seed) % 4 == 0);
	} else if (op < 9) {
		place_state_set_clock(s, next_rand(seed) % 7200);
		place_state_set_job_end(s, ids[next_rand(seed) % (unsigned)*nids],
					1.0 + next_rand(seed) % (48 * 3600));
	} else {
		place_state_set_queue(s, (int)(next_rand(seed) % 50), (int)(next_rand(seed) % 300));
	}
}

/* n random candidates of 1..16 distinct hosts, ascending. */
static void random_candidates(place_candidate *k, int n, int *hosts, int nhosts, unsigned *seed)
{
	for (int i = 0; i < n; i++) {
		int m = 1 + (int)(next_rand(seed) % 16), h = (int)(next_rand(seed) % (unsigned)nhosts);

		memset(&k[i], 0, sizeof(k[i]));
		k[i].hosts = hosts + 16 * i;
		k[i].kind = "random";
		k[i].tree = i == 0;
		for (int j = 0; j < m && h < nhosts; j++, h += 1 + (int)(next_rand(seed) % 5))
			k[i].hosts[k[i].nhosts++] = h;
	}
}

/* The remaining-time feature by its table of steps gives what the
 * logarithm gave: floor(4 log1p(hours)) / 4, at every step's edge (a few
 * ulps either side, in seconds as the state keeps them), at 200,000 times
 * from a second to 300 years, past the table, and for ends that are
 * unknown, past or not numbers. */
static void test_remaining_steps_match_log1p(void **state)
{
	topo_error err;
	topo_graph *tg = sim_load_graph("fattree", "groups=2,hosts=4,rails=1", &err);
	place_cluster *c;
	place_features *f;
	unsigned seed = 7;
	long checked = 0;

	(void)state;
	assert_non_null(tg);
	c = place_cluster_new(tg, &err);
	assert_non_null(c);
	f = place_features_new(c, 1.0, 1.0);
	assert_non_null(f);
#define LOG_STEPS(end, now)                                                              \
	((end) > 0 ? (float)(floor(4.0 * log1p((end) > (now) ? ((end) - (now)) / 3600.0 : 0) \
				   ) / 4.0)                                           \
		   : 0.0f)
	for (int k = 1; k <= PLACE_REM_STEPS + 8; k++) {
		double end = expm1(k / 4.0) * 3600.0;

		for (int i = 0; i < 64; i++)
			end = nextafter(end, 0);
		for (int i = 0; i < 128; i++, end = nextafter(end, INFINITY), checked++)
			if (place_features_remaining(f, end, 0) != LOG_STEPS(end, 0))
				fail_msg("step %d: end %.17g s gives %g, log1p %g", k, end,
					 place_features_remaining(f, end, 0), LOG_STEPS(end, 0));
	}
	for (int i = 0; i < 200000; i++, checked++) {
		double now = 1.7e9 + (double)(rand_r(&seed) % 100000);
		double end = now + exp((double)rand_r(&seed) / RAND_MAX * log(1e10));

		if (place_features_remaining(f, end, now) != LOG_STEPS(end, now))
			fail_msg("end %.17g, now %.17g: %g, log1p %g", end, now,
				 place_features_remaining(f, end, now), LOG_STEPS(end, now));
	}
	assert_true(place_features_remaining(f, 1e30, 0) == LOG_STEPS(1e30, 0));
	assert_true(place_features_remaining(f, INFINITY, 0) == LOG_STEPS(INFINITY, 0));
	assert_true(place_features_remaining(f, 0, 0) == 0);
	assert_true(place_features_remaining(f, -5, 0) == 0);
	assert_true(place_features_remaining(f, NAN, 0) == 0);
	assert_true(place_features_remaining(f, 100, NAN) == LOG_STEPS(100, NAN));
	assert_true(place_features_remaining(f, 100, 200) == 0);
#undef LOG_STEPS
	printf("# %ld remaining times agree with log1p\n", checked);
	place_features_free(f);
	place_cluster_free(c);
	topo_graph_free(tg);
}

/* The 256-host fat-tree of the refresh tests, every host idle. */
static place_state *idle_fattree(topo_graph **tg, place_cluster **c)
{
	topo_error err;
	place_state *s;

	*tg = sim_load_graph("fattree", "groups=16,hosts=16,rails=4,oversub=2", &err);
	assert_non_null(*tg);
	*c = place_cluster_new(*tg, &err);
	assert_non_null(*c);
	s = place_state_new(*c);
	assert_non_null(s);
	for (int h = 0; h < place_cluster_nhosts(*c); h++)
		place_state_set_host(s, h, 8, 8, 112, 112, 0);
	return s;
}

/* One place_features kept across state changes (as the scorer keeps it:
 * it reuses the last graph when the types are the same) builds the graph
 * and rows a fresh one builds, whether the types changed or not. */
static void test_features_kept_match_fresh(void **state)
{
	enum { STEPS = 300 };
	topo_graph *tg;
	place_cluster *c;
	place_state *s = idle_fattree(&tg, &c);
	place_features *kept = place_features_new(c, 1.0, 0.5);
	uint32_t ids[3 * STEPS];
	int nids = 0, nhosts = place_cluster_nhosts(c), same_types = 0, moved_types = 0;
	int new_types = 0, prev_T = -1;
	unsigned seed = 99;
	float *x, *y;
	int32_t *prev_off;

	(void)state;
	assert_non_null(kept);
	x = malloc((size_t)place_features_max_vertices(kept) * PLACE_FEAT_VERTEX * sizeof(float));
	y = malloc((size_t)place_features_max_vertices(kept) * PLACE_FEAT_VERTEX * sizeof(float));
	prev_off = calloc((size_t)place_features_max_vertices(kept) + 1, sizeof(int32_t));
	assert_non_null(x);
	assert_non_null(y);
	assert_non_null(prev_off);
	for (int i = 0; i < STEPS; i++) {
		place_features *fresh = place_features_new(c, 1.0, 0.5);
		int nv, T, ne;

		assert_non_null(fresh);
		/* one to three changes, so that types also come and go in two
		 * groups at once and the count stays while the layout moves */
		for (int k = 0, n = 1 + (int)(next_rand(&seed) % 3); k < n; k++)
			random_change(s, nhosts, &seed, ids, &nids, 5000u + 3u * (uint32_t)i + (uint32_t)k);
		place_features_vertices(kept, s, x);
		place_features_vertices(fresh, s, y);
		nv = place_features_nvertices(kept);
		T = place_features_ntypes(kept);
		ne = place_features_nedges(kept);
		assert_int_equal(nv, place_features_nvertices(fresh));
		assert_int_equal(T, place_features_ntypes(fresh));
		assert_int_equal(ne, place_features_nedges(fresh));
		assert_memory_equal(place_features_offsets(kept), place_features_offsets(fresh),
				    ((size_t)nv + 1) * sizeof(int32_t));
		assert_memory_equal(place_features_neighbours(kept),
				    place_features_neighbours(fresh), (size_t)ne * sizeof(int32_t));
		assert_memory_equal(place_features_weights(kept), place_features_weights(fresh),
				    (size_t)ne * sizeof(float));
		assert_memory_equal(place_features_host_vertex(kept),
				    place_features_host_vertex(fresh), (size_t)nhosts * sizeof(int32_t));
		assert_memory_equal(x, y, (size_t)nv * PLACE_FEAT_VERTEX * sizeof(float));
		/* both ways through the build: the same type layout as the step
		 * before (the graph reused), and a new one */
		if (T == prev_T && !memcmp(prev_off, place_features_offsets(kept),
					   ((size_t)nv + 1) * sizeof(int32_t)))
			same_types++;
		else if (T == prev_T)
			moved_types++;
		else
			new_types++;
		prev_T = T;
		memcpy(prev_off, place_features_offsets(kept), ((size_t)nv + 1) * sizeof(int32_t));
		place_features_free(fresh);
	}
	printf("# %d steps kept the type layout, %d moved it (as many types), %d changed the "
	       "count\n", same_types, moved_types, new_types);
	assert_true(same_types > STEPS / 10);
	assert_true(moved_types > 0);
	assert_true(new_types > STEPS / 10);
	free(prev_off);
	free(y);
	free(x);
	place_features_free(kept);
	place_state_free(s);
	place_cluster_free(c);
	topo_graph_free(tg);
}

/* The fast way (host types only, the graph kept from the last refresh
 * when it can be, embeddings made on demand for the types the candidates
 * map to, with their neighbourhood, the first layer shared) against the
 * straightforward one (a scorer new to the state, every member embedding
 * every vertex on its own), on a 256-host fat-tree over a random sequence
 * of state changes, two decisions per state: the candidates' costs and
 * confidences are the same bits. */
static void test_fast_refresh_matches_full(void **state)
{
	enum { NCAND = 12, STEPS = 150 };
	topo_error err;
	topo_graph *tg;
	place_cluster *c;
	place_state *s = idle_fattree(&tg, &c);
	place_gnn *fast = place_gnn_new(c, MODEL, NCAND, 1.0, 0.5, &err);
	place_scorer sf, sr;
	place_candidate a[NCAND], b[NCAND];
	static int ha[NCAND * 16], hb[NCAND * 16];
	uint32_t ids[STEPS];
	int nids = 0, nhosts = place_cluster_nhosts(c);
	unsigned seed = 2024;
	char why[256];

	(void)state;
	assert_non_null(fast);
	place_gnn_scorer(fast, &sf);
	for (int i = 0; i < STEPS; i++) {
		place_gnn *full = place_gnn_new(c, MODEL, NCAND, 1.0, 0.5, &err);
		place_request r;
		unsigned cseed;

		assert_non_null(full);
		place_gnn_set_full_refresh(full, 1);
		place_gnn_scorer(full, &sr);
		random_change(s, nhosts, &seed, ids, &nids, 1000u + (uint32_t)i);
		assert_int_equal(sf.prepare(sf.ctx, c, s, why, sizeof(why)), 0);
		assert_int_equal(sr.prepare(sr.ctx, c, s, why, sizeof(why)), 0);
		/* switched after a refresh: takes effect at the next one, this
		 * state's decisions still embed on demand */
		place_gnn_set_full_refresh(fast, i == STEPS / 2);
		cseed = seed;
		random_candidates(a, NCAND, ha, nhosts, &cseed);
		random_candidates(b, NCAND, hb, nhosts, &seed);
		request(&r, 4);
		/* two decisions on the state: the second's candidates partly on
		 * types the first embedded on demand, partly on new ones */
		for (int round = 0; round < 2; round++) {
			assert_int_equal(sf.score(sf.ctx, c, s, &r, a, NCAND, why, sizeof(why)), 0);
			assert_int_equal(sr.score(sr.ctx, c, s, &r, b, NCAND, why, sizeof(why)), 0);
			for (int k = 0; k < NCAND; k++) {
				assert_memory_equal(&a[k].cost, &b[k].cost, sizeof(double));
				assert_memory_equal(&a[k].confidence, &b[k].confidence,
						    sizeof(double));
				assert_memory_equal(&a[k].comm_time_s, &b[k].comm_time_s,
						    sizeof(double));
			}
			cseed = seed;
			random_candidates(a, NCAND, ha, nhosts, &cseed);
			random_candidates(b, NCAND, hb, nhosts, &seed);
		}
		place_gnn_free(full);
	}
	assert_int_equal(place_gnn_refreshes(fast), STEPS);
	place_gnn_free(fast);
	place_state_free(s);
	place_cluster_free(c);
	topo_graph_free(tg);
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
		cmocka_unit_test(test_hold_gate_file),
		cmocka_unit_test(test_fast_refresh_matches_full),
		cmocka_unit_test(test_remaining_steps_match_log1p),
		cmocka_unit_test(test_features_kept_match_fresh),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
