/*
 * placement-report: what topognn decided and why, for admins.
 *
 *   placement-report job JOBID        where a job went, what else was scored, why it lost
 *   placement-report cluster          occupancy per group, fragmentation, spanning jobs,
 *                                     hot links, shadow-mode statistics
 *   placement-report whatif --nodes N --gpus-per-node G [--comm heavy|light|none]
 *                                     what the engine would choose now (allocates nothing)
 *   placement-report history [--since T] [--export FILE]
 *                                     decision statistics; training samples for topognn-train
 *   placement-report metrics          topognn's own metrics, Prometheus text format
 *
 * Sources: the decision log (--decisions FILE) and the live cluster through
 * slurmrestd (--slurmrestd URL). Either may be missing; the report says so
 * and shows what the other can. Output: an aligned table (colour on a
 * terminal unless NO_COLOR is set), --json, and --svg/--html pictures.
 * See placement-report(1).
 */
#define _GNU_SOURCE /* strptime, timegm */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "place.h"
#include "place_record.h"
#include "place_scorer.h"
#include "report_cluster.h"
#include "report_history.h"
#include "report_log.h"
#include "report_metrics.h"
#include "report_node.h"
#include "report_rest.h"
#include "report_svg.h"
#include "sim.h"
#include "topo_hostlist.h"

#define PROG "placement-report"

struct opts {
	const char *cmd, *arg;
	const char *decisions, *graph, *graph_kind, *svg, *html, *node_dir, *telemetry;
	const char *rest_url, *export_path, *since, *until, *at;
	int json, colour;
	int nodes, gpus_per_node, host_gpus, host_cores, top;
	const char *comm, *policy, *baseline;
	double util_threshold;
};

/* Everything the sources gave. */
struct ctx {
	struct opts *o;
	topo_graph *g;
	place_cluster *c;
	report_log log;
	int have_log;
	report_rest_snapshot rest;
	int have_rest;
	double at;           /* the "now" of the report */
	report_occupancy occ;
	int have_occ;
	double *leaf_util;   /* telemetry snapshot per leaf, NULL none */
	char notes[4][600];  /* source problems, shown with the report */
	char *token;         /* JWT for slurmrestd */
	int nnotes;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " [options] job JOBID\n"
		"       " PROG " [options] cluster\n"
		"       " PROG " [options] whatif --nodes N --gpus-per-node G [--comm heavy|light|none]\n"
		"       " PROG " [options] history [--since T] [--until T] [--export FILE]\n"
		"       " PROG " [options] metrics\n"
		"sources:  --decisions FILE  --graph FILE.json | --ibnetdiscover FILE\n"
		"          --slurmrestd URL  (JWT from SLURM_JWT, else `scontrol token`)\n"
		"          --node-reports DIR  --telemetry FILE  --at T\n"
		"output:   --json  --svg FILE  --html FILE  --color/--no-color  --top N\n"
		"whatif:   --policy P (default model)  --baseline P (default tree)\n"
		"          --host-gpus N (default: graph, else 8)  --host-cores N (default 112)\n"
		"cluster:  --util-threshold X (default 0.8)\n");
}

static void note(struct ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(struct ctx *x, const char *fmt, ...)
{
	va_list ap;

	if (x->nnotes == 4)
		return;
	va_start(ap, fmt);
	vsnprintf(x->notes[x->nnotes++], sizeof(x->notes[0]), fmt, ap);
	va_end(ap);
}

/* ---- colour -------------------------------------------------------------- */

static int use_colour;

static const char *C(const char *code)
{
	return use_colour ? code : "";
}
#define BOLD C("\033[1m")
#define DIM C("\033[2m")
#define RED C("\033[31m")
#define GREEN C("\033[32m")
#define YELLOW C("\033[33m")
#define RESET C("\033[0m")

/* ---- time ---------------------------------------------------------------- */

/* "1700000000", "2023-11-14T22:13:20" (UTC), or a span back from `ref`:
 * "90m", "2h", "7d", "30s". -1 if unreadable. */
static int parse_time(const char *s, double ref, double *out)
{
	char *end;
	double v = strtod(s, &end);
	struct tm tm;

	if (end != s && *end == '\0') {
		*out = v;
		return 0;
	}
	if (end != s && end[1] == '\0' && v >= 0) {
		double unit = *end == 's' ? 1 : *end == 'm' ? 60 : *end == 'h' ? 3600
			      : *end == 'd' ? 86400 : 0;

		if (unit > 0) {
			*out = ref - v * unit;
			return 0;
		}
	}
	memset(&tm, 0, sizeof(tm));
	end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!end)
		end = strptime(s, "%Y-%m-%d", &tm);
	if (end && (*end == '\0' || (end[0] == 'Z' && end[1] == '\0'))) {
		*out = (double)timegm(&tm);
		return 0;
	}
	return -1;
}

static const char *fmt_time(double t, char *buf, size_t len)
{
	time_t s = (time_t)t;
	struct tm tm;

	if (!(t > 0) || !gmtime_r(&s, &tm)) {
		snprintf(buf, len, "-");
		return buf;
	}
	strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm);
	return buf;
}

/* ---- options ------------------------------------------------------------- */

