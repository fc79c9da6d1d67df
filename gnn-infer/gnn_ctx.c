/*
 * gnn_ctx: running a model — the inference context, its scratch buffers and
 * the hot-path calls gnn_embed (and its variants) and gnn_score_sets.
 *
 * At creation the layer list is turned into a plan of steps in which an
 * activation directly after a linear, sage or gin layer is fused into it (so
 * each row is activated while still in cache), and every buffer is sized for
 * the limits given. The hot path only checks its input and runs the plan.
 *
 * When only the first vertices' embeddings are wanted (gnn_embed_first),
 * each step computes only the rows a later step reads: the wanted rows,
 * and before a graph layer also their neighbours, as a prefix [0, n) of
 * the vertices. Rows are computed independently, so the rows computed are
 * bit for bit those of a full pass.
 */
#include "gnn_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct gnn_step {
	const struct gnn_layer *layer;
	enum gnn_act act; /* fused activation, or the activation itself for a bare one */
};

struct gnn_ctx {
	const gnn_model *model;
	size_t max_vertices, max_edges, max_sets;
	struct gnn_step *steps; /* embed steps, then head steps */
	size_t n_embed_steps, n_head_steps;
	size_t *rows;      /* per embed step: rows [0, rows[i]) it computes */
	float *vbuf[2];    /* max_vertices x vertex width, ping-pong */
	float *vscratch;   /* max(max_vertices, GNN_SCRATCH_ROWS) x vertex width */
	float *sbuf[2];    /* max_sets x head width, ping-pong */
	float *set_norm;   /* max_sets x set features, normalised */
	gnn_error error;
};

/* Steps for layers [first, last): fuse an activation into the layer before. */
static size_t plan(const gnn_model *m, size_t first, size_t last, struct gnn_step *steps)
{
	size_t i, n = 0;

	for (i = first; i < last; i++) {
		const struct gnn_layer *l = &m->layers[i];
		int fusable = l->kind == GNN_LINEAR || l->kind == GNN_SAGE || l->kind == GNN_GIN;

		steps[n].layer = l;
		steps[n].act = gnn_act_of(l->kind);
		if (fusable && i + 1 < last && gnn_act_of(m->layers[i + 1].kind) != GNN_ACT_NONE)
			steps[n].act = gnn_act_of(m->layers[++i].kind);
		n++;
	}
	return n;
}

void gnn_ctx_free(gnn_ctx *ctx)
{
	if (!ctx)
		return;
	free(ctx->steps);
	free(ctx->rows);
	free(ctx->vbuf[0]);
	free(ctx->vbuf[1]);
	free(ctx->vscratch);
	free(ctx->sbuf[0]);
	free(ctx->sbuf[1]);
	free(ctx->set_norm);
	free(ctx);
}

gnn_ctx *gnn_ctx_create(const gnn_model *m, size_t max_vertices, size_t max_edges,
			size_t max_sets, gnn_error *err)
{
	gnn_ctx *ctx = calloc(1, sizeof(*ctx));
	const size_t mw = gnn_model_max_width(m, 0, m->readout + 1);
	const size_t vw = mw > gnn_sage_stride(m->vertex.n) ? mw : gnn_sage_stride(m->vertex.n);
	const size_t sw = gnn_model_max_width(m, m->readout, m->n_layers);
	const size_t nv = max_vertices ? max_vertices : 1, ns = max_sets ? max_sets : 1;

	if (!ctx || max_edges > INT32_MAX || max_vertices > INT32_MAX ||
	    nv > SIZE_MAX / (GNN_SCRATCH_ROWS * vw) || ns > SIZE_MAX / (sw + m->set.n + 1))
		goto fail;
	ctx->model = m;
	ctx->max_vertices = nv;
	ctx->max_edges = max_edges;
	ctx->max_sets = ns;
	ctx->steps = calloc(m->n_layers, sizeof(*ctx->steps));
	ctx->rows = calloc(m->n_layers + 1, sizeof(*ctx->rows));
	ctx->vbuf[0] = gnn_alloc_floats(nv * vw);
	ctx->vbuf[1] = gnn_alloc_floats(nv * vw);
	ctx->vscratch = gnn_alloc_floats(nv > GNN_SCRATCH_ROWS ? nv * vw : GNN_SCRATCH_ROWS * vw);
	ctx->sbuf[0] = gnn_alloc_floats(ns * sw);
	ctx->sbuf[1] = gnn_alloc_floats(ns * sw);
	ctx->set_norm = gnn_alloc_floats(ns * (m->set.n + 1));
	if (!ctx->steps || !ctx->rows || !ctx->vbuf[0] || !ctx->vbuf[1] || !ctx->vscratch || !ctx->sbuf[0] ||
	    !ctx->sbuf[1] || !ctx->set_norm)
		goto fail;
	ctx->n_embed_steps = plan(m, 0, m->readout, ctx->steps);
	ctx->n_head_steps = plan(m, m->readout + 1, m->n_layers, ctx->steps + ctx->n_embed_steps);
	return ctx;
fail:
	gnn_ctx_free(ctx);
	gnn_error_set(err, NULL, NULL,
		      "cannot allocate a context for %zu vertices, %zu edges and %zu sets",
		      max_vertices, max_edges, max_sets);
	return NULL;
}

