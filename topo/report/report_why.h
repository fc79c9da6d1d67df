/*
 * report_why: the explanation placement-report gives for a decision: why
 * each alternative (and the baseline policy's choice) lost against the
 * chosen host set. In the library rather than the tool so that the unit
 * tests check the sentences an admin reads.
 */
#ifndef REPORT_WHY_H
#define REPORT_WHY_H

#include <stddef.h>

#include "report_log.h"

/* Why alternative `a` lost against the chosen `ch`, into buf: the cost
 * terms that made the difference (biggest first, signed: a negative term is
 * where the alternative was better) and the structural features that differ
 * (alternative vs choice), e.g.
 *   "communication +0.12, fragmentation -0.01 (groups 2 vs 1, hops 4 vs 2)".
 * Special cases: "not costed", "same hosts as the choice", "tie on cost,
 * ranked after the choice", "cheaper by X but not chosen (...)". */
void report_why_lost(const report_choice *ch, const report_choice *a, char *buf, size_t len);

#endif
