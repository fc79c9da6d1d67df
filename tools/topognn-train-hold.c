/*
 * topognn-train --holds: the learned hold gate (topo/place/place_hold.h)
 * from the lookahead teacher's hold samples (topognn-sim --emit-holds).
 *
 * Only samples where a placement over fewer groups was predicted to free
 * in time (better_set 1) train it: those are the holds the gate decides.
 * The label is the teacher's choice (holding had the lower objective J);
 * each sample weighs |J_hold - J_start| over the mean, so decisions where
 * the choice mattered count more than near-ties. Logistic regression on
 * standardised features, full-batch gradient descent with a small L2
 * penalty: deterministic, the same bytes from the same samples.
 */
#include "topognn-train.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "place_hold.h"
#include "topo_num.h"

#define F PLACE_HOLD_FEATURES
#define HOLD_EPOCHS 300
#define HOLD_LR 0.5
#define HOLD_L2 1e-3

typedef struct hold_row {
	float x[F];
	double y, w; /* 1 hold, 0 start; weight */
} hold_row;

typedef struct hold_set {
	hold_row *r;
	size_t n, cap;
} hold_set;

/* The header must name this build's features, in order. */
static int check_header(const char *path, const char *line)
{
	const char *p = line;
	size_t len;

	if (strncmp(p, "# topognn-holds 1:", 18)) {
		fprintf(stderr, "topognn-train: %s:1: not a hold sample file (topognn-sim "
			"--emit-holds writes one)\n", path);
		return -1;
	}
	p += 18;
	for (int i = 0; i < F; i++) {
		p += strspn(p, " ");
		len = strcspn(p, " \n");
		if (len != strlen(place_hold_feature_names[i]) ||
		    strncmp(p, place_hold_feature_names[i], len)) {
			fprintf(stderr, "topognn-train: %s:1: column %d is \"%.*s\", this topognn "
				"builds \"%s\" there; emit the samples again\n", path, i + 1,
				(int)len, p, place_hold_feature_names[i]);
			return -1;
		}
		p += len;
	}
	return 0;
}

static int add_line(hold_set *s, const char *path, long ln, const char *line)
{
	double v[F + 2];
	const char *p = line;
	hold_row *r;

	for (int i = 0; i < F + 2; i++) {
		size_t len;

		p += strspn(p, " \t");
		len = strcspn(p, " \t\r\n");
		if (topo_parse_double_n(p, len, -1e300, 1e300, &v[i]) < 0) {
			fprintf(stderr, "topognn-train: %s:%ld: column %d: expected a number\n", path,
				ln, i + 1);
			return -1;
		}
		p += len;
	}
	if (*(p + strspn(p, " \t\r\n"))) {
		fprintf(stderr, "topognn-train: %s:%ld: more than %d columns\n", path, ln, F + 2);
		return -1;
	}
	if (v[PLACE_HOLD_BETTER_SET] < 0.5) /* no better set: the gate does not decide these */
		return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 1024;
		hold_row *more = realloc(s->r, cap * sizeof(*more));

		if (!more) {
			fprintf(stderr, "topognn-train: out of memory reading %s\n", path);
			return -1;
		}
		s->r = more;
		s->cap = cap;
	}
	r = &s->r[s->n++];
	for (int i = 0; i < F; i++)
		r->x[i] = (float)v[i];
	r->y = v[F] < v[F + 1];
	r->w = fabs(v[F] - v[F + 1]);
	return 0;
}

static int read_file(hold_set *s, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	long ln = 0;
	int rc = 0;

	if (!f) {
		fprintf(stderr, "topognn-train: %s: cannot read: %s\n", path, strerror(errno));
		return -1;
	}
	while (rc == 0 && fgets(line, sizeof(line), f)) {
		ln++;
		if (!strchr(line, '\n') && !feof(f)) {
			fprintf(stderr, "topognn-train: %s:%ld: line too long\n", path, ln);
			rc = -1;
		} else if (ln == 1) {
			rc = check_header(path, line);
		} else {
			rc = add_line(s, path, ln, line);
		}
	}
	if (rc == 0 && ln == 0) {
		fprintf(stderr, "topognn-train: %s: empty (no header)\n", path);
		rc = -1;
	}
	if (rc == 0 && ferror(f)) {
		fprintf(stderr, "topognn-train: %s: read error\n", path);
		rc = -1;
	}
	fclose(f);
	return rc;
}

