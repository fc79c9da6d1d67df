/*
 * placement-report-cluster.c: placement-report cluster: occupancy per group, fragmentation,
 * heavy jobs spanning groups, hot links and shadow-mode statistics.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "placement-report.h"
#include "report_history.h"

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

static int cluster_json(struct ctx *x, const report_stats *st)
{
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
	if (st) {
		json_object_set_new(sh, "decisions", json_integer(st->shadow));
		json_object_set_new(sh, "agree", json_integer(st->agree));
		json_object_set_new(sh, "agreement", st->shadow ? json_real((double)st->agree / st->shadow)
							   : json_null());
		json_object_set_new(sh, "chosen_cheaper", json_integer(st->chosen_cheaper));
		json_object_set_new(sh, "baseline_cheaper", json_integer(st->baseline_cheaper));
		json_object_set_new(sh, "chosen_cost_mean", isnan(st->chosen_cost_mean)
				    ? json_null() : json_real(st->chosen_cost_mean));
		json_object_set_new(sh, "baseline_cost_mean", isnan(st->baseline_cost_mean)
				    ? json_null() : json_real(st->baseline_cost_mean));
		json_object_set_new(sh, "predicted_slowdown_mean", isnan(st->predicted_slowdown_mean)
				    ? json_null() : json_real(st->predicted_slowdown_mean));
		json_object_set_new(sh, "realised_slowdown_mean", isnan(st->realised_slowdown_mean)
				    ? json_null() : json_real(st->realised_slowdown_mean));
		json_object_set_new(sh, "jobs_with_outcome", json_integer(st->realised));
		json_object_set_new(root, "shadow", sh);
	} else {
		json_decref(sh);
		json_object_set_new(root, "shadow", json_null());
	}
	json_object_set_new(root, "notes", notes_json(x));
	return emit_json(root);
}

/* The text form's table of groups and its heavy jobs spanning groups. */
static void print_occupancy(struct ctx *x)
{
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

static void print_shadow(const report_stats *st)
{
	printf("\n  %sshadow mode%s (%d decisions with a baseline)\n", BOLD, RESET, st->shadow);
	if (st->shadow) {
		printf("    chosen and baseline agree     %d of %d (%.0f%%)\n", st->agree,
		       st->shadow, 100.0 * st->agree / st->shadow);
		printf("    where they differ             chosen cheaper %d, baseline cheaper %d\n",
		       st->chosen_cheaper, st->baseline_cheaper);
		if (!isnan(st->chosen_cost_mean))
			printf("    mean predicted cost           chosen %.4g, baseline %.4g\n",
			       st->chosen_cost_mean, st->baseline_cost_mean);
		if (!isnan(st->chosen_groups_mean))
			printf("    mean groups (multi-host)      chosen %.2f, baseline %.2f\n",
			       st->chosen_groups_mean, st->baseline_groups_mean);
	}
	if (st->realised)
		printf("    predicted vs realised slowdown %.3f vs %.3f over %d ended jobs "
		       "(mean abs error %.3f)\n", st->predicted_slowdown_mean,
		       st->realised_slowdown_mean, st->realised, st->slowdown_mae);
	else
		printf("    predicted vs realised: no ended job with both a slowdown predicted by "
		       "the model scorer and an outcome in the log\n");
}

static void cluster_print(struct ctx *x, const report_stats *st)
{
	char tb[64];

	printf("%scluster%s as of %s (%s%s%s)\n", BOLD, RESET, fmt_time(x->at, tb, sizeof(tb)),
	       x->have_rest ? "slurmrestd" : "", x->have_rest && x->have_log ? " + " : "",
	       x->have_log ? "decision log" : "");
	if (x->have_occ)
		print_occupancy(x);
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
	if (st)
		print_shadow(st);
	print_notes(x);
}

int cmd_cluster(struct ctx *x)
{
	report_stats st;
	int have_stats = 0, rc;

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
		rc = cluster_json(x, have_stats ? &st : NULL);
	} else {
		cluster_print(x, have_stats ? &st : NULL);
		rc = 0;
	}
	if (!rc)
		rc = write_pictures(x, "topognn cluster", -1);
	return rc;
}
