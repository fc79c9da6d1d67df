/*
 * place_gnn: the `gnn` scorer (see place_gnn.h): place_features for the
 * graph and features, gnn-infer for the maths, one model or an ensemble.
 */
#include "place_gnn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "gnn_infer.h"
#include "gnn_model.h"
#include "topo_io.h"
#include "topo_json.h"
#include "place_features.h"
#include "place_hold.h"

/* One member of the ensemble: a model with its context and embeddings. */
typedef struct place_gnn_member {
	gnn_model *model;
	gnn_ctx *ctx;
	float *emb;       /* nvertices x its embed dim */
	float *sub_emb;   /* the same for the vertices of the on-demand graph */
	float *scores;    /* max_sets */
} place_gnn_member;

/* Embeddings on demand: the host types a decision's candidates map to that
 * this state version has not embedded yet, with their neighbourhood out to
 * the models' reach, as a graph of its own (see embed_types). */
typedef struct place_gnn_sub {
	unsigned version;  /* this state version's mark in embedded[] */
	unsigned *embedded; /* per vertex: version when emb holds its rows */
	unsigned mark;     /* this build's mark in in_sub[] */
	unsigned *in_sub;  /* per vertex: mark when it is in the graph ... */
	int32_t *id;       /* ... as this vertex */
	int32_t *vertex;   /* per graph vertex: the state's vertex */
	int32_t *off, *nbr;
	float *w, *feat;
} place_gnn_sub;

struct place_gnn {
	const place_cluster *c;
	place_features *feat;
	place_gnn_member member[PLACE_GNN_MAX_MODELS];
	gnn_ctx *ctxs[PLACE_GNN_MAX_MODELS];   /* the members' contexts ... */
	float *embs[PLACE_GNN_MAX_MODELS];     /* ... and embeddings, for gnn-infer */
	int nmembers;
	int hops;         /* the members' farthest reach (gnn_model_hops) */
	place_gnn_sub sub;
	float *sub_embs[PLACE_GNN_MAX_MODELS]; /* the members' sub_emb */
	int full_refresh; /* the straightforward refresh (tests' reference) ... */
	int all_embedded; /* ... as the last refresh made it: emb holds every vertex */
	double agreement; /* share of members whose top pick must agree */
	int max_sets;
	float *vfeat;     /* nvertices x PLACE_FEAT_VERTEX */
	float *sfeat;     /* max_sets x PLACE_FEAT_SET */
	double *mean;     /* max_sets: members' mean score */
	int *votes;       /* max_sets: members whose top pick it is */
	int32_t *set_off; /* max_sets + 1 */
	int32_t *members; /* max_sets x nhosts */
	place_hold hold;  /* the ensemble's learned hold gate ... */
	int has_hold;     /* ... when it has one */
	unsigned long refreshes;
	int ready;        /* embeddings valid */
	char *path;       /* the model file, as the decisions name it */
};

void place_gnn_free(place_gnn *g)
{
	if (!g)
		return;
	for (int m = 0; m < g->nmembers; m++) {
		gnn_ctx_free(g->member[m].ctx);
		gnn_model_free(g->member[m].model);
		free(g->member[m].emb);
		free(g->member[m].sub_emb);
		free(g->member[m].scores);
	}
	free(g->sub.embedded);
	free(g->sub.in_sub);
	free(g->sub.id);
	free(g->sub.vertex);
	free(g->sub.off);
	free(g->sub.nbr);
	free(g->sub.w);
	free(g->sub.feat);
	place_features_free(g->feat);
	free(g->vfeat);
	free(g->sfeat);
	free(g->mean);
	free(g->votes);
	free(g->set_off);
	free(g->members);
	free(g->path);
	free(g);
}

/* Model load and feature check; errors name the file and the problem. */
static gnn_model *load_model(const char *path, topo_error *err)
{
	gnn_error ge;
	gnn_model *m = gnn_model_load(path, &ge);

	if (!m) {
		topo_error_set(err, path, 0, "%s%s%s", ge.path[0] ? ge.path : "",
			       ge.path[0] ? ": " : "", ge.text);
		return NULL;
	}
	if (gnn_model_check_features(m, GNN_VERTEX_FEATURES, place_feature_vertex_names,
				     PLACE_FEAT_VERTEX, &ge) ||
	    gnn_model_check_features(m, GNN_SET_FEATURES, place_feature_set_names,
				     PLACE_FEAT_SET, &ge)) {
		topo_error_set(err, path, 0,
			       "the model was trained on other features than this topognn builds "
			       "(%s); retrain it with topognn-sim --emit-training",
			       ge.text);
		gnn_model_free(m);
		return NULL;
	}
	return m;
}

