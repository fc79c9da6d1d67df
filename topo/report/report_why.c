/* report_why: why an alternative lost against the choice (see report_why.h). */
#include "report_why.h"

#include <math.h>
#include <stdio.h>

/* Why alternative a lost against the chosen one: the cost terms that made
 * the difference (biggest first, signed: a negative term is where the
 * alternative was better) and the structural features that differ
 * (alternative vs choice). */
void report_why_lost(const report_choice *ch, const report_choice *a, char *buf, size_t len)
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