static int parse_int(const char *s, int lo, int *out)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*s == '\0' || *end || v < lo || v > 100000000)
		return -1;
	*out = (int)v;
	return 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	enum { O_DECISIONS = 256, O_GRAPH, O_IBND, O_SVG, O_HTML, O_NODEDIR, O_TELEMETRY,
	       O_REST, O_EXPORT, O_SINCE, O_UNTIL, O_AT, O_JSON, O_COLOR, O_NOCOLOR, O_NODES,
	       O_GPN, O_HGPUS, O_HCORES, O_COMM, O_POLICY, O_BASELINE, O_UTIL, O_TOP };
	static const struct option lo[] = {
		{"decisions", 1, 0, O_DECISIONS}, {"graph", 1, 0, O_GRAPH},
		{"ibnetdiscover", 1, 0, O_IBND}, {"svg", 1, 0, O_SVG}, {"html", 1, 0, O_HTML},
		{"node-reports", 1, 0, O_NODEDIR}, {"telemetry", 1, 0, O_TELEMETRY},
		{"slurmrestd", 1, 0, O_REST}, {"export", 1, 0, O_EXPORT}, {"since", 1, 0, O_SINCE},
		{"until", 1, 0, O_UNTIL}, {"at", 1, 0, O_AT}, {"json", 0, 0, O_JSON},
		{"color", 0, 0, O_COLOR}, {"colour", 0, 0, O_COLOR}, {"no-color", 0, 0, O_NOCOLOR},
		{"nodes", 1, 0, O_NODES}, {"gpus-per-node", 1, 0, O_GPN},
		{"host-gpus", 1, 0, O_HGPUS}, {"host-cores", 1, 0, O_HCORES},
		{"comm", 1, 0, O_COMM}, {"policy", 1, 0, O_POLICY}, {"baseline", 1, 0, O_BASELINE},
		{"util-threshold", 1, 0, O_UTIL}, {"top", 1, 0, O_TOP}, {"help", 0, 0, 'h'},
		{0, 0, 0, 0}};
	int c;

	memset(o, 0, sizeof(*o));
	o->colour = -1;
	o->host_cores = 112;
	o->top = 3;
	o->comm = "heavy";
	o->policy = "model";
	o->baseline = "tree";
	o->util_threshold = 0.8;
	o->decisions = getenv("TOPOGNN_DECISION_LOG");
	o->rest_url = getenv("SLURMRESTD_URL");
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		int *ip = NULL, lo_ = 1;

		switch (c) {
		case O_DECISIONS: o->decisions = optarg; break;
		case O_GRAPH: o->graph = optarg; o->graph_kind = "graph"; break;
		case O_IBND: o->graph = optarg; o->graph_kind = "ibnetdiscover"; break;
		case O_SVG: o->svg = optarg; break;
		case O_HTML: o->html = optarg; break;
		case O_NODEDIR: o->node_dir = optarg; break;
		case O_TELEMETRY: o->telemetry = optarg; break;
		case O_REST: o->rest_url = optarg; break;
		case O_EXPORT: o->export_path = optarg; break;
		case O_SINCE: o->since = optarg; break;
		case O_UNTIL: o->until = optarg; break;
		case O_AT: o->at = optarg; break;
		case O_JSON: o->json = 1; break;
		case O_COLOR: o->colour = 1; break;
		case O_NOCOLOR: o->colour = 0; break;
		case O_NODES: ip = &o->nodes; break;
		case O_GPN: ip = &o->gpus_per_node; lo_ = 0; break;
		case O_HGPUS: ip = &o->host_gpus; lo_ = 0; break;
		case O_HCORES: ip = &o->host_cores; break;
		case O_TOP: ip = &o->top; lo_ = 0; break;
		case O_COMM: o->comm = optarg; break;
		case O_POLICY: o->policy = optarg; break;
		case O_BASELINE: o->baseline = optarg; break;
		case O_UTIL: {
			char *end;

			o->util_threshold = strtod(optarg, &end);
			if (*end || !(o->util_threshold >= 0)) {
				fprintf(stderr, PROG ": --util-threshold wants a number like 0.8, not \"%s\"\n",
					optarg);
				return -1;
			}
			break;
		}
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return -1;
		}
		if (ip && parse_int(optarg, lo_, ip)) {
			fprintf(stderr, PROG ": %s wants a whole number, not \"%s\"\n", argv[optind - 2],
				optarg);
			return -1;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return -1;
	}
	o->cmd = argv[optind++];
	if (!strcmp(o->cmd, "job")) {
		if (optind >= argc) {
			fprintf(stderr, PROG ": job wants a job id\n");
			return -1;
		}
		o->arg = argv[optind++];
	}
	if (optind != argc) {
		fprintf(stderr, PROG ": unexpected argument \"%s\"\n", argv[optind]);
		return -1;
	}
	if (strcmp(o->cmd, "job") && strcmp(o->cmd, "cluster") && strcmp(o->cmd, "whatif") &&
	    strcmp(o->cmd, "history") && strcmp(o->cmd, "metrics")) {
		fprintf(stderr, PROG ": unknown command \"%s\" (job, cluster, whatif, history, metrics)\n",
			o->cmd);
		return -1;
	}
	return 0;
}

/* ---- sources ------------------------------------------------------------- */

static place_comm comm_of(const report_decision *d)
{
	place_comm m = {0};
	int k = place_comm_class_parse(d->comm_class);

	m.cls = k >= 0 ? (place_comm_class)k : PLACE_COMM_NONE;
	m.pattern = !strcmp(d->pattern, "alltoall") ? PLACE_PATTERN_ALLTOALL
		    : !strcmp(d->pattern, "pipeline") ? PLACE_PATTERN_PIPELINE : PLACE_PATTERN_RING;
	m.bytes_per_iter = d->bytes_per_iter;
	m.compute_s_per_iter = d->compute_s_per_iter;
	return m;
}

/* Telemetry snapshot hook: {"leaves": {"LEAF": util 0..1, ...}} (what the
 * telemetry client's leaf estimate gives; see docs/telemetry.md). */
static void load_telemetry(struct ctx *x)
{
	json_error_t je;
	json_t *root, *leaves, *v;
	const char *name;
	int unknown = 0;

	if (!x->o->telemetry)
		return;
	if (!x->c) {
		note(x, "telemetry snapshot ignored: it needs the cluster graph (--graph)");
		return;
	}
	root = json_load_file(x->o->telemetry, 0, &je);
	leaves = json_object_get(root, "leaves");
	if (!json_is_object(leaves)) {
		note(x, "telemetry snapshot %s unreadable (%s): no link utilisation shown",
		     x->o->telemetry, root ? "no \"leaves\" object" : je.text);
		json_decref(root);
		return;
	}
	x->leaf_util = calloc((size_t)report_nleaves(x->c) + 1, sizeof(double));
	if (!x->leaf_util) {
		json_decref(root);
		return;
	}
	json_object_foreach(leaves, name, v) {
		int l = report_leaf_index(x->c, name);

		if (l < 0 || !json_is_number(v))
			unknown++;
		else
			x->leaf_util[l] = json_number_value(v);
	}
	if (unknown)
		note(x, "telemetry snapshot: %d entries are not leaf switches of the graph", unknown);
	json_decref(root);
}

static int load_sources(struct ctx *x)
{
	struct opts *o = x->o;
	topo_error err;
	char buf[1024];

	if (o->graph) {
		x->g = sim_load_graph(o->graph_kind, o->graph, &err);
		if (!x->g || !(x->c = place_cluster_new(x->g, &err))) {
			note(x, "no cluster graph: %s", topo_error_format(&err, buf, sizeof(buf)));
			topo_graph_free(x->g);
			x->g = NULL;
		}
	}
	if (o->decisions) {
		if (report_log_load(o->decisions, &x->log, &err) == 0) {
			x->have_log = 1;
			if (x->log.skipped)
				note(x, "%d line%s of the decision log skipped (first: %s)",
				     x->log.skipped, x->log.skipped == 1 ? "" : "s",
				     topo_error_format(&x->log.first_skip, buf, sizeof(buf)));
		} else {
			note(x, "no decision log: %s", topo_error_format(&err, buf, sizeof(buf)));
		}
	}
	if (o->rest_url) {
		if (report_rest_fetch(o->rest_url, x->token, getenv("SLURM_USER_NAME"), &x->rest,
				      &err) == 0)
			x->have_rest = 1;
		else
			note(x, "live cluster not available: %s",
			     topo_error_format(&err, buf, sizeof(buf)));
	}
	if (!x->have_log && !x->have_rest && strcmp(o->cmd, "whatif")) {
		fprintf(stderr, PROG ": no source to report on%s%s\n", x->nnotes ? ": " : "",
			x->nnotes ? x->notes[0] : " (give --decisions FILE or --slurmrestd URL)");
		for (int i = 1; i < x->nnotes; i++)
			fprintf(stderr, PROG ": %s\n", x->notes[i]);
		return -1;
	}
	x->at = x->have_log ? report_log_last_time(&x->log) : (double)time(NULL);
	if (x->have_rest && !o->at)
		x->at = (double)time(NULL) > x->at ? (double)time(NULL) : x->at;
	if (o->at && parse_time(o->at, x->at, &x->at)) {
		fprintf(stderr, PROG ": --at: \"%s\" is not a time (epoch seconds, "
				"YYYY-MM-DDTHH:MM:SS, or 2h/30m/7d back)\n", o->at);
		return -1;
	}
	load_telemetry(x);
	return 0;
}

