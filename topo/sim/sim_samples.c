/*
 * sim_samples: the training sample file, both ends (see sim_samples.h).
 *
 * Writing: the simulator's sampled decisions (sim_training.c) and
 * placement-report's history export collect sim_sample_sets, one per
 * decision (the cluster state as the gnn scorer's graph, and per candidate
 * its vertex set, set features and target), and write them as one
 * "topognn-samples" JSON document. Reading: topognn-train loads such files
 * into gnn_train_graph views over owned arrays; every rejection names the
 * file and the JSON path of the offending value. One module, so the
 * format's two ends cannot drift apart (tests/test_gnn_samples.c writes a
 * file here and reads it back).
 */
#include "sim_samples.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "place_features.h"
#include "topo_io.h"
#include "topo_json.h"

/* ---- writing ------------------------------------------------------------------ */

struct sim_samples {
	sim_sample_set **sets;
	int n, cap, nsamples;
};

sim_samples *sim_samples_new(void)
{
	return calloc(1, sizeof(sim_samples));
}

void sim_sample_set_free(sim_sample_set *s)
{
	if (!s)
		return;
	for (int c = 0; s->sets && c < s->ncands; c++)
		free(s->sets[c]);
	free(s->sets);
	free(s->set_len);
	free(s->set_features);
	free(s->targets);
	free(s->features);
	free(s->offsets);
	free(s->neighbours);
	free(s->weights);
	free(s);
}

void sim_samples_free(sim_samples *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->n; i++)
		sim_sample_set_free(t->sets[i]);
	free(t->sets);
	free(t);
}

/* The state as the gnn scorer sees it (place_features): the static CSR
 * graph and the vertex features of the engine's state at this moment. */
int sim_sample_graph(place_features *feat, const place_state *st, sim_sample_set *ss)
{
	int nv, ne;

	ss->features = malloc(((size_t)place_features_max_vertices(feat) * PLACE_FEAT_VERTEX +
			       1) * sizeof(float));
	if (!ss->features)
		return -1;
	/* builds this state's graph (host types, see place_features.h) */
	place_features_vertices(feat, st, ss->features);
	nv = place_features_nvertices(feat);
	ne = place_features_nedges(feat);
	ss->nvertices = nv;
	ss->nentries = ne;
	ss->offsets = malloc(((size_t)nv + 1) * sizeof(int32_t));
	ss->neighbours = malloc(((size_t)ne + 1) * sizeof(int32_t));
	ss->weights = malloc(((size_t)ne + 1) * sizeof(float));
	if (!ss->offsets || !ss->neighbours || !ss->weights)
		return -1;
	memcpy(ss->offsets, place_features_offsets(feat), ((size_t)nv + 1) * sizeof(int32_t));
	memcpy(ss->neighbours, place_features_neighbours(feat), (size_t)ne * sizeof(int32_t));
	memcpy(ss->weights, place_features_weights(feat), (size_t)ne * sizeof(float));
	return 0;
}

int sim_samples_add(sim_samples *t, sim_sample_set *s)
{
	if (t->n == t->cap) {
		int cap = t->cap ? 2 * t->cap : 16;
		sim_sample_set **n = realloc(t->sets, (size_t)cap * sizeof(*n));

		if (!n) {
			sim_sample_set_free(s);
			return -1;
		}
		t->sets = n;
		t->cap = cap;
	}
	t->sets[t->n++] = s;
	t->nsamples += s->ncands;
	return 0;
}

int sim_samples_nsamples(const sim_samples *t)
{
	return t->nsamples;
}

int sim_samples_ngraphs(const sim_samples *t)
{
	return t->n;
}

static void names(FILE *f, const char *key, const char *const *v, int n)
{
	fprintf(f, "\"%s\":[", key);
	for (int i = 0; i < n; i++)
		fprintf(f, "%s\"%s\"", i ? "," : "", v[i]);
	fprintf(f, "]");
}

static void floats(FILE *f, const float *v, int n)
{
	fputc('[', f);
	for (int i = 0; i < n; i++)
		fprintf(f, "%s%.6g", i ? "," : "", (double)v[i]);
	fputc(']', f);
}