const gnn_error *gnn_ctx_error(const gnn_ctx *ctx)
{
	return &ctx->error;
}

/* Entries checked per chunk by first_bad_edge. */
#define CHECK_CHUNK 512

/* The first CSR entry with a neighbour that is not a vertex or a weight that
 * is not finite, or the number of entries if none. Every gnn_embed pays for
 * this scan, so each chunk is tested without branches (a loop compilers
 * vectorize; x - x is 0 for finite x, NaN otherwise) and only a failing
 * chunk is searched entry by entry. */
static size_t first_bad_edge(const gnn_graph *g)
{
	const size_t count = (size_t)g->offsets[g->n_vertices];
	const uint32_t n = (uint32_t)g->n_vertices; /* <= INT32_MAX, checked before */
	const int32_t *nb = g->neighbours;
	const float *w = g->edge_weights;
	size_t lo, e, j;

	for (lo = 0; lo + CHECK_CHUNK <= count; lo += CHECK_CHUNK) {
		uint32_t bad = 0;

		for (j = 0; j < CHECK_CHUNK; j++) /* a negative index wraps to >= n */
			bad |= (uint32_t)nb[lo + j] >= n;
		for (j = 0; w && j < CHECK_CHUNK; j++)
			bad |= w[lo + j] - w[lo + j] != 0.0f;
		if (bad)
			break;
	}
	for (e = lo; e < count; e++)
		if ((uint32_t)nb[e] >= n || (w && !isfinite(w[e])))
			return e;
	return count;
}

int gnn_graph_check(const gnn_graph *g, size_t max_vertices, size_t max_edges, gnn_error *err)
{
	size_t i, e;

	if (g->n_vertices > max_vertices)
		return gnn_error_set(err, NULL, "n_vertices",
				     "%zu vertices exceed the context's %zu", g->n_vertices,
				     max_vertices), -1;
	if (g->n_vertices > INT32_MAX || g->offsets[0] != 0)
		return gnn_error_set(err, NULL, "offsets[0]", "must be 0"), -1;
	for (i = 0; i < g->n_vertices; i++)
		if (g->offsets[i + 1] < g->offsets[i])
			return gnn_error_set(err, NULL, "offsets", "offsets[%zu] is below offsets[%zu]",
					     i + 1, i), -1;
	if ((size_t)g->offsets[g->n_vertices] > max_edges)
		return gnn_error_set(err, NULL, "offsets", "%d edges exceed the context's %zu",
				     g->offsets[g->n_vertices], max_edges), -1;
	e = first_bad_edge(g);
	if (e == (size_t)g->offsets[g->n_vertices])
		return 0;
	if (g->neighbours[e] < 0 || (size_t)g->neighbours[e] >= g->n_vertices)
		return gnn_error_set(err, NULL, "neighbours", "neighbours[%zu] = %d is not a vertex",
				     e, g->neighbours[e]), -1;
	return gnn_error_set(err, NULL, "edge_weights", "edge_weights[%zu] is not finite", e), -1;
}

int gnn_sets_check(const gnn_sets *s, size_t max_sets, gnn_error *err)
{
	size_t i, e;

	if (s->n_sets > max_sets)
		return gnn_error_set(err, NULL, "n_sets", "%zu sets exceed the context's %zu",
				     s->n_sets, max_sets), -1;
	if (s->offsets[0] != 0)
		return gnn_error_set(err, NULL, "offsets[0]", "must be 0"), -1;
	for (i = 0; i < s->n_sets; i++)
		if (s->offsets[i + 1] < s->offsets[i])
			return gnn_error_set(err, NULL, "offsets", "offsets[%zu] is below offsets[%zu]",
					     i + 1, i), -1;
	for (e = 0; e < (size_t)s->offsets[s->n_sets]; e++)
		if (s->members[e] < 0 || (size_t)s->members[e] >= s->n_vertices)
			return gnn_error_set(err, NULL, "members", "members[%zu] = %d is not a vertex",
					     e, s->members[e]), -1;
	return 0;
}

/* Run steps on the input in bufs[cur], step i over rows [0, rows[i]) (or
 * all n rows when rows is NULL); the last step writes `out`. */
