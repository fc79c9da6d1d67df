/*
 * report_svg: draw the occupancy of the cluster (spines, leaves, groups,
 * hosts coloured by job, legend) as SVG or HTML. See report_svg.h.
 *
 * Layout, top to bottom: title; a row of spine (and core) switches; one
 * column per group holding its name and occupancy, its leaf switches and a
 * grid of its hosts; the legend. Leaf-to-spine cables are thin grey lines
 * behind everything, so the columns stay readable on large fabrics.
 */
#define _GNU_SOURCE /* qsort_r */
#include "report_svg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "place_view.h"

#define MARGIN 24
#define HOST 24        /* host square side */
#define HOST_GAP 4
#define HOST_COLS 4
#define LEAF_W 30
#define LEAF_H 16
#define SPINE_W 96
#define SPINE_H 20
#define TOP_SPINES 84
#define TOP_GROUPS 160
#define LEGEND_COL_W 380
#define LEGEND_ROW_H 20

void report_svg_opts_init(report_svg_opts *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->highlight = -1;
	opts->util_threshold = 0.8;
}

/* Golden-angle hues at fixed saturation/lightness: neighbours differ. */
const char *report_svg_colour(int i, char buf[8])
{
	double h = fmod(i * 137.508, 360.0) / 60.0, s = 0.65, l = 0.45;
	double c = (1 - fabs(2 * l - 1)) * s, x = c * (1 - fabs(fmod(h, 2.0) - 1)), m = l - c / 2;
	double r = 0, g = 0, b = 0;

	switch ((int)h) {
	case 0: r = c; g = x; break;
	case 1: r = x; g = c; break;
	case 2: g = c; b = x; break;
	case 3: g = x; b = c; break;
	case 4: r = x; b = c; break;
	default: r = c; b = x; break;
	}
	snprintf(buf, 8, "#%02x%02x%02x", (int)lround((r + m) * 255), (int)lround((g + m) * 255),
		 (int)lround((b + m) * 255));
	return buf;
}