/* The running jobs: from slurmrestd when it answered (the truth), joined
 * with their decision records; else the log's running decisions. */
static int build_occupancy(struct ctx *x)
{
	if (!x->c)
		return 0;
	if (report_occupancy_init(&x->occ, x->c))
		return -1;
	x->have_occ = 1;
	if (x->have_rest) {
		for (int j = 0; j < x->rest.njobs; j++) {
			const report_rest_job *rj = &x->rest.jobs[j];
			const report_decision *d = x->have_log ? report_log_find(&x->log, rj->job) : NULL;
			place_comm m = d ? comm_of(d) : (place_comm){0};

			if (!rj->running)
				continue;
			if (report_occupancy_add(&x->occ, rj->job, (const char *const *)rj->hosts,
						 rj->nhosts, d ? d->gpus_per_host : 0,
						 d ? d->cores_per_host : 0, &m, d ? d->policy : ""))
				return -1;
		}
		for (int n = 0; n < x->rest.nnodes; n++) {
			int h = place_cluster_find_host(x->c, x->rest.nodes[n].name);

			if (h >= 0)
				x->occ.host_flags[h] = x->rest.nodes[n].flags;
		}
	} else if (x->have_log) {
		int n, *run = report_log_running(&x->log, x->at, &n);

		if (!run)
			return -1;
		for (int i = 0; i < n; i++) {
			const report_decision *d = &x->log.d[run[i]];
			place_comm m = comm_of(d);

			if (report_occupancy_add(&x->occ, d->job, (const char *const *)d->allocated,
						 d->nallocated, d->gpus_per_host, d->cores_per_host,
						 &m, d->policy)) {
				free(run);
				return -1;
			}
		}
		free(run);
	}
	report_occupancy_finish(&x->occ);
	return 0;
}

static void print_notes(const struct ctx *x)
{
	for (int i = 0; i < x->nnotes; i++)
		fprintf(stderr, PROG ": %s%s%s\n", YELLOW, x->notes[i], RESET);
}

static json_t *notes_json(const struct ctx *x)
{
	json_t *a = json_array();

	for (int i = 0; i < x->nnotes; i++)
		json_array_append_new(a, json_string(x->notes[i]));
	return a;
}

static int emit_json(json_t *root)
{
	int rc = json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	fputc('\n', stdout);
	json_decref(root);
	return rc ? 1 : 0;
}

/* The picture(s) asked for. */
static int write_pictures(struct ctx *x, const char *title, int highlight)
{
	const char *paths[2] = {x->o->svg, x->o->html};
	char sub[128], tb[64];

	if (!paths[0] && !paths[1])
		return 0;
	if (!x->have_occ) {
		fprintf(stderr, PROG ": a picture needs the cluster graph (--graph FILE)\n");
		return 1;
	}
	snprintf(sub, sizeof(sub), "as of %s", fmt_time(x->at, tb, sizeof(tb)));
	for (int i = 0; i < 2; i++) {
		report_svg_opts so;
		FILE *f;
		int bad;

		if (!paths[i])
			continue;
		report_svg_opts_init(&so);
		so.title = title;
		so.subtitle = sub;
		so.html = i == 1;
		so.highlight = highlight;
		so.leaf_util = x->leaf_util;
		so.util_threshold = x->o->util_threshold;
		f = fopen(paths[i], "w");
		if (!f) {
			fprintf(stderr, PROG ": %s: %s\n", paths[i], strerror(errno));
			return 1;
		}
		bad = report_svg_write(f, &x->occ, &so);
		if (fclose(f) || bad) {
			fprintf(stderr, PROG ": %s: error writing the picture\n", paths[i]);
			return 1;
		}
	}
	return 0;
}

/* ---- job ----------------------------------------------------------------- */

static char *hostlist_of(char **hosts, int n)
{
	topo_error err;
	char *s = topo_hostlist_compress((const char *const *)hosts, (size_t)n, &err);

	return s ? s : strdup("?");
}

/* Why alternative a lost against the chosen one: the cost terms that made
 * the difference (biggest first, signed: a negative term is where the
 * alternative was better) and the structural features that differ
 * (alternative vs choice). */
static void why_lost(const report_choice *ch, const report_choice *a, char *buf, size_t len)
{
	double dc = (a->cost - a->frag_cost) - (ch->cost - ch->frag_cost);
	double df = a->frag_cost - ch->frag_cost;
	size_t pos = 0;
	int n = 0;

	buf[0] = '\0';
	if (isnan(a->cost) || isnan(ch->cost)) {
		snprintf(buf, len, "not costed");
		return;
	}
	if (report_choice_same_hosts(ch, a)) {
		snprintf(buf, len, "same hosts as the choice");
		return;
	}
	if (fabs(a->cost - ch->cost) < 1e-9 * (1 + fabs(ch->cost))) {
		snprintf(buf, len, "tie on cost, ranked after the choice");
		return;
	}
	if (a->cost < ch->cost) {
		snprintf(buf, len, "cheaper by %.3g but not chosen (the policy picks itself)",
			 ch->cost - a->cost);
		return;
	}
#define ADD(...) do { if (pos < len) pos += (size_t)snprintf(buf + pos, len - pos, __VA_ARGS__); n++; } while (0)
	if (!isnan(dc) && !isnan(df)) {
		/* the term that cost it most first, the other signed */
		if (df > dc) {
			ADD("fragmentation %+.3g", df);
			if (fabs(dc) > 1e-12)
				ADD(", communication %+.3g", dc);
		} else {
			ADD("communication %+.3g", dc);
			if (fabs(df) > 1e-12)
				ADD(", fragmentation %+.3g", df);
		}
	} else {
		ADD("cost %+.3g", a->cost - ch->cost);
	}
	{
		const char *sep = " (";

		if (a->groups != ch->groups && a->groups >= 0 && ch->groups >= 0) {
			ADD("%sgroups %d vs %d", sep, a->groups, ch->groups);
			sep = ", ";
		}
		if (a->leaves != ch->leaves && a->leaves >= 0 && ch->leaves >= 0) {
			ADD("%sleaves %d vs %d", sep, a->leaves, ch->leaves);
			sep = ", ";
		}
		if (a->diameter != ch->diameter && a->diameter >= 0 && ch->diameter >= 0) {
			ADD("%shops %d vs %d", sep, a->diameter, ch->diameter);
			sep = ", ";
		}
		if (sep[0] == ',')
			ADD(")");
	}
#undef ADD
	(void)n;
}

