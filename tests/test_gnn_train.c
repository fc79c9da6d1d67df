/*
 * test_gnn_train: the trainer's hand-written gradients against central
 * finite differences for every layer kind (relative error below 1e-3), and
 * training itself: it lowers the loss, and a seed gives the same weights bit
 * for bit.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gnn_internal.h"
#include "gnn_train.h"

#define NV 12
#define NS 6
#define NVF 3
/* Finite-difference step, relative to the parameter: the forward pass is
 * float32 (noise ~1e-7 in the loss, so h must not be tiny) and relu, max and
 * readout have kinks (so h must not be large enough to cross one). */
#define GC_H 3e-4f

struct data {
	int32_t off[NV + 1], nb[NV * 5];
	float w[NV * 5], x[NV * NVF];
	int32_t set_off[NS + 1], members[NS * 4];
	float set_f[NS], target[NS];
	gnn_train_graph g;
};

static float uni(uint64_t *rng)
{
	return 2.0f * gnn_rng_uniform(rng) - 1.0f;
}

static void make_data(struct data *d, uint64_t seed, int weighted)
{
	uint64_t rng = seed;
	int32_t v, e = 0, s, k;

	d->off[0] = 0;
	for (v = 0; v < NV; v++) {
		const int32_t deg = (int32_t)(gnn_rng_next(&rng) % 5);

		for (k = 0; k < deg; k++, e++) {
			d->nb[e] = (int32_t)(gnn_rng_next(&rng) % NV);
			d->w[e] = 0.5f + gnn_rng_uniform(&rng);
		}
		d->off[v + 1] = e;
	}
	for (v = 0; v < NV * NVF; v++)
		d->x[v] = uni(&rng);
	d->set_off[0] = 0;
	for (s = 0; s < NS; s++) {
		const int32_t n = 1 + s % 4;

		for (k = 0; k < n; k++)
			d->members[d->set_off[s] + k] = (int32_t)(gnn_rng_next(&rng) % NV);
		d->set_off[s + 1] = d->set_off[s] + n;
		d->set_f[s] = uni(&rng);
		d->target[s] = uni(&rng);
	}
	d->g = (gnn_train_graph){{NV, d->off, d->nb, weighted ? d->w : NULL}, d->x, NS,
				 d->set_off, d->members, d->set_f, d->target};
}

static struct gnn_feature_spec spec(size_t n, const char *prefix)
{
	struct gnn_feature_spec s = {n, calloc(n, sizeof(char *)), calloc(n, sizeof(float)),
				     calloc(n, sizeof(float))};
	size_t i;

	for (i = 0; i < n; i++) {
		char name[32];

		snprintf(name, sizeof(name), "%s%zu", prefix, i);
		s.names[i] = strdup(name);
		s.mean[i] = 0.1f;
		s.std[i] = 0.8f;
	}
	return s;
}

/* A model of the given layers (kind, in, out, eps) with random parameters. */
static gnn_model *make_model(const struct gnn_layer *layers, size_t n, uint64_t seed)
{
	gnn_model *m = gnn_model_assemble(layers, n, spec(NVF, "v"), spec(1, "s"));
	uint64_t rng = seed;
	size_t i, k;

	assert_non_null(m);
	for (i = 0; i < m->n_layers; i++) {
		const struct gnn_layer *l = &m->layers[i];

		for (k = 0; k < gnn_layer_w_size(l); k++)
			m->params[l->w + k] = (l->kind == GNN_LAYERNORM ? 1.0f : 0.0f) + uni(&rng) * 0.8f;
		for (k = 0; k < gnn_layer_b_size(l); k++)
			m->params[l->b + k] = 0.3f * uni(&rng);
	}
	return m;
}