void report_svg_escape(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

/* The last two dash-separated parts ("A09-P1-IBLEAF-04-01" -> "04-01"). */
static const char *short_name(const char *s)
{
	const char *p = s + strlen(s);
	int dashes = 0;

	while (p > s) {
		if (p[-1] == '-' && ++dashes == 2)
			break;
		p--;
	}
	return *p ? p : s;
}

typedef struct layout {
	int *spine_vid, nspines;
	double *spine_x;        /* centre */
	int *group_x, *group_w; /* per group (incl. pseudo) */
	int *leaf_x, *leaf_y;   /* top-left per leaf */
	int *host_x, *host_y;
	int width, groups_bottom, height;
	int ngroups_shown;
} layout;

static void layout_free(layout *L)
{
	free(L->spine_vid);
	free(L->spine_x);
	free(L->group_x);
	free(L->group_w);
	free(L->leaf_x);
	free(L->leaf_y);
	free(L->host_x);
	free(L->host_y);
}

static int cmp_vid_name(const void *a, const void *b, void *g)
{
	return strcmp(topo_graph_vertex(g, *(const int *)a)->name,
		      topo_graph_vertex(g, *(const int *)b)->name);
}

static int make_layout(const report_occupancy *o, layout *L)
{
	const place_cluster *c = o->c;
	const topo_graph *g = place_cluster_graph(c);
	int G = o->ngroups, x = MARGIN, tallest = 0;
	int *leaves_in = calloc((size_t)G, sizeof(int));

	memset(L, 0, sizeof(*L));
	L->spine_vid = malloc((topo_graph_nvertices(g) + 1) * sizeof(int));
	L->group_x = calloc((size_t)G, sizeof(int));
	L->group_w = calloc((size_t)G, sizeof(int));
	L->leaf_x = calloc((size_t)place_cluster_nleaves(c) + 1, sizeof(int));
	L->leaf_y = calloc((size_t)place_cluster_nleaves(c) + 1, sizeof(int));
	L->host_x = calloc((size_t)place_cluster_nhosts(c) + 1, sizeof(int));
	L->host_y = calloc((size_t)place_cluster_nhosts(c) + 1, sizeof(int));
	if (!leaves_in || !L->spine_vid || !L->group_x || !L->group_w || !L->leaf_x ||
	    !L->leaf_y || !L->host_x || !L->host_y) {
		free(leaves_in);
		return -1;
	}
	for (size_t v = 0; v < topo_graph_nvertices(g); v++) {
		const topo_vertex *tv = topo_graph_vertex(g, (int)v);

		if (tv->kind == TOPO_V_SWITCH &&
		    (tv->level == TOPO_LEVEL_SPINE || tv->level == TOPO_LEVEL_CORE))
			L->spine_vid[L->nspines++] = (int)v;
	}
	qsort_r(L->spine_vid, (size_t)L->nspines, sizeof(int), cmp_vid_name, (void *)g);
	for (int l = 0; l < place_cluster_nleaves(c); l++)
		leaves_in[place_cluster_leaf_group(c, l) >= 0 ? place_cluster_leaf_group(c, l) : G - 1]++;
	/* group columns */
	for (int gi = 0; gi < G; gi++) {
		int w = HOST_COLS * (HOST + HOST_GAP) - HOST_GAP, lw, rows, n = o->group_hosts[gi];
		int k = 0;

		if (n == 0 && leaves_in[gi] == 0) {
			L->group_w[gi] = -1; /* not drawn */
			continue;
		}
		lw = leaves_in[gi] * (LEAF_W + 4) - 4;
		if (lw > w)
			w = lw;
		w += 16;
		L->group_x[gi] = x;
		L->group_w[gi] = w;
		for (int l = 0; l < place_cluster_nleaves(c); l++)
			if ((place_cluster_leaf_group(c, l) >= 0 ? place_cluster_leaf_group(c, l) : G - 1) == gi) {
				L->leaf_x[l] = x + 8 + k++ * (LEAF_W + 4);
				L->leaf_y[l] = TOP_GROUPS + 40;
			}
		k = 0;
		for (int h = 0; h < place_cluster_nhosts(c); h++)
			if ((place_cluster_host_group(c, h) >= 0 ? place_cluster_host_group(c, h) : G - 1) == gi) {
				L->host_x[h] = x + 8 + (k % HOST_COLS) * (HOST + HOST_GAP);
				L->host_y[h] = TOP_GROUPS + 40 + LEAF_H + 16 + (k / HOST_COLS) * (HOST + HOST_GAP);
				k++;
			}
		rows = (n + HOST_COLS - 1) / HOST_COLS;
		if (40 + LEAF_H + 16 + rows * (HOST + HOST_GAP) + 8 > tallest)
			tallest = 40 + LEAF_H + 16 + rows * (HOST + HOST_GAP) + 8;
		x += w + 12;
		L->ngroups_shown++;
	}
	free(leaves_in);
	L->width = x - 12 + MARGIN;
	if (L->width < 2 * LEGEND_COL_W + 2 * MARGIN)
		L->width = 2 * LEGEND_COL_W + 2 * MARGIN;
	if (L->width < L->nspines * (SPINE_W + 8) + 2 * MARGIN)
		L->width = L->nspines * (SPINE_W + 8) + 2 * MARGIN;
	L->spine_x = malloc(((size_t)L->nspines + 1) * sizeof(double));
	if (!L->spine_x)
		return -1;
	for (int s = 0; s < L->nspines; s++)
		L->spine_x[s] = MARGIN + (L->width - 2.0 * MARGIN) * (s + 0.5) / L->nspines;
	L->groups_bottom = TOP_GROUPS + tallest;
	{
		int cols = (L->width - 2 * MARGIN) / LEGEND_COL_W, rows;

		if (cols < 1)
			cols = 1;
		rows = (o->njobs + cols - 1) / cols;
		L->height = L->groups_bottom + 50 + (rows > 0 ? rows : 1) * LEGEND_ROW_H + MARGIN;
	}
	return 0;
}

static int spine_index(const layout *L, int vid)
{
	for (int s = 0; s < L->nspines; s++)
		if (L->spine_vid[s] == vid)
			return s;
	return -1;
}

static int spine_index(const layout *L, int vid);

/* One line per (group, spine) pair that has cables, as thick as the number
 * of leaf-to-spine cables between them: readable where one line per cable
 * would be a grey fog. */
static void draw_cables(FILE *f, const report_occupancy *o, const layout *L)
{
	const place_cluster *c = o->c;
	int G = o->ngroups, S = L->nspines;
	int *n = calloc((size_t)G * S + 1, sizeof(int));

	if (!n)
		return;
	for (int l = 0; l < place_cluster_nleaves(c); l++) {
		int ns, lg = place_cluster_leaf_group(c, l);
		const int *spines = place_cluster_leaf_spines(c, l, &ns);

		for (int k = 0; k < ns; k++) {
			int sp = spine_index(L, spines[k]);

			if (sp >= 0)
				n[(lg >= 0 ? lg : G - 1) * S + sp]++;
		}
	}
	fputs("<g class=\"cables\" stroke=\"#9aa5b1\" stroke-opacity=\"0.55\">\n", f);
	for (int g = 0; g < G; g++)
		for (int sp = 0; sp < S; sp++)
			if (n[g * S + sp] > 0 && L->group_w[g] > 0)
				fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" "
					   "stroke-width=\"%.1f\"><title>%d cable%s</title></line>\n",
					L->spine_x[sp], TOP_SPINES + SPINE_H,
					L->group_x[g] + L->group_w[g] * (0.2 + 0.6 * (sp + 0.5) / S),
					TOP_GROUPS, 0.6 + 0.5 * n[g * S + sp], n[g * S + sp],
					n[g * S + sp] == 1 ? "" : "s");
	fputs("</g>\n", f);
	free(n);
}