static void run_plan(gnn_ctx *ctx, const struct gnn_step *steps, size_t n_steps,
		     const size_t *rows, const gnn_graph *g, size_t n, float *bufs[2], int cur,
		     float *out)
{
	size_t i;

	for (i = 0; i < n_steps; i++) {
		float *dst = i + 1 == n_steps ? out : bufs[!cur];

		gnn_layer_forward(ctx->model, steps[i].layer, steps[i].act, g, rows ? rows[i] : n,
				  bufs[cur], dst, ctx->vscratch);
		cur = !cur;
	}
}

static int is_graph_layer(const struct gnn_layer *l)
{
	return l->kind == GNN_SAGE || l->kind == GNN_GIN;
}

/* ctx->rows for embeddings of rows [0, n_out): walking back from the last
 * step, a graph step's input is needed on its rows and their neighbours. */
static void plan_rows(gnn_ctx *ctx, const gnn_graph *g, size_t n_out)
{
	size_t i = ctx->n_embed_steps, n = n_out;

	while (i-- > 0) {
		ctx->rows[i] = n;
		if (i > 0 && is_graph_layer(ctx->steps[i].layer)) {
			int32_t e, hi = g->offsets[n];

			for (e = 0; e < hi; e++)
				if ((size_t)g->neighbours[e] >= n)
					n = (size_t)g->neighbours[e] + 1;
		}
	}
}

/* Whether a and b have their graph layers at the same embed steps: then
 * plan_rows gives them the same rows (an ensemble's members usually do, and
 * the scan of the graph is made once). */
static int same_graph_steps(const gnn_ctx *a, const gnn_ctx *b)
{
	size_t i;

	if (a->n_embed_steps != b->n_embed_steps)
		return 0;
	for (i = 0; i < a->n_embed_steps; i++)
		if (is_graph_layer(a->steps[i].layer) != is_graph_layer(b->steps[i].layer))
			return 0;
	return 1;
}

/* Embed steps from `first` on, the input in ctx->vbuf[cur]. */
static void run_embed(gnn_ctx *ctx, const gnn_graph *g, size_t first, int cur, float *out)
{
	run_plan(ctx, ctx->steps + first, ctx->n_embed_steps - first, ctx->rows + first, g, 0,
		 ctx->vbuf, cur, out);
}

/* Whether g fits ctx's limits; the full check of the graph is done once by
 * the caller. */
static int graph_fits(gnn_ctx *ctx, const gnn_graph *g, size_t n_out)
{
	if (n_out > g->n_vertices)
		return gnn_error_set(&ctx->error, NULL, "n_out",
				     "%zu embeddings asked of a graph of %zu vertices", n_out,
				     g->n_vertices), 0;
	if (g->n_vertices > ctx->max_vertices || (size_t)g->offsets[g->n_vertices] > ctx->max_edges)
		return gnn_graph_check(g, ctx->max_vertices, ctx->max_edges, &ctx->error), 0;
	return 1;
}

/* One model on its own: normalise, then every embed step. */
static int embed_one(gnn_ctx *ctx, const gnn_graph *g, const float *features, size_t n_out,
		     float *out)
{
	const gnn_model *m = ctx->model;

	gnn_error_clear(&ctx->error);
	if (gnn_graph_check(g, ctx->max_vertices, ctx->max_edges, &ctx->error) ||
	    !graph_fits(ctx, g, n_out))
		return -1;
	gnn_normalise(features, g->n_vertices, m->vertex.n, m->vertex.mean, m->vertex.std,
		      ctx->vbuf[0], m->vertex.n);
	if (ctx->n_embed_steps == 0) {
		memcpy(out, ctx->vbuf[0], n_out * gnn_model_embed_dim(m) * sizeof(*out));
		return 0;
	}
	plan_rows(ctx, g, n_out);
	run_embed(ctx, g, 0, 0, out);
	return 0;
}

int gnn_embed_first(gnn_ctx *ctx, const gnn_graph *g, const float *features, size_t n_out,
		    float *out)
{
	return gnn_embed_ensemble(&ctx, 1, g, features, n_out, &out);
}

int gnn_embed(gnn_ctx *ctx, const gnn_graph *g, const float *features, float *out)
{
	return gnn_embed_first(ctx, g, features, g->n_vertices, out);
}

/* Whether the models of ctxs normalise vertex features alike and start
 * with a GraphSAGE layer of the same input width: then that layer's
 * neighbour aggregation is the same for all. One model gains only when its
 * rows are padded for the aggregation (see gnn_sage_stride). */
