/*
 * place_decide: the placement engine. One decision = usable hosts ->
 * candidate sets -> the policy's pick (the scorer's cheapest set for
 * model/gnn, Slurm's own choice for tree/linear, a seeded random set for
 * random) -> the same for the baseline policy (shadow mode) -> shape
 * (groups, leaves, hop diameter) and the best alternatives by cost.
 *
 * Every candidate is costed by one scorer so the choice, the baseline and
 * the alternatives compare: the gnn scorer under the gnn policy, the model
 * scorer otherwise. A job of class none or light is costed by the model
 * under gnn too: its placement is a packing question (the model's
 * class-aware packing, docs/job-classes.md), not a communication one. A
 * scorer's prepare() runs once per state version.
 *
 * A heavy job's decision may end "deferred" (place_defer.c): the best set
 * is reported but the caller should not start it yet.
 *
 * All memory is allocated in place_engine_new(); place_decide() allocates
 * nothing (tests/test_place.c checks this by counting malloc calls).
 */
#include "place_internal.h"
#include "place_scorer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define PLACE_DEFAULT_CANDIDATES 32
#define PLACE_MIN_CANDIDATES 4

static const char *const policy_names[PLACE_POLICY_COUNT] = { "linear", "tree", "model", "gnn",
							       "random" };
static const char *const class_names[] = { "none", "light", "heavy" };

const char *place_policy_name(place_policy p)
{
	return p >= 0 && p < PLACE_POLICY_COUNT ? policy_names[p] : "unknown";
}

int place_policy_parse(const char *s)
{
	for (int i = 0; s && i < PLACE_POLICY_COUNT; i++)
		if (!strcasecmp(s, policy_names[i]))
			return i;
	return -1;
}

const char *place_comm_class_name(place_comm_class c)
{
	return c >= PLACE_COMM_NONE && c <= PLACE_COMM_HEAVY ? class_names[c] : "unknown";
}

int place_comm_class_parse(const char *s)
{
	for (int i = 0; s && i <= PLACE_COMM_HEAVY; i++)
		if (!strcasecmp(s, class_names[i]))
			return i;
	return -1;
}

void place_config_init(place_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->candidates = PLACE_DEFAULT_CANDIDATES;
	cfg->frag_weight = 1.0;
	cfg->seed = 1;
	cfg->hop_latency_us = PLACE_DEFAULT_HOP_LATENCY_US;
}

typedef struct scorer_slot {
	place_scorer s;
	int set;
	const place_state *state; /* prepared for this state ... */
	uint64_t version;         /* ... at this version */
} scorer_slot;

struct place_engine {
	const place_cluster *c;
	place_config cfg;
	place_cands cands;
	place_tree *tree;
	place_model *model;
	scorer_slot slot[PLACE_POLICY_COUNT]; /* model and gnn */
	uint64_t rng;
	int *stamp;
	int *out_hosts;        /* (2 + PLACE_MAX_ALTERNATIVES) * nhosts */
	uint8_t *picked;       /* per candidate, for alternatives */
	place_defer defer;     /* waiting for locality */
};

void place_engine_free(place_engine *e)
{
	if (!e)
		return;
	place_cands_free(&e->cands);
	place_tree_free(e->tree);
	place_model_free(e->model);
	for (int p = 0; p < PLACE_POLICY_COUNT; p++)
		if (e->slot[p].set && e->slot[p].s.destroy)
			e->slot[p].s.destroy(e->slot[p].s.ctx);
	free(e->stamp);
	free(e->out_hosts);
	free(e->picked);
	place_defer_free(&e->defer);
	free(e);
}

