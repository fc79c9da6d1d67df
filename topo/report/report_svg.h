/*
 * report_svg: the cluster as a picture, for people who would rather look
 * than read: spines on top, each group as a column with its leaf switches
 * and its hosts, every job's hosts in the job's colour with the job id on
 * them, a legend of jobs below, and lines from leaves to the spines they
 * are cabled to. Hosts carry data-host/data-job attributes and a tooltip,
 * so a browser (or a test in headless Chromium) can find them.
 *
 * Written as a standalone SVG document or as an HTML page around it.
 */
#ifndef REPORT_SVG_H
#define REPORT_SVG_H

#include <stdio.h>

#include "report_cluster.h"

typedef struct report_svg_opts {
	const char *title;      /* heading; NULL: "topognn placement" */
	const char *subtitle;   /* e.g. the log and the time; may be NULL */
	int html;               /* 1: an HTML page around the SVG */
	int highlight;          /* index into o->jobs to emphasise, -1 none */
	const double *leaf_util; /* per leaf index 0..1 (telemetry), NULL none */
	double util_threshold;  /* leaves at or above it are drawn hot */
} report_svg_opts;

void report_svg_opts_init(report_svg_opts *opts);

/* The colour of palette index i as "#rrggbb" into buf (8 bytes). */
const char *report_svg_colour(int i, char buf[8]);

/* s as XML/HTML text (<, >, & and " escaped). */
void report_svg_escape(FILE *f, const char *s);

/* Draw o to f. Returns 0, or -1 on a write error or memory exhaustion. */
int report_svg_write(FILE *f, const report_occupancy *o, const report_svg_opts *opts);

#endif
