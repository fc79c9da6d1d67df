/*
 * place_hold: the learned hold gate of a gnn ensemble (docs/gnn.md, "The
 * hold gate"). A logistic model over the hold decision's features
 * (place_hold_feature_names), standardised with the training samples'
 * mean and scale:
 *
 *   p(hold) = 1 / (1 + exp(-(bias + sum_i w_i (x_i - mean_i) / scale_i)))
 *
 * trained by topognn-train --holds on the lookahead teacher's choices
 * between holding a job and starting it (topognn-sim --emit-holds). An
 * ensemble file names it ("hold": file relative to it); the file is
 *
 *   {"format": "topognn-hold", "version": 1, "features": [names],
 *    "mean": [...], "scale": [...], "weights": [...], "bias": b}
 *
 * The names must be this build's, in its order: a gate trained on other
 * features is refused, naming the first difference.
 */
#ifndef PLACE_HOLD_H
#define PLACE_HOLD_H

#include "place.h"
#include "place_scorer.h"

typedef struct place_hold {
	float mean[PLACE_HOLD_FEATURES];
	float scale[PLACE_HOLD_FEATURES];
	float weight[PLACE_HOLD_FEATURES];
	float bias;
} place_hold;

#define PLACE_HOLD_FORMAT "topognn-hold"

/* Read the gate file `path` into h: 0, or -1 with err naming the file and
 * the problem. */
int place_hold_load(const char *path, place_hold *h, topo_error *err);

/* The gate's probability of holding (place_hold_gate.p; ctx a place_hold). */
double place_hold_p(void *ctx, const float *feat);

#endif