static void graph(FILE *f, const sim_sample_set *s)
{
	fprintf(f, "{\"n_vertices\":%d,\"offsets\":[", s->nvertices);
	for (int v = 0; v <= s->nvertices; v++)
		fprintf(f, "%s%d", v ? "," : "", (int)s->offsets[v]);
	fprintf(f, "],\n\"neighbours\":[");
	for (int e = 0; e < s->nentries; e++)
		fprintf(f, "%s%d", e ? "," : "", (int)s->neighbours[e]);
	fprintf(f, "],\n\"weights\":");
	floats(f, s->weights, s->nentries);
	fprintf(f, ",\n\"features\":[");
	for (int v = 0; v < s->nvertices; v++) {
		fputs(v ? "," : "", f);
		floats(f, &s->features[v * PLACE_FEAT_VERTEX], PLACE_FEAT_VERTEX);
	}
	fprintf(f, "],\n\"samples\":[");
	for (int c = 0; c < s->ncands; c++) {
		fprintf(f, "%s{\"set\":[", c ? ",\n" : "");
		for (int i = 0; i < s->set_len[c]; i++)
			fprintf(f, "%s%d", i ? "," : "", s->sets[c][i]);
		fprintf(f, "],\"set_features\":");
		floats(f, &s->set_features[c * PLACE_FEAT_SET], PLACE_FEAT_SET);
		fprintf(f, ",\"target\":%.6g}", (double)s->targets[c]);
	}
	fprintf(f, "]}");
}

int sim_samples_write(const sim_samples *t, const char *path, topo_error *err)
{
	FILE *f;

	if (t->n == 0) {
		topo_error_set(err, path, 0,
			       "no training samples were collected (no decision had two candidates)");
		return -1;
	}
	f = fopen(path, "w");
	if (!f) {
		topo_error_set(err, path, 0, "cannot write: %s", strerror(errno));
		return -1;
	}
	fprintf(f, "{\"format\":\"%s\",\"version\":%d,\n", SIM_SAMPLES_FORMAT, SIM_SAMPLES_VERSION);
	names(f, "vertex_features", place_feature_vertex_names, PLACE_FEAT_VERTEX);
	fprintf(f, ",\n");
	names(f, "set_features", place_feature_set_names, PLACE_FEAT_SET);
	fprintf(f, ",\n\"graphs\":[\n");
	for (int i = 0; i < t->n; i++) {
		fputs(i ? ",\n" : "", f);
		graph(f, t->sets[i]);
	}
	fprintf(f, "]}\n");
	if (ferror(f) | fclose(f)) {
		topo_error_set(err, path, 0, "error writing the samples");
		return -1;
	}
	return 0;
}

/* ---- reading ------------------------------------------------------------------ */

struct where {
	const char *file;
	gnn_error *err;
};

