/*
 * place_gnn: the `gnn` scorer. Ranks candidate host sets with a trained
 * gnn-infer model (docs/gnn.md) over the cluster graph of place_features.
 *
 * Loading checks the model's feature spec against place_features' names,
 * so a model trained on other features is refused with the first
 * difference named. prepare() (once per state version) refreshes the
 * vertex features and the graph; score() (every decision) embeds the host
 * types its candidates map to that this state version has not embedded
 * yet (on a graph of just those types and their neighbourhood out to the
 * models' reach, gnn_model_hops: the same bits as embedding every vertex),
 * builds the candidates' set features and scores them all in one
 * gnn_score_sets call. Every buffer is allocated here, for the cluster's
 * size and up to max_sets candidates: scoring allocates nothing.
 *
 * The model predicts a score where higher is better (the sim's training
 * target is minus the lookahead teacher's objective); the candidate's cost
 * is -score.
 *
 * Ensembles: the model path may name an ensemble file instead
 * ({"format": "topognn-ensemble", "version": 1, "models": [files relative
 * to it], "agreement": share, default 1}; docs/gnn.md). Every member scores
 * every candidate; only host types (the vertices candidates map to) are
 * embedded, and the members' common first-layer aggregation is computed
 * once (gnn_embed_ensemble). The cost is minus their
 * mean score, but the pick leaves Slurm's tree candidate only when at least
 * `agreement` of the members rank the same other candidate first. Each
 * candidate's `confidence` is the share of members whose top pick it is.
 */
#ifndef PLACE_GNN_H
#define PLACE_GNN_H

#include "place.h"
#include "place_scorer.h"

#define PLACE_GNN_ENSEMBLE_FORMAT "topognn-ensemble"
#define PLACE_GNN_MAX_MODELS 16

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

/* Models loaded: 1 for a model file, the members of an ensemble. */
int place_gnn_nmodels(const place_gnn *g);

/* With on, refresh the straightforward way (every member embeds every
 * vertex on its own, at the refresh) instead of embedding on demand only
 * the host types candidates map to and sharing the members' first-layer
 * aggregation. The scores are the same bits either way; tests compare the
 * two. Takes effect at the next refresh. */
void place_gnn_set_full_refresh(place_gnn *g, int on);

#endif
