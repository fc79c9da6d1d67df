/*
 * report_dashboard: the Grafana dashboard as a static HTML page of inline
 * SVG charts. See report_dashboard.h.
 */
#include "report_dashboard.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report_cluster.h"
#include "report_history.h"
#include "report_svg.h"

const char *const report_dashboard_titles[REPORT_DASHBOARD_PANELS] = {
	"Heavy jobs spanning groups (share)", "Multi-group heavy jobs", "Shadow agreement",
	"Predicted cost advantage", "Decision latency", "Decision latency p50 / p99",
	"Fallbacks and deferrals", "Decisions by policy", "Hosts busy / idle", "Fragmentation",
	"Busy and idle hosts by group", "IRQ audit findings by node",
	"IRQ audit / enforce failures by node", "Decision log and job starts",
	"Holds for locality", "Hold wait: got / predicted"};

/* Panels as wide as the page (w 24 in the Grafana JSON), by index. */
static int wide(int p)
{
	return p == 10 || p == 13;
}

#define MAX_BINS 200
#define MAX_SERIES 8
#define MAX_BARS 256
#define W 560   /* chart size */
#define H 200
#define PL 60   /* plot area margins */
#define PR 12
#define PT 10
#define PB 28

typedef struct series {
	char name[64];
	double v[MAX_BINS];
} series;

typedef struct dash {
	FILE *f;
	const report_log *log;
	int nb;
	double t0, w;              /* first bin's start, bin width in seconds */
	report_stats *win, *cum;   /* per bin: its own decisions; all up to its end */
	report_stats *day;         /* per bin: the 24 h up to its end */
	int have_occ;              /* the four below are set (a cluster was given) */
	double busy[MAX_BINS], idle[MAX_BINS], running[MAX_BINS], frag[MAX_BINS];
	series s[MAX_SERIES];
	int ns;
	const char *bar_label[MAX_BARS];
	char bar_buf[MAX_BARS][96];
	double bar_value[MAX_BARS];
	int bar_colour[MAX_BARS], nbars;
} dash;

static void esc(dash *d, const char *s)
{
	report_svg_escape(d->f, s);
}

static double bin_end(const dash *d, int i)
{
	return d->t0 + (i + 1) * d->w;
}

static void fmt_t(double t, char *buf, size_t n)
{
	time_t s = (time_t)t;
	struct tm tm;

	if (!gmtime_r(&s, &tm) || !strftime(buf, n, "%m-%d %H:%M", &tm))
		snprintf(buf, n, "%.0f", t);
}

static void fmt_v(double v, int percent, char *buf, size_t n)
{
	if (percent)
		snprintf(buf, n, "%.0f%%", v * 100);
	else if (fabs(v) >= 10000)
		snprintf(buf, n, "%.0fk", v / 1000);
	else
		snprintf(buf, n, "%g", v);
}

/* The smallest of 1, 2, 2.5, 5 x 10^k at or above m (1 when m <= 0). */
static double nice_max(double m)
{
	static const double steps[] = {1, 2, 2.5, 5, 10};
	double p;

	if (!(m > 0))
		return 1;
	p = pow(10, floor(log10(m)));
	for (int k = 0; k < 5; k++)
		if (steps[k] * p >= m * (1 - 1e-12))
			return steps[k] * p;
	return 10 * p;
}

static void nodata(dash *d, const char *why)
{
	fputs("<p class=\"nodata\">No data: ", d->f);
	esc(d, why);
	fputs("</p>\n", d->f);
}

static double *series_add(dash *d, const char *name)
{
	series *s = &d->s[d->ns++];

	snprintf(s->name, sizeof(s->name), "%s", name);
	for (int i = 0; i < MAX_BINS; i++)
		s->v[i] = NAN;
	return s->v;
}