static int bad(const struct where *w, const char *text, const char *path_fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Report `text` at the JSON path built from path_fmt; returns -1. */
static int bad(const struct where *w, const char *text, const char *path_fmt, ...)
{
	char path[GNN_ERROR_PATH_LEN];
	va_list ap;

	va_start(ap, path_fmt);
	vsnprintf(path, sizeof(path), path_fmt, ap);
	va_end(ap);
	gnn_error_set(w->err, w->file, path, "%s", text);
	return -1;
}

static int read_names(const struct where *w, const json_t *root, const char *key, size_t *n,
		      char ***names)
{
	const json_t *a = json_object_get(root, key);
	size_t i;

	if (!json_is_array(a)) {
		gnn_error_set(w->err, w->file, key, "expected an array of feature names");
		return -1;
	}
	*n = json_array_size(a);
	*names = calloc(*n + 1, sizeof(**names));
	for (i = 0; *names && i < *n; i++) {
		const json_t *v = json_array_get(a, i);

		if (!json_is_string(v)) {
			char path[64];

			snprintf(path, sizeof(path), "%s[%zu]", key, i);
			gnn_error_set(w->err, w->file, path, "expected a string");
			return -1;
		}
		(*names)[i] = strdup(json_string_value(v));
	}
	return *names ? 0 : -1;
}

/* A vertex id in [0, n) from v. */
static int read_vertex(const json_t *v, size_t n, int32_t *out)
{
	if (!json_is_integer(v) || json_integer_value(v) < 0 || (size_t)json_integer_value(v) >= n)
		return -1;
	*out = (int32_t)json_integer_value(v);
	return 0;
}

static int read_csr(const struct where *w, const json_t *g, size_t gi, size_t n,
		    struct sim_samples_graph_store *st, size_t *n_edges)
{
	const json_t *off = json_object_get(g, "offsets"), *nb = json_object_get(g, "neighbours");
	const json_t *wt = json_object_get(g, "weights");
	size_t i, e;

	if (!json_is_array(off) || json_array_size(off) != n + 1)
		return bad(w, "expected n_vertices + 1 offsets", "graphs[%zu].offsets", gi);
	if (!json_is_array(nb))
		return bad(w, "expected an array of vertex ids", "graphs[%zu].neighbours", gi);
	*n_edges = json_array_size(nb);
	if (wt && (!json_is_array(wt) || json_array_size(wt) != *n_edges))
		return bad(w, "expected one weight per neighbour", "graphs[%zu].weights", gi);
	st->offsets = calloc(n + 1, sizeof(int32_t));
	st->neighbours = calloc(*n_edges + 1, sizeof(int32_t));
	st->weights = wt ? calloc(*n_edges + 1, sizeof(float)) : NULL;
	if (!st->offsets || !st->neighbours || (wt && !st->weights))
		return bad(w, "out of memory", "graphs[%zu]", gi);
	for (i = 0; i <= n; i++) {
		const json_t *v = json_array_get(off, i);

		if (!json_is_integer(v) || json_integer_value(v) < (i ? st->offsets[i - 1] : 0) ||
		    (size_t)json_integer_value(v) > *n_edges || (i == 0 && json_integer_value(v)) ||
		    (i == n && (size_t)json_integer_value(v) != *n_edges))
			return bad(w, "offsets must start at 0, not decrease and end at the neighbour count",
					  "graphs[%zu].offsets[%zu]", gi, i);
		st->offsets[i] = (int32_t)json_integer_value(v);
	}
	for (e = 0; e < *n_edges; e++) {
		if (read_vertex(json_array_get(nb, e), n, &st->neighbours[e]))
			return bad(w, "is not a vertex id", "graphs[%zu].neighbours[%zu]", gi, e);
		if (wt && !json_is_number(json_array_get(wt, e)))
			return bad(w, "expected a number", "graphs[%zu].weights[%zu]", gi, e);
		if (wt)
			st->weights[e] = (float)json_number_value(json_array_get(wt, e));
	}
	return 0;
}

/* Undirected edge list [[u, v], [u, v, weight], ...] into CSR, both ways. */
static int read_edges(const struct where *w, const json_t *edges, size_t gi, size_t n,
		      struct sim_samples_graph_store *st, size_t *n_edges)
{
	const size_t m = json_array_size(edges);
	size_t i, *fill = calloc(n + 1, sizeof(size_t));
	int weighted = 0;

	*n_edges = 2 * m;
	st->offsets = calloc(n + 1, sizeof(int32_t));
	st->neighbours = calloc(2 * m + 1, sizeof(int32_t));
	st->weights = calloc(2 * m + 1, sizeof(float));
	if (!fill || !st->offsets || !st->neighbours || !st->weights) {
		free(fill);
		return bad(w, "out of memory", "graphs[%zu]", gi);
	}
	for (i = 0; i < m; i++) {
		const json_t *e = json_array_get(edges, i);
		int32_t u, v;

		if (!json_is_array(e) || json_array_size(e) < 2 || json_array_size(e) > 3 ||
		    read_vertex(json_array_get(e, 0), n, &u) || read_vertex(json_array_get(e, 1), n, &v) ||
		    (json_array_size(e) == 3 && !json_is_number(json_array_get(e, 2)))) {
			free(fill);
			return bad(w, "expected [u, v] or [u, v, weight] with vertex ids",
					  "graphs[%zu].edges[%zu]", gi, i);
		}
		weighted |= json_array_size(e) == 3;
		fill[u]++;
		fill[v]++;
	}
	for (i = 0; i < n; i++)
		st->offsets[i + 1] = st->offsets[i] + (int32_t)fill[i];
	for (i = 0; i < n; i++)
		fill[i] = (size_t)st->offsets[i];
	for (i = 0; i < m; i++) {
		const json_t *e = json_array_get(edges, i);
		const int32_t u = (int32_t)json_integer_value(json_array_get(e, 0));
		const int32_t v = (int32_t)json_integer_value(json_array_get(e, 1));
		const float wt = json_array_size(e) == 3 ? (float)json_number_value(json_array_get(e, 2)) : 1.0f;

		st->neighbours[fill[u]] = v;
		st->weights[fill[u]++] = wt;
		st->neighbours[fill[v]] = u;
		st->weights[fill[v]++] = wt;
	}
	free(fill);
	if (!weighted) {
		free(st->weights);
		st->weights = NULL;
	}
	return 0;
}

/* rows x cols numbers (array of rows) into dst. */
static int read_rows(const struct where *w, const json_t *a, const char *what, size_t gi,
		     size_t rows, size_t cols, float *dst)
{
	size_t i, j;

	if (!json_is_array(a) || json_array_size(a) != rows)
		return bad(w, "expected one row per vertex", "graphs[%zu].features", gi);
	for (i = 0; i < rows; i++) {
		const json_t *r = json_array_get(a, i);

		if (!json_is_array(r) || json_array_size(r) != cols)
			return bad(w, "expected one number per vertex feature",
					  "graphs[%zu].%s[%zu]", gi, what, i);
		for (j = 0; j < cols; j++) {
			if (!json_is_number(json_array_get(r, j)))
				return bad(w, "expected numbers",
						  "graphs[%zu].%s[%zu]", gi, what, i);
			dst[i * cols + j] = (float)json_number_value(json_array_get(r, j));
		}
	}
	return 0;
}

static int read_samples(const struct where *w, const json_t *a, size_t gi, size_t n,
			size_t nsf, struct sim_samples_graph_store *st, size_t *count)
{
	size_t i, j, total = 0;

	if (!json_is_array(a))
		return bad(w, "expected an array of samples", "graphs[%zu].samples", gi);
	*count = json_array_size(a);
	for (i = 0; i < *count; i++)
		total += json_array_size(json_object_get(json_array_get(a, i), "set"));
	st->set_offsets = calloc(*count + 1, sizeof(int32_t));
	st->set_members = calloc(total + 1, sizeof(int32_t));
	st->set_features = calloc(*count * nsf + 1, sizeof(float));
	st->targets = calloc(*count + 1, sizeof(float));
	if (!st->set_offsets || !st->set_members || !st->set_features || !st->targets)
		return bad(w, "out of memory", "graphs[%zu].samples", gi);
	for (i = 0; i < *count; i++) {
		const json_t *smp = json_array_get(a, i), *set = json_object_get(smp, "set");
		const json_t *f = json_object_get(smp, "set_features"), *t = json_object_get(smp, "target");
		const size_t at = (size_t)st->set_offsets[i];

		if (!json_is_array(set) || json_array_size(set) == 0)
			return bad(w, "expected a non-empty array of vertex ids",
					  "graphs[%zu].samples[%zu].set", gi, i);
		for (j = 0; j < json_array_size(set); j++)
			if (read_vertex(json_array_get(set, j), n, &st->set_members[at + j]))
				return bad(w, "holds something that is not a vertex id",
						  "graphs[%zu].samples[%zu].set", gi, i);
		st->set_offsets[i + 1] = (int32_t)(at + json_array_size(set));
		if (!json_is_array(f) || json_array_size(f) != nsf)
			return bad(w, "expected one number per set feature",
					  "graphs[%zu].samples[%zu].set_features", gi, i);
		for (j = 0; j < nsf; j++) {
			if (!json_is_number(json_array_get(f, j)))
				return bad(w, "expected numbers",
						  "graphs[%zu].samples[%zu].set_features", gi, i);
			st->set_features[i * nsf + j] = (float)json_number_value(json_array_get(f, j));
		}
		if (!json_is_number(t) || !isfinite(json_number_value(t)))
			return bad(w, "expected a number",
					  "graphs[%zu].samples[%zu].target", gi, i);
		st->targets[i] = (float)json_number_value(t);
	}
	return 0;
}

static int read_graph(const struct where *w, const json_t *g, size_t gi, sim_samples_file *s)
{
	struct sim_samples_graph_store *st = &s->store[gi];
	gnn_train_graph *tg = &s->graphs[gi];
	const json_t *nv = json_object_get(g, "n_vertices"), *edges = json_object_get(g, "edges");
	size_t n, n_edges;
	gnn_error inner;

	if (!json_is_integer(nv) || json_integer_value(nv) < 1 || json_integer_value(nv) > INT32_MAX)
		return bad(w, "expected a positive whole number", "graphs[%zu].n_vertices", gi);
	n = (size_t)json_integer_value(nv);
	if (edges && !json_is_array(edges))
		return bad(w, "expected an array of edges", "graphs[%zu].edges", gi);
	if (edges ? read_edges(w, edges, gi, n, st, &n_edges) : read_csr(w, g, gi, n, st, &n_edges))
		return -1;
	st->features = calloc(n * s->n_vertex_features + 1, sizeof(float));
	if (!st->features)
		return bad(w, "out of memory", "graphs[%zu]", gi);
	if (read_rows(w, json_object_get(g, "features"), "features", gi, n, s->n_vertex_features,
		      st->features) ||
	    read_samples(w, json_object_get(g, "samples"), gi, n, s->n_set_features, st,
			 &tg->n_samples))
		return -1;
	tg->graph = (gnn_graph){n, st->offsets, st->neighbours, st->weights};
	tg->features = st->features;
	tg->set_offsets = st->set_offsets;
	tg->set_members = st->set_members;
	tg->set_features = st->set_features;
	tg->targets = st->targets;
	if (gnn_graph_check(&tg->graph, SIZE_MAX, SIZE_MAX, &inner))
		return bad(w, inner.text, "graphs[%zu]", gi);
	return 0;
}

int sim_samples_load(const char *path, sim_samples_file *s, gnn_error *err)
{
	const struct where w = {path, err};
	json_error_t jerr;
	json_t *root = topo_json_load_input(path, 0, JSON_REJECT_DUPLICATES, &jerr);
	const json_t *graphs;
	size_t i;
	int rc = -1;

	memset(s, 0, sizeof(*s));
	if (!root && jerr.line > 0) {
		gnn_error_set(err, path, "", "invalid JSON at line %d, column %d: %s", jerr.line,
			      jerr.column, jerr.text);
		return -1;
	}
	if (!root) { /* could not open or read */
		gnn_error_set(err, path, "", "%s", jerr.text);
		return -1;
	}
	graphs = json_object_get(root, "graphs");
	if (!json_is_string(json_object_get(root, "format")) ||
	    strcmp(json_string_value(json_object_get(root, "format")), SIM_SAMPLES_FORMAT) != 0)
		gnn_error_set(err, path, "format", "expected \"%s\"", SIM_SAMPLES_FORMAT);
	else if (json_integer_value(json_object_get(root, "version")) != SIM_SAMPLES_VERSION)
		gnn_error_set(err, path, "version", "expected %d", SIM_SAMPLES_VERSION);
	else if (read_names(&w, root, "vertex_features", &s->n_vertex_features, &s->vertex_names) ||
		 read_names(&w, root, "set_features", &s->n_set_features, &s->set_names))
		; /* error filled */
	else if (!json_is_array(graphs) || json_array_size(graphs) == 0)
		gnn_error_set(err, path, "graphs", "expected a non-empty array of graphs");
	else if (!(s->graphs = calloc(json_array_size(graphs), sizeof(*s->graphs))) ||
		 !(s->store = calloc(json_array_size(graphs), sizeof(*s->store))))
		gnn_error_set(err, path, "graphs", "out of memory");
	else {
		s->n_graphs = json_array_size(graphs);
		rc = 0;
		for (i = 0; i < s->n_graphs && rc == 0; i++)
			rc = read_graph(&w, json_array_get(graphs, i), i, s);
	}
	json_decref(root);
	if (rc)
		sim_samples_file_free(s);
	return rc;
}

void sim_samples_file_free(sim_samples_file *s)
{
	size_t i;

	for (i = 0; s->store && i < s->n_graphs; i++) {
		struct sim_samples_graph_store *st = &s->store[i];

		free(st->offsets);
		free(st->neighbours);
		free(st->weights);
		free(st->features);
		free(st->set_offsets);
		free(st->set_members);
		free(st->set_features);
		free(st->targets);
	}
	for (i = 0; s->vertex_names && i < s->n_vertex_features; i++)
		free(s->vertex_names[i]);
	for (i = 0; s->set_names && i < s->n_set_features; i++)
		free(s->set_names[i]);
	free(s->vertex_names);
	free(s->set_names);
	free(s->graphs);
	free(s->store);
	memset(s, 0, sizeof(*s));
}

void sim_samples_feature_stats(const sim_samples_file *s, int set, float *mean, float *std)
{
	const size_t nf = set ? s->n_set_features : s->n_vertex_features;
	size_t f, g, r;

	for (f = 0; f < nf; f++) {
		double sum = 0, sq = 0, count = 0, var;

		for (g = 0; g < s->n_graphs; g++) {
			const gnn_train_graph *tg = &s->graphs[g];
			const size_t rows = set ? tg->n_samples : tg->graph.n_vertices;
			const float *x = set ? tg->set_features : tg->features;

			for (r = 0; r < rows; r++) {
				sum += x[r * nf + f];
				sq += (double)x[r * nf + f] * x[r * nf + f];
				count++;
			}
		}
		mean[f] = count ? (float)(sum / count) : 0.0f;
		var = count ? sq / count - (sum / count) * (sum / count) : 0.0;
		std[f] = var > 1e-12 ? (float)sqrt(var) : 1.0f;
	}
}

static int same_names(char **a, size_t na, char **b, size_t nb)
{
	if (na != nb)
		return 0;
	for (size_t i = 0; i < na; i++)
		if (strcmp(a[i], b[i]))
			return 0;
	return 1;
}

int sim_samples_append(sim_samples_file *into, sim_samples_file *from, const char *path,
		   gnn_error *err)
{
	size_t n = into->n_graphs + from->n_graphs;
	gnn_train_graph *g;
	struct sim_samples_graph_store *st;

	if (!same_names(into->vertex_names, into->n_vertex_features, from->vertex_names,
			from->n_vertex_features) ||
	    !same_names(into->set_names, into->n_set_features, from->set_names,
			from->n_set_features)) {
		gnn_error_set(err, path, "", "its feature names differ from the first sample file's");
		sim_samples_file_free(from);
		return -1;
	}
	g = realloc(into->graphs, (n + 1) * sizeof(*g));
	if (g)
		into->graphs = g;
	st = g ? realloc(into->store, (n + 1) * sizeof(*st)) : NULL;
	if (!st) {
		gnn_error_set(err, path, "", "out of memory");
		sim_samples_file_free(from);
		return -1;
	}
	into->store = st;
	memcpy(into->graphs + into->n_graphs, from->graphs, from->n_graphs * sizeof(*g));
	memcpy(into->store + into->n_graphs, from->store, from->n_graphs * sizeof(*st));
	into->n_graphs = n;
	from->n_graphs = 0; /* the arrays now belong to `into` */
	sim_samples_file_free(from);
	return 0;
}