static json_t *choice_json(const report_choice *c, const char *role, const char *why)
{
	json_t *o = json_object(), *h = json_array();

	json_object_set_new(o, "role", json_string(role));
	for (int i = 0; i < c->nhosts; i++)
		json_array_append_new(h, json_string(c->hosts[i]));
	json_object_set_new(o, "hosts", h);
	json_object_set_new(o, "kind", json_string(c->kind));
	json_object_set_new(o, "nhosts", json_integer(c->nhosts));
	json_object_set_new(o, "groups", json_integer(c->groups));
	json_object_set_new(o, "leaves", json_integer(c->leaves));
	json_object_set_new(o, "hop_diameter", json_integer(c->diameter));
	json_object_set_new(o, "cost", isnan(c->cost) ? json_null() : json_real(c->cost));
	json_object_set_new(o, "comm_time_s",
			    isnan(c->comm_time_s) ? json_null() : json_real(c->comm_time_s));
	json_object_set_new(o, "frag_cost",
			    isnan(c->frag_cost) ? json_null() : json_real(c->frag_cost));
	if (why)
		json_object_set_new(o, "why_lost", json_string(why));
	return o;
}

static void choice_row(const report_choice *c, const char *role, const char *why)
{
	char cost[16] = "-", comm[16] = "-", frag[16] = "-";

	if (!isnan(c->cost))
		snprintf(cost, sizeof(cost), "%.4g", c->cost);
	if (!isnan(c->comm_time_s))
		snprintf(comm, sizeof(comm), "%.3g", c->comm_time_s * 1e3);
	if (!isnan(c->frag_cost))
		snprintf(frag, sizeof(frag), "%.3g", c->frag_cost);
	printf("  %-16s %-15s %5d %6d %6d %4d %9s %9s %7s  %s\n", role, c->kind[0] ? c->kind : "-",
	       c->nhosts, c->groups, c->leaves, c->diameter, cost, comm, frag, why ? why : "");
}