/* Relative error between the analytic gradient and central differences. */
static double gradcheck(gnn_model *m, const struct data *d, enum gnn_loss loss)
{
	size_t idx[NS], i;
	double *g = calloc(m->n_params, sizeof(double)), num = 0, den = 0;
	gnn_trainer *t = gnn_trainer_create(m, NV, NS, NULL);

	for (i = 0; i < NS; i++)
		idx[i] = i;
	gnn_trainer_loss(t, &d->g, idx, NS, loss, g);
	for (i = 0; i < m->n_params; i++) {
		const float p = m->params[i], h = GC_H * (fabsf(p) > 1 ? fabsf(p) : 1);
		double up, down, fd;
		float hi, lo;

		m->params[i] = hi = p + h;
		up = gnn_trainer_loss(t, &d->g, idx, NS, loss, NULL);
		m->params[i] = lo = p - h;
		down = gnn_trainer_loss(t, &d->g, idx, NS, loss, NULL);
		m->params[i] = p;
		fd = (up - down) / ((double)hi - (double)lo);
		num += (g[i] - fd) * (g[i] - fd);
		den += g[i] * g[i] + fd * fd;
	}
	gnn_trainer_free(t);
	free(g);
	assert_true(den > 1e-6); /* the gradient is not trivially zero */
	return sqrt(num) / sqrt(den);
}

#define L(k, i, o) {.kind = (k), .in = (i), .out = (o)}
#define RO(d) {.kind = GNN_READOUT, .in = (d), .out = 2 * (d) + 1}

static void check_layers(const struct gnn_layer *layers, size_t n, const char *what)
{
	static struct data d;
	enum gnn_loss losses[] = {GNN_LOSS_MSE, GNN_LOSS_RANK, GNN_LOSS_BOTH};
	size_t i;

	for (i = 0; i < 3; i++) {
		gnn_model *m = make_model(layers, n, 11 + i);
		double rel;

		make_data(&d, 3 + i, i != 1);
		rel = gradcheck(m, &d, losses[i]);
		if (!(rel < 1e-3))
			fail_msg("%s (loss %d): relative error %g", what, (int)losses[i], rel);
		gnn_model_free(m);
	}
}

#define CHECK(what, ...)                                                          \
	do {                                                                      \
		const struct gnn_layer ls[] = {__VA_ARGS__};                      \
		check_layers(ls, sizeof(ls) / sizeof(ls[0]), what);               \
	} while (0)

static void test_grad_linear(void **state)
{
	CHECK("linear", L(GNN_LINEAR, 3, 4), RO(4), L(GNN_LINEAR, 9, 1));
}

static void test_grad_relu(void **state)
{
	CHECK("relu", L(GNN_LINEAR, 3, 4), L(GNN_RELU, 4, 4), RO(4), L(GNN_LINEAR, 9, 1));
}

static void test_grad_gelu(void **state)
{
	CHECK("gelu", L(GNN_LINEAR, 3, 4), L(GNN_GELU, 4, 4), RO(4), L(GNN_LINEAR, 9, 1));
}

static void test_grad_layernorm(void **state)
{
	CHECK("layernorm", L(GNN_LINEAR, 3, 4), {.kind = GNN_LAYERNORM, .in = 4, .out = 4,
	      .eps = 1e-5f}, RO(4), L(GNN_LINEAR, 9, 1));
}

static void test_grad_sage(void **state)
{
	CHECK("sage", L(GNN_SAGE, 3, 4), L(GNN_GELU, 4, 4), L(GNN_SAGE, 4, 3), RO(3),
	      L(GNN_LINEAR, 7, 1));
}

static void test_grad_gin(void **state)
{
	/* the second gin narrows 4 -> 2, taking the transform-first path */
	CHECK("gin", {.kind = GNN_GIN, .in = 3, .out = 4, .eps = 0.3f}, L(GNN_GELU, 4, 4),
	      {.kind = GNN_GIN, .in = 4, .out = 2, .eps = 0.1f}, RO(2), L(GNN_LINEAR, 5, 1));
}

static void test_grad_head(void **state)
{
	CHECK("head", L(GNN_LINEAR, 3, 3), RO(3), L(GNN_LINEAR, 7, 5), L(GNN_GELU, 5, 5),
	      {.kind = GNN_LAYERNORM, .in = 5, .out = 5, .eps = 1e-5f}, L(GNN_LINEAR, 5, 4),
	      L(GNN_RELU, 4, 4), L(GNN_LINEAR, 4, 1));
}

/* A learnable toy problem: target = mean over the set of vertex feature 0. */
static void make_learnable(struct data *d)
{
	int32_t s, k;

	make_data(d, 77, 1);
	for (s = 0; s < NS; s++) {
		float sum = 0;

		for (k = d->set_off[s]; k < d->set_off[s + 1]; k++)
			sum += d->x[d->members[k] * NVF];
		d->target[s] = sum / (float)(d->set_off[s + 1] - d->set_off[s]);
	}
}

