/*
 * place_features: the GNN's view of a placement decision, built in ONE place
 * for both its users, so that what a model is trained on is exactly what it
 * sees at decision time:
 *   - the `gnn` scorer (place_gnn.c), at every new state version (vertex
 *     features) and every decision (set features);
 *   - the simulator's training samples (sim.c, --emit-training).
 *
 * The graph of a state: vertices are host TYPES (ids 0..T-1), then the leaf
 * switches (T..T+L-1), then the switches above them (spines, T+L..). A
 * type stands for all hosts of one kind (same leaves, cable rates and
 * group) whose features are equal in this state, e.g. "idle hosts of
 * group 3" or "busy hosts of group 3": those hosts would get identical
 * embeddings anyway, so they are one vertex, and a candidate's vertex set
 * is its hosts mapped through place_features_host_vertex() (a type listed
 * once per host, so the readout's mean and max are the per-host ones).
 * Typically T is a few per group instead of one per host, which makes the
 * embedding refresh several times cheaper on large clusters; a leaf's
 * message-passing mean is over the kinds of hosts below it (their counts
 * are its own free_share / down_share features). Edges follow the fabric:
 * type - leaf (one per rail), leaf - spine, both directions. An entry's
 * weight is its cable's share of the fastest cable in the fabric (a
 * leaf-spine entry: the leaf's up-link capacity / its spines / fastest),
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

#define PLACE_FEAT_VERTEX 9
#define PLACE_FEAT_SET 16
#define PLACE_FEAT_SET_XLEAF 4 /* column of cross_leaf_flow_share */

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

/* Upper bounds of the graph's size over all states (every host its own
 * type), for sizing buffers once. */
int place_features_max_vertices(const place_features *f);
int place_features_max_edges(const place_features *f);

/* The graph in CSR of the state of the last place_features_vertices()
 * call: vertex count, entry count, offsets (nvertices + 1), neighbours and
 * weights (nedges each); and the vertex of each host (nhosts entries). */
int place_features_nvertices(const place_features *f);
/* Host types of that state: vertices [0, ntypes), all that host sets map to. */
int place_features_ntypes(const place_features *f);
int place_features_nedges(const place_features *f);
const int32_t *place_features_offsets(const place_features *f);
const int32_t *place_features_neighbours(const place_features *f);
const float *place_features_weights(const place_features *f);
const int32_t *place_features_host_vertex(const place_features *f);

/* A host's remaining time, the remaining_log_h feature: log(1 + hours
 * until its last job's expected end) in steps of 1/4, so that hosts of one
 * group with similar ends stay one type; 0 idle or unknown. The steps are
 * a table of the hours at which log1p reaches each (made with f, from
 * log1p), so a refresh counts steps instead of taking a logarithm per
 * running job; past PLACE_REM_STEPS steps (about 1,000 years) it takes
 * the logarithm. */
#define PLACE_REM_STEPS 64
float place_features_remaining(const place_features *f, double end_s, double now_s);

/* The graph of state s (see above) and its vertex features into out
 * (room for max_vertices x PLACE_FEAT_VERTEX; nvertices rows written).
 * Allocates nothing. */
void place_features_vertices(place_features *f, const place_state *s, float *out);

/* Set features of n candidates of request r under s into out
 * (n x PLACE_FEAT_SET). Runs the analytic model scorer on them first (its
 * slowdown and fragmentation estimates are features), which fills the
 * candidates' cost, comm_time_s and frag_cost. Allocates nothing. */
void place_features_sets(place_features *f, const place_state *s, const place_request *r,
			 place_candidate *cands, int n, float *out);

#endif
