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
 *   placement-report shadow [--since T]
 *                                     the learned policy against model and tree-switches
 *                                     (shadow mode), with intervals and a verdict
 *   placement-report metrics          topognn's own metrics, Prometheus text format
 *   placement-report dashboard --html FILE
 *                                     the Grafana dashboard's panels as a static page
 *
 * Sources: the decision log (--decisions FILE) and the live cluster through
 * slurmrestd (--slurmrestd URL). Either may be missing; the report says so
 * and shows what the other can. Output: an aligned table (colour on a
 * terminal unless NO_COLOR is set), --json, and --svg/--html pictures.
 * See placement-report(1). This file: options, sources, output helpers and
 * main; one file per subcommand (placement-report.h).
 */
#define _GNU_SOURCE /* strptime, timegm */
#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "place.h"
#include "place_record.h"
#include "place_scorer.h"
#include "topo_io.h"
#include "topo_json.h"
#include "report_cluster.h"
#include "report_history.h"
#include "report_log.h"
#include "report_metrics.h"
#include "report_node.h"
#include "report_rest.h"
#include "report_svg.h"
#include "sim.h"
#include "topo_hostlist.h"

#include "placement-report.h"
#include "topo_num.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " [options] job JOBID\n"
		"       " PROG " [options] cluster\n"
		"       " PROG " [options] whatif --nodes N --gpus-per-node G [--comm heavy|light|none]\n"
		"       " PROG " [options] history [--since T] [--until T] [--export FILE]\n"
		"       " PROG " [options] shadow [--since T] [--until T]\n"
		"       " PROG " [options] metrics\n"
		"       " PROG " [options] dashboard [--html FILE]\n"
		"sources:  --decisions FILE  --graph FILE.json | --ibnetdiscover FILE | --fattree SPEC\n"
		"          --slurmrestd URL  (JWT from SLURM_JWT, else `scontrol token`;\n"
		"                            https://, unix:/path or http://localhost;\n"
		"                            --allow-plain-http for http:// to another host)\n"
		"          --node-reports DIR  --telemetry FILE  --at T\n"
		"output:   --json  --svg FILE  --html FILE  --color/--no-color  --top N\n"
		"whatif:   --policy P (default model)  --baseline P (default tree)\n"
		"          --host-gpus N (default: graph, else 8)  --host-cores N (default 112)\n"
		"cluster:  --util-threshold X (default 0.8)\n");
}

void note(struct ctx *x, const char *fmt, ...)
{
	va_list ap;

	if (x->nnotes == 4)
		return;
	va_start(ap, fmt);
	vsnprintf(x->notes[x->nnotes++], sizeof(x->notes[0]), fmt, ap);
	va_end(ap);
}

/* ---- colour -------------------------------------------------------------- */

int use_colour;

const char *C(const char *code)
{
	return use_colour ? code : "";
}

/* ---- time ---------------------------------------------------------------- */

/* "1700000000", "2023-11-14T22:13:20" (UTC), or a span back from `ref`:
 * "90m", "2h", "7d", "30s". -1 if unreadable. */