static int cmd_job(struct ctx *x)
{
	char *end, tb[64], why[256];
	unsigned long id = strtoul(x->o->arg, &end, 10);
	const report_decision *d;
	report_node_outcome *nodes = NULL;
	int nnodes = 0, hidx[4096], nh = 0, ng = 0, nl = 0, rc = 0;
	char *groups = NULL, *leaves = NULL, *hl;
	topo_error err;

	if (*x->o->arg == '\0' || *end) {
		fprintf(stderr, PROG ": \"%s\" is not a job id\n", x->o->arg);
		return 2;
	}
	d = x->have_log ? report_log_find(&x->log, (uint32_t)id) : NULL;
	if (!d) {
		fprintf(stderr, PROG ": job %lu: no decision in %s\n", id,
			x->have_log ? x->o->decisions : "(no decision log)");
		print_notes(x);
		return 1;
	}
	if (x->c)
		for (int i = 0; i < d->nallocated && nh < 4096; i++) {
			int h = place_cluster_find_host(x->c, d->allocated[i]);

			if (h >= 0)
				hidx[nh++] = h;
		}
	if (x->c && nh) {
		groups = report_span_names(x->c, hidx, nh, 0, &ng);
		leaves = report_span_names(x->c, hidx, nh, 1, &nl);
	}
	if (x->o->node_dir) {
		nnodes = report_node_load(x->o->node_dir, d->job, &nodes, &err);
		if (nnodes < 0) {
			char buf[700];

			note(x, "node side: %s", topo_error_format(&err, buf, sizeof(buf)));
			nnodes = 0;
		}
	}
	hl = hostlist_of(d->allocated, d->nallocated);
	if (x->o->json) {
		json_t *root = json_object(), *alts = json_array(), *req = json_object(), *nd;

		json_object_set_new(root, "job", json_integer(d->job));
		json_object_set_new(root, "timestamp", json_real(d->timestamp));
		json_object_set_new(root, "format", json_string(d->format));
		json_object_set_new(root, "policy", json_string(d->policy));
		json_object_set_new(root, "baseline_policy", json_string(d->baseline_policy));
		json_object_set_new(root, "scorer", json_string(d->scorer));
		json_object_set_new(root, "candidates", json_integer(d->candidates));
		json_object_set_new(root, "latency_us",
				    isnan(d->latency_us) ? json_null() : json_real(d->latency_us));
		json_object_set_new(req, "min_hosts", json_integer(d->min_hosts));
		json_object_set_new(req, "gpus_per_host", json_integer(d->gpus_per_host));
		json_object_set_new(req, "comm_class", json_string(d->comm_class));
		json_object_set_new(root, "request", req);
		json_object_set_new(root, "hosts", json_string(hl));
		json_object_set_new(root, "nhosts", json_integer(d->nallocated));
		json_object_set_new(root, "groups", groups ? json_string(groups) : json_null());
		json_object_set_new(root, "ngroups", json_integer(groups ? ng : d->chosen.groups));
		json_object_set_new(root, "leaves", leaves ? json_string(leaves) : json_null());
		json_object_set_new(root, "nleaves", json_integer(leaves ? nl : d->chosen.leaves));
		json_object_set_new(root, "hop_diameter", json_integer(d->chosen.diameter));
		json_object_set_new(root, "predicted_cost",
				    isnan(d->chosen.cost) ? json_null() : json_real(d->chosen.cost));
		json_object_set_new(root, "confidence", isnan(d->chosen.confidence)
				    ? json_null() : json_real(d->chosen.confidence));
		json_object_set_new(root, "followed",
				    d->followed < 0 ? json_null() : json_boolean(d->followed));
		json_object_set_new(root, "chosen", choice_json(&d->chosen, "chosen", NULL));
		if (d->baseline.nhosts) {
			why_lost(&d->chosen, &d->baseline, why, sizeof(why));
			json_object_set_new(root, "baseline", choice_json(&d->baseline, "baseline", why));
		}
		for (int a = 0; a < d->nalternatives; a++) {
			why_lost(&d->chosen, &d->alternatives[a], why, sizeof(why));
			json_array_append_new(alts, choice_json(&d->alternatives[a], "alternative", why));
		}
		json_object_set_new(root, "alternatives", alts);
		json_object_set_new(root, "ended", json_boolean(d->ended));
		json_object_set_new(root, "realised_slowdown", isnan(d->realised_slowdown)
				    ? json_null() : json_real(d->realised_slowdown));
		nd = json_object();
		for (int i = 0; i < nnodes; i++) {
			json_t *h = json_object();

			for (int k = 0; k < nodes[i].nkeys; k++)
				json_object_set_new(h, nodes[i].keys[k], json_string(nodes[i].values[k]));
			if (nodes[i].problem)
				json_object_set_new(h, "problem", json_string(nodes[i].problem));
			json_object_set_new(nd, nodes[i].host, h);
		}
		json_object_set_new(root, "node_side", nd);
		json_object_set_new(root, "notes", notes_json(x));
		rc = emit_json(root);
	} else {
		printf("%sjob %u%s  decided %s by %s%s%s (scorer %s, %d candidates",
		       BOLD, d->job, RESET, fmt_time(d->timestamp, tb, sizeof(tb)), BOLD,
		       d->policy[0] ? d->policy : "?", RESET, d->scorer[0] ? d->scorer : "?",
		       d->candidates);
		if (!isnan(d->latency_us))
			printf(", %.1f us", d->latency_us);
		printf(")\n");
		if (d->min_hosts)
			printf("  request       %d host%s, %s, comm %s%s%s\n", d->min_hosts,
			       d->min_hosts == 1 ? "" : "s",
			       d->gpus_per_host ? "shared hosts" : "whole hosts",
			       d->comm_class[0] ? d->comm_class : "?",
			       d->pattern[0] ? " " : "", d->pattern);
		printf("  hosts         %s (%d)\n", hl, d->nallocated);
		if (groups)
			printf("  groups        %d: %s\n", ng, groups);
		else
			printf("  groups        %d\n", d->chosen.groups);
		if (leaves)
			printf("  leaves        %d: %s\n", nl, leaves);
		else
			printf("  leaves        %d\n", d->chosen.leaves);
		printf("  hop diameter  %d\n", d->chosen.diameter);
		if (!isnan(d->chosen.cost))
			printf("  predicted     cost %.4g (communication %.3g ms per iteration, "
			       "fragmentation %.3g)\n", d->chosen.cost, d->chosen.comm_time_s * 1e3,
			       d->chosen.frag_cost);
		if (!isnan(d->chosen.confidence))
			printf("  confidence    %.2f (share of the gnn ensemble's models that rank "
			       "this placement first)\n", d->chosen.confidence);
		if (d->followed == 0)
			printf("  %sSlurm did not follow topognn%s (shadow mode?): it chose %s\n",
			       YELLOW, RESET, hl);
		printf("\n  %s%-16s %-15s %5s %6s %6s %4s %9s %9s %7s  %s%s\n", BOLD, "candidate",
		       "kind", "hosts", "groups", "leaves", "hops", "cost", "comm_ms", "frag",
		       "why it lost", RESET);
		choice_row(&d->chosen, "chosen", NULL);
		if (d->baseline.nhosts) {
			char role[32];

			snprintf(role, sizeof(role), "baseline %s", d->baseline_policy);
			why_lost(&d->chosen, &d->baseline, why, sizeof(why));
			choice_row(&d->baseline, role, why);
		}
		for (int a = 0; a < d->nalternatives && a < x->o->top; a++) {
			char role[32];

			snprintf(role, sizeof(role), "alternative %d", a + 1);
			why_lost(&d->chosen, &d->alternatives[a], why, sizeof(why));
			choice_row(&d->alternatives[a], role, why);
		}
		if (d->nalternatives > x->o->top)
			printf("  %s(%d more alternatives: --top N)%s\n", DIM,
			       d->nalternatives - x->o->top, RESET);
		printf("\n  outcome       ");
		if (d->ended)
			printf("ended after %.0f s, realised slowdown %.3g\n", d->elapsed_s,
			       d->realised_slowdown);
		else
			printf("running (or its end is not in the log)\n");
		if (x->o->node_dir) {
			printf("  node side     %s\n", nnodes ? "" : "no report for this job");
			for (int i = 0; i < nnodes; i++) {
				printf("    %-20s", nodes[i].host);
				if (nodes[i].problem)
					printf(" %sunreadable: %s%s", RED, nodes[i].problem, RESET);
				for (int k = 0; k < nodes[i].nkeys; k++)
					printf(" %s=%s", nodes[i].keys[k], nodes[i].values[k]);
				printf("\n");
			}
		}
		print_notes(x);
	}
	if (!rc && (x->o->svg || x->o->html)) {
		char title[64];
		int hi = -1;

		if (build_occupancy(x))
			rc = 1;
		for (int j = 0; j < x->occ.njobs; j++)
			if (x->occ.jobs[j].job == d->job)
				hi = j;
		if (hi < 0 && x->have_occ) {
			/* not running any more: draw it alone */
			place_comm m = comm_of(d);

			report_occupancy_free(&x->occ);
			report_occupancy_init(&x->occ, x->c);
			report_occupancy_add(&x->occ, d->job, (const char *const *)d->allocated,
					     d->nallocated, d->gpus_per_host, d->cores_per_host, &m,
					     d->policy);
			report_occupancy_finish(&x->occ);
			hi = 0;
		}
		snprintf(title, sizeof(title), "job %u", d->job);
		rc = rc ? rc : write_pictures(x, title, hi);
	}
	free(hl);
	free(groups);
	free(leaves);
	report_node_free(nodes, nnodes);
	return rc;
}

/* ---- cluster --------------------------------------------------------------- */

static void bar(int busy, int total, int width)
{
	int n = total ? (int)lround((double)busy * width / total) : 0;

	fputs(GREEN, stdout);
	for (int i = 0; i < n; i++)
		fputs("#", stdout);
	fputs(DIM, stdout);
	for (int i = n; i < width; i++)
		fputs(".", stdout);
	fputs(RESET, stdout);
}