place_engine *place_engine_new(const place_cluster *c, const place_config *cfg, topo_error *err)
{
	place_engine *e = calloc(1, sizeof(*e));
	size_t N = (size_t)c->nhosts;

	topo_error_clear(err);
	if (!e)
		goto oom;
	if (cfg)
		e->cfg = *cfg;
	else
		place_config_init(&e->cfg);
	if (e->cfg.candidates <= 0)
		e->cfg.candidates = PLACE_DEFAULT_CANDIDATES;
	if (e->cfg.candidates < PLACE_MIN_CANDIDATES) {
		topo_error_set(err, "", 0, "candidates must be at least %d, not %d",
			       PLACE_MIN_CANDIDATES, e->cfg.candidates);
		place_engine_free(e);
		return NULL;
	}
	if (e->cfg.frag_weight < 0 || e->cfg.hop_latency_us < 0 ||
	    e->cfg.locality_wait_frac < 0 || e->cfg.locality_wait_cap_s < 0) {
		topo_error_set(err, "", 0,
			       "the fragmentation weight, hop latency and locality wait must not "
			       "be negative");
		place_engine_free(e);
		return NULL;
	}
	e->c = c;
	e->rng = e->cfg.seed;
	/* K candidates plus one slot for the random set */
	if (place_cands_init(&e->cands, c, e->cfg.candidates + 1) < 0)
		goto oom;
	e->tree = place_tree_new(c);
	e->model = place_model_new(c, e->cfg.frag_weight, e->cfg.hop_latency_us);
	e->stamp = calloc((size_t)(c->ngroups + c->nleaves + 2 * c->nclasses) + 1, sizeof(int));
	e->out_hosts = malloc((2 + PLACE_MAX_ALTERNATIVES) * N * sizeof(int));
	e->picked = calloc((size_t)e->cfg.candidates + 1, 1);
	if (!e->tree || !e->model || !e->stamp || !e->out_hosts || !e->picked ||
	    place_defer_init(&e->defer, c) < 0)
		goto oom;
	place_model_scorer(e->model, &e->slot[PLACE_POLICY_MODEL].s);
	e->slot[PLACE_POLICY_MODEL].set = 1;
	e->cfg.model_path = NULL; /* not the engine's: place_gnn_register's */
	return e;
oom:
	place_engine_free(e);
	topo_error_set(err, "", 0, "out of memory creating the placement engine");
	return NULL;
}

int place_engine_set_scorer(place_engine *e, place_policy policy, const place_scorer *scorer)
{
	if (policy != PLACE_POLICY_MODEL && policy != PLACE_POLICY_GNN)
		return -1;
	if (!scorer || !scorer->score)
		return -1;
	if (e->slot[policy].set && e->slot[policy].s.destroy &&
	    e->slot[policy].s.ctx != scorer->ctx)
		e->slot[policy].s.destroy(e->slot[policy].s.ctx);
	e->slot[policy].s = *scorer;
	e->slot[policy].set = 1;
	e->slot[policy].state = NULL;
	e->slot[policy].version = 0;
	return 0;
}

const char *place_engine_model_path(const place_engine *e)
{
	return e->slot[PLACE_POLICY_GNN].set ? e->slot[PLACE_POLICY_GNN].s.model : NULL;
}

const place_cluster *place_engine_cluster(const place_engine *e)
{
	return e->c;
}

const place_config *place_engine_config(const place_engine *e)
{
	return &e->cfg;
}

