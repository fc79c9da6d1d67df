/*
 * gnn_model_json: the model file — reading with full validation, and
 * writing through the same schema (docs/gnn.md, "Model file").
 *
 * Every rejection names the file, the JSON path of the offending value and
 * what is wrong with it. Weights are written with 9 significant digits,
 * enough for every float32 to read back to the same bits.
 */
#include "gnn_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define GNN_MODEL_MAX_BYTES ((off_t)256 << 20)

#define MAX_LAYERS 1024
#define MAX_WIDTH 65536

/* What the loader is reading, for error reports. */
struct reader {
	const char *file;
	gnn_error *err;
};

static int fail(const struct reader *r, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(const struct reader *r, const char *path, const char *fmt, ...)
{
	char text[GNN_ERROR_TEXT_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	gnn_error_set(r->err, r->file, path, "%s", text);
	return -1;
}

/* A finite float32 from a JSON number at `path`. */
static int read_float(const struct reader *r, const json_t *v, const char *path, float *out)
{
	double d;

	if (!json_is_number(v))
		return fail(r, path, "expected a number");
	d = json_number_value(v);
	*out = (float)d;
	if (!isfinite(*out))
		return fail(r, path, "%g is not a finite float32", d);
	return 0;
}

/* A whole number in [lo, hi] from member `key` of obj. */
static int read_size(const struct reader *r, const json_t *obj, const char *key,
		     const char *base, size_t lo, size_t hi, size_t *out)
{
	char path[GNN_ERROR_PATH_LEN];
	const json_t *v = json_object_get(obj, key);

	snprintf(path, sizeof(path), "%s%s%s", base, base[0] ? "." : "", key);
	if (!v)
		return fail(r, path, "is missing");
	if (!json_is_integer(v) || json_integer_value(v) < (json_int_t)lo ||
	    json_integer_value(v) > (json_int_t)hi)
		return fail(r, path, "expected a whole number from %zu to %zu", lo, hi);
	*out = (size_t)json_integer_value(v);
	return 0;
}

/* n floats from array member `key` of obj into dst. */
static int read_vector(const struct reader *r, const json_t *obj, const char *key,
		       const char *base, size_t n, float *dst)
{
	char path[GNN_ERROR_PATH_LEN], elem[GNN_ERROR_PATH_LEN + 24];
	const json_t *a = json_object_get(obj, key);
	size_t i;

	snprintf(path, sizeof(path), "%s.%s", base, key);
	if (!a)
		return fail(r, path, "is missing");
	if (!json_is_array(a) || json_array_size(a) != n)
		return fail(r, path, "expected an array of %zu numbers", n);
	for (i = 0; i < n; i++) {
		snprintf(elem, sizeof(elem), "%s[%zu]", path, i);
		if (read_float(r, json_array_get(a, i), elem, &dst[i]))
			return -1;
	}
	return 0;
}

/* A rows x cols matrix (array of row arrays) from member `key` into dst. */
static int read_matrix(const struct reader *r, const json_t *obj, const char *key,
		       const char *base, size_t rows, size_t cols, float *dst)
{
	char path[GNN_ERROR_PATH_LEN], elem[GNN_ERROR_PATH_LEN + 48];
	const json_t *a = json_object_get(obj, key);
	size_t i, j;

	snprintf(path, sizeof(path), "%s.%s", base, key);
	if (!a)
		return fail(r, path, "is missing");
	if (!json_is_array(a) || json_array_size(a) != rows)
		return fail(r, path, "expected %zu rows (in) of %zu numbers (out)", rows, cols);
	for (i = 0; i < rows; i++) {
		const json_t *row = json_array_get(a, i);

		snprintf(elem, sizeof(elem), "%s[%zu]", path, i);
		if (!json_is_array(row) || json_array_size(row) != cols)
			return fail(r, elem, "expected a row of %zu numbers (out)", cols);
		for (j = 0; j < cols; j++) {
			snprintf(elem, sizeof(elem), "%s[%zu][%zu]", path, i, j);
			if (read_float(r, json_array_get(row, j), elem, &dst[i * cols + j]))
				return -1;
		}
	}
	return 0;
}

static int read_features(const struct reader *r, const json_t *root, const char *key,
			 struct gnn_feature_spec *s)
{
	char path[GNN_ERROR_PATH_LEN];
	const json_t *a = json_object_get(root, key);
	size_t i, j;

	memset(s, 0, sizeof(*s));
	if (!json_is_array(a))
		return fail(r, key, a ? "expected an array of {name, mean, std}" : "is missing");
	s->n = json_array_size(a);
	s->names = calloc(s->n + 1, sizeof(*s->names));
	s->mean = calloc(s->n + 1, sizeof(*s->mean));
	s->std = calloc(s->n + 1, sizeof(*s->std));
	if (!s->names || !s->mean || !s->std)
		return fail(r, key, "out of memory");
	for (i = 0; i < s->n; i++) {
		const json_t *f = json_array_get(a, i);
		const json_t *name = json_object_get(f, "name");

		snprintf(path, sizeof(path), "%s[%zu]", key, i);
		if (!json_is_object(f))
			return fail(r, path, "expected an object {name, mean, std}");
		if (!json_is_string(name) || !json_string_value(name)[0])
			return fail(r, path, "needs a non-empty \"name\"");
		for (j = 0; j < i; j++)
			if (strcmp(s->names[j], json_string_value(name)) == 0)
				return fail(r, path, "feature \"%s\" appears twice",
					    json_string_value(name));
		if (!(s->names[i] = strdup(json_string_value(name))))
			return fail(r, path, "out of memory");
		snprintf(path, sizeof(path), "%s[%zu].mean", key, i);
		if (read_float(r, json_object_get(f, "mean"), path, &s->mean[i]))
			return -1;
		snprintf(path, sizeof(path), "%s[%zu].std", key, i);
		if (read_float(r, json_object_get(f, "std"), path, &s->std[i]))
			return -1;
		if (!(s->std[i] > 0.0f))
			return fail(r, path, "must be greater than 0");
	}
	return 0;
}

static int kind_from_name(const char *name, enum gnn_layer_kind *kind)
{
	int k;

	for (k = GNN_LINEAR; k <= GNN_READOUT; k++) {
		if (strcmp(name, gnn_layer_kind_name((enum gnn_layer_kind)k)) == 0) {
			*kind = (enum gnn_layer_kind)k;
			return 0;
		}
	}
	return -1;
}

/* The keys each layer kind may carry, "type" included. */
static const char *const *allowed_keys(enum gnn_layer_kind kind)
{
	static const char *const linear[] = {"type", "in", "out", "weight", "bias", NULL};
	static const char *const bare[] = {"type", NULL};
	static const char *const norm[] = {"type", "dim", "eps", "gamma", "beta", NULL};
	static const char *const sage[] = {"type", "in", "out", "self", "mean", "max", "bias", NULL};
	static const char *const gin[] = {"type", "in", "out", "eps", "weight", "bias", NULL};

	switch (kind) {
	case GNN_LINEAR:
		return linear;
	case GNN_LAYERNORM:
		return norm;
	case GNN_SAGE:
		return sage;
	case GNN_GIN:
		return gin;
	default:
		return bare;
	}
}

static int check_keys(const struct reader *r, const json_t *obj, enum gnn_layer_kind kind,
		      const char *base)
{
	const char *key;
	const json_t *v;

	json_object_foreach((json_t *)obj, key, v) {
		const char *const *k = allowed_keys(kind);

		while (*k && strcmp(*k, key) != 0)
			k++;
		if (!*k)
			return fail(r, base, "unknown key \"%s\" for a %s layer", key,
				    gnn_layer_kind_name(kind));
	}
	return 0;
}

/* First pass over a layer: kind and shape, checked against the running
 * width and its place before or after the readout. */
static int read_shape(const struct reader *r, const json_t *obj, const char *base,
		      int after_readout, size_t width, size_t n_set, struct gnn_layer *l)
{
	char path[GNN_ERROR_PATH_LEN + 8];
	const json_t *type = json_object_get(obj, "type");

	snprintf(path, sizeof(path), "%s.type", base);
	if (!json_is_object(obj))
		return fail(r, base, "expected a layer object");
	if (!json_is_string(type) || kind_from_name(json_string_value(type), &l->kind))
		return fail(r, path,
			    "expected one of linear, relu, gelu, layernorm, sage, gin, readout");
	if (after_readout && (l->kind == GNN_SAGE || l->kind == GNN_GIN || l->kind == GNN_READOUT))
		return fail(r, path, "a %s layer cannot come after the readout",
			    gnn_layer_kind_name(l->kind));
	if (check_keys(r, obj, l->kind, base))
		return -1;
	l->in = l->out = width;
	if (l->kind == GNN_READOUT)
		l->out = 2 * width + n_set;
	if (l->kind == GNN_LAYERNORM) {
		if (read_size(r, obj, "dim", base, 1, MAX_WIDTH, &l->in))
			return -1;
		l->out = l->in;
		l->eps = 1e-5f;
		snprintf(path, sizeof(path), "%s.eps", base);
		if (json_object_get(obj, "eps") &&
		    read_float(r, json_object_get(obj, "eps"), path, &l->eps))
			return -1;
		if (!(l->eps > 0.0f))
			return fail(r, path, "must be greater than 0");
	}
	if (l->kind == GNN_LINEAR || l->kind == GNN_SAGE || l->kind == GNN_GIN) {
		if (read_size(r, obj, "in", base, 1, MAX_WIDTH, &l->in) ||
		    read_size(r, obj, "out", base, 1, MAX_WIDTH, &l->out))
			return -1;
	}
	if (l->kind == GNN_GIN && json_object_get(obj, "eps")) {
		snprintf(path, sizeof(path), "%s.eps", base);
		if (read_float(r, json_object_get(obj, "eps"), path, &l->eps))
			return -1;
	}
	snprintf(path, sizeof(path), "%s.%s", base, l->kind == GNN_LAYERNORM ? "dim" : "in");
	if (l->in != width)
		return fail(r, path, "is %zu but the layer before produces %zu", l->in, width);
	return 0;
}

/* Second pass: the layer's tensors into the assembled model. */
static int read_tensors(const struct reader *r, const json_t *obj, const char *base,
			const struct gnn_layer *l, float *params)
{
	const size_t io = l->in * l->out;

	switch (l->kind) {
	case GNN_LINEAR:
	case GNN_GIN:
		return read_matrix(r, obj, "weight", base, l->in, l->out, params + l->w) ||
		       read_vector(r, obj, "bias", base, l->out, params + l->b);
	case GNN_SAGE:
		return read_matrix(r, obj, "self", base, l->in, l->out, params + l->w) ||
		       read_matrix(r, obj, "mean", base, l->in, l->out, params + l->w + io) ||
		       read_matrix(r, obj, "max", base, l->in, l->out, params + l->w + 2 * io) ||
		       read_vector(r, obj, "bias", base, l->out, params + l->b);
	case GNN_LAYERNORM:
		return read_vector(r, obj, "gamma", base, l->in, params + l->w) ||
		       read_vector(r, obj, "beta", base, l->in, params + l->b);
	default:
		return 0;
	}
}

static int read_header(const struct reader *r, const json_t *root)
{
	const json_t *format = json_object_get(root, "format");
	const json_t *version = json_object_get(root, "version");

	if (!json_is_object(root))
		return fail(r, "", "expected a JSON object at the top level");
	if (!json_is_string(format) || strcmp(json_string_value(format), GNN_MODEL_FORMAT) != 0)
		return fail(r, "format", "expected \"%s\"", GNN_MODEL_FORMAT);
	if (!json_is_integer(version))
		return fail(r, "version", "expected a whole number");
	if (json_integer_value(version) != GNN_MODEL_VERSION)
		return fail(r, "version", "unsupported version %" JSON_INTEGER_FORMAT
			    " (this build reads version %d)", json_integer_value(version),
			    GNN_MODEL_VERSION);
	return 0;
}

static gnn_model *model_from_json(const struct reader *r, const json_t *root)
{
	struct gnn_feature_spec vs = {0}, ss = {0};
	struct gnn_layer *layers = NULL;
	const json_t *arr = json_object_get(root, "layers");
	char base[GNN_ERROR_PATH_LEN];
	size_t n, i, width, readout = (size_t)-1;
	gnn_model *m = NULL;

	if (read_header(r, root) || read_features(r, root, "vertex_features", &vs) ||
	    read_features(r, root, "set_features", &ss))
		goto out;
	if (!json_is_array(arr) || json_array_size(arr) == 0 || json_array_size(arr) > MAX_LAYERS) {
		fail(r, "layers", "expected an array of 1 to %d layers", MAX_LAYERS);
		goto out;
	}
	n = json_array_size(arr);
	if (!(layers = calloc(n, sizeof(*layers)))) {
		fail(r, "layers", "out of memory");
		goto out;
	}
	width = vs.n;
	for (i = 0; i < n; i++) {
		snprintf(base, sizeof(base), "layers[%zu]", i);
		if (read_shape(r, json_array_get(arr, i), base, readout != (size_t)-1, width, ss.n,
			       &layers[i]))
			goto out;
		if (layers[i].kind == GNN_READOUT)
			readout = i;
		width = layers[i].out;
	}
	if (readout == (size_t)-1) {
		fail(r, "layers", "has no readout layer; a model needs exactly one");
		goto out;
	}
	if (width != 1) {
		snprintf(base, sizeof(base), "layers[%zu]", n - 1);
		fail(r, base, "the last layer must produce 1 score, not %zu", width);
		goto out;
	}
	m = gnn_model_assemble(layers, n, vs, ss);
	memset(&vs, 0, sizeof(vs));
	memset(&ss, 0, sizeof(ss));
	if (!m) {
		fail(r, "layers", "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		snprintf(base, sizeof(base), "layers[%zu]", i);
		if (read_tensors(r, json_array_get(arr, i), base, &m->layers[i], m->params)) {
			gnn_model_free(m);
			m = NULL;
			goto out;
		}
	}
out:
	gnn_feature_spec_free(&vs);
	gnn_feature_spec_free(&ss);
	free(layers);
	return m;
}

static gnn_model *load_with(json_t *root, const json_error_t *jerr, const char *file,
			    gnn_error *err)
{
	const struct reader r = {file ? file : "", err};
	gnn_model *m;

	if (!root) {
		if (jerr->line > 0)
			gnn_error_set(err, file, "", "invalid JSON at line %d, column %d: %s",
				      jerr->line, jerr->column, jerr->text);
		else
			gnn_error_set(err, file, "", "%s",
				      jerr->text[0] ? jerr->text : "out of memory reading the JSON");
		return NULL;
	}
	gnn_error_clear(err);
	m = model_from_json(&r, root);
	json_decref(root);
	return m;
}

/* The model file, read the way topo's topo_open_input reads every input
 * (gnn-infer sits below topo, so it has its own few lines): never block on a
 * FIFO or device (slurmctld loads models), only a regular file, a size limit.
 * NULL with the reason in jerr->text (line -1). */
static json_t *read_model_file(const char *path, json_error_t *jerr)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY), fl;
	const char *why = NULL;
	struct stat st;
	json_t *root;

	memset(jerr, 0, sizeof(*jerr));
	jerr->line = -1;
	if (fd < 0) {
		snprintf(jerr->text, sizeof(jerr->text), "cannot open: %s", strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) != 0)
		why = "cannot stat it";
	else if (!S_ISREG(st.st_mode))
		why = "is not a regular file";
	else if (st.st_size > GNN_MODEL_MAX_BYTES)
		why = "is larger than 256 MiB";
	else if ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
		why = "cannot clear O_NONBLOCK";
	if (why) {
		snprintf(jerr->text, sizeof(jerr->text), "%s", why);
		close(fd);
		return NULL;
	}
	root = json_loadfd(fd, JSON_REJECT_DUPLICATES, jerr);
	close(fd);
	return root;
}

gnn_model *gnn_model_load(const char *path, gnn_error *err)
{
	json_error_t jerr;
	json_t *root = read_model_file(path, &jerr);

	return load_with(root, &jerr, path, err);
}

gnn_model *gnn_model_load_mem(const char *json, const char *name, gnn_error *err)
{
	json_error_t jerr;
	json_t *root = json_loads(json, JSON_REJECT_DUPLICATES, &jerr);

	return load_with(root, &jerr, name, err);
}

/* ---- writing ---- */

static json_t *vector_json(const float *v, size_t n)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && i < n; i++)
		json_array_append_new(a, json_real(v[i]));
	return a;
}