static void draw_spines(FILE *f, const report_occupancy *o, const layout *L)
{
	const topo_graph *g = place_cluster_graph(o->c);

	fputs("<g class=\"spines\">\n", f);
	fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"row\">spine switches</text>\n", MARGIN,
		TOP_SPINES - 8);
	for (int s = 0; s < L->nspines; s++) {
		const topo_vertex *v = topo_graph_vertex(g, L->spine_vid[s]);

		fprintf(f, "<g class=\"switch spine\" data-switch=\"");
		report_svg_escape(f, v->name);
		fprintf(f, "\"><title>");
		report_svg_escape(f, v->name);
		fprintf(f, " (%s)</title><rect x=\"%.1f\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"3\" "
			   "fill=\"#3b4a5a\"/><text x=\"%.1f\" y=\"%d\" class=\"sw\">",
			topo_level_name(v->level), L->spine_x[s] - SPINE_W / 2.0, TOP_SPINES, SPINE_W,
			SPINE_H, L->spine_x[s], TOP_SPINES + 14);
		report_svg_escape(f, short_name(v->name));
		fputs("</text></g>\n", f);
	}
	fputs("</g>\n", f);
}

static void draw_group(FILE *f, const report_occupancy *o, const layout *L,
		       const report_svg_opts *opts, int gi)
{
	const place_cluster *c = o->c;
	int G = o->ngroups;
	const char *name = gi < place_cluster_ngroups(c) ? place_cluster_group_name(c, gi) : "no group";
	char col[8];

	fprintf(f, "<g class=\"group\" data-group=\"");
	report_svg_escape(f, name);
	fprintf(f, "\">\n<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"6\" "
		   "fill=\"#f7f7f4\" stroke=\"#b9b9b0\"/>\n",
		L->group_x[gi], TOP_GROUPS, L->group_w[gi], L->groups_bottom - TOP_GROUPS);
	fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"gname\">", L->group_x[gi] + 8, TOP_GROUPS + 17);
	report_svg_escape(f, name);
	fprintf(f, "</text>\n<text x=\"%d\" y=\"%d\" class=\"gocc\">%d/%d busy</text>\n",
		L->group_x[gi] + 8, TOP_GROUPS + 31, o->group_busy[gi], o->group_hosts[gi]);
	for (int l = 0; l < place_cluster_nleaves(c); l++) {
		int hot;
		const char *lname = place_cluster_leaf_name(c, l);

		if ((place_cluster_leaf_group(c, l) >= 0 ? place_cluster_leaf_group(c, l) : G - 1) != gi)
			continue;
		hot = opts->leaf_util && opts->leaf_util[l] >= opts->util_threshold;
		fprintf(f, "<g class=\"switch leaf%s\" data-switch=\"", hot ? " hot" : "");
		report_svg_escape(f, lname);
		fprintf(f, "\"><title>");
		report_svg_escape(f, lname);
		if (opts->leaf_util)
			fprintf(f, ", up-links %.0f%% utilised", 100 * opts->leaf_util[l]);
		fprintf(f, "</title><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"2\" "
			   "fill=\"%s\"/><text x=\"%d\" y=\"%d\" class=\"lf\">",
			L->leaf_x[l], L->leaf_y[l], LEAF_W, LEAF_H, hot ? "#d62728" : "#6b7f93",
			L->leaf_x[l] + LEAF_W / 2, L->leaf_y[l] + 11);
		report_svg_escape(f, short_name(lname));
		fputs("</text></g>\n", f);
	}
	for (int h = 0; h < place_cluster_nhosts(c); h++) {
		int j, faded;
		unsigned fl;

		if ((place_cluster_host_group(c, h) >= 0 ? place_cluster_host_group(c, h) : G - 1) != gi)
			continue;
		j = o->host_job[h];
		fl = o->host_flags[h];
		faded = opts->highlight >= 0 && j != opts->highlight;
		fprintf(f, "<g class=\"host%s\" data-host=\"", j >= 0 ? " busy" : " idle");
		report_svg_escape(f, place_cluster_host_name(c, h));
		if (j >= 0)
			fprintf(f, "\" data-job=\"%u", o->jobs[j].job);
		fprintf(f, "\"%s><title>", faded ? " opacity=\"0.3\"" : "");
		report_svg_escape(f, place_cluster_host_name(c, h));
		if (j >= 0)
			fprintf(f, ": job %u%s", o->jobs[j].job,
				o->host_njobs[h] > 1 ? " and others" : "");
		else
			fputs(fl & PLACE_HOST_DOWN ? ": down" : fl & PLACE_HOST_DRAIN ? ": drained"
										   : ": idle", f);
		fprintf(f, "</title><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"3\" "
			   "fill=\"%s\" stroke=\"%s\"/>",
			L->host_x[h], L->host_y[h], HOST, HOST,
			j >= 0 ? report_svg_colour(o->jobs[j].colour, col)
			       : fl & PLACE_HOST_DOWN ? "#4a4a4a" : fl & PLACE_HOST_DRAIN ? "#a0a0a0"
											 : "#e4e4e0",
			j >= 0 ? "#222" : "#a9a9a2");
		if (j >= 0)
			fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"hj\">%u</text>",
				L->host_x[h] + HOST / 2, L->host_y[h] + HOST / 2 + 4, o->jobs[j].job);
		fputs("</g>\n", f);
	}
	fputs("</g>\n", f);
}

