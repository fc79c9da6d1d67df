/*
 * place_hold: the learned hold gate (place_hold.h).
 */
#include "place_hold.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

#include "topo_io.h"

/* n numbers of array key of o into out; the scale must be positive. */
static int read_row(const json_t *o, const char *key, const char *path, float *out, int positive,
		    topo_error *err)
{
	const json_t *a = json_object_get(o, key);

	if (!json_is_array(a) || json_array_size(a) != PLACE_HOLD_FEATURES)
		return topo_error_set(err, path, 0, "%s: expected an array of %d numbers", key,
				      PLACE_HOLD_FEATURES), -1;
	for (int i = 0; i < PLACE_HOLD_FEATURES; i++) {
		const json_t *v = json_array_get(a, (size_t)i);
		double x = json_number_value(v);

		if (!json_is_number(v) || !isfinite(x) || (positive && !(x > 0)))
			return topo_error_set(err, path, 0, "%s[%d]: expected a %snumber", key,
					      i, positive ? "positive " : "finite "), -1;
		out[i] = (float)x;
	}
	return 0;
}

static int parse(const json_t *o, const char *path, place_hold *h, topo_error *err)
{
	const json_t *names = json_object_get(o, "features"), *bias = json_object_get(o, "bias");
	const json_t *fmt = json_object_get(o, "format"), *ver = json_object_get(o, "version");

	memset(h, 0, sizeof(*h));
	if (!json_is_object(o) || !json_is_string(fmt) ||
	    strcmp(json_string_value(fmt), PLACE_HOLD_FORMAT))
		return topo_error_set(err, path, 0, "format: expected \"%s\"", PLACE_HOLD_FORMAT),
		       -1;
	if (!json_is_integer(ver) || json_integer_value(ver) != 1)
		return topo_error_set(err, path, 0, "version: expected 1"), -1;
	if (!json_is_array(names) || json_array_size(names) != PLACE_HOLD_FEATURES)
		return topo_error_set(err, path, 0,
				      "features: expected the %d names this topognn builds; "
				      "retrain the gate with topognn-train --holds",
				      PLACE_HOLD_FEATURES), -1;
	for (int i = 0; i < PLACE_HOLD_FEATURES; i++) {
		const char *n = json_string_value(json_array_get(names, (size_t)i));

		if (!n || strcmp(n, place_hold_feature_names[i]))
			return topo_error_set(err, path, 0,
					      "features[%d] is \"%s\", this topognn builds "
					      "\"%s\" there; retrain the gate with topognn-train "
					      "--holds", i, n ? n : "(not a string)",
					      place_hold_feature_names[i]), -1;
	}
	if (read_row(o, "mean", path, h->mean, 0, err) ||
	    read_row(o, "scale", path, h->scale, 1, err) ||
	    read_row(o, "weights", path, h->weight, 0, err))
		return -1;
	if (!json_is_number(bias) || !isfinite(json_number_value(bias)))
		return topo_error_set(err, path, 0, "bias: expected a finite number"), -1;
	h->bias = (float)json_number_value(bias);
	return 0;
}

int place_hold_load(const char *path, place_hold *h, topo_error *err)
{
	json_error_t je;
	json_t *root = topo_json_load_input(path, 0, 0, &je);
	int rc;

	if (!root)
		return topo_error_set(err, path, je.line, "%s", je.text), -1;
	rc = parse(root, path, h, err);
	json_decref(root);
	return rc;
}

double place_hold_p(void *ctx, const float *feat)
{
	const place_hold *h = ctx;
	double z = h->bias;

	for (int i = 0; i < PLACE_HOLD_FEATURES; i++)
		z += h->weight[i] * (feat[i] - h->mean[i]) / h->scale[i];
	return 1 / (1 + exp(-z));
}