static json_t *matrix_json(const float *w, size_t rows, size_t cols)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && i < rows; i++)
		json_array_append_new(a, vector_json(w + i * cols, cols));
	return a;
}

static json_t *features_json(const struct gnn_feature_spec *s)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && i < s->n; i++)
		json_array_append_new(a, json_pack("{s:s, s:f, s:f}", "name", s->names[i], "mean",
						   (double)s->mean[i], "std", (double)s->std[i]));
	return a;
}

static json_t *layer_json(const gnn_model *m, const struct gnn_layer *l)
{
	const float *p = m->params;
	const size_t io = l->in * l->out;
	json_t *o = json_pack("{s:s}", "type", gnn_layer_kind_name(l->kind));

	if (!o)
		return NULL;
	if (l->kind == GNN_LINEAR || l->kind == GNN_SAGE || l->kind == GNN_GIN) {
		json_object_set_new(o, "in", json_integer((json_int_t)l->in));
		json_object_set_new(o, "out", json_integer((json_int_t)l->out));
	}
	if (l->kind == GNN_LINEAR || l->kind == GNN_GIN)
		json_object_set_new(o, "weight", matrix_json(p + l->w, l->in, l->out));
	if (l->kind == GNN_GIN)
		json_object_set_new(o, "eps", json_real(l->eps));
	if (l->kind == GNN_SAGE) {
		json_object_set_new(o, "self", matrix_json(p + l->w, l->in, l->out));
		json_object_set_new(o, "mean", matrix_json(p + l->w + io, l->in, l->out));
		json_object_set_new(o, "max", matrix_json(p + l->w + 2 * io, l->in, l->out));
	}
	if (l->kind == GNN_LINEAR || l->kind == GNN_SAGE || l->kind == GNN_GIN)
		json_object_set_new(o, "bias", vector_json(p + l->b, l->out));
	if (l->kind == GNN_LAYERNORM) {
		json_object_set_new(o, "dim", json_integer((json_int_t)l->in));
		json_object_set_new(o, "eps", json_real(l->eps));
		json_object_set_new(o, "gamma", vector_json(p + l->w, l->in));
		json_object_set_new(o, "beta", vector_json(p + l->b, l->in));
	}
	return o;
}