int parse_time(const char *s, double ref, double *out)
{
	char *end;
	size_t n = strlen(s);
	double v;
	struct tm tm;

	if (topo_parse_double(s, -DBL_MAX, DBL_MAX, &v) == 0) {
		*out = v;
		return 0;
	}
	if (n > 1 && topo_parse_double_n(s, n - 1, 0, DBL_MAX, &v) == 0) {
		char u = s[n - 1];
		double unit = u == 's' ? 1 : u == 'm' ? 60 : u == 'h' ? 3600 : u == 'd' ? 86400 : 0;

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

int log_window(const struct ctx *x, const char *cmd, double *since, double *until)
{
	double ref = report_log_last_time(&x->log);

	if (!x->have_log) {
		fprintf(stderr, PROG ": %s needs the decision log (--decisions FILE)%s%s\n", cmd,
			x->nnotes ? ": " : "", x->nnotes ? x->notes[0] : "");
		return 1;
	}
	if ((x->o->since && parse_time(x->o->since, ref, since)) ||
	    (x->o->until && parse_time(x->o->until, ref, until))) {
		fprintf(stderr, PROG ": --since/--until: not a time (epoch seconds, "
				"YYYY-MM-DDTHH:MM:SS, or 2h/30m/7d back from the newest log line)\n");
		return 2;
	}
	return 0;
}

const char *fmt_time(double t, char *buf, size_t len)
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
	return topo_parse_int(s, lo, 100000000, out);
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	enum { O_DECISIONS = 256, O_GRAPH, O_IBND, O_SVG, O_HTML, O_NODEDIR, O_TELEMETRY,
	       O_REST, O_EXPORT, O_SINCE, O_UNTIL, O_AT, O_JSON, O_COLOR, O_NOCOLOR, O_NODES,
	       O_GPN, O_HGPUS, O_HCORES, O_COMM, O_POLICY, O_BASELINE, O_UTIL, O_TOP,
	       O_PLAIN, O_FATTREE };
	static const struct option lo[] = {
		{"decisions", 1, 0, O_DECISIONS}, {"graph", 1, 0, O_GRAPH},
		{"ibnetdiscover", 1, 0, O_IBND}, {"fattree", 1, 0, O_FATTREE},
		{"svg", 1, 0, O_SVG}, {"html", 1, 0, O_HTML},
		{"node-reports", 1, 0, O_NODEDIR}, {"telemetry", 1, 0, O_TELEMETRY},
		{"slurmrestd", 1, 0, O_REST}, {"export", 1, 0, O_EXPORT}, {"since", 1, 0, O_SINCE},
		{"until", 1, 0, O_UNTIL}, {"at", 1, 0, O_AT}, {"json", 0, 0, O_JSON},
		{"color", 0, 0, O_COLOR}, {"colour", 0, 0, O_COLOR}, {"no-color", 0, 0, O_NOCOLOR},
		{"nodes", 1, 0, O_NODES}, {"gpus-per-node", 1, 0, O_GPN},
		{"host-gpus", 1, 0, O_HGPUS}, {"host-cores", 1, 0, O_HCORES},
		{"comm", 1, 0, O_COMM}, {"policy", 1, 0, O_POLICY}, {"baseline", 1, 0, O_BASELINE},
		{"util-threshold", 1, 0, O_UTIL}, {"top", 1, 0, O_TOP}, {"help", 0, 0, 'h'},
		{"allow-plain-http", 0, 0, O_PLAIN},
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
		case O_FATTREE: o->graph = optarg; o->graph_kind = "fattree"; break;
		case O_SVG: o->svg = optarg; break;
		case O_HTML: o->html = optarg; break;
		case O_NODEDIR: o->node_dir = optarg; break;
		case O_TELEMETRY: o->telemetry = optarg; break;
		case O_REST: o->rest_url = optarg; break;
		case O_PLAIN: o->plain_http = 1; break;
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
			if (topo_parse_double(optarg, 0, HUGE_VAL, &o->util_threshold)) {
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
	    strcmp(o->cmd, "history") && strcmp(o->cmd, "metrics") && strcmp(o->cmd, "dashboard") &&
	    strcmp(o->cmd, "shadow")) {
		fprintf(stderr, PROG ": unknown command \"%s\" (job, cluster, whatif, history, shadow, metrics, dashboard)\n",
			o->cmd);
		return -1;
	}
	return 0;
}

/* ---- sources ------------------------------------------------------------- */

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
	root = topo_json_load_input(x->o->telemetry, 0, 0, &je);
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

static int is_dir(const char *path)
{
	struct stat st;

	errno = 0;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
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
	if (o->node_dir && !is_dir(o->node_dir)) {
		fprintf(stderr, PROG ": --node-reports %s: %s\n", o->node_dir,
			errno ? strerror(errno) : "not a directory");
		return -1;
	}
	if (o->decisions) {
		if (report_log_load(o->decisions, &x->log, &err) != 0) {
			note(x, "no decision log: %s", topo_error_format(&err, buf, sizeof(buf)));
		} else if (x->log.n == 0 && x->log.skipped > 0) {
			/* a log of nothing but garbage is a wrong file, not an empty history */
			fprintf(stderr, PROG ": %s: no readable decision in %d line%s (first: %s)\n",
				o->decisions, x->log.skipped, x->log.skipped == 1 ? "" : "s",
				topo_error_format(&x->log.first_skip, buf, sizeof(buf)));
			report_log_free(&x->log);
			return -1;
		} else {
			x->have_log = 1;
			if (x->log.skipped)
				note(x, "%d line%s of the decision log skipped (first: %s)",
				     x->log.skipped, x->log.skipped == 1 ? "" : "s",
				     topo_error_format(&x->log.first_skip, buf, sizeof(buf)));
		}
	}
	if (o->rest_url) {
		if (report_rest_fetch(o->rest_url, x->token, getenv("SLURM_USER_NAME"),
				      o->plain_http ? REPORT_REST_PLAIN_HTTP : 0, &x->rest, &err) == 0)
			x->have_rest = 1;
		else
			note(x, "live cluster not available: %s",
			     topo_error_format(&err, buf, sizeof(buf)));
	}
	if (!x->have_log && !x->have_rest && strcmp(o->cmd, "whatif") &&
	    !(o->node_dir && !strcmp(o->cmd, "metrics"))) {
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
int build_occupancy(struct ctx *x)
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
			place_comm m = d ? report_decision_comm(d) : (place_comm){0};

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
	} else if (x->have_log && report_occupancy_add_running(&x->occ, &x->log, x->at)) {
		return -1;
	}
	report_occupancy_finish(&x->occ);
	return 0;
}

void print_notes(const struct ctx *x)
{
	for (int i = 0; i < x->nnotes; i++)
		fprintf(stderr, PROG ": %s%s%s\n", YELLOW, x->notes[i], RESET);
}

json_t *notes_json(const struct ctx *x)
{
	json_t *a = json_array();

	for (int i = 0; i < x->nnotes; i++)
		json_array_append_new(a, json_string(x->notes[i]));
	return a;
}

int emit_json(json_t *root)
{
	int rc = json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	fputc('\n', stdout);
	json_decref(root);
	return rc ? 1 : 0;
}

/* The picture(s) asked for. */
int write_pictures(struct ctx *x, const char *title, int highlight)
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
	else if (!strcmp(o.cmd, "shadow"))
		rc = cmd_shadow(&x);
	else if (!strcmp(o.cmd, "dashboard"))
		rc = cmd_dashboard(&x);
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
