/*
 * topognn-train: train topognn's placement-scoring GNN from a sample file
 * and write the model file that the scheduler plugin loads.
 *
 * The maths lives in libgnn (gnn_train.h); this file is the command line:
 * options, reading samples (topo/sim/sim_samples.c), the input normalisation from
 * the data, the per-epoch loss report and the progress line. A run that
 * diverges (NaN or infinite loss) fails with exit 1 and writes no file; a
 * model file is written under a temporary name and renamed into place, so
 * --out never holds a partial model.
 */
#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gnn_model.h"
#include "gnn_train.h"
#include "sim_samples.h"
#include "topo_num.h"
#include "topognn-train.h"

#define MAX_SAMPLE_FILES 64

struct options {
	const char *samples[MAX_SAMPLE_FILES], *holds[MAX_SAMPLE_FILES], *out;
	int nsamples, nholds;
	gnn_train_opts train;
	size_t hidden, layers, head_hidden;
	enum gnn_conv conv;
	int progress;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: topognn-train --samples FILE [--samples FILE ...] --out MODEL.json [options]\n"
		"       topognn-train --holds FILE [--holds FILE ...] --out GATE.json\n"
		"  --epochs N        passes over the samples (50)\n"
		"  --lr X            Adam step size (0.001)\n"
		"  --batch N         samples per minibatch, all from one graph (32)\n"
		"  --hidden N        width of the embedding layers (32)\n"
		"  --layers N        message-passing layers (2)\n"
		"  --head-hidden N   width of the scoring head's hidden layer, 0 for none (32)\n"
		"  --conv sage|gin   message-passing kind (sage)\n"
		"  --loss mse|rank|both  training loss (mse)\n"
		"  --seed N          seed for initial weights and shuffling (1)\n"
		"  --progress        show the progress line even when stderr is not a terminal\n"
		"Prints the mean loss of each epoch on stdout; see topognn-train(1).\n");
}

/* A whole number >= min from an option argument, or exit with a message. */
static unsigned long long parse_count(const char *opt, const char *arg, unsigned long long min)
{
	uint64_t v;

	if (topo_parse_u64(arg, 10, UINT64_MAX, &v) < 0 || v < min) {
		fprintf(stderr, "topognn-train: %s needs a whole number >= %llu, not \"%s\"\n", opt,
			min, arg);
		exit(2);
	}
	return v;
}

/* One more file of a repeatable option, or exit with a message. */
static void add_file(const char **files, int *n, const char *opt, const char *arg)
{
	if (*n == MAX_SAMPLE_FILES) {
		fprintf(stderr, "topognn-train: at most %d %s files\n", MAX_SAMPLE_FILES, opt);
		exit(2);
	}
	files[(*n)++] = arg;
}

static void parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longs[] = {
		{"samples", required_argument, NULL, 's'}, {"out", required_argument, NULL, 'o'},
		{"epochs", required_argument, NULL, 'e'},  {"lr", required_argument, NULL, 'l'},
		{"batch", required_argument, NULL, 'b'},   {"hidden", required_argument, NULL, 'H'},
		{"layers", required_argument, NULL, 'L'},  {"head-hidden", required_argument, NULL, 'D'},
		{"conv", required_argument, NULL, 'c'},    {"loss", required_argument, NULL, 'x'},
		{"seed", required_argument, NULL, 'S'},    {"progress", no_argument, NULL, 'p'},
		{"help", no_argument, NULL, 'h'},          {"holds", required_argument, NULL, 'g'},
		{NULL, 0, NULL, 0}};
	double lr;
	int c;

	memset(o, 0, sizeof(*o));
	gnn_train_opts_default(&o->train);
	o->hidden = 32;
	o->layers = 2;
	o->head_hidden = 32;
	o->conv = GNN_CONV_SAGE;
	while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
		switch (c) {
		case 's': add_file(o->samples, &o->nsamples, "--samples", optarg); break;
		case 'g': add_file(o->holds, &o->nholds, "--holds", optarg); break;
		case 'o': o->out = optarg; break;
		case 'e': o->train.epochs = parse_count("--epochs", optarg, 1); break;
		case 'b': o->train.batch = parse_count("--batch", optarg, 1); break;
		case 'H': o->hidden = parse_count("--hidden", optarg, 1); break;
		case 'L': o->layers = parse_count("--layers", optarg, 0); break;
		case 'D': o->head_hidden = parse_count("--head-hidden", optarg, 0); break;
		case 'S': o->train.seed = parse_count("--seed", optarg, 0); break;
		case 'p': o->progress = 1; break;
		case 'l':
			if (topo_parse_double(optarg, 0, FLT_MAX, &lr) < 0 || !((float)lr > 0)) {
				fprintf(stderr,
					"topognn-train: --lr needs a positive number below %g, "
					"not \"%s\"\n", 3.4e38, optarg);
				exit(2);
			}
			o->train.lr = (float)lr;
			break;
		case 'c':
			if (strcmp(optarg, "sage") && strcmp(optarg, "gin")) {
				fprintf(stderr, "topognn-train: --conv is sage or gin\n");
				exit(2);
			}
			o->conv = strcmp(optarg, "gin") ? GNN_CONV_SAGE : GNN_CONV_GIN;
			break;
		case 'x':
			if (!strcmp(optarg, "mse"))
				o->train.loss = GNN_LOSS_MSE;
			else if (!strcmp(optarg, "rank"))
				o->train.loss = GNN_LOSS_RANK;
			else if (!strcmp(optarg, "both"))
				o->train.loss = GNN_LOSS_BOTH;
			else {
				fprintf(stderr, "topognn-train: --loss is mse, rank or both\n");
				exit(2);
			}
			break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (optind < argc || !o->nsamples == !o->nholds || !o->out) {
		usage(stderr);
		exit(2);
	}
	o->progress |= isatty(STDERR_FILENO);
}