static int first_layer_shared(gnn_ctx *const *ctxs, size_t n)
{
	const gnn_model *a = ctxs[0]->model;
	size_t i;

	if (n > GNN_ENSEMBLE_MAX || ctxs[0]->n_embed_steps == 0 ||
	    ctxs[0]->steps[0].layer->kind != GNN_SAGE || ctxs[0]->steps[0].layer->in != a->vertex.n)
		return 0;
	if (n == 1)
		return gnn_sage_stride(a->vertex.n) != a->vertex.n;
	for (i = 1; i < n; i++) {
		const gnn_model *b = ctxs[i]->model;

		if (ctxs[i]->n_embed_steps == 0 || ctxs[i]->steps[0].layer->kind != GNN_SAGE ||
		    ctxs[i]->steps[0].layer->in != ctxs[0]->steps[0].layer->in ||
		    b->vertex.n != a->vertex.n ||
		    memcmp(b->vertex.mean, a->vertex.mean, a->vertex.n * sizeof(float)) ||
		    memcmp(b->vertex.std, a->vertex.std, a->vertex.n * sizeof(float)))
			return 0;
	}
	return 1;
}

/* Report ctxs[bad]'s error on every context. */
static int fail_all(gnn_ctx *const *ctxs, size_t n, size_t bad)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (i != bad)
			ctxs[i]->error = ctxs[bad]->error;
	return -1;
}

int gnn_embed_ensemble(gnn_ctx *const *ctxs, size_t n, const gnn_graph *g,
		       const float *features, size_t n_out, float *const *outs)
{
	struct gnn_sage_out o[GNN_ENSEMBLE_MAX];
	size_t i, rows0 = 0, in, stride;

	if (n == 0)
		return 0;
	if (!first_layer_shared(ctxs, n)) {
		for (i = 0; i < n; i++)
			if (embed_one(ctxs[i], g, features, n_out, outs[i]))
				return fail_all(ctxs, n, i);
		return 0;
	}
	in = ctxs[0]->model->vertex.n;
	stride = gnn_sage_stride(in);
	for (i = 0; i < n; i++)
		gnn_error_clear(&ctxs[i]->error);
	if (gnn_graph_check(g, ctxs[0]->max_vertices, ctxs[0]->max_edges, &ctxs[0]->error))
		return fail_all(ctxs, n, 0);
	for (i = 0; i < n; i++) {
		if (!graph_fits(ctxs[i], g, n_out))
			return fail_all(ctxs, n, i);
		if (i > 0 && same_graph_steps(ctxs[0], ctxs[i]))
			memcpy(ctxs[i]->rows, ctxs[0]->rows, ctxs[0]->n_embed_steps * sizeof(size_t));
		else
			plan_rows(ctxs[i], g, n_out);
		if (ctxs[i]->rows[0] > rows0)
			rows0 = ctxs[i]->rows[0];
	}
	gnn_normalise(features, g->n_vertices, in, ctxs[0]->model->vertex.mean,
		      ctxs[0]->model->vertex.std, ctxs[0]->vbuf[0], stride);
	for (i = 0; i < n; i++) {
		const struct gnn_step *st = &ctxs[i]->steps[0];
		const float *p = ctxs[i]->model->params;

		o[i].out = st->layer->out;
		o[i].w = p + st->layer->w;
		o[i].b = p + st->layer->b;
		o[i].y = ctxs[i]->n_embed_steps == 1 ? outs[i] : ctxs[i]->vbuf[1];
		o[i].act = st->act;
		ctxs[i]->rows[0] = rows0;
	}
	gnn_sage_forward_shared(g, rows0, ctxs[0]->vbuf[0], stride, in, o, n, ctxs[0]->vscratch);
	for (i = 0; i < n; i++)
		run_embed(ctxs[i], g, 1, 1, outs[i]);
	return 0;
}

int gnn_score_sets(gnn_ctx *ctx, const float *embeddings, const gnn_sets *sets,
		   const float *set_features, float *out)
{
	const gnn_model *m = ctx->model;

	gnn_error_clear(&ctx->error);
	if (gnn_sets_check(sets, ctx->max_sets, &ctx->error))
		return -1;
	gnn_normalise(set_features, sets->n_sets, m->set.n, m->set.mean, m->set.std,
		      ctx->set_norm, m->set.n);
	gnn_readout_forward(embeddings, gnn_model_embed_dim(m), sets, ctx->set_norm, m->set.n,
			    ctx->sbuf[0]);
	if (ctx->n_head_steps == 0)
		memcpy(out, ctx->sbuf[0], sets->n_sets * sizeof(*out));
	else
		run_plan(ctx, ctx->steps + ctx->n_embed_steps, ctx->n_head_steps, NULL, NULL,
			 sets->n_sets, ctx->sbuf, 0, out);
	return 0;
}
