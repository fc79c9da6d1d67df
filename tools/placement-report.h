/*
 * placement-report.h: what the subcommands of placement-report share (see
 * placement-report.c for the tool, placement-report(1) for its use). One
 * file per subcommand: placement-report-job.c, -cluster.c, -whatif.c,
 * -history.c (history, metrics and dashboard), -shadow.c; the options, the sources and the
 * output helpers live in placement-report.c. The reasoning about a
 * decision (why an alternative lost) is in the report library
 * (report_why.h), where the unit tests reach it.
 */
#ifndef PLACEMENT_REPORT_H
#define PLACEMENT_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "place.h"
#include "report_cluster.h"
#include "report_log.h"
#include "report_rest.h"
#include "topo_graph.h"

#define PROG "placement-report"

struct opts {
	const char *cmd, *arg;
	const char *decisions, *graph, *graph_kind, *svg, *html, *node_dir, *telemetry;
	const char *rest_url, *export_path, *since, *until, *at;
	int json, colour, plain_http;
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

/* A note about a source (shown with the report, in --json under "notes"). */
void note(struct ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void print_notes(const struct ctx *x);
json_t *notes_json(const struct ctx *x);
/* Print root on stdout (and release it); 0 or 1. */
int emit_json(json_t *root);
/* The --svg/--html pictures, job `highlight` (-1 none) drawn out; 0 or 1. */
int write_pictures(struct ctx *x, const char *title, int highlight);
/* x->occ from slurmrestd or the log; 0, or -1 when memory runs out. */
int build_occupancy(struct ctx *x);
/* "1700000000", "2023-11-14T22:13:20" (UTC), or "90m"/"2h"/"7d" back from ref. */
int parse_time(const char *s, double ref, double *out);
/* The decision log and the --since/--until window that history and shadow
 * need; 0, or the exit code after the message naming cmd. */
int log_window(const struct ctx *x, const char *cmd, double *since, double *until);
const char *fmt_time(double t, char *buf, size_t len);

/* Colour on a terminal unless NO_COLOR or --no-color. */
extern int use_colour;
const char *C(const char *code);
#define BOLD C("\033[1m")
#define DIM C("\033[2m")
#define RED C("\033[31m")
#define GREEN C("\033[32m")
#define YELLOW C("\033[33m")
#define RESET C("\033[0m")

/* The subcommands; each returns the exit status. */
int cmd_job(struct ctx *x);
int cmd_cluster(struct ctx *x);
int cmd_whatif(struct ctx *x);
int cmd_history(struct ctx *x);
int cmd_shadow(struct ctx *x);
int cmd_metrics(struct ctx *x);
int cmd_dashboard(struct ctx *x);

#endif
