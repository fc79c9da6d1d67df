/*
 * placement-report-shadow.c: placement-report shadow: the learned policy
 * against `model` and `tree-switches` on a shadow-mode decision log, with
 * intervals and a verdict (report_shadow.h; the procedure that acts on it
 * is in docs/admin-guide.md).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "placement-report.h"
#include "report_shadow.h"

static json_t *interval_json(const report_interval *r)
{
	json_t *o = json_object();

	json_object_set_new(o, "estimate", isnan(r->est) ? json_null() : json_real(r->est));
	json_object_set_new(o, "ci95",
			    isnan(r->lo) ? json_null() : json_pack("[f,f]", r->lo, r->hi));
	json_object_set_new(o, "n", json_integer(r->n));
	return o;
}

static const char *verdict_word(int ahead)
{
	return ahead > 0 ? "ahead" : ahead == 0 ? "not ahead" : "too few decisions";
}

static json_t *vs_json(const report_shadow_vs *v)
{
	json_t *o = json_object();

	json_object_set_new(o, "baseline", json_string(v->baseline));
	json_object_set_new(o, "decisions", json_integer(v->decisions));
	json_object_set_new(o, "agreement", interval_json(&v->agree));
	json_object_set_new(o, "same_group_count", interval_json(&v->same_groups));
	json_object_set_new(o, "heavy", json_integer(v->heavy));
	json_object_set_new(o, "bytes_compared", json_integer(v->compared));
	json_object_set_new(o, "learned_cross_group_bytes", json_real(v->learned_bytes));
	json_object_set_new(o, "baseline_cross_group_bytes", json_real(v->baseline_bytes));
	json_object_set_new(o, "bytes_ratio", interval_json(&v->bytes_ratio));
	json_object_set_new(o, "hold_share_learned", interval_json(&v->hold_learned));
	json_object_set_new(o, "hold_share_baseline", interval_json(&v->hold_baseline));
	json_object_set_new(o, "hold_share_difference", interval_json(&v->hold_diff));
	json_object_set_new(o, "expected_wait_of_holds_s_learned",
			    isnan(v->expected_wait_learned) ? json_null() : json_real(v->expected_wait_learned));
	json_object_set_new(o, "expected_wait_of_holds_s_baseline",
			    isnan(v->expected_wait_baseline) ? json_null()
							     : json_real(v->expected_wait_baseline));
	json_object_set_new(o, "ahead", v->ahead < 0 ? json_null() : json_boolean(v->ahead));
	json_object_set_new(o, "verdict", json_string(verdict_word(v->ahead)));
	return o;
}

/* "0.912 (0.850-0.981)" or "-". */
static const char *fmt_iv(const report_interval *r, char *buf, size_t len, int sign)
{
	if (isnan(r->est))
		snprintf(buf, len, "-");
	else if (isnan(r->lo))
		snprintf(buf, len, sign ? "%+.3f" : "%.3f", r->est);
	else
		snprintf(buf, len, sign ? "%+.3f (%+.3f..%+.3f)" : "%.3f (%.3f-%.3f)", r->est, r->lo,
			 r->hi);
	return buf;
}

/* One line: the verdict over both baselines. */
static void verdict_line(const report_shadow *s, char *buf, size_t len)
{
	int all = s->nvs > 0, few = 0;

	for (int b = 0; b < s->nvs; b++) {
		all &= s->vs[b].ahead > 0;
		few |= s->vs[b].ahead < 0;
	}
	if (few)
		snprintf(buf, len, "too few compared heavy decisions (< %d per baseline) to say whether %s is ahead",
			 REPORT_SHADOW_MIN_PAIRS, s->learned[0] ? s->learned : "the learned policy");
	else if (all)
		snprintf(buf, len, "%s is ahead of model and tree-switches with 95 %% confidence "
			 "(fewer cross-group bytes, no more holds)", s->learned);
	else
		snprintf(buf, len, "%s is not ahead with confidence of %s%s%s", s->learned,
			 s->vs[0].ahead > 0 ? "" : "model",
			 s->vs[0].ahead > 0 || s->vs[1].ahead > 0 ? "" : " and ",
			 s->vs[1].ahead > 0 ? "" : "tree-switches");
}