static void draw_legend(FILE *f, const report_occupancy *o, const layout *L)
{
	int cols = (L->width - 2 * MARGIN) / LEGEND_COL_W, y0 = L->groups_bottom + 30;
	char col[8];

	if (cols < 1)
		cols = 1;
	fprintf(f, "<g class=\"legend\">\n<text x=\"%d\" y=\"%d\" class=\"row\">%d running job%s"
		   "%s</text>\n",
		MARGIN, y0 - 8, o->njobs, o->njobs == 1 ? "" : "s",
		o->njobs ? "" : " (the cluster is idle)");
	for (int j = 0; j < o->njobs; j++) {
		const report_job *jb = &o->jobs[j];
		int x = MARGIN + (j % cols) * LEGEND_COL_W, y = y0 + (j / cols) * LEGEND_ROW_H;

		fprintf(f, "<g class=\"legend-job\" data-job=\"%u\"><rect x=\"%d\" y=\"%d\" "
			   "width=\"14\" height=\"14\" rx=\"2\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">"
			   "job %u: %d host%s, %d group%s, %d lea%s%s%s%s</text></g>\n",
			jb->job, x, y, report_svg_colour(jb->colour, col), x + 20, y + 12, jb->job,
			jb->nhosts, jb->nhosts == 1 ? "" : "s", jb->groups, jb->groups == 1 ? "" : "s",
			jb->leaves, jb->leaves == 1 ? "f" : "ves",
			jb->heavy ? ", heavy" : "", jb->policy[0] ? ", " : "", jb->policy);
	}
	fputs("</g>\n", f);
}

