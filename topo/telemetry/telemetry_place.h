/*
 * telemetry_place: feeds a telemetry snapshot into the placement engine's
 * state, so that scoring sees measured congestion (place_state's leaf
 * up-link overlay). Kept apart from telemetry.c so the Prometheus client
 * does not depend on the engine.
 */
#ifndef TELEMETRY_PLACE_H
#define TELEMETRY_PLACE_H

#include "place.h"
#include "telemetry.h"

/* Set the up-link utilisation of every leaf in the snapshot whose estimate
 * is known (util >= 0; the engine clamps it to 0..0.99). Leaves absent from
 * the snapshot keep their previous value. Returns the number of leaves
 * applied; *unknown (if not NULL) gets how many leaf names the engine's
 * cluster does not know. */
int telemetry_apply_to_state(const telemetry_snapshot *snap, place_state *state, int *unknown);

/* Reset to 0 the leaves a previous snapshot set, e.g. when telemetry went
 * down and its last numbers should no longer steer placement. Returns the
 * number of leaves reset. */
int telemetry_clear_from_state(const telemetry_snapshot *prev, place_state *state);

#endif
