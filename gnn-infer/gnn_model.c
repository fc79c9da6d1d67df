/*
 * gnn_model: a model's lifecycle (assemble, build from an architecture,
 * free) and its feature spec. Reading and writing files is in
 * gnn_model_json.c.
 */
#include "gnn_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GNN_TENSOR_ALIGN_FLOATS (GNN_ALIGN / sizeof(float))

float *gnn_alloc_floats(size_t n)
{
	void *p = NULL;
	size_t bytes;

	if (n == 0)
		n = 1;
	if (n > SIZE_MAX / sizeof(float) - GNN_ALIGN)
		return NULL;
	bytes = (n * sizeof(float) + GNN_ALIGN - 1) / GNN_ALIGN * GNN_ALIGN;
	if (posix_memalign(&p, GNN_ALIGN, bytes) != 0)
		return NULL;
	memset(p, 0, bytes);
	return p;
}

uint64_t gnn_rng_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

float gnn_rng_uniform(uint64_t *state)
{
	return (float)(gnn_rng_next(state) >> 40) * (1.0f / 16777216.0f);
}

const char *gnn_layer_kind_name(enum gnn_layer_kind kind)
{
	static const char *const names[] = {"linear", "relu",    "gelu",   "layernorm",
					    "sage",   "gin",     "readout"};

	return (size_t)kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "?";
}

size_t gnn_layer_w_size(const struct gnn_layer *l)
{
	switch (l->kind) {
	case GNN_LINEAR:
	case GNN_GIN:
		return l->in * l->out;
	case GNN_SAGE:
		return 3 * l->in * l->out;
	case GNN_LAYERNORM:
		return l->in;
	default:
		return 0;
	}
}

size_t gnn_layer_b_size(const struct gnn_layer *l)
{
	return gnn_layer_w_size(l) ? l->out : 0;
}

static size_t round_up(size_t n)
{
	return (n + GNN_TENSOR_ALIGN_FLOATS - 1) / GNN_TENSOR_ALIGN_FLOATS * GNN_TENSOR_ALIGN_FLOATS;
}

void gnn_feature_spec_free(struct gnn_feature_spec *s)
{
	size_t i;

	for (i = 0; s->names && i < s->n; i++)
		free(s->names[i]);
	free(s->names);
	free(s->mean);
	free(s->std);
	memset(s, 0, sizeof(*s));
}

gnn_model *gnn_model_assemble(const struct gnn_layer *layers, size_t n_layers,
			      struct gnn_feature_spec vertex, struct gnn_feature_spec set)
{
	gnn_model *m = calloc(1, sizeof(*m));
	size_t i, off = 0;

	if (!m || !(m->layers = calloc(n_layers ? n_layers : 1, sizeof(*m->layers)))) {
		free(m);
		gnn_feature_spec_free(&vertex);
		gnn_feature_spec_free(&set);
		return NULL;
	}
	m->vertex = vertex;
	m->set = set;
	m->n_layers = n_layers;
	m->readout = n_layers;
	for (i = 0; i < n_layers; i++) {
		struct gnn_layer *l = &m->layers[i];

		*l = layers[i];
		l->w = l->b = GNN_NO_PARAM;
		if (l->kind == GNN_READOUT && m->readout == n_layers)
			m->readout = i;
		if (!gnn_layer_w_size(l))
			continue;
		l->w = off;
		off += round_up(gnn_layer_w_size(l));
		l->b = off;
		off += round_up(gnn_layer_b_size(l));
	}
	m->n_params = off;
	m->params = gnn_alloc_floats(off);
	if (!m->params) {
		gnn_model_free(m);
		return NULL;
	}
	return m;
}

void gnn_model_free(gnn_model *m)
{
	if (!m)
		return;
	gnn_feature_spec_free(&m->vertex);
	gnn_feature_spec_free(&m->set);
	free(m->layers);
	free(m->params);
	free(m);
}

/* Copy n names and their normalisation into a fresh spec; -1 on no memory. */
static int spec_copy(struct gnn_feature_spec *s, size_t n, const char *const *names,
		     const float *mean, const float *std)
{
	size_t i;

	memset(s, 0, sizeof(*s));
	s->names = calloc(n ? n : 1, sizeof(*s->names));
	s->mean = calloc(n ? n : 1, sizeof(*s->mean));
	s->std = calloc(n ? n : 1, sizeof(*s->std));
	if (!s->names || !s->mean || !s->std)
		return -1;
	s->n = n;
	for (i = 0; i < n; i++) {
		s->names[i] = strdup(names[i]);
		if (!s->names[i])
			return -1;
		s->mean[i] = mean ? mean[i] : 0.0f;
		s->std[i] = std ? std[i] : 1.0f;
	}
	return 0;
}

static void init_glorot(gnn_model *m, uint64_t seed)
{
	uint64_t rng = seed;
	size_t i, k;

	for (i = 0; i < m->n_layers; i++) {
		const struct gnn_layer *l = &m->layers[i];
		float *w = m->params + l->w;
		float limit;

		if (l->kind == GNN_LAYERNORM) {
			for (k = 0; k < l->in; k++)
				w[k] = 1.0f;
			continue;
		}
		if (l->w == GNN_NO_PARAM)
			continue;
		limit = sqrtf(6.0f / (float)(gnn_layer_w_size(l) / l->out + l->out));
		for (k = 0; k < gnn_layer_w_size(l); k++)
			w[k] = (2.0f * gnn_rng_uniform(&rng) - 1.0f) * limit;
	}
}

