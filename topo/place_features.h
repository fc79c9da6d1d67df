/*
 * place_features: the GNN's view of a placement decision, built in ONE place
 * for both its users, so that what a model is trained on is exactly what it
 * sees at decision time:
 *   - the `gnn` scorer (place_gnn.c), at every new state version (vertex
 *     features) and every decision (set features);
 *   - the simulator's training samples (sim.c, --emit-training).
 *
 * The graph: vertices are the hosts (ids 0..H-1, the engine's host indices,
 * so a candidate's host list is its vertex set), then the leaf switches
 * (H..H+L-1), then the switches above them (spines, H+L..). Edges follow the
 * fabric: host - leaf (one per rail), leaf - spine, both directions. An
 * entry's weight is its cable's share of the fastest cable in the fabric
 * (a leaf-spine entry: the leaf's up-link capacity / its spines / fastest),
 * so the static capacity structure is visible to message passing.
 *
 * Feature names are the contract with the model file: a model whose
 * vertex_features / set_features differ is refused at load
 * (place_gnn_new). docs/gnn.md lists and defines every feature.
 */
#ifndef PLACE_FEATURES_H
#define PLACE_FEATURES_H

#include <stdint.h>

#include "place.h"
#include "place_scorer.h"

#define PLACE_FEAT_VERTEX 8
#define PLACE_FEAT_SET 12

/* The names, in column order. */
extern const char *const place_feature_vertex_names[PLACE_FEAT_VERTEX];
extern const char *const place_feature_set_names[PLACE_FEAT_SET];

typedef struct place_features place_features;

/* The static graph of cluster c and all scratch for up to max_sets
 * candidates per call; frag_weight and hop_latency_us configure the
 * analytic model whose estimate is a set feature. NULL when out of memory. */
place_features *place_features_new(const place_cluster *c, double frag_weight,
				   double hop_latency_us);
void place_features_free(place_features *f);

/* The graph in CSR: vertex count, entry count, offsets (nvertices + 1),
 * neighbours and weights (nedges each). Static for the cluster. */
int place_features_nvertices(const place_features *f);
int place_features_nedges(const place_features *f);
const int32_t *place_features_offsets(const place_features *f);
const int32_t *place_features_neighbours(const place_features *f);
const float *place_features_weights(const place_features *f);

/* Vertex features of state s into out (nvertices x PLACE_FEAT_VERTEX).
 * Allocates nothing. */
void place_features_vertices(place_features *f, const place_state *s, float *out);

/* Set features of n candidates of request r under s into out
 * (n x PLACE_FEAT_SET). Runs the analytic model scorer on them first (its
 * slowdown and fragmentation estimates are features), which fills the
 * candidates' cost, comm_time_s and frag_cost. Allocates nothing. */
void place_features_sets(place_features *f, const place_state *s, const place_request *r,
			 place_candidate *cands, int n, float *out);

#endif