static int cmd_cluster(struct ctx *x)
{
	report_stats st;
	char tb[64];
	int rc = 0, have_stats = 0;

	if (build_occupancy(x))
		return 1;
	if (x->have_log) {
		if (report_stats_compute(&x->log, -INFINITY, INFINITY, &st))
			return 1;
		have_stats = 1;
	}
	if (!x->have_occ)
		note(x, "no cluster graph: occupancy per group needs --graph FILE");
	if (x->o->json) {
		json_t *root = json_object(), *groups = json_array(), *span = json_array();
		json_t *hot = json_array(), *sh = json_object();

		json_object_set_new(root, "at", json_real(x->at));
		json_object_set_new(root, "sources", json_pack("{s:b,s:b,s:b}", "decision_log",
				    x->have_log, "slurmrestd", x->have_rest, "graph", x->c != NULL));
		if (x->have_occ) {
			const report_occupancy *o = &x->occ;

			json_object_set_new(root, "hosts", json_integer(o->nhosts));
			json_object_set_new(root, "busy_hosts", json_integer(o->busy_hosts));
			json_object_set_new(root, "idle_hosts", json_integer(o->idle_hosts));
			json_object_set_new(root, "running_jobs", json_integer(o->njobs));
			json_object_set_new(root, "fragmentation", json_real(o->fragmentation));
			for (int g = 0; g < o->ngroups; g++)
				if (o->group_hosts[g] > 0)
					json_array_append_new(groups, json_pack(
						"{s:s,s:i,s:i}", "group",
						g < place_cluster_ngroups(x->c)
							? place_cluster_group_name(x->c, g) : "(none)",
						"hosts", o->group_hosts[g], "busy", o->group_busy[g]));
			for (int j = 0; j < o->njobs; j++)
				if (o->jobs[j].heavy && o->jobs[j].groups > 1)
					json_array_append_new(span, json_pack(
						"{s:i,s:i,s:i}", "job", (json_int_t)o->jobs[j].job,
						"hosts", o->jobs[j].nhosts, "groups", o->jobs[j].groups));
		}
		json_object_set_new(root, "groups", groups);
		json_object_set_new(root, "heavy_jobs_spanning_groups", span);
		for (int l = 0; x->leaf_util && l < report_nleaves(x->c); l++)
			if (x->leaf_util[l] >= x->o->util_threshold)
				json_array_append_new(hot, json_pack("{s:s,s:f}", "leaf",
						      report_leaf_name(x->c, l), "util", x->leaf_util[l]));
		json_object_set_new(root, "hot_links", x->leaf_util ? hot : json_null());
		if (!x->leaf_util)
			json_decref(hot);
		if (have_stats) {
			json_object_set_new(sh, "decisions", json_integer(st.shadow));
			json_object_set_new(sh, "agree", json_integer(st.agree));
			json_object_set_new(sh, "agreement", st.shadow ? json_real((double)st.agree / st.shadow)
								   : json_null());
			json_object_set_new(sh, "chosen_cheaper", json_integer(st.chosen_cheaper));
			json_object_set_new(sh, "baseline_cheaper", json_integer(st.baseline_cheaper));
			json_object_set_new(sh, "chosen_cost_mean", isnan(st.chosen_cost_mean)
					    ? json_null() : json_real(st.chosen_cost_mean));
			json_object_set_new(sh, "baseline_cost_mean", isnan(st.baseline_cost_mean)
					    ? json_null() : json_real(st.baseline_cost_mean));
			json_object_set_new(sh, "predicted_slowdown_mean", isnan(st.predicted_slowdown_mean)
					    ? json_null() : json_real(st.predicted_slowdown_mean));
			json_object_set_new(sh, "realised_slowdown_mean", isnan(st.realised_slowdown_mean)
					    ? json_null() : json_real(st.realised_slowdown_mean));
			json_object_set_new(sh, "jobs_with_outcome", json_integer(st.realised));
			json_object_set_new(root, "shadow", sh);
		} else {
			json_decref(sh);
			json_object_set_new(root, "shadow", json_null());
		}
		json_object_set_new(root, "notes", notes_json(x));
		rc = emit_json(root);
	} else {
		printf("%scluster%s as of %s (%s%s%s)\n", BOLD, RESET, fmt_time(x->at, tb, sizeof(tb)),
		       x->have_rest ? "slurmrestd" : "", x->have_rest && x->have_log ? " + " : "",
		       x->have_log ? "decision log" : "");
		if (x->have_occ) {
			const report_occupancy *o = &x->occ;

			printf("  %d hosts: %d busy, %d idle; %d running job%s; fragmentation %.0f%% "
			       "%s(idle hosts in groups that are not wholly idle)%s\n\n",
			       o->nhosts, o->busy_hosts, o->idle_hosts, o->njobs,
			       o->njobs == 1 ? "" : "s", 100 * o->fragmentation, DIM, RESET);
			printf("  %s%-14s %6s %6s %6s  %-24s %s%s\n", BOLD, "group", "hosts", "busy",
			       "idle", "occupancy", "jobs", RESET);
			for (int g = 0; g < o->ngroups; g++) {
				int jobs = 0;

				if (o->group_hosts[g] == 0)
					continue;
				for (int j = 0; j < o->njobs; j++)
					for (int i = 0; i < o->jobs[j].nhosts; i++)
						if (place_cluster_host_group(x->c, o->jobs[j].hosts[i]) ==
						    (g < place_cluster_ngroups(x->c) ? g : -1)) {
							jobs++;
							break;
						}
				printf("  %-14s %6d %6d %6d  ",
				       g < place_cluster_ngroups(x->c) ? place_cluster_group_name(x->c, g)
								       : "(none)",
				       o->group_hosts[g], o->group_busy[g],
				       o->group_hosts[g] - o->group_busy[g]);
				bar(o->group_busy[g], o->group_hosts[g], 20);
				printf(" %3.0f%% %d\n", 100.0 * o->group_busy[g] / o->group_hosts[g], jobs);
			}
			printf("\n  heavy jobs spanning groups: %d\n", o->heavy_spanning);
			for (int j = 0; j < o->njobs; j++) {
				const report_job *jb = &o->jobs[j];
				char *names;
				int n;

				if (!(jb->heavy && jb->groups > 1))
					continue;
				names = report_span_names(x->c, jb->hosts, jb->nhosts, 0, &n);
				printf("    %sjob %u%s: %d hosts over %d groups (%s)\n", YELLOW, jb->job,
				       RESET, jb->nhosts, jb->groups, names ? names : "?");
				free(names);
			}
		}
		if (x->leaf_util) {
			int n = 0;

			printf("\n  links at or above %.0f%% utilisation:\n", 100 * x->o->util_threshold);
			for (int l = 0; l < report_nleaves(x->c); l++)
				if (x->leaf_util[l] >= x->o->util_threshold) {
					printf("    %s%-28s up-links %.0f%%%s\n", RED,
					       report_leaf_name(x->c, l), 100 * x->leaf_util[l], RESET);
					n++;
				}
			if (!n)
				printf("    none\n");
		} else {
			printf("\n  link utilisation: no telemetry snapshot (--telemetry FILE)\n");
		}
		if (have_stats) {
			printf("\n  %sshadow mode%s (%d decisions with a baseline)\n", BOLD, RESET, st.shadow);
			if (st.shadow) {
				printf("    chosen and baseline agree     %d of %d (%.0f%%)\n", st.agree,
				       st.shadow, 100.0 * st.agree / st.shadow);
				printf("    where they differ             chosen cheaper %d, baseline cheaper %d\n",
				       st.chosen_cheaper, st.baseline_cheaper);
				if (!isnan(st.chosen_cost_mean))
					printf("    mean predicted cost           chosen %.4g, baseline %.4g\n",
					       st.chosen_cost_mean, st.baseline_cost_mean);
				if (!isnan(st.chosen_groups_mean))
					printf("    mean groups (multi-host)      chosen %.2f, baseline %.2f\n",
					       st.chosen_groups_mean, st.baseline_groups_mean);
			}
			if (st.realised)
				printf("    predicted vs realised slowdown %.3f vs %.3f over %d ended jobs "
				       "(mean abs error %.3f)\n", st.predicted_slowdown_mean,
				       st.realised_slowdown_mean, st.realised, st.slowdown_mae);
			else
				printf("    predicted vs realised: no ended job with an outcome in the log\n");
		}
		print_notes(x);
	}
	if (!rc)
		rc = write_pictures(x, "topognn cluster", -1);
	return rc;
}