gnn_model *gnn_model_build(const gnn_arch *a, uint64_t seed, gnn_error *err)
{
	struct gnn_layer layers[2 * 64 + 4];
	struct gnn_feature_spec vs, ss;
	size_t n = 0, i, width = a->n_vertex_features;
	gnn_model *m;

	if (a->layers > 64 || (a->layers > 0 && a->hidden == 0) || width == 0) {
		gnn_error_set(err, NULL, NULL,
			      "an architecture needs vertex features, 0..64 layers and a hidden width");
		return NULL;
	}
	memset(layers, 0, sizeof(layers));
	for (i = 0; i < a->layers; i++) {
		layers[n++] = (struct gnn_layer){.kind = a->conv == GNN_CONV_GIN ? GNN_GIN : GNN_SAGE,
						 .in = width, .out = a->hidden};
		layers[n++] = (struct gnn_layer){.kind = GNN_RELU, .in = a->hidden, .out = a->hidden};
		width = a->hidden;
	}
	layers[n++] = (struct gnn_layer){.kind = GNN_READOUT, .in = width,
					 .out = 2 * width + a->n_set_features};
	width = 2 * width + a->n_set_features;
	if (a->head_hidden) {
		layers[n++] = (struct gnn_layer){.kind = GNN_LINEAR, .in = width, .out = a->head_hidden};
		layers[n++] = (struct gnn_layer){.kind = GNN_RELU, .in = a->head_hidden,
						 .out = a->head_hidden};
		width = a->head_hidden;
	}
	layers[n++] = (struct gnn_layer){.kind = GNN_LINEAR, .in = width, .out = 1};
	if (spec_copy(&vs, a->n_vertex_features, a->vertex_names, a->vertex_mean, a->vertex_std) ||
	    spec_copy(&ss, a->n_set_features, a->set_names, a->set_mean, a->set_std)) {
		gnn_feature_spec_free(&vs);
		gnn_feature_spec_free(&ss);
		gnn_error_set(err, NULL, NULL, "out of memory building a model");
		return NULL;
	}
	m = gnn_model_assemble(layers, n, vs, ss);
	if (!m) {
		gnn_error_set(err, NULL, NULL, "out of memory building a model");
		return NULL;
	}
	init_glorot(m, seed);
	return m;
}

static const struct gnn_feature_spec *spec_of(const gnn_model *m, enum gnn_feature_kind kind)
{
	return kind == GNN_SET_FEATURES ? &m->set : &m->vertex;
}

size_t gnn_model_n_features(const gnn_model *m, enum gnn_feature_kind kind)
{
	return spec_of(m, kind)->n;
}

const char *gnn_model_feature_name(const gnn_model *m, enum gnn_feature_kind kind, size_t i)
{
	return i < spec_of(m, kind)->n ? spec_of(m, kind)->names[i] : NULL;
}

float gnn_model_feature_mean(const gnn_model *m, enum gnn_feature_kind kind, size_t i)
{
	return i < spec_of(m, kind)->n ? spec_of(m, kind)->mean[i] : 0.0f;
}

float gnn_model_feature_std(const gnn_model *m, enum gnn_feature_kind kind, size_t i)
{
	return i < spec_of(m, kind)->n ? spec_of(m, kind)->std[i] : 0.0f;
}

int gnn_model_check_features(const gnn_model *m, enum gnn_feature_kind kind,
			     const char *const *names, size_t n, gnn_error *err)
{
	const struct gnn_feature_spec *s = spec_of(m, kind);
	const char *what = kind == GNN_SET_FEATURES ? "set" : "vertex";
	size_t i;

	for (i = 0; i < n && i < s->n; i++) {
		if (strcmp(names[i], s->names[i]) != 0) {
			gnn_error_set(err, NULL, NULL,
				      "%s feature %zu is \"%s\" but the model expects \"%s\"", what,
				      i, names[i], s->names[i]);
			return -1;
		}
	}
	if (n != s->n) {
		gnn_error_set(err, NULL, NULL, "%zu %s features given but the model expects %zu",
			      n, what, s->n);
		return -1;
	}
	return 0;
}

size_t gnn_model_max_width(const gnn_model *m, size_t first, size_t last)
{
	size_t i, w = 1;

	for (i = first; i < last && i < m->n_layers; i++) {
		if (m->layers[i].in > w)
			w = m->layers[i].in;
		if (m->layers[i].out > w)
			w = m->layers[i].out;
	}
	return w;
}

size_t gnn_model_embed_dim(const gnn_model *m)
{
	return m->readout < m->n_layers ? m->layers[m->readout].in : 0;
}

size_t gnn_model_hops(const gnn_model *m)
{
	size_t i, n = 0;

	for (i = 0; i < m->readout && i < m->n_layers; i++)
		n += m->layers[i].kind == GNN_SAGE || m->layers[i].kind == GNN_GIN;
	return n;
}

size_t gnn_model_n_layers(const gnn_model *m)
{
	return m->n_layers;
}

size_t gnn_model_n_params(const gnn_model *m)
{
	return m->n_params;
}