const char *place_engine_scorer_name(const place_engine *e, place_policy policy)
{
	const scorer_slot *sl = &e->slot[policy == PLACE_POLICY_GNN ? PLACE_POLICY_GNN
								     : PLACE_POLICY_MODEL];

	return sl->set ? sl->s.name : NULL;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* Prepare one scorer for state s unless it already is. */
static int prepare_slot(place_engine *e, scorer_slot *sl, const place_state *s, char *reason,
			size_t len)
{
	if (!sl->set || !sl->s.prepare || (sl->state == s && sl->version == s->version))
		return 0;
	if (sl->s.prepare(sl->s.ctx, e->c, s, reason, len) < 0)
		return -1;
	sl->state = s;
	sl->version = s->version;
	return 1;
}

int place_engine_refresh(place_engine *e, const place_state *s, char *reason, size_t len)
{
	if (s->c != e->c) {
		snprintf(reason, len, "the state belongs to another cluster than the engine");
		return -1;
	}
	int a = prepare_slot(e, &e->slot[PLACE_POLICY_MODEL], s, reason, len), b;

	if (a < 0)
		return -1;
	b = prepare_slot(e, &e->slot[PLACE_POLICY_GNN], s, reason, len);
	return b < 0 ? -1 : (a || b);
}

/* Run a scorer over all candidates, preparing it first on a new state (the
 * time that takes is added to *refresh_us). */
static int run_scorer(place_engine *e, scorer_slot *sl, const place_state *s,
		      const place_request *r, double *refresh_us, char *reason, size_t len)
{
	if (sl->s.prepare && (sl->state != s || sl->version != s->version)) {
		double t0 = now_us();
		int rc = prepare_slot(e, sl, s, reason, len);

		*refresh_us += now_us() - t0;
		if (rc < 0)
			return -1;
	}
	return sl->s.score(sl->s.ctx, e->c, s, r, e->cands.set, e->cands.n, reason, len);
}

/* The candidate a policy picks, or -1 with reason. */
static int policy_pick(place_engine *e, const place_request *r, place_policy p,
		       int random_index, char *reason, size_t len)
{
	place_cands *k = &e->cands;
	int best = -1;

	switch (p) {
	case PLACE_POLICY_TREE:
		if (k->tree_index < 0)
			snprintf(reason, len, "tree: %s",
				 k->tree_reason[0] ? k->tree_reason : "no choice");
		return k->tree_index;
	case PLACE_POLICY_LINEAR:
		if (k->linear_index < 0)
			snprintf(reason, len, "linear: consecutive best fit exceeds the group limit");
		return k->linear_index;
	case PLACE_POLICY_RANDOM:
		if (random_index < 0)
			snprintf(reason, len, "random: no feasible set");
		return random_index;
	default:
		for (int i = 0; i < k->n; i++)
			if (best < 0 || k->set[i].cost < k->set[best].cost)
				best = i;
		if (best < 0 && r->max_groups > 0)
			snprintf(reason, len, "no host set within %d group%s has %d usable hosts",
				 r->max_groups, r->max_groups > 1 ? "s" : "", k->target);
		else if (best < 0)
			snprintf(reason, len, "no candidate host set honours the request");
		return best;
	}
}

static const char *policy_kind(place_policy p, const place_candidate *k)
{
	switch (p) {
	case PLACE_POLICY_TREE: return "tree";
	case PLACE_POLICY_LINEAR: return "linear";
	case PLACE_POLICY_RANDOM: return "random";
	default: return k->kind;
	}
}

static void fill_choice(place_engine *e, place_choice *ch, int slot, const place_candidate *k,
			const char *kind)
{
	ch->hosts = e->out_hosts + (size_t)slot * (size_t)e->c->nhosts;
	memcpy(ch->hosts, k->hosts, (size_t)k->nhosts * sizeof(int));
	ch->nhosts = k->nhosts;
	place_set_shape(e->c, ch->hosts, ch->nhosts, e->stamp, &ch->groups, &ch->leaves,
			&ch->diameter);
	ch->cost = k->cost;
	ch->comm_time_s = k->comm_time_s;
	ch->frag_cost = k->frag_cost;
	ch->confidence = k->confidence;
	ch->kind = kind;
	ch->sharp = place_cluster_sharp_eligible(e->c, ch->hosts, ch->nhosts);
	ch->domains = place_domains_spanned(e->c, ch->hosts, ch->nhosts, e->cands.dom_mark);
}

static void fill_alternatives(place_engine *e, place_decision *out, int chosen)
{
	place_cands *k = &e->cands;

	memset(e->picked, 0, (size_t)k->n);
	if (chosen >= 0)
		e->picked[chosen] = 1;
	out->nalternatives = 0;
	while (out->nalternatives < PLACE_MAX_ALTERNATIVES) {
		int best = -1;

		for (int i = 0; i < k->n; i++)
			if (!e->picked[i] && (best < 0 || k->set[i].cost < k->set[best].cost))
				best = i;
		if (best < 0)
			break;
		e->picked[best] = 1;
		fill_choice(e, &out->alternatives[out->nalternatives], 2 + out->nalternatives,
			    &k->set[best], k->set[best].kind);
		out->nalternatives++;
	}
}

static int fail(place_decision *out, double t0)
{
	out->ok = 0;
	out->latency_us = now_us() - t0;
	return -1;
}

int place_decide(place_engine *e, const place_state *s, const place_request *r,
		 place_policy policy, place_policy baseline, place_decision *out)
{
	double t0 = now_us();
	place_cands *k = &e->cands;
	scorer_slot *sl, *bsl;
	int chosen, base = -1, random_index = -1;
	char why[sizeof(out->reason)];

	memset(out, 0, sizeof(*out));
	out->policy = policy;
	out->baseline_policy = baseline;
	if (policy == PLACE_POLICY_GNN || baseline == PLACE_POLICY_GNN)
		out->model = place_engine_model_path(e);
	if (policy < 0 || policy >= PLACE_POLICY_COUNT || baseline < 0 ||
	    baseline >= PLACE_POLICY_COUNT) {
		snprintf(out->reason, sizeof(out->reason), "unknown policy");
		return fail(out, t0);
	}
	if (s->c != e->c) {
		snprintf(out->reason, sizeof(out->reason),
			 "the state belongs to another cluster than the engine");
		return fail(out, t0);
	}
	sl = &e->slot[policy == PLACE_POLICY_GNN ? PLACE_POLICY_GNN : PLACE_POLICY_MODEL];
	if (policy == PLACE_POLICY_GNN && sl->set && r->comm.cls != PLACE_COMM_HEAVY)
		sl = &e->slot[PLACE_POLICY_MODEL]; /* packing, not communication */
	if (!sl->set) {
		snprintf(out->reason, sizeof(out->reason), "no GNN model loaded");
		return fail(out, t0);
	}
	if (place_cands_prepare(k, e->c, s, r, out->reason, sizeof(out->reason)) < 0)
		return fail(out, t0);
	place_cands_generate(k, e->c, r, e->tree);
	if (policy == PLACE_POLICY_RANDOM || baseline == PLACE_POLICY_RANDOM)
		random_index = place_cands_random(k, e->c, r, &e->rng);
	out->ncandidates = k->n;
	for (int i = 0; i < k->n; i++) { /* what scorers may use and fill */
		k->set[i].tree = i == k->tree_index;
		k->set[i].confidence = -1;
	}
	/* a baseline with its own scorer picks first; every reported cost is
	 * then the policy's scorer's, so they compare */
	bsl = baseline == PLACE_POLICY_GNN || baseline == PLACE_POLICY_MODEL ? &e->slot[baseline]
									     : sl;
	if (baseline != policy && bsl != sl) {
		if (bsl->set && run_scorer(e, bsl, s, r, &out->refresh_us, why, sizeof(why)) == 0)
			base = policy_pick(e, r, baseline, random_index, why, sizeof(why));
	}
	if (run_scorer(e, sl, s, r, &out->refresh_us, out->reason, sizeof(out->reason)) < 0)
		return fail(out, t0);
	chosen = policy_pick(e, r, policy, random_index, out->reason, sizeof(out->reason));
	if (chosen < 0)
		return fail(out, t0);
	if (baseline != policy && bsl == sl)
		base = policy_pick(e, r, baseline, random_index, why, sizeof(why));
	fill_choice(e, &out->chosen, 0, &k->set[chosen], policy_kind(policy, &k->set[chosen]));
	if (base >= 0)
		fill_choice(e, &out->baseline, 1, &k->set[base], policy_kind(baseline, &k->set[base]));
	fill_alternatives(e, out, chosen);
	place_defer_check(&e->defer, e->c, s, r, k->usable, &e->cfg,
			  policy == PLACE_POLICY_GNN && e->slot[PLACE_POLICY_GNN].set
				  ? &e->slot[PLACE_POLICY_GNN].s.hold : NULL,
			  out);
	out->ok = 1;
	out->latency_us = now_us() - t0;
	return 0;
}