/* ---- whatif ---------------------------------------------------------------- */

static int cmd_whatif(struct ctx *x)
{
	place_config cfg;
	place_engine *e;
	place_state *s;
	place_request r;
	place_decision d;
	topo_error err;
	char buf[1024], why[256];
	int pol = place_policy_parse(x->o->policy), base = place_policy_parse(x->o->baseline);
	int cls = place_comm_class_parse(x->o->comm), rc, G;

	if (!x->c) {
		fprintf(stderr, PROG ": whatif needs the cluster graph (--graph FILE)%s%s\n",
			x->nnotes ? ": " : "", x->nnotes ? x->notes[0] : "");
		return 1;
	}
	if (x->o->nodes <= 0) {
		fprintf(stderr, PROG ": whatif needs --nodes N\n");
		return 2;
	}
	if (pol < 0 || base < 0 || cls < 0) {
		fprintf(stderr, PROG ": unknown %s \"%s\"\n", pol < 0 ? "policy" : base < 0 ? "baseline"
			: "communication class", pol < 0 ? x->o->policy : base < 0 ? x->o->baseline
			: x->o->comm);
		return 2;
	}
	if (!x->have_log && !x->have_rest)
		note(x, "no running jobs known (no decision log, no slurmrestd): deciding on an idle cluster");
	if (build_occupancy(x))
		return 1;
	G = x->o->host_gpus > 0 ? x->o->host_gpus : 8;
	s = report_occupancy_state(&x->occ, G, x->o->host_cores);
	place_config_init(&cfg);
	e = s ? place_engine_new(x->c, &cfg, &err) : NULL;
	if (!e) {
		fprintf(stderr, PROG ": %s\n", s ? topo_error_format(&err, buf, sizeof(buf))
						 : "out of memory");
		place_state_free(s);
		return 1;
	}
	memset(&r, 0, sizeof(r));
	r.job_id = 0xfffffffeu;
	r.min_hosts = r.max_hosts = x->o->nodes;
	r.gpus_per_host = x->o->gpus_per_node;
	r.exclusive = x->o->gpus_per_node == 0;
	r.comm.cls = (place_comm_class)cls;
	r.comm.pattern = PLACE_PATTERN_RING;
	if (cls == PLACE_COMM_HEAVY) {
		/* a data-parallel job of the ResNet-50 kind (docs/simulator.md) */
		r.comm.bytes_per_iter = 102011648.0;
		r.comm.compute_s_per_iter = 1.095314e-3;
	} else if (cls == PLACE_COMM_LIGHT) {
		r.comm.bytes_per_iter = 1e6;
		r.comm.compute_s_per_iter = 0.1;
	}
	rc = place_decide(e, s, &r, (place_policy)pol, (place_policy)base, &d);
	if (x->o->json) {
		json_t *root = json_object();
		char *line = rc == 0 || !d.ok ? place_record_json(x->c, &r, &d,
				place_engine_scorer_name(e, (place_policy)pol), 0) : NULL;

		json_object_set_new(root, "running_jobs", json_integer(x->occ.njobs));
		json_object_set_new(root, "busy_hosts", json_integer(x->occ.busy_hosts));
		json_object_set_new(root, "decision", line ? json_loads(line, 0, NULL) : json_null());
		json_object_set_new(root, "notes", notes_json(x));
		free(line);
		rc = emit_json(root);
	} else {
		printf("%swhat if%s a job asked now for %d host%s x %d GPUs, comm %s "
		       "(%d jobs running, %d hosts busy)\n", BOLD, RESET, x->o->nodes,
		       x->o->nodes == 1 ? "" : "s", x->o->gpus_per_node, x->o->comm, x->occ.njobs,
		       x->occ.busy_hosts);
		if (rc != 0 || !d.ok) {
			printf("  %sno placement now%s: %s\n", RED, RESET, d.reason);
			rc = 1;
		} else {
			report_choice ch = {0}, b = {0};
			const char *names[4096];
			int ng, nl;
			char *groups = report_span_names(x->c, d.chosen.hosts, d.chosen.nhosts, 0, &ng);
			char *leaves = report_span_names(x->c, d.chosen.hosts, d.chosen.nhosts, 1, &nl);
			char *hl;

			for (int i = 0; i < d.chosen.nhosts && i < 4096; i++)
				names[i] = place_cluster_host_name(x->c, d.chosen.hosts[i]);
			hl = topo_hostlist_compress(names, (size_t)d.chosen.nhosts, &err);
			printf("  %s would choose %s%s%s\n", x->o->policy, BOLD, hl ? hl : "?", RESET);
			printf("  groups %d: %s\n  leaves %d: %s\n  hop diameter %d, predicted cost %.4g "
			       "(communication %.3g ms, fragmentation %.3g), %.1f us\n", ng,
			       groups ? groups : "?", nl, leaves ? leaves : "?", d.chosen.diameter,
			       d.chosen.cost, d.chosen.comm_time_s * 1e3, d.chosen.frag_cost,
			       d.latency_us);
			if (d.baseline.nhosts) {
				ch.cost = d.chosen.cost;
				ch.frag_cost = d.chosen.frag_cost;
				ch.groups = d.chosen.groups;
				ch.leaves = d.chosen.leaves;
				ch.diameter = d.chosen.diameter;
				b.cost = d.baseline.cost;
				b.frag_cost = d.baseline.frag_cost;
				b.groups = d.baseline.groups;
				b.leaves = d.baseline.leaves;
				b.diameter = d.baseline.diameter;
				if (d.baseline.nhosts == d.chosen.nhosts &&
				    !memcmp(d.baseline.hosts, d.chosen.hosts,
					    (size_t)d.chosen.nhosts * sizeof(int)))
					snprintf(why, sizeof(why), "same hosts as the choice");
				else
					why_lost(&ch, &b, why, sizeof(why));
				printf("  baseline %s: %d groups, %d leaves, cost %.4g: %s\n", x->o->baseline,
				       d.baseline.groups, d.baseline.leaves, d.baseline.cost, why);
			}
			free(hl);
			free(groups);
			free(leaves);
			rc = 0;
		}
		print_notes(x);
	}
	place_engine_free(e);
	place_state_free(s);
	return rc;
}

/* ---- history ---------------------------------------------------------------- */