typedef struct hold_fit {
	double mean[F], scale[F], w[F], b;
} hold_fit;

static void standardise(const hold_set *s, hold_fit *m)
{
	for (int i = 0; i < F; i++) {
		double sum = 0, sq = 0;

		for (size_t k = 0; k < s->n; k++)
			sum += s->r[k].x[i];
		m->mean[i] = sum / (double)s->n;
		for (size_t k = 0; k < s->n; k++)
			sq += (s->r[k].x[i] - m->mean[i]) * (s->r[k].x[i] - m->mean[i]);
		m->scale[i] = sqrt(sq / (double)s->n);
		if (!(m->scale[i] > 1e-9)) /* a constant feature carries nothing */
			m->scale[i] = 1;
	}
}

static void fit(const hold_set *s, hold_fit *m)
{
	double wsum = 0, gw[F];

	memset(m, 0, sizeof(*m));
	standardise(s, m);
	for (size_t k = 0; k < s->n; k++)
		wsum += s->r[k].w;
	if (!(wsum > 0))
		wsum = (double)s->n;
	for (int e = 0; e < HOLD_EPOCHS; e++) {
		double gb = 0;

		memset(gw, 0, sizeof(gw));
		for (size_t k = 0; k < s->n; k++) {
			const hold_row *r = &s->r[k];
			double z[F], a = m->b, g;

			for (int i = 0; i < F; i++) {
				z[i] = (r->x[i] - m->mean[i]) / m->scale[i];
				a += m->w[i] * z[i];
			}
			g = (1 / (1 + exp(-a)) - r->y) * r->w * (double)s->n / wsum;
			gb += g;
			for (int i = 0; i < F; i++)
				gw[i] += g * z[i];
		}
		m->b -= HOLD_LR * gb / (double)s->n;
		for (int i = 0; i < F; i++)
			m->w[i] -= HOLD_LR * (gw[i] / (double)s->n + HOLD_L2 * m->w[i]);
	}
}

static json_t *row(const double *v)
{
	json_t *a = json_array();

	for (int i = 0; a && i < F; i++)
		json_array_append_new(a, json_real((float)v[i]));
	return a;
}

static int write_gate(const hold_fit *m, const char *out)
{
	json_t *root = json_object(), *names = json_array();
	size_t len = strlen(out);
	char *tmp = malloc(len + 5);
	int rc;

	if (!tmp) {
		json_decref(root);
		json_decref(names);
		fprintf(stderr, "topognn-train: out of memory\n");
		return -1;
	}
	memcpy(tmp, out, len);
	memcpy(tmp + len, ".tmp", 5);

	for (int i = 0; i < F; i++)
		json_array_append_new(names, json_string(place_hold_feature_names[i]));
	json_object_set_new(root, "format", json_string(PLACE_HOLD_FORMAT));
	json_object_set_new(root, "version", json_integer(1));
	json_object_set_new(root, "features", names);
	json_object_set_new(root, "mean", row(m->mean));
	json_object_set_new(root, "scale", row(m->scale));
	json_object_set_new(root, "weights", row(m->w));
	json_object_set_new(root, "bias", json_real((float)m->b));
	/* through a temporary file and a rename: out is the old gate or the new */
	rc = json_dump_file(root, tmp, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));
	if (rc == 0 && rename(tmp, out))
		rc = -1;
	if (rc) {
		fprintf(stderr, "topognn-train: %s: cannot write: %s\n", out, strerror(errno));
		unlink(tmp);
	}
	json_decref(root);
	free(tmp);
	return rc ? -1 : 0;
}

int train_hold_gate(const char *const *files, int nfiles, const char *out)
{
	hold_set s = { 0 };
	hold_fit m;
	size_t held = 0;
	int rc = 1;

	for (int i = 0; i < nfiles; i++)
		if (read_file(&s, files[i]))
			goto done;
	if (s.n < 2 * F) {
		fprintf(stderr, "topognn-train: %zu hold samples with a better set predicted; the "
			"gate needs at least %d\n", s.n, 2 * F);
		goto done;
	}
	for (size_t k = 0; k < s.n; k++)
		held += s.r[k].y > 0;
	fit(&s, &m);
	if (write_gate(&m, out))
		goto done;
	fprintf(stderr, "topognn-train: wrote %s (hold gate from %zu samples, the teacher held "
		"%zu)\n", out, s.n, held);
	rc = 0;
done:
	free(s.r);
	return rc;
}