static void legend(dash *d, int n, const char *const *names, const int *colours)
{
	char c[8];

	fputs("<ul class=\"legend\">", d->f);
	for (int j = 0; j < n; j++) {
		fprintf(d->f, "<li><span class=\"swatch\" style=\"background:%s\"></span>",
			report_svg_colour(colours ? colours[j] : j, c));
		esc(d, names[j]);
		fputs("</li>", d->f);
	}
	fputs("</ul>\n", d->f);
}

static void svg_open(dash *d, int height)
{
	fprintf(d->f, "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		      "height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n", W, height, W, height);
}

/* The time axis under a plot area of height ph. */
static void time_axis(dash *d, int ph)
{
	int at[3] = {0, d->nb / 2, d->nb - 1};
	char tb[32];

	for (int k = 0; k < 3; k++) {
		if (k > 0 && at[k] == at[k - 1])
			continue;
		fmt_t(bin_end(d, at[k]), tb, sizeof(tb));
		/* the outer labels end inside the chart */
		fprintf(d->f, "<text class=\"axis\" x=\"%.1f\" y=\"%d\" text-anchor=\"%s\">%s</text>\n",
			k == 0 ? (double)PL : k == 2 ? (double)(W - PR)
			       : PL + (W - PL - PR) * (at[k] + 0.5) / d->nb,
			PT + ph + 18, k == 0 ? "start" : k == 2 ? "end" : "middle", tb);
	}
}

/* The current series as lines over the bins; gaps where a value is NaN. */
static void line_chart(dash *d, int percent)
{
	const int pw = W - PL - PR, ph = H - PT - PB;
	double lo = 0, hi = 0;
	const char *names[MAX_SERIES];
	char c[8], vb[32];
	int any = 0;

	for (int j = 0; j < d->ns; j++)
		for (int i = 0; i < d->nb; i++)
			if (isfinite(d->s[j].v[i])) {
				any = 1;
				hi = fmax(hi, d->s[j].v[i]);
				lo = fmin(lo, d->s[j].v[i]);
			}
	if (!any) {
		nodata(d, "the log has nothing for this panel");
		return;
	}
	hi = percent && hi <= 1 ? 1 : nice_max(hi);
	lo = lo < 0 ? -nice_max(-lo) : 0;
	svg_open(d, H);
	for (int k = 0; k <= 4; k++) {
		double y = PT + ph * (1 - k / 4.0);

		fmt_v(lo + (hi - lo) * k / 4, percent, vb, sizeof(vb));
		fprintf(d->f, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>"
			      "<text class=\"axis\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
			PL, W - PR, y, y, PL - 4, y + 4, vb);
	}
	time_axis(d, ph);
	for (int j = 0; j < d->ns; j++) {
		int pen = 0;

		report_svg_colour(j, c);
		fprintf(d->f, "<path class=\"line\" stroke=\"%s\" d=\"", c);
		for (int i = 0; i < d->nb; i++) {
			double v = d->s[j].v[i];

			if (!isfinite(v)) {
				pen = 0;
				continue;
			}
			fprintf(d->f, "%s%.1f %.1f ", pen ? "L" : "M", PL + pw * (i + 0.5) / d->nb,
				PT + ph * (hi - v) / (hi - lo));
			pen = 1;
		}
		fputs("\"/>\n", d->f);
		for (int i = 0; i < d->nb; i++)
			if (isfinite(d->s[j].v[i]))
				fprintf(d->f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2\" fill=\"%s\"/>",
					PL + pw * (i + 0.5) / d->nb,
					PT + ph * (hi - d->s[j].v[i]) / (hi - lo), c);
		fputc('\n', d->f);
	}
	fputs("</svg>\n", d->f);
	for (int j = 0; j < d->ns; j++)
		names[j] = d->s[j].name;
	legend(d, d->ns, names, NULL);
}

static void bar_add(dash *d, const char *a, const char *b, double v, int colour)
{
	if (d->nbars == MAX_BARS)
		return;
	snprintf(d->bar_buf[d->nbars], sizeof(d->bar_buf[0]), "%s %s", a, b);
	d->bar_label[d->nbars] = d->bar_buf[d->nbars];
	d->bar_value[d->nbars] = v;
	d->bar_colour[d->nbars++] = colour;
}

/* The current bars, one row each. */
static void bar_chart(dash *d, const char *none)
{
	const int lw = 200, row = 18;
	double hi = 0;
	char c[8];

	if (d->nbars == 0) {
		nodata(d, none);
		return;
	}
	for (int i = 0; i < d->nbars; i++)
		hi = fmax(hi, d->bar_value[i]);
	hi = nice_max(hi);
	svg_open(d, d->nbars * row + 8);
	for (int i = 0; i < d->nbars; i++) {
		double y = 4 + i * row;

		fputs("<text class=\"axis\" x=\"0\" ", d->f);
		fprintf(d->f, "y=\"%.1f\">", y + 13);
		esc(d, d->bar_label[i]);
		fprintf(d->f, "</text><rect class=\"track\" x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%d\"/>"
			      "<rect x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>"
			      "<text class=\"axis\" x=\"%d\" y=\"%.1f\">%g</text>\n",
			lw, y, W - lw - 50, row - 4, lw, y, (W - lw - 50) * d->bar_value[i] / hi,
			row - 4, report_svg_colour(d->bar_colour[i], c), W - 44, y + 13,
			d->bar_value[i]);
	}
	fputs("</svg>\n", d->f);
}

/* Decisions per bin and latency bucket, darker for more. */
static void latency_heatmap(dash *d)
{
	const int pw = W - PL - PR, ph = H - PT - PB, nbk = REPORT_LATENCY_BUCKETS;
	long hi = 0, c;
	char vb[32];

	for (int i = 0; i < d->nb; i++)
		for (int b = 0; b < nbk; b++)
			hi = (c = d->win[i].latency_bucket[b] - (b ? d->win[i].latency_bucket[b - 1] : 0)) > hi
				     ? c : hi;
	if (hi == 0) {
		nodata(d, "no decision in the log has a latency");
		return;
	}
	svg_open(d, H);
	for (int b = 0; b < nbk; b++) {
		double y = PT + ph * (nbk - 1 - b) / (double)nbk;

		if (isinf(report_latency_bounds[b]))
			snprintf(vb, sizeof(vb), "+Inf");
		else
			snprintf(vb, sizeof(vb), "%g", report_latency_bounds[b]);
		fprintf(d->f, "<text class=\"axis\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
			PL - 4, y + ph / (double)nbk / 2 + 4, vb);
		for (int i = 0; i < d->nb; i++) {
			c = d->win[i].latency_bucket[b] - (b ? d->win[i].latency_bucket[b - 1] : 0);
			if (c > 0)
				fprintf(d->f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
					      "fill=\"#e8590c\" fill-opacity=\"%.3f\"><title>%ld</title></rect>",
					PL + pw * i / (double)d->nb, y, pw / (double)d->nb - 1,
					ph / (double)nbk - 1, 0.15 + 0.85 * (double)c / (double)hi, c);
		}
		fputc('\n', d->f);
	}
	time_axis(d, ph);
	fputs("</svg>\n", d->f);
	fprintf(d->f, "<p class=\"note\">Decisions per bin and latency bucket (upper bound, &micro;s); "
		      "darkest: %ld.</p>\n", hi);
}

/* ---- the panels ---------------------------------------------------------------- */

static double ratio(int a, int b)
{
	return b > 0 ? (double)a / b : NAN;
}

static void panel_quality(dash *d, int p)
{
	double *a, *b;

	d->ns = 0;
	if (p == 0) {
		a = series_add(d, "cross-group share");
		for (int i = 0; i < d->nb; i++)
			a[i] = ratio(d->win[i].heavy_spanning, d->win[i].heavy);
	} else if (p == 1) {
		a = series_add(d, "spanning groups");
		b = series_add(d, "heavy jobs");
		for (int i = 0; i < d->nb; i++) {
			a[i] = d->win[i].heavy_spanning;
			b[i] = d->win[i].heavy;
		}
	} else if (p == 2) {
		a = series_add(d, "per bin");
		b = series_add(d, "whole log");
		for (int i = 0; i < d->nb; i++) {
			a[i] = ratio(d->win[i].agree, d->win[i].shadow);
			b[i] = ratio(d->cum[i].agree, d->cum[i].shadow);
		}
	} else {
		a = series_add(d, "baseline cost - topognn cost");
		for (int i = 0; i < d->nb; i++)
			a[i] = d->cum[i].shadow ? d->cum[i].baseline_cost_mean - d->cum[i].chosen_cost_mean
						: NAN;
	}
	line_chart(d, p == 0 || p == 2);
}

static void panel_decisions(dash *d, int p)
{
	double *v[4];

	d->ns = 0;
	if (p == 5) {
		v[0] = series_add(d, "p50");
		v[1] = series_add(d, "p99");
		for (int i = 0; i < d->nb; i++)
			if (d->win[i].nlatency) {
				v[0][i] = d->win[i].latency_p50_us;
				v[1][i] = d->win[i].latency_p99_us;
			}
	} else if (p == 6) {
		v[0] = series_add(d, "fallbacks to Slurm");
		v[1] = series_add(d, "deferred for locality");
		v[2] = series_add(d, "started after waiting");
		v[3] = series_add(d, "not followed by Slurm");
		for (int i = 0; i < d->nb; i++) {
			v[0][i] = d->win[i].failed;
			v[1][i] = d->win[i].deferred;
			v[2][i] = d->win[i].waited;
			v[3][i] = d->win[i].not_followed;
		}
	} else {
		const report_stats *all = &d->cum[d->nb - 1];

		for (int k = 0; k < all->npolicies && k < MAX_SERIES; k++) {
			double *a = series_add(d, all->policies[k].policy);

			for (int i = 0; i < d->nb; i++) {
				a[i] = 0;
				for (int m = 0; m < d->win[i].npolicies; m++)
					if (!strcmp(d->win[i].policies[m].policy, all->policies[k].policy))
						a[i] = d->win[i].policies[m].n;
			}
		}
	}
	line_chart(d, 0);
}

/* Holds closed per bin by place in the queue, and the median of got over
 * predicted wait at each bin's end: over the day before it by place in the
 * queue (topognn_hold_wait_ratio_last_day), over the log for all holds. */
static void panel_holds(dash *d, int p)
{
	double *v[3];

	d->ns = 0;
	if (p == 14) {
		v[0] = series_add(d, "held at the queue head");
		v[1] = series_add(d, "held behind it");
		v[2] = series_add(d, "kept their promise");
		for (int i = 0; i < d->nb; i++) {
			v[0][i] = d->win[i].holds_at[0];
			v[1][i] = d->win[i].holds_at[1];
			v[2][i] = d->win[i].holds_kept;
		}
	} else {
		v[0] = series_add(d, "at the queue head, last day");
		v[1] = series_add(d, "behind it, last day");
		v[2] = series_add(d, "all holds, whole log");
		for (int i = 0; i < d->nb; i++) {
			v[0][i] = d->day[i].hold_ratio_median_at[0];
			v[1][i] = d->day[i].hold_ratio_median_at[1];
			v[2][i] = d->cum[i].hold_ratio_median;
		}
	}
	line_chart(d, 0);
}

static void panel_cluster(dash *d, const report_occupancy *now, int p)
{
	const place_cluster *c;

	d->ns = d->nbars = 0;
	if (!d->have_occ) {
		nodata(d, "needs the cluster graph (--graph)");
		return;
	}
	if (p == 8) {
		memcpy(series_add(d, "busy"), d->busy, sizeof(d->busy));
		memcpy(series_add(d, "idle"), d->idle, sizeof(d->idle));
		memcpy(series_add(d, "running jobs"), d->running, sizeof(d->running));
		line_chart(d, 0);
		return;
	}
	if (p == 9) {
		memcpy(series_add(d, "fragmentation"), d->frag, sizeof(d->frag));
		line_chart(d, 1);
		return;
	}
	c = now->c;
	for (int g = 0; g < now->ngroups; g++)
		if (now->group_hosts[g] > 0) {
			const char *name = g < place_cluster_ngroups(c) ? place_cluster_group_name(c, g)
									  : "none";

			bar_add(d, name, "busy", now->group_busy[g], 0);
			bar_add(d, name, "idle", now->group_idle[g], 1);
		}
	bar_chart(d, "the graph has no group");
	legend(d, 2, (const char *const[]){"busy", "idle"}, NULL);
}

static void panel_nodes(dash *d, const report_node_summary *ns, int p)
{
	d->nbars = 0;
	if (!ns) {
		nodata(d, "needs the node reports (--node-reports DIR)");
		return;
	}
	for (int i = 0; i < ns->n; i++) {
		const report_node_health *h = &ns->nodes[i];

		if (p == 11)
			for (int k = 0; k < REPORT_NODE_IRQ_KINDS; k++)
				bar_add(d, h->host, report_node_irq_kinds[k], h->findings[k], k);
		else
			bar_add(d, h->host, h->mode[0] ? h->mode : "unknown",
				strcmp(h->status, "error") == 0, 3);
	}
	bar_chart(d, "no node report in the directory");
	if (p == 11)
		legend(d, REPORT_NODE_IRQ_KINDS, report_node_irq_kinds, NULL);
}

static void panel_log(dash *d, const report_node_summary *ns)
{
	double *a;

	d->ns = 0;
	a = series_add(d, "decisions logged");
	for (int i = 0; i < d->nb; i++)
		a[i] = d->win[i].decisions;
	line_chart(d, 0);
	fprintf(d->f, "<p class=\"note\">%d log lines, %d unreadable", d->log->lines,
		d->log->skipped);
	if (ns)
		fprintf(d->f, "; %d jobs with node reports (%d files, %d unreadable)", ns->jobs,
			ns->reports, ns->unreadable);
	fputs(".</p>\n", d->f);
}

/* ---- the page ------------------------------------------------------------------ */

static const char style[] =
	"body{font-family:sans-serif;background:#f4f5f5;color:#24292e;margin:16px}"
	"h1{font-size:22px;margin:0 0 4px}p.sub{color:#555;margin:0 0 12px;font-size:13px}"
	".grid{display:grid;grid-template-columns:repeat(2,minmax(0,1fr));gap:12px}"
	".panel{background:#fff;border:1px solid #d8d9da;border-radius:3px;padding:8px 10px}"
	".panel.wide{grid-column:span 2}"
	"h2.title{font-size:14px;margin:0 0 6px}"
	"svg.chart{max-width:100%;height:auto;display:block}"
	".grid line{stroke:#e4e4e4}text.axis{font-size:11px;fill:#555}"
	"path.line{fill:none;stroke-width:2}rect.track{fill:#f0f0f0}"
	"ul.legend{list-style:none;padding:0;margin:4px 0 0;font-size:12px}"
	"ul.legend li{display:inline-block;margin-right:14px}"
	".swatch{display:inline-block;width:12px;height:4px;margin-right:5px;vertical-align:middle}"
	"p.nodata{color:#888;font-style:italic;margin:40px 0;text-align:center}"
	"p.note{font-size:12px;color:#555;margin:4px 0 0}";

static int bins_compute(dash *d, const place_cluster *c)
{
	const report_log *log = d->log;
	double last = report_log_last_time(log), first = last;

	for (int i = 0; i < log->n; i++)
		if (log->d[i].timestamp > 0 && log->d[i].timestamp < first)
			first = log->d[i].timestamp;
	d->t0 = first;
	d->w = last > first ? (last - first) / d->nb : 1;
	d->win = calloc((size_t)d->nb, sizeof(report_stats));
	d->cum = calloc((size_t)d->nb, sizeof(report_stats));
	d->day = calloc((size_t)d->nb, sizeof(report_stats));
	if (!d->win || !d->cum || !d->day)
		return -1;
	for (int i = 0; i < d->nb; i++) {
		double until = i == d->nb - 1 ? INFINITY : nextafter(bin_end(d, i), -INFINITY);
		report_occupancy o;

		if (report_stats_compute(log, i ? d->t0 + i * d->w : -INFINITY, until, &d->win[i]) ||
		    report_stats_compute(log, -INFINITY, until, &d->cum[i]) ||
		    report_stats_compute(log, bin_end(d, i) - 86400, until, &d->day[i]))
			return -1;
		if (!c)
			continue;
		if (report_occupancy_init(&o, c))
			return -1;
		if (report_occupancy_add_running(&o, log, i == d->nb - 1 ? last : bin_end(d, i))) {
			report_occupancy_free(&o);
			return -1;
		}
		report_occupancy_finish(&o);
		d->busy[i] = o.busy_hosts;
		d->idle[i] = o.idle_hosts;
		d->running[i] = o.njobs;
		d->frag[i] = o.fragmentation;
		d->have_occ = 1;
		report_occupancy_free(&o);
	}
	return 0;
}

int report_dashboard_write(FILE *f, const report_log *log, const place_cluster *c,
			   const report_node_summary *nodes, const report_dashboard_opts *opts)
{
	dash *d = calloc(1, sizeof(*d));
	report_occupancy now = {0};
	char t1[32], t2[32];
	int rc = -1, have_now = 0;

	if (!d)
		return -1;
	d->f = f;
	d->log = log;
	d->nb = opts && opts->bins >= 2 && opts->bins <= MAX_BINS ? opts->bins : 48;
	if (bins_compute(d, c))
		goto out;
	if (c) {
		if (report_occupancy_init(&now, c))
			goto out;
		have_now = 1;
		if (report_occupancy_add_running(&now, log, report_log_last_time(log)))
			goto out;
		report_occupancy_finish(&now);
	}
	fmt_t(d->t0, t1, sizeof(t1));
	fmt_t(bin_end(d, d->nb - 1), t2, sizeof(t2));
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		   "<title>topognn</title><style>%s</style></head><body>\n<h1>topognn</h1>\n"
		   "<p class=\"sub\">", style);
	if (opts && opts->source) {
		esc(d, opts->source);
		fputs(": ", f);
	}
	fprintf(f, "%d decisions from %s to %s UTC in %d bins of %.0f s; the panels of "
		   "contrib/grafana/topognn.json</p>\n<div class=\"grid\">\n", log->n, t1, t2, d->nb,
		d->w);
	for (int p = 0; p < REPORT_DASHBOARD_PANELS; p++) {
		fprintf(f, "<section class=\"panel%s\" id=\"panel-%d\"><h2 class=\"title\">",
			wide(p) ? " wide" : "", p + 1);
		esc(d, report_dashboard_titles[p]);
		fputs("</h2>\n", f);
		if (p < 4)
			panel_quality(d, p);
		else if (p == 4)
			latency_heatmap(d);
		else if (p < 8)
			panel_decisions(d, p);
		else if (p < 11)
			panel_cluster(d, &now, p);
		else if (p < 13)
			panel_nodes(d, nodes, p);
		else if (p == 13)
			panel_log(d, nodes);
		else
			panel_holds(d, p);
		fputs("</section>\n", f);
	}
	fputs("</div>\n</body></html>\n", f);
	rc = ferror(f) ? -1 : 0;
out:
	if (have_now)
		report_occupancy_free(&now);
	free(d->win);
	free(d->cum);
	free(d->day);
	free(d);
	return rc;
}
