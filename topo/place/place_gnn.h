/*
 * place_gnn: the `gnn` scorer. Ranks candidate host sets with a trained
 * gnn-infer model (docs/gnn.md) over the cluster graph of place_features.
 *
 * Loading checks the model's feature spec against place_features' names,
 * so a model trained on other features is refused with the first
 * difference named. prepare() (once per state version) refreshes the
 * vertex features and the embeddings; score() (every decision) builds the
 * candidates' set features and scores them all in one gnn_score_sets call.
 * Every buffer is allocated here, for the cluster's size and up to
 * max_sets candidates: scoring allocates nothing.
 *
 * The model predicts a score where higher is better (the sim's training
 * target is minus the measured cost); the candidate's cost is -score.
 */
#ifndef PLACE_GNN_H
#define PLACE_GNN_H

#include "place.h"
#include "place_scorer.h"

typedef struct place_gnn place_gnn;

/* Load `model_path` for cluster c, scoring up to max_sets candidates per
 * decision; frag_weight and hop_latency_us configure the analytic model
 * whose estimates are set features. NULL with err (file, sentence) on a
 * bad model file, a feature mismatch, or no memory. */
place_gnn *place_gnn_new(const place_cluster *c, const char *model_path, int max_sets,
			 double frag_weight, double hop_latency_us, topo_error *err);
void place_gnn_free(place_gnn *g);

/* The scorer (ctx = g) for place_engine_set_scorer. */
void place_gnn_scorer(place_gnn *g, place_scorer *out);

/* How many times the embeddings were computed (tests: once per state
 * version, never per decision). */
unsigned long place_gnn_refreshes(const place_gnn *g);

#endif