static void record_loss(void *arg, size_t epoch, double loss)
{
	double *losses = arg;

	losses[epoch - 1] = loss;
}

static void count_epoch(void *arg, size_t epoch, double loss)
{
	(void)loss;
	*(size_t *)arg = epoch;
}

static gnn_model *train(uint64_t seed, double *losses)
{
	static struct data d;
	const char *names[NVF] = {"v0", "v1", "v2"}, *set[] = {"s0"};
	gnn_arch arch = {NVF, names, NULL, NULL, 1, set, NULL, NULL, GNN_CONV_SAGE, 2, 8, 8};
	gnn_train_opts o;
	gnn_error err;
	gnn_model *m = gnn_model_build(&arch, seed, &err);

	make_learnable(&d);
	gnn_train_opts_default(&o);
	o.epochs = 200;
	o.batch = 4;
	o.lr = 1e-2f;
	o.loss = GNN_LOSS_MSE;
	o.seed = seed;
	o.on_epoch = record_loss;
	o.arg = losses;
	assert_int_equal(gnn_train(m, &d.g, 1, &o, &err), 0);
	return m;
}

static void test_training(void **state)
{
	static double l1[200], l2[200], l3[200];
	gnn_model *a = train(5, l1), *b = train(5, l2), *c = train(6, l3);

	/* the toy problem is learnable: the MSE falls by orders of magnitude */
	assert_true(l1[199] < l1[0] * 1e-4);
	assert_memory_equal(l1, l2, sizeof(l1));
	assert_int_equal(a->n_params, b->n_params);
	assert_memory_equal(a->params, b->params, a->n_params * sizeof(float));
	assert_memory_not_equal(a->params, c->params, a->n_params * sizeof(float));
	gnn_model_free(a);
	gnn_model_free(b);
	gnn_model_free(c);
}

static void test_train_errors(void **state)
{
	static struct data d;
	const char *names[NVF] = {"v0", "v1", "v2"}, *set[] = {"s0"};
	gnn_arch arch = {NVF, names, NULL, NULL, 1, set, NULL, NULL, GNN_CONV_GIN, 1, 4, 0};
	gnn_train_opts o;
	gnn_error err;
	gnn_model *m = gnn_model_build(&arch, 1, &err);

	make_data(&d, 1, 1);
	d.nb[0] = NV;
	gnn_train_opts_default(&o);
	assert_int_equal(gnn_train(m, &d.g, 1, &o, &err), -1);
	assert_string_equal(err.path, "graphs[0].neighbours");
	assert_string_equal(err.text, "neighbours[0] = 12 is not a vertex");
	gnn_model_free(m);
}

/* A step size that blows the weights up: training stops at the first
 * non-finite minibatch loss with an error instead of returning NaN weights. */
static void test_train_diverges(void **state)
{
	static struct data d;
	const char *names[NVF] = {"v0", "v1", "v2"}, *set[] = {"s0"};
	gnn_arch arch = {NVF, names, NULL, NULL, 1, set, NULL, NULL, GNN_CONV_SAGE, 2, 8, 8};
	gnn_train_opts o;
	gnn_error err;
	gnn_model *m = gnn_model_build(&arch, 1, &err);
	size_t epochs = 0;

	make_learnable(&d);
	gnn_train_opts_default(&o);
	o.epochs = 20;
	o.batch = 4;
	o.lr = 1e30f;
	o.on_epoch = count_epoch;
	o.arg = &epochs;
	assert_int_equal(gnn_train(m, &d.g, 1, &o, &err), -1);
	assert_non_null(strstr(err.text, "training diverged: the loss is "));
	assert_non_null(strstr(err.text, "at epoch 1, minibatch "));
	/* it stopped inside the first epoch: no epoch was reported */
	assert_int_equal(epochs, 0);
	gnn_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grad_linear),    cmocka_unit_test(test_grad_relu),
		cmocka_unit_test(test_grad_gelu),      cmocka_unit_test(test_grad_layernorm),
		cmocka_unit_test(test_grad_sage),      cmocka_unit_test(test_grad_gin),
		cmocka_unit_test(test_grad_head),      cmocka_unit_test(test_training),
		cmocka_unit_test(test_train_errors),   cmocka_unit_test(test_train_diverges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