static json_t *model_json(const gnn_model *m)
{
	json_t *layers = json_array();
	size_t i;

	for (i = 0; layers && i < m->n_layers; i++)
		json_array_append_new(layers, layer_json(m, &m->layers[i]));
	return json_pack("{s:s, s:i, s:o, s:o, s:o}", "format", GNN_MODEL_FORMAT, "version",
			 GNN_MODEL_VERSION, "vertex_features", features_json(&m->vertex),
			 "set_features", features_json(&m->set), "layers", layers);
}

#define DUMP_FLAGS (JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9))

char *gnn_model_write_mem(const gnn_model *m, gnn_error *err)
{
	json_t *root = model_json(m);
	char *s = root ? json_dumps(root, DUMP_FLAGS) : NULL;

	json_decref(root);
	if (!s)
		gnn_error_set(err, NULL, NULL, "out of memory writing the model");
	return s;
}

int gnn_model_write(const gnn_model *m, const char *path, gnn_error *err)
{
	char *s = gnn_model_write_mem(m, err);
	FILE *f;
	int bad;

	if (!s)
		return -1;
	f = fopen(path, "w");
	if (!f) {
		gnn_error_set(err, path, NULL, "cannot write: %s", strerror(errno));
		free(s);
		return -1;
	}
	bad = fputs(s, f) < 0;
	bad |= fputc('\n', f) == EOF;
	bad |= fclose(f) != 0;
	free(s);
	if (bad) {
		gnn_error_set(err, path, NULL, "write failed");
		return -1;
	}
	return 0;
}
