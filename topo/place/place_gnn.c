/*
 * place_gnn: the `gnn` scorer (see place_gnn.h): place_features for the
 * graph and features, gnn-infer for the maths.
 */
#include "place_gnn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gnn_infer.h"
#include "gnn_model.h"
#include "place_features.h"

struct place_gnn {
	const place_cluster *c;
	place_features *feat;
	gnn_model *model;
	gnn_ctx *ctx;
	int max_sets;
	float *vfeat;     /* nvertices x PLACE_FEAT_VERTEX */
	float *emb;       /* nvertices x embed dim */
	float *sfeat;     /* max_sets x PLACE_FEAT_SET */
	float *scores;    /* max_sets */
	int32_t *set_off; /* max_sets + 1 */
	int32_t *members; /* max_sets x nhosts */
	unsigned long refreshes;
	int ready;        /* embeddings valid */
};

void place_gnn_free(place_gnn *g)
{
	if (!g)
		return;
	gnn_ctx_free(g->ctx);
	gnn_model_free(g->model);
	place_features_free(g->feat);
	free(g->vfeat);
	free(g->emb);
	free(g->sfeat);
	free(g->scores);
	free(g->set_off);
	free(g->members);
	free(g);
}

/* Model load and feature check; errors name the file and the problem. */
static int load_model(place_gnn *g, const char *path, topo_error *err)
{
	gnn_error ge;

	g->model = gnn_model_load(path, &ge);
	if (!g->model) {
		topo_error_set(err, path, 0, "%s%s%s", ge.path[0] ? ge.path : "",
			       ge.path[0] ? ": " : "", ge.text);
		return -1;
	}
	if (gnn_model_check_features(g->model, GNN_VERTEX_FEATURES, place_feature_vertex_names,
				     PLACE_FEAT_VERTEX, &ge) ||
	    gnn_model_check_features(g->model, GNN_SET_FEATURES, place_feature_set_names,
				     PLACE_FEAT_SET, &ge)) {
		topo_error_set(err, path, 0,
			       "the model was trained on other features than this topognn builds "
			       "(%s); retrain it with topognn-sim --emit-training",
			       ge.text);
		return -1;
	}
	return 0;
}

place_gnn *place_gnn_new(const place_cluster *c, const char *model_path, int max_sets,
			 double frag_weight, double hop_latency_us, topo_error *err)
{
	place_gnn *g = calloc(1, sizeof(*g));
	size_t nv, dim, H = (size_t)place_cluster_nhosts(c);
	gnn_error ge;

	topo_error_clear(err);
	if (!g)
		goto oom;
	g->c = c;
	g->max_sets = max_sets > 0 ? max_sets : 1;
	if (load_model(g, model_path, err)) {
		place_gnn_free(g);
		return NULL;
	}
	g->feat = place_features_new(c, frag_weight, hop_latency_us);
	if (!g->feat)
		goto oom;
	nv = (size_t)place_features_max_vertices(g->feat);
	dim = gnn_model_embed_dim(g->model);
	g->ctx = gnn_ctx_create(g->model, nv, (size_t)place_features_max_edges(g->feat),
				(size_t)g->max_sets, &ge);
	if (!g->ctx) {
		topo_error_set(err, model_path, 0, "%s", ge.text);
		place_gnn_free(g);
		return NULL;
	}
	g->vfeat = malloc((nv * PLACE_FEAT_VERTEX + 1) * sizeof(float));
	g->emb = malloc((nv * dim + 1) * sizeof(float));
	g->sfeat = malloc(((size_t)g->max_sets * PLACE_FEAT_SET + 1) * sizeof(float));
	g->scores = malloc(((size_t)g->max_sets + 1) * sizeof(float));
	g->set_off = malloc(((size_t)g->max_sets + 1) * sizeof(int32_t));
	g->members = malloc(((size_t)g->max_sets * H + 1) * sizeof(int32_t));
	if (!g->vfeat || !g->emb || !g->sfeat || !g->scores || !g->set_off || !g->members)
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

static int gnn_prepare(void *ctx, const place_cluster *c, const place_state *s, char *reason,
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
	if (gnn_embed(g->ctx, &gr, g->vfeat, g->emb) < 0) {
		snprintf(reason, len, "gnn: %s", gnn_ctx_error(g->ctx)->text);
		return -1;
	}
	g->ready = 1;
	return 0;
}

static int gnn_score(void *ctx, const place_cluster *c, const place_state *s,
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
	if (n > 0 && gnn_score_sets(g->ctx, g->emb, &sets, g->sfeat, g->scores) < 0) {
		snprintf(reason, len, "gnn: %s", gnn_ctx_error(g->ctx)->text);
		return -1;
	}
	/* comm_time_s and frag_cost stay the analytic model's (features) */
	for (int i = 0; i < n; i++)
		cands[i].cost = -(double)g->scores[i];
	return 0;
}

void place_gnn_scorer(place_gnn *g, place_scorer *out)
{
	out->name = "gnn";
	out->prepare = gnn_prepare;
	out->score = gnn_score;
	out->ctx = g;
}