static int cmd_history(struct ctx *x)
{
	double since = -INFINITY, until = INFINITY, ref = report_log_last_time(&x->log);
	report_stats st;
	char t1[64], t2[64], buf[1024];
	int exported = -1, rc = 0;
	topo_error err;

	if (!x->have_log) {
		fprintf(stderr, PROG ": history needs the decision log (--decisions FILE)%s%s\n",
			x->nnotes ? ": " : "", x->nnotes ? x->notes[0] : "");
		return 1;
	}
	if ((x->o->since && parse_time(x->o->since, ref, &since)) ||
	    (x->o->until && parse_time(x->o->until, ref, &until))) {
		fprintf(stderr, PROG ": --since/--until: not a time (epoch seconds, "
				"YYYY-MM-DDTHH:MM:SS, or 2h/30m/7d back from the newest log line)\n");
		return 2;
	}
	if (report_stats_compute(&x->log, since, until, &st))
		return 1;
	if (x->o->export_path) {
		if (!x->c) {
			fprintf(stderr, PROG ": --export needs the cluster graph (--graph FILE)\n");
			return 1;
		}
		exported = report_history_export(x->c, &x->log, since, until,
						 x->o->host_gpus > 0 ? x->o->host_gpus : 8,
						 x->o->export_path, &err);
		if (exported < 0) {
			fprintf(stderr, PROG ": %s\n", topo_error_format(&err, buf, sizeof(buf)));
			return 1;
		}
		if (exported == 0)
			note(x, "no decision in the window has an observed outcome (end event): nothing exported");
	}
	if (x->o->json) {
		json_t *root = json_object(), *pol = json_object();

		json_object_set_new(root, "since", isinf(since) ? json_null() : json_real(since));
		json_object_set_new(root, "until", isinf(until) ? json_null() : json_real(until));
		json_object_set_new(root, "decisions", json_integer(st.decisions));
		json_object_set_new(root, "placed", json_integer(st.placed));
		json_object_set_new(root, "failed", json_integer(st.failed));
		for (int i = 0; i < st.npolicies; i++)
			json_object_set_new(pol, st.policies[i].policy, json_integer(st.policies[i].n));
		json_object_set_new(root, "policies", pol);
		json_object_set_new(root, "latency_p50_us", isnan(st.latency_p50_us) ? json_null()
				    : json_real(st.latency_p50_us));
		json_object_set_new(root, "latency_p99_us", isnan(st.latency_p99_us) ? json_null()
				    : json_real(st.latency_p99_us));
		json_object_set_new(root, "shadow_decisions", json_integer(st.shadow));
		json_object_set_new(root, "shadow_agree", json_integer(st.agree));
		json_object_set_new(root, "heavy_jobs", json_integer(st.heavy));
		json_object_set_new(root, "heavy_spanning_groups", json_integer(st.heavy_spanning));
		json_object_set_new(root, "ended", json_integer(st.ended));
		json_object_set_new(root, "exported_samples", exported < 0 ? json_null()
				    : json_integer(exported));
		json_object_set_new(root, "notes", notes_json(x));
		rc = emit_json(root);
	} else {
		printf("%shistory%s %s .. %s\n", BOLD, RESET,
		       isinf(since) ? "start" : fmt_time(since, t1, sizeof(t1)),
		       isinf(until) ? "end" : fmt_time(until, t2, sizeof(t2)));
		printf("  decisions          %d (%d placed, %d without placement)\n", st.decisions,
		       st.placed, st.failed);
		printf("  by policy         ");
		for (int i = 0; i < st.npolicies; i++)
			printf(" %s %d", st.policies[i].policy, st.policies[i].n);
		printf("\n");
		if (st.nlatency)
			printf("  latency            p50 %.1f us, p99 %.1f us, max %.1f us\n",
			       st.latency_p50_us, st.latency_p99_us, st.latency_max_us);
		printf("  heavy multi-host   %d, of which %d over several groups\n", st.heavy,
		       st.heavy_spanning);
		if (st.shadow)
			printf("  shadow agreement   %d of %d (%.0f%%)\n", st.agree, st.shadow,
			       100.0 * st.agree / st.shadow);
		if (st.not_followed)
			printf("  not followed       %d (Slurm allocated other hosts)\n", st.not_followed);
		printf("  ended with outcome %d\n", st.realised);
		if (exported > 0)
			printf("  exported           %d samples to %s (topognn-train --samples %s)\n",
			       exported, x->o->export_path, x->o->export_path);
		print_notes(x);
	}
	return rc;
}

/* ---- metrics ---------------------------------------------------------------- */

static int cmd_metrics(struct ctx *x)
{
	report_stats st;

	memset(&st, 0, sizeof(st));
	if (x->have_log && report_stats_compute(&x->log, -INFINITY, INFINITY, &st))
		return 1;
	if (!x->have_log) {
		report_log empty = {0};

		report_stats_compute(&empty, -INFINITY, INFINITY, &st);
	}
	if (build_occupancy(x))
		return 1;
	print_notes(x);
	return report_metrics_write(stdout, &st, x->have_occ ? &x->occ : NULL,
				    x->log.skipped) ? 1 : 0;
}

/* ---- main --------------------------------------------------------------------- */

/* SLURM_JWT, else the token `scontrol token` prints (SLURM_JWT=...). */
static char *find_token(void)
{
	const char *env = getenv("SLURM_JWT");
	char line[4096], *tok = NULL;
	FILE *p;

	if (env && *env)
		return strdup(env);
	p = popen("scontrol token 2>/dev/null", "r");
	if (!p)
		return NULL;
	while (fgets(line, sizeof(line), p))
		if (!strncmp(line, "SLURM_JWT=", 10) && !tok) {
			line[strcspn(line, "\r\n")] = '\0';
			tok = strdup(line + 10);
		}
	pclose(p);
	return tok;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct ctx x;
	int rc;

	if (parse_opts(argc, argv, &o))
		return 2;
	use_colour = o.colour >= 0 ? o.colour
				   : isatty(STDOUT_FILENO) && !getenv("NO_COLOR") && !o.json;
	memset(&x, 0, sizeof(x));
	x.o = &o;
	if (o.rest_url) {
		x.token = find_token();
	}
	if (load_sources(&x)) {
		rc = 1;
		goto out;
	}
	if (!strcmp(o.cmd, "job"))
		rc = cmd_job(&x);
	else if (!strcmp(o.cmd, "cluster"))
		rc = cmd_cluster(&x);
	else if (!strcmp(o.cmd, "whatif"))
		rc = cmd_whatif(&x);
	else if (!strcmp(o.cmd, "history"))
		rc = cmd_history(&x);
	else
		rc = cmd_metrics(&x);
out:
	if (x.have_occ)
		report_occupancy_free(&x.occ);
	if (x.have_log)
		report_log_free(&x.log);
	if (x.have_rest)
		report_rest_free(&x.rest);
	free(x.leaf_util);
	free(x.token);
	place_cluster_free(x.c);
	topo_graph_free(x.g);
	return rc;
}