static void print_text(const report_shadow *s, const char *verdict)
{
	static const char *const rows[] = {"decisions with both", "same action (hosts or hold)",
					   "same group count", "heavy decisions",
					   "bytes compared (heavy, ended)", "cross-group bytes ratio",
					   "holds, learned", "holds, baseline", "hold difference",
					   "verdict"};
	char a[64], t[64];

	printf("%splacement-report shadow%s: %d decisions by %s, %d with the baselines recorded, %d ended\n",
	       BOLD, RESET, s->decisions, s->learned[0] ? s->learned : "-", s->with_shadow, s->ended);
	printf("  Slurm's allocations waited %s s on average (start - eligible, 95 %% CI)\n",
	       fmt_iv(&s->wait_s, t, sizeof(t), 0));
	printf("\n  %-32s %-28s %-28s\n", "learned vs", "model", "tree-switches");
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		const report_shadow_vs *v[2] = {&s->vs[0], &s->vs[1]};

		printf("  %-32s", rows[r]);
		for (int k = 0; k < 2; k++) {
			const report_interval *iv[] = {NULL, &v[k]->agree, &v[k]->same_groups, NULL, NULL,
						       &v[k]->bytes_ratio, &v[k]->hold_learned,
						       &v[k]->hold_baseline, &v[k]->hold_diff, NULL};
			if (r == 0 || r == 3 || r == 4)
				snprintf(a, sizeof(a), "%d", r == 0 ? v[k]->decisions : r == 3 ? v[k]->heavy
												 : v[k]->compared);
			else if (r == 9)
				snprintf(a, sizeof(a), "%s", verdict_word(v[k]->ahead));
			else
				fmt_iv(iv[r], a, sizeof(a), r == 8);
			printf(" %-28s", a);
		}
		printf("\n");
	}
	printf("\n  %s%s%s\n", BOLD, verdict, RESET);
	printf("  %sbytes: a ring over each choice's hosts, weighted by the job's realised run time;"
	       " holds are not acted on in shadow mode, so their wait is not observed%s\n",
	       DIM, RESET);
}

int cmd_shadow(struct ctx *x)
{
	double since = -INFINITY, until = INFINITY;
	report_shadow s;
	char verdict[256];

	int wrc = log_window(x, "shadow", &since, &until);

	if (wrc)
		return wrc;
	if (report_shadow_compute(&x->log, since, until, &s)) {
		fprintf(stderr, PROG ": out of memory\n");
		return 1;
	}
	if (!s.with_shadow)
		note(x, "no decision recorded the baselines' choices: run the plugin with Mode=shadow "
			"(a plugin from before issue 18 does not record them)");
	verdict_line(&s, verdict, sizeof(verdict));
	if (x->o->json) {
		json_t *root = json_object(), *vs = json_array();

		json_object_set_new(root, "learned_policy", json_string(s.learned));
		json_object_set_new(root, "decisions", json_integer(s.decisions));
		json_object_set_new(root, "with_shadow", json_integer(s.with_shadow));
		json_object_set_new(root, "ended", json_integer(s.ended));
		json_object_set_new(root, "slurm_wait_s", interval_json(&s.wait_s));
		for (int b = 0; b < s.nvs; b++)
			json_array_append_new(vs, vs_json(&s.vs[b]));
		json_object_set_new(root, "baselines", vs);
		json_object_set_new(root, "ahead", json_boolean(s.nvs == 2 && s.vs[0].ahead > 0 &&
								 s.vs[1].ahead > 0));
		json_object_set_new(root, "verdict", json_string(verdict));
		json_object_set_new(root, "notes", notes_json(x));
		return emit_json(root);
	}
	print_text(&s, verdict);
	print_notes(x);
	return 0;
}
