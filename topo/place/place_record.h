/*
 * place_record: the decision record, one JSON line per placement decision
 * (schema in docs/decision-record.md), so every choice can be audited and
 * the policy compared with its baseline after the fact.
 */
#ifndef PLACE_RECORD_H
#define PLACE_RECORD_H

#include <stdio.h>

#include "place.h"

/* The pattern's name: "ring", "alltoall", "pipeline". */
const char *place_pattern_name(place_pattern p);

/* The record of decision d for request r as one line of JSON (no newline),
 * malloc'd; NULL when memory runs out. `scorer` names the scorer that
 * costed the candidates ("model", or the GNN scorer's name); `timestamp` is
 * seconds since the epoch (0: now). Host indices become host names. */
char *place_record_json(const place_cluster *c, const place_request *r,
			const place_decision *d, const char *scorer, double timestamp);

/* Write the record and a newline to f. Returns 0, or -1. */
int place_record_write(FILE *f, const place_cluster *c, const place_request *r,
		       const place_decision *d, const char *scorer, double timestamp);

#endif
