/*
 * place_scorer: the hook through which a scorer ranks candidate host sets.
 *
 * The engine keeps one scorer per policy. The analytic `model` scorer is
 * built in; the GNN scorer is plugged in by whoever loads a model
 * (place_gnn_register at set-up: the plugin, the simulator, the tools), so
 * the engine (place_decide.c) does not depend on gnn-infer.
 *
 * prepare() runs once per state version (e.g. to refresh node embeddings),
 * not once per job; score() runs on every decision and must not allocate.
 */
#ifndef PLACE_SCORER_H
#define PLACE_SCORER_H

#include "place.h"

/* One candidate host set, as the engine hands it to a scorer. */
typedef struct place_candidate {
	int *hosts;         /* ascending host indices (engine-owned) */
	int nhosts;
	const char *kind;   /* "group-best-fit", "leaf-best-fit", "cover", "tree", "linear", "random" */
	uint64_t hash;      /* of the host set, for dedupe */
	int tree;           /* Slurm's topology/tree would pick this set */
	/* filled by the scorer: */
	double cost;        /* lower is better */
	double comm_time_s; /* estimate of one iteration's collective time */
	double frag_cost;   /* fragmentation part of cost */
	double confidence;  /* an ensemble's agreement on it, 0..1; -1 none */
} place_candidate;

/* A learned hold gate (optional, with the gnn scorer): the probability,
 * 0..1, that a heavy job held for locality should stay held, from what the
 * hold decision sees (place_decision.hold_feat). It replaces the analytic
 * rule's answer when a placement over fewer groups is predicted to free
 * within the job's budget (place_defer.c). Must not allocate. */
typedef struct place_hold_gate {
	double (*p)(void *ctx, const float *feat);
	void *ctx;
} place_hold_gate;

extern const char *const place_hold_feature_names[PLACE_HOLD_FEATURES];

typedef struct place_scorer {
	const char *name;
	/* Once per state version; return 0, or -1 with reason (e.g. no model). */
	int (*prepare)(void *ctx, const place_cluster *c, const place_state *s, char *reason,
		       size_t len);
	/* Fill cost (and comm_time_s/frag_cost where meaningful) of n
	 * candidates. Return 0, or -1 with reason. Must not allocate. */
	int (*score)(void *ctx, const place_cluster *c, const place_state *s,
		     const place_request *r, place_candidate *cands, int n, char *reason,
		     size_t len);
	void *ctx;
	/* Optional: the model file the scorer ranks with (decisions name it
	 * under the gnn policy), and the ctx's destructor: when set, the
	 * engine owns ctx and destroys it when freed or when the slot is
	 * set again. */
	const char *model;
	void (*destroy)(void *ctx);
	/* Optional: the learned hold gate that comes with the scorer (gnn);
	 * hold.p NULL: the analytic rule decides every hold */
	place_hold_gate hold;
} place_scorer;

/* Install `scorer` (copied; ctx stays the caller's unless scorer->destroy
 * is set) for `policy` (model or
 * gnn). Returns 0, or -1 for a policy that has no scorer (linear, tree,
 * random pick their hosts themselves; they are still costed by `model`). */
int place_engine_set_scorer(place_engine *e, place_policy policy, const place_scorer *scorer);

/* Name of the scorer that costs candidates under `policy` ("model", the
 * installed GNN scorer's name, or NULL for gnn without a model). */
const char *place_engine_scorer_name(const place_engine *e, place_policy policy);
/* The model file of the scorer installed for gnn (place_scorer.model), or NULL. */
const char *place_engine_model_path(const place_engine *e);

/* What a scorer is built for: the engine's cluster and its configuration
 * (defaults filled in). */
const place_cluster *place_engine_cluster(const place_engine *e);
const place_config *place_engine_config(const place_engine *e);

#endif