static const char *const style =
	"text{font-family:'DejaVu Sans',Arial,sans-serif;fill:#222}"
	".title{font-size:18px;font-weight:bold}.sub{font-size:12px;fill:#555}"
	".row{font-size:11px;fill:#666;text-transform:uppercase;letter-spacing:1px}"
	".sw{font-size:10px;fill:#fff;text-anchor:middle}"
	".lf{font-size:8px;fill:#fff;text-anchor:middle}"
	".gname{font-size:13px;font-weight:bold}.gocc{font-size:11px;fill:#555}"
	".hj{font-size:9px;fill:#fff;text-anchor:middle;font-weight:bold}"
	".legend text{font-size:12px}";

int report_svg_write(FILE *f, const report_occupancy *o, const report_svg_opts *opts)
{
	layout L;
	report_svg_opts dflt;

	if (!opts) {
		report_svg_opts_init(&dflt);
		opts = &dflt;
	}
	if (make_layout(o, &L)) {
		layout_free(&L);
		return -1;
	}
	if (opts->html) {
		fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>", f);
		report_svg_escape(f, opts->title ? opts->title : "topognn placement");
		fputs("</title><style>body{margin:0;background:#fff}</style></head><body>\n", f);
	} else {
		fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
	}
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		   "viewBox=\"0 0 %d %d\">\n<style>%s</style>\n"
		   "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n",
		L.width, L.height, L.width, L.height, style);
	fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"title\">", MARGIN, 30);
	report_svg_escape(f, opts->title ? opts->title : "topognn placement");
	fprintf(f, "</text>\n<text x=\"%d\" y=\"%d\" class=\"sub\">%d hosts, %d busy, %d idle; "
		   "fragmentation %.0f%%; %d heavy job%s across groups",
		MARGIN, 48, o->nhosts, o->busy_hosts, o->idle_hosts, 100 * o->fragmentation,
		o->heavy_spanning, o->heavy_spanning == 1 ? "" : "s");
	if (opts->subtitle) {
		fputs(" \xc2\xb7 ", f);
		report_svg_escape(f, opts->subtitle);
	}
	fputs("</text>\n", f);
	draw_cables(f, o, &L);
	draw_spines(f, o, &L);
	for (int gi = 0; gi < o->ngroups; gi++)
		if (L.group_w[gi] > 0)
			draw_group(f, o, &L, opts, gi);
	draw_legend(f, o, &L);
	fputs("</svg>\n", f);
	if (opts->html)
		fputs("</body></html>\n", f);
	layout_free(&L);
	return ferror(f) ? -1 : 0;
}