static void on_batch(void *arg, size_t epoch, size_t done, size_t total)
{
	const struct options *o = arg;
	const int width = 30, filled = (int)(width * done / total);

	if (!o->progress)
		return;
	fprintf(stderr, "\repoch %zu/%zu [%.*s%*s] %zu/%zu batches", epoch, o->train.epochs,
		filled, "##############################", width - filled, "", done, total);
	if (done == total)
		fprintf(stderr, "\r%*s\r", 80, "");
	fflush(stderr);
}

static void on_epoch(void *arg, size_t epoch, double loss)
{
	const struct options *o = arg;

	printf("epoch %zu/%zu loss %.6g\n", epoch, o->train.epochs, loss);
	fflush(stdout);
}

/* Save m to path through a temporary file in the same directory and a
 * rename, so path is either the old file or the whole new model. */
static int save_atomic(const gnn_model *m, const char *path, gnn_error *err)
{
	size_t len = strlen(path);
	char *tmp = malloc(len + sizeof(".tmpXXXXXX"));
	mode_t mask = umask(0);
	int fd, bad, rc = -1;

	umask(mask);
	if (!tmp) {
		gnn_error_set(err, path, NULL, "out of memory");
		return -1;
	}
	memcpy(tmp, path, len);
	memcpy(tmp + len, ".tmpXXXXXX", sizeof(".tmpXXXXXX"));
	fd = mkstemp(tmp);
	if (fd < 0) {
		gnn_error_set(err, path, NULL, "cannot write: %s", strerror(errno));
		free(tmp);
		return -1;
	}
	/* the mode an ordinary create would give; mkstemp makes it 0600 */
	bad = fchmod(fd, 0666 & ~mask) != 0;
	bad |= close(fd) != 0;
	if (bad)
		gnn_error_set(err, tmp, NULL, "cannot write: %s", strerror(errno));
	else if (!gnn_model_write(m, tmp, err)) {
		if (rename(tmp, path) == 0)
			rc = 0;
		else
			gnn_error_set(err, path, NULL, "cannot write: %s", strerror(errno));
	}
	if (rc)
		unlink(tmp);
	free(tmp);
	return rc;
}

static int fail(const gnn_error *err)
{
	char buf[1024];

	fprintf(stderr, "topognn-train: %s\n", gnn_error_format(err, buf, sizeof(buf)));
	return 1;
}

int main(int argc, char **argv)
{
	struct options o;
	sim_samples_file s;
	gnn_error err;
	gnn_model *m;
	float *stats;
	gnn_arch arch;
	int rc;

	parse_options(argc, argv, &o);
	if (o.nholds)
		return train_hold_gate(o.holds, o.nholds, o.out);
	if (sim_samples_load(o.samples[0], &s, &err))
		return fail(&err);
	for (int i = 1; i < o.nsamples; i++) {
		sim_samples_file more;

		if (sim_samples_load(o.samples[i], &more, &err) ||
		    sim_samples_append(&s, &more, o.samples[i], &err)) {
			sim_samples_file_free(&s);
			return fail(&err);
		}
	}
	stats = calloc(2 * (s.n_vertex_features + s.n_set_features) + 1, sizeof(float));
	if (!stats) {
		sim_samples_file_free(&s);
		return 1;
	}
	sim_samples_feature_stats(&s, 0, stats, stats + s.n_vertex_features);
	sim_samples_feature_stats(&s, 1, stats + 2 * s.n_vertex_features,
			      stats + 2 * s.n_vertex_features + s.n_set_features);
	arch = (gnn_arch){s.n_vertex_features, (const char *const *)s.vertex_names, stats,
			  stats + s.n_vertex_features, s.n_set_features,
			  (const char *const *)s.set_names, stats + 2 * s.n_vertex_features,
			  stats + 2 * s.n_vertex_features + s.n_set_features, o.conv, o.layers,
			  o.hidden, o.head_hidden};
	m = gnn_model_build(&arch, o.train.seed, &err);
	free(stats);
	o.train.on_batch = on_batch;
	o.train.on_epoch = on_epoch;
	o.train.arg = &o;
	rc = !m || gnn_train(m, s.graphs, s.n_graphs, &o.train, &err) ||
	     save_atomic(m, o.out, &err);
	if (rc)
		fail(&err);
	else
		fprintf(stderr, "topognn-train: wrote %s (%zu parameters)\n", o.out,
			gnn_model_n_params(m));
	gnn_model_free(m);
	sim_samples_file_free(&s);
	return rc;
}