/* A member's path: relative names are relative to the ensemble file. */
static int member_path(const char *ens, const char *name, char *out, size_t len)
{
	const char *slash = strrchr(ens, '/');
	int n;

	if (name[0] == '/' || !slash)
		n = snprintf(out, len, "%s", name);
	else
		n = snprintf(out, len, "%.*s/%s", (int)(slash - ens), ens, name);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* The members of an ensemble file (docs/gnn.md, "Ensembles"). */
static int load_ensemble(place_gnn *g, const char *path, const json_t *root, topo_error *err)
{
	const json_t *models = json_object_get(root, "models");
	const json_t *agree = json_object_get(root, "agreement"), *ver = json_object_get(root, "version");
	const json_t *hold = json_object_get(root, "hold");
	char mp[4096];
	size_t i;

	if (!json_is_integer(ver) || json_integer_value(ver) != 1)
		return topo_error_set(err, path, 0, "version: expected 1"), -1;
	if (!json_is_array(models) || json_array_size(models) < 1 ||
	    json_array_size(models) > PLACE_GNN_MAX_MODELS)
		return topo_error_set(err, path, 0, "models: expected an array of 1 to %d file names",
				      PLACE_GNN_MAX_MODELS), -1;
	if (agree && (!json_is_number(agree) || !(json_number_value(agree) > 0) ||
		      json_number_value(agree) > 1))
		return topo_error_set(err, path, 0, "agreement: expected a number in (0, 1]"), -1;
	g->agreement = agree ? json_number_value(agree) : 1.0;
	if (hold) { /* the learned hold gate (place_hold.h) */
		if (!json_is_string(hold) || !json_string_value(hold)[0] ||
		    member_path(path, json_string_value(hold), mp, sizeof(mp)))
			return topo_error_set(err, path, 0, "hold: expected a file name"), -1;
		if (place_hold_load(mp, &g->hold, err))
			return -1;
		g->has_hold = 1;
	}
	for (i = 0; i < json_array_size(models); i++) {
		const json_t *v = json_array_get(models, i);

		if (!json_is_string(v) || !json_string_value(v)[0] ||
		    member_path(path, json_string_value(v), mp, sizeof(mp)))
			return topo_error_set(err, path, 0, "models[%zu]: expected a file name", i), -1;
		g->member[g->nmembers].model = load_model(mp, err);
		if (!g->member[g->nmembers].model)
			return -1;
		g->nmembers++;
	}
	return 0;
}

/* A model file, or an ensemble file naming several. */
static int load_models(place_gnn *g, const char *path, topo_error *err)
{
	json_error_t je;
	json_t *root = topo_json_load_input(path, 0, 0, &je);
	const json_t *fmt = json_object_get(root, "format");
	int rc;

	g->agreement = 1.0;
	if (root && json_is_string(fmt) && !strcmp(json_string_value(fmt), PLACE_GNN_ENSEMBLE_FORMAT)) {
		rc = load_ensemble(g, path, root, err);
		json_decref(root);
		return rc;
	}
	json_decref(root); /* a single model: gnn-infer reads and checks it */
	g->member[0].model = load_model(path, err);
	if (!g->member[0].model)
		return -1;
	g->nmembers = 1;
	return 0;
}

static int alloc_member(place_gnn *g, place_gnn_member *m, size_t nv, const char *path,
			topo_error *err)
{
	gnn_error ge;

	m->ctx = gnn_ctx_create(m->model, nv, (size_t)place_features_max_edges(g->feat),
				(size_t)g->max_sets, &ge);
	if (!m->ctx) {
		topo_error_set(err, path, 0, "%s", ge.text);
		return -1;
	}
	m->emb = malloc((nv * gnn_model_embed_dim(m->model) + 1) * sizeof(float));
	m->sub_emb = malloc((nv * gnn_model_embed_dim(m->model) + 1) * sizeof(float));
	m->scores = malloc(((size_t)g->max_sets + 1) * sizeof(float));
	if ((size_t)g->hops < gnn_model_hops(m->model))
		g->hops = (int)gnn_model_hops(m->model);
	if (!m->emb || !m->sub_emb || !m->scores) {
		topo_error_set(err, path, 0, "out of memory loading the GNN scorer");
		return -1;
	}
	return 0;
}

static int alloc_sub(place_gnn_sub *sb, size_t nv, size_t ne)
{
	sb->embedded = calloc(nv + 1, sizeof(unsigned));
	sb->in_sub = calloc(nv + 1, sizeof(unsigned));
	sb->id = malloc((nv + 1) * sizeof(int32_t));
	sb->vertex = malloc((nv + 1) * sizeof(int32_t));
	sb->off = malloc((nv + 1) * sizeof(int32_t));
	sb->nbr = malloc((ne + 1) * sizeof(int32_t));
	sb->w = malloc((ne + 1) * sizeof(float));
	sb->feat = malloc((nv * PLACE_FEAT_VERTEX + 1) * sizeof(float));
	return sb->embedded && sb->in_sub && sb->id && sb->vertex && sb->off && sb->nbr && sb->w &&
			       sb->feat
		       ? 0
		       : -1;
}

place_gnn *place_gnn_new(const place_cluster *c, const char *model_path, int max_sets,
			 double frag_weight, double hop_latency_us, topo_error *err)
{
	place_gnn *g = calloc(1, sizeof(*g));
	size_t nv, H = (size_t)place_cluster_nhosts(c);

	topo_error_clear(err);
	if (!g)
		goto oom;
	g->c = c;
	g->max_sets = max_sets > 0 ? max_sets : 1;
	if (!(g->path = strdup(model_path)))
		goto oom;
	if (load_models(g, model_path, err)) {
		place_gnn_free(g);
		return NULL;
	}
	g->feat = place_features_new(c, frag_weight, hop_latency_us);
	if (!g->feat)
		goto oom;
	nv = (size_t)place_features_max_vertices(g->feat);
	for (int m = 0; m < g->nmembers; m++) {
		if (alloc_member(g, &g->member[m], nv, model_path, err)) {
			place_gnn_free(g);
			return NULL;
		}
		g->ctxs[m] = g->member[m].ctx;
		g->embs[m] = g->member[m].emb;
		g->sub_embs[m] = g->member[m].sub_emb;
	}
	if (alloc_sub(&g->sub, nv, (size_t)place_features_max_edges(g->feat)))
		goto oom;
	g->vfeat = malloc((nv * PLACE_FEAT_VERTEX + 1) * sizeof(float));
	g->sfeat = malloc(((size_t)g->max_sets * PLACE_FEAT_SET + 1) * sizeof(float));
	g->mean = malloc(((size_t)g->max_sets + 1) * sizeof(double));
	g->votes = malloc(((size_t)g->max_sets + 1) * sizeof(int));
	g->set_off = malloc(((size_t)g->max_sets + 1) * sizeof(int32_t));
	g->members = malloc(((size_t)g->max_sets * H + 1) * sizeof(int32_t));
	if (!g->vfeat || !g->sfeat || !g->mean || !g->votes || !g->set_off || !g->members)
		goto oom;
	return g;
oom:
	place_gnn_free(g);
	topo_error_set(err, model_path, 0, "out of memory loading the GNN scorer");
	return NULL;
}

unsigned long place_gnn_refreshes(const place_gnn *g)
{
	return g->refreshes;
}

int place_gnn_nmodels(const place_gnn *g)
{
	return g->nmembers;
}

void place_gnn_set_full_refresh(place_gnn *g, int on)
{
	g->full_refresh = on;
}

/* The reference refresh: every member on every vertex on its own. */
static int embed_members(place_gnn *g, const gnn_graph *gr, char *reason, size_t len)
{
	for (int m = 0; m < g->nmembers; m++)
		if (gnn_embed(g->ctxs[m], gr, g->vfeat, g->embs[m]) < 0) {
			snprintf(reason, len, "gnn: %s", gnn_ctx_error(g->ctxs[m])->text);
			return -1;
		}
	return 0;
}

/* Vertex v into the on-demand graph, once per build. */
static void sub_add(place_gnn_sub *sb, int32_t v, int *n)
{
	if (sb->in_sub[v] == sb->mark)
		return;
	sb->in_sub[v] = sb->mark;
	sb->id[v] = *n;
	sb->vertex[(*n)++] = v;
}

/* Every member's embeddings of the types that the n candidates' hosts map
 * to and this state version has not embedded yet. Those types come first
 * in a graph of their own, then ring after ring of neighbours out to the
 * models' reach (g->hops edges): a type's embedding depends on nothing
 * farther. Vertices short of the last ring keep all their entries, in the
 * state's order, so every sum and maximum is taken as over the whole graph
 * and the embeddings are the same bits (tests: test_fast_refresh_matches_full);
 * the last ring is input only. The first layer's aggregation is shared by
 * the members (gnn_embed_ensemble). */
static int embed_types(place_gnn *g, const place_candidate *cands, int n, char *reason,
		       size_t len)
{
	place_gnn_sub *sb = &g->sub;
	const int32_t *vertex = place_features_host_vertex(g->feat);
	const int32_t *off = place_features_offsets(g->feat);
	const int32_t *nbr = place_features_neighbours(g->feat);
	const float *w = place_features_weights(g->feat);
	int nsub = 0, nout, ring = 0, linked;
	gnn_graph sg;

	if (++sb->mark == 0) { /* wrapped: no stale marks */
		memset(sb->in_sub, 0, (size_t)place_features_max_vertices(g->feat) * sizeof(unsigned));
		sb->mark = 1;
	}
	for (int i = 0; i < n; i++)
		for (int k = 0; k < cands[i].nhosts; k++) {
			int32_t t = vertex[cands[i].hosts[k]];

			if (sb->embedded[t] != sb->version)
				sub_add(sb, t, &nsub);
		}
	nout = nsub;
	if (nout == 0)
		return 0;
	for (int d = 0; d < g->hops; d++) { /* ring d + 1: the neighbours of ring d */
		int end = nsub;

		for (int i = ring; i < end; i++)
			for (int32_t e = off[sb->vertex[i]]; e < off[sb->vertex[i] + 1]; e++)
				sub_add(sb, nbr[e], &nsub);
		ring = end;
	}
	linked = ring; /* [0, linked): all entries; the last ring: none */
	sb->off[0] = 0;
	for (int i = 0; i < nsub; i++) {
		int32_t v = sb->vertex[i], at = sb->off[i];

		for (int32_t e = off[v]; i < linked && e < off[v + 1]; e++, at++) {
			sb->nbr[at] = sb->id[nbr[e]];
			sb->w[at] = w[e];
		}
		sb->off[i + 1] = at;
		memcpy(sb->feat + (size_t)i * PLACE_FEAT_VERTEX, g->vfeat + (size_t)v * PLACE_FEAT_VERTEX,
		       PLACE_FEAT_VERTEX * sizeof(float));
	}
	sg = (gnn_graph){ .n_vertices = (size_t)nsub, .offsets = sb->off, .neighbours = sb->nbr,
			  .edge_weights = sb->w };
	if (gnn_embed_ensemble(g->ctxs, (size_t)g->nmembers, &sg, sb->feat, (size_t)nout,
			       g->sub_embs) < 0) {
		snprintf(reason, len, "gnn: %s", gnn_ctx_error(g->ctxs[0])->text);
		return -1;
	}
	for (int m = 0; m < g->nmembers; m++) {
		size_t dim = gnn_model_embed_dim(g->member[m].model);

		for (int i = 0; i < nout; i++)
			memcpy(g->embs[m] + (size_t)sb->vertex[i] * dim, g->sub_embs[m] + (size_t)i * dim,
			       dim * sizeof(float));
	}
	for (int i = 0; i < nout; i++)
		sb->embedded[sb->vertex[i]] = sb->version;
	return 0;
}

static int place_gnn_prepare(void *ctx, const place_cluster *c, const place_state *s, char *reason,
		       size_t len)
{
	place_gnn *g = ctx;
	gnn_graph gr;

	(void)c;
	g->ready = 0;
	place_features_vertices(g->feat, s, g->vfeat);
	gr.n_vertices = (size_t)place_features_nvertices(g->feat);
	gr.offsets = place_features_offsets(g->feat);
	gr.neighbours = place_features_neighbours(g->feat);
	gr.edge_weights = place_features_weights(g->feat);
	g->refreshes++;
	if (++g->sub.version == 0) { /* wrapped: no stale marks */
		memset(g->sub.embedded, 0,
		       (size_t)place_features_max_vertices(g->feat) * sizeof(unsigned));
		g->sub.version = 1;
	}
	g->all_embedded = g->full_refresh;
	if (g->all_embedded && embed_members(g, &gr, reason, len))
		return -1;
	g->ready = 1;
	return 0;
}

/* Each member's scores, their mean, and each member's top pick's vote. */
static int score_members(place_gnn *g, const gnn_sets *sets, int n, char *reason, size_t len)
{
	for (int i = 0; i < n; i++) {
		g->mean[i] = 0;
		g->votes[i] = 0;
	}
	for (int m = 0; m < g->nmembers; m++) {
		place_gnn_member *mb = &g->member[m];
		int top = 0;

		if (gnn_score_sets(mb->ctx, mb->emb, sets, g->sfeat, mb->scores) < 0) {
			snprintf(reason, len, "gnn: %s", gnn_ctx_error(mb->ctx)->text);
			return -1;
		}
		for (int i = 0; i < n; i++) {
			g->mean[i] += (double)mb->scores[i] / g->nmembers;
			if (mb->scores[i] > mb->scores[top])
				top = i;
		}
		g->votes[top]++;
	}
	return 0;
}

/* Costs: minus the members' mean score. With several members the
 * placement leaves Slurm's tree choice only when at least `agreement` of
 * them rank the same other candidate first: otherwise the tree candidate
 * is made the cheapest. confidence = share of members whose top pick the
 * candidate is. */
static void ensemble_costs(place_gnn *g, place_candidate *cands, int n)
{
	int pick = 0, tree = -1;

	for (int i = 0; i < n; i++) {
		cands[i].cost = -g->mean[i];
		cands[i].confidence = (double)g->votes[i] / g->nmembers;
		if (cands[i].tree && tree < 0)
			tree = i;
		if (g->votes[i] > g->votes[pick] ||
		    (g->votes[i] == g->votes[pick] && g->mean[i] > g->mean[pick]))
			pick = i;
	}
	if (g->nmembers < 2)
		return; /* one model: its scores are the costs */
	if (tree >= 0 && g->votes[pick] < g->agreement * g->nmembers - 1e-9)
		pick = tree; /* the members disagree: stay with Slurm's choice */
	for (int i = 0; i < n; i++) /* the pick is the cheapest */
		if (i != pick && cands[i].cost <= cands[pick].cost)
			cands[pick].cost = cands[i].cost - 1e-6;
}

static int place_gnn_score(void *ctx, const place_cluster *c, const place_state *s,
		     const place_request *r, place_candidate *cands, int n, char *reason,
		     size_t len)
{
	place_gnn *g = ctx;
	gnn_sets sets;
	int32_t at = 0;
	const int32_t *vertex = place_features_host_vertex(g->feat);

	(void)c;
	if (!g->ready) {
		snprintf(reason, len, "gnn: no embeddings for this state");
		return -1;
	}
	if (n > g->max_sets) {
		snprintf(reason, len, "gnn: %d candidates, the scorer was sized for %d", n,
			 g->max_sets);
		return -1;
	}
	if (n == 0)
		return 0;
	if (!g->all_embedded && embed_types(g, cands, n, reason, len))
		return -1;
	place_features_sets(g->feat, s, r, cands, n, g->sfeat);
	for (int i = 0; i < n; i++) {
		g->set_off[i] = at;
		for (int k = 0; k < cands[i].nhosts; k++)
			g->members[at++] = vertex[cands[i].hosts[k]];
	}
	g->set_off[n] = at;
	sets.n_sets = (size_t)n;
	sets.offsets = g->set_off;
	sets.members = g->members;
	sets.n_vertices = (size_t)place_features_nvertices(g->feat);
	if (score_members(g, &sets, n, reason, len))
		return -1;
	/* comm_time_s and frag_cost stay the analytic model's (features) */
	ensemble_costs(g, cands, n);
	return 0;
}

void place_gnn_scorer(place_gnn *g, place_scorer *out)
{
	*out = (place_scorer){ .name = "gnn", .prepare = place_gnn_prepare, .score = place_gnn_score,
			       .ctx = g, .model = g->path };
	if (g->has_hold)
		out->hold = (place_hold_gate){ .p = place_hold_p, .ctx = &g->hold };
}

static void place_gnn_destroy(void *ctx)
{
	place_gnn_free(ctx);
}

int place_gnn_register(place_engine *e, const char *model_path, topo_error *err)
{
	const place_config *cfg = place_engine_config(e);
	place_scorer sc;
	place_gnn *g;

	topo_error_clear(err);
	if (!model_path)
		return 0;
	g = place_gnn_new(place_engine_cluster(e), model_path, cfg->candidates + 1,
			  cfg->frag_weight, cfg->hop_latency_us, err);
	if (!g)
		return -1;
	place_gnn_scorer(g, &sc);
	sc.destroy = place_gnn_destroy;
	if (place_engine_set_scorer(e, PLACE_POLICY_GNN, &sc) < 0) {
		place_gnn_free(g);
		topo_error_set(err, model_path, 0, "the engine refused the GNN scorer");
		return -1;
	}
	return 0;
}
