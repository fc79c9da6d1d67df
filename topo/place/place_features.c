/*
 * place_features: the graph and the features the GNN sees (see
 * place_features.h). Built from the engine's cluster and state only, so the
 * scorer and the simulator's training samples cannot disagree.
 */
#include "place_features.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "place_internal.h"

const char *const place_feature_vertex_names[PLACE_FEAT_VERTEX] = {
	"is_host", "is_leaf", "is_spine", "free_share",
	"down_share", "uplink_load", "telemetry_util", "group_free_share", "remaining_log_h"};

const char *const place_feature_set_names[PLACE_FEAT_SET] = {
	"log2_hosts", "groups_spanned", "leaves_per_rail", "hop_diameter",
	"cross_leaf_flow_share", "cross_group_flow_share", "max_uplink_load",
	"model_slowdown", "model_frag_cost", "bytes_per_iter_gb", "compute_s_per_iter",
	"max_port_flows", "queue_demand", "queue_jobs_log2", "groups_remaining_log_h",
	"whole_groups_broken"};

struct place_features {
	const place_cluster *c;
	int H, L, S, nv, ne;       /* this state's graph: nv = T + L + S */
	int max_nv, max_ne;        /* every host its own type */
	int32_t *off, *nbr;        /* max_nv + 1, max_ne */
	float *w;
	int32_t *prev_off;         /* off of the last build (max_nv + 1) ... */
	int prev_T;                /* ... and its type count; -1 none ... */
	int *prev_kind;            /* ... and its types' kinds (H) */
	int *spine_vid;            /* S graph vertex ids */
	int32_t *spine_leaf_off;   /* static CSR: leaves below spine k */
	int32_t *spine_leaves;
	int32_t *leaf_spine_off;   /* static CSR: spines above leaf l, ascending */
	int32_t *leaf_spine_k;
	float *leaf_w;             /* per leaf: its leaf - spine entries' weight */
	/* host types: hosts of one kind (same leaf vector, cable rates and
	 * group) with equal features are one vertex */
	int nkinds;
	int *host_kind;            /* H */
	int *kind_rep;             /* a host of each kind */
	int *kind_nleaves;         /* per kind: its leaves (rails with one) ... */
	int *kind_leaf;            /* ... R per kind, in rail order ... */
	float *kind_w;             /* ... and their cables' share of the fastest */
	int *kind_head;            /* per kind: its first type this state, -1 */
	int *type_next;            /* per type: the next type of its kind */
	int *type_kind;            /* per type */
	uint64_t *type_key;        /* per type: row_key of its row */
	int T;                     /* types this state */
	int32_t *host_vertex;      /* H: graph vertex of each host this state */
	int *fill;                 /* max_nv scratch */
	double top;                /* fastest cable, Gb/s */
	int *leaf_idle, *leaf_hosts, *leaf_down, *group_idle;
	/* per kind, this state: idle and down hosts, their remaining_log_h
	 * sum, and the highest up-link load and utilisation of its leaves */
	int *kind_idle, *kind_down;
	double *kind_rem;
	float *kind_load, *kind_util;
	float *host_rem;           /* per host: remaining_log_h, this state */
	double rem_step[PLACE_REM_STEPS]; /* remaining_log_h's steps, in hours */
	double *leaf_rem, *group_rem; /* per leaf / group: sum of host_rem */
	int *group_cnt;            /* per group: scratch, zero between calls */
	double *leaf_load;         /* per leaf, this state */
	int *stamp;                /* place_set_shape scratch */
	uint8_t *leaf_seen;
	/* static routing (D-mod-K): up-port (b mod K) of leaf a towards host b,
	 * down-port (b mod K) into b's leaf; flows per port, background + own */
	int *port_off;             /* per leaf: first port */
	int32_t *port_up, *port_down; /* flow counts (exact; half a double's memory) */
	int *touched, ntouched;    /* own ports: index * 2 + (0 up, 1 down) */
	place_model *model;
	place_scorer model_scorer;
	const place_state *prepared;
	uint64_t prepared_version;
};

/* Spines: distinct vertices above the leaves, in first-seen order. */
static int find_spines(place_features *f, int *vid_spine)
{
	const place_cluster *c = f->c;

	f->S = 0;
	for (int v = 0; v < c->nvertices; v++)
		vid_spine[v] = -1;
	for (int k = 0; k < c->leaf_spine_off[c->nleaves]; k++) {
		int v = c->leaf_spines[k];

		if (vid_spine[v] < 0) {
			vid_spine[v] = f->S;
			f->spine_vid[f->S++] = v;
		}
	}
	return f->S;
}

static double fastest_cable(const place_cluster *c)
{
	double m = 0;

	for (int i = 0; i < c->nhosts * c->nrails; i++)
		if (c->host_gbps[i] > m)
			m = c->host_gbps[i];
	for (int l = 0; l < c->nleaves; l++) {
		int ns = c->leaf_spine_off[l + 1] - c->leaf_spine_off[l];

		if (ns > 0 && c->leaf_up_gbps[l] / ns > m)
			m = c->leaf_up_gbps[l] / ns;
	}
	return m > 0 ? m : PLACE_DEFAULT_LINK_GBPS;
}

static float leaf_spine_weight(const place_cluster *c, int l, double top)
{
	int ns = c->leaf_spine_off[l + 1] - c->leaf_spine_off[l];

	return (float)(ns > 0 ? c->leaf_up_gbps[l] / ns / top : 1.0);
}

/* Host kinds: hosts under the same leaves (one leaf vector class) with the
 * same cable rates, in the same group, see exactly the same neighbourhood. */
static int find_kinds(place_features *f)
{
	const place_cluster *c = f->c;
	int R = c->nrails, *class_head = malloc(((size_t)c->nclasses + 1) * sizeof(int));
	int *kind_next = malloc(((size_t)f->H + 1) * sizeof(int));

	if (!class_head || !kind_next) {
		free(class_head);
		free(kind_next);
		return -1;
	}
	for (int k = 0; k < c->nclasses; k++)
		class_head[k] = -1;
	f->nkinds = 0;
	for (int h = 0; h < f->H; h++) {
		int cls = c->host_class[h], k = class_head[cls];

		while (k >= 0 && (c->host_group[f->kind_rep[k]] != c->host_group[h] ||
				  memcmp(c->host_gbps + (size_t)f->kind_rep[k] * R,
					 c->host_gbps + (size_t)h * R, (size_t)R * sizeof(double))))
			k = kind_next[k];
		if (k < 0) {
			k = f->nkinds++;
			f->kind_rep[k] = h;
			kind_next[k] = class_head[cls];
			class_head[cls] = k;
		}
		f->host_kind[h] = k;
	}
	free(class_head);
	free(kind_next);
	return 0;
}

/* Each kind's leaves and cable weights, in rail order (rails without a
 * leaf left out): a type's graph entries. */
static int kind_leaves(place_features *f)
{
	const place_cluster *c = f->c;
	int R = c->nrails;

	f->kind_nleaves = calloc((size_t)f->nkinds + 1, sizeof(int));
	f->kind_leaf = malloc(((size_t)f->nkinds * R + 1) * sizeof(int));
	f->kind_w = malloc(((size_t)f->nkinds * R + 1) * sizeof(float));
	if (!f->kind_nleaves || !f->kind_leaf || !f->kind_w)
		return -1;
	for (int k = 0; k < f->nkinds; k++) {
		int h = f->kind_rep[k];

		for (int r = 0; r < R; r++) {
			int l = c->host_leaf[h * R + r], i = k * R + f->kind_nleaves[k];

			if (l < 0)
				continue;
			f->kind_leaf[i] = l;
			f->kind_w[i] = (float)(c->host_gbps[h * R + r] / f->top);
			f->kind_nleaves[k]++;
		}
	}
	return 0;
}

/* Spines (distinct vertices above the leaves) and the leaves below each. */
static int build_spines(place_features *f)
{
	const place_cluster *c = f->c;
	int *vid_spine = malloc(((size_t)c->nvertices + 1) * sizeof(int)), *fill = NULL, rc = -1;
	int nls = c->leaf_spine_off[c->nleaves];

	f->spine_vid = malloc(((size_t)nls + 1) * sizeof(int));
	f->spine_leaves = malloc(((size_t)nls + 1) * sizeof(int32_t));
	if (!vid_spine || !f->spine_vid || !f->spine_leaves)
		goto out;
	find_spines(f, vid_spine);
	f->spine_leaf_off = calloc((size_t)f->S + 1, sizeof(int32_t));
	fill = calloc((size_t)(f->S > f->L ? f->S : f->L) + 1, sizeof(int));
	if (!f->spine_leaf_off || !fill)
		goto out;
	for (int k = 0; k < nls; k++)
		f->spine_leaf_off[vid_spine[c->leaf_spines[k]] + 1]++;
	for (int k = 0; k < f->S; k++)
		f->spine_leaf_off[k + 1] += f->spine_leaf_off[k];
	for (int l = 0; l < f->L; l++)
		for (int k = c->leaf_spine_off[l]; k < c->leaf_spine_off[l + 1]; k++) {
			int sp = vid_spine[c->leaf_spines[k]];

			f->spine_leaves[f->spine_leaf_off[sp] + fill[sp]++] = l;
		}
	/* the same entries from the leaves' side, each leaf's in spine order */
	f->leaf_spine_off = calloc((size_t)f->L + 1, sizeof(int32_t));
	f->leaf_spine_k = malloc(((size_t)nls + 1) * sizeof(int32_t));
	f->leaf_w = malloc(((size_t)f->L + 1) * sizeof(float));
	if (!f->leaf_spine_off || !f->leaf_spine_k || !f->leaf_w)
		goto out;
	for (int i = 0; i < f->spine_leaf_off[f->S]; i++)
		f->leaf_spine_off[f->spine_leaves[i] + 1]++;
	for (int l = 0; l < f->L; l++) {
		f->leaf_spine_off[l + 1] += f->leaf_spine_off[l];
		fill[l] = 0;
		f->leaf_w[l] = leaf_spine_weight(c, l, f->top);
	}
	for (int k = 0; k < f->S; k++)
		for (int i = f->spine_leaf_off[k]; i < f->spine_leaf_off[k + 1]; i++) {
			int l = f->spine_leaves[i];

			f->leaf_spine_k[f->leaf_spine_off[l] + fill[l]++] = k;
		}
	rc = 0;
out:
	free(vid_spine);
	free(fill);
	return rc;
}

static int build_graph(place_features *f)
{
	const place_cluster *c = f->c;
	size_t H = (size_t)f->H;

	f->top = fastest_cable(c);
	f->host_kind = malloc((H + 1) * sizeof(int));
	f->kind_rep = malloc((H + 1) * sizeof(int));
	f->kind_head = malloc((H + 1) * sizeof(int));
	f->type_next = malloc((H + 1) * sizeof(int));
	f->type_kind = malloc((H + 1) * sizeof(int));
	f->type_key = malloc((H + 1) * sizeof(uint64_t));
	f->host_vertex = calloc(H + 1, sizeof(int32_t));
	f->kind_idle = calloc(H + 1, sizeof(int));
	f->kind_down = calloc(H + 1, sizeof(int));
	f->kind_rem = calloc(H + 1, sizeof(double));
	f->kind_load = calloc(H + 1, sizeof(float));
	f->kind_util = calloc(H + 1, sizeof(float));
	if (!f->host_kind || !f->kind_rep || !f->kind_head || !f->type_next || !f->type_kind ||
	    !f->type_key ||
	    !f->host_vertex || !f->kind_idle || !f->kind_down || !f->kind_rem || !f->kind_load ||
	    !f->kind_util || find_kinds(f) || kind_leaves(f) ||
	    build_spines(f))
		return -1;
	f->max_nv = f->H + f->L + f->S;
	f->max_ne = 2 * f->H * c->nrails + 2 * c->leaf_spine_off[c->nleaves];
	f->off = calloc((size_t)f->max_nv + 1, sizeof(int32_t));
	f->prev_off = calloc((size_t)f->max_nv + 1, sizeof(int32_t));
	f->prev_T = -1;
	f->prev_kind = malloc((H + 1) * sizeof(int));
	f->fill = calloc((size_t)f->max_nv + 1, sizeof(int));
	f->nbr = malloc(((size_t)f->max_ne + 1) * sizeof(int32_t));
	f->w = malloc(((size_t)f->max_ne + 1) * sizeof(float));
	return f->off && f->prev_off && f->prev_kind && f->fill && f->nbr && f->w ? 0 : -1;
}

/* Up-ports per leaf: its up-link capacity in host-cable lanes. */
static int build_ports(place_features *f)
{
	const place_cluster *c = f->c;
	double top = fastest_cable(c);

	f->port_off = calloc((size_t)f->L + 1, sizeof(int));
	if (!f->port_off)
		return -1;
	for (int l = 0; l < f->L; l++) {
		int k = (int)(c->leaf_up_gbps[l] / top + 0.5);

		f->port_off[l + 1] = f->port_off[l] + (k > 0 ? k : 1);
	}
	f->port_up = calloc((size_t)f->port_off[f->L] + 1, sizeof(int32_t));
	f->port_down = calloc((size_t)f->port_off[f->L] + 1, sizeof(int32_t));
	f->touched = calloc(2 * (size_t)c->nhosts * (size_t)c->nrails + 1, sizeof(int));
	return f->port_up && f->port_down && f->touched ? 0 : -1;
}

static int port_of(const place_features *f, int l, int b)
{
	return f->port_off[l] + b % (f->port_off[l + 1] - f->port_off[l]);
}

/* Add the cross-leaf ring flows of hosts (in ring order) to the port
 * counters; with `own`, remember the ports touched. */
static void ring_ports(place_features *f, const int *hosts, int n, int sign, int own)
{
	const place_cluster *c = f->c;
	int R = c->nrails;

	for (int i = 0; n > 1 && i < n; i++) {
		int a = hosts[i], b = hosts[(i + 1) % n];

		for (int r = 0; r < R; r++) {
			int la = c->host_leaf[a * R + r], lb = c->host_leaf[b * R + r], pu, pd;

			if (la < 0 || lb < 0 || la == lb)
				continue;
			pu = port_of(f, la, b);
			pd = port_of(f, lb, b);
			f->port_up[pu] += sign;
			f->port_down[pd] += sign;
			if (own) {
				f->touched[f->ntouched++] = 2 * pu;
				f->touched[f->ntouched++] = 2 * pd + 1;
			}
		}
	}
}

/* Background: the running communicating jobs' flows per port. */
static void count_ports(place_features *f, const place_state *s)
{
	memset(f->port_up, 0, (size_t)f->port_off[f->L] * sizeof(int32_t));
	memset(f->port_down, 0, (size_t)f->port_off[f->L] * sizeof(int32_t));
	for (int j = 0; j < s->njobs_running; j++)
		if (s->jobs[j].loads)
			ring_ports(f, s->jobs[j].hosts, s->jobs[j].nhosts, 1, 0);
}

/* The most flows on one port that the candidate's own flows use, its own
 * included: 1 = every crossing flow has its cable to itself. */
static double max_port_flows(place_features *f, const int *hosts, int n)
{
	double m = 0;

	f->ntouched = 0;
	ring_ports(f, hosts, n, 1, 1);
	for (int i = 0; i < f->ntouched; i++) {
		int t = f->touched[i];
		double v = t & 1 ? f->port_down[t >> 1] : f->port_up[t >> 1];

		if (v > m)
			m = v;
	}
	ring_ports(f, hosts, n, -1, 0);
	f->ntouched = 0;
	return m;
}

/* The fewest hours h whose 4 log1p(h) reaches k (k >= 1): a bisection
 * over the bit patterns of non-negative doubles, which order as their
 * values do, asking log1p itself. */
static double first_hours_at(int k)
{
	double h = 2.0 * expm1(k / 4.0) + 1.0;
	uint64_t lo = 0, hi, mid;

	memcpy(&hi, &h, sizeof(h)); /* 4 log1p(0) = 0 < k; 4 log1p(h) >= k */
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		memcpy(&h, &mid, sizeof(h));
		if (4.0 * log1p(h) >= k)
			hi = mid;
		else
			lo = mid;
	}
	memcpy(&h, &hi, sizeof(h));
	return h;
}

static void build_rem_steps(place_features *f)
{
	for (int k = 0; k < PLACE_REM_STEPS; k++)
		f->rem_step[k] = first_hours_at(k + 1);
}

place_features *place_features_new(const place_cluster *c, double frag_weight,
				   double hop_latency_us)
{
	place_features *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->c = c;
	f->H = c->nhosts;
	f->L = c->nleaves;
	f->leaf_idle = calloc((size_t)f->L + 1, sizeof(int));
	f->leaf_hosts = calloc((size_t)f->L + 1, sizeof(int));
	f->leaf_down = calloc((size_t)f->L + 1, sizeof(int));
	f->leaf_load = calloc((size_t)f->L + 1, sizeof(double));
	f->leaf_seen = calloc((size_t)f->L + 1, 1);
	f->group_idle = calloc((size_t)c->ngroups + 1, sizeof(int));
	f->host_rem = calloc((size_t)f->H + 1, sizeof(float));
	f->leaf_rem = calloc((size_t)f->L + 1, sizeof(double));
	f->group_rem = calloc((size_t)c->ngroups + 1, sizeof(double));
	f->group_cnt = calloc((size_t)c->ngroups + 1, sizeof(int));
	f->stamp = calloc((size_t)(c->ngroups + c->nleaves + 2 * c->nclasses) + 1, sizeof(int));
	f->model = place_model_new(c, frag_weight, hop_latency_us);
	if (!f->leaf_idle || !f->leaf_hosts || !f->leaf_down || !f->leaf_load || !f->leaf_seen ||
	    !f->group_idle || !f->host_rem || !f->leaf_rem || !f->group_rem || !f->group_cnt ||
	    !f->stamp || !f->model || build_graph(f)) {
		place_features_free(f);
		return NULL;
	}
	if (build_ports(f)) {
		place_features_free(f);
		return NULL;
	}
	place_model_scorer(f->model, &f->model_scorer);
	build_rem_steps(f);
	for (int h = 0; h < f->H; h++)
		for (int r = 0; r < c->nrails; r++)
			if (c->host_leaf[h * c->nrails + r] >= 0)
				f->leaf_hosts[c->host_leaf[h * c->nrails + r]]++;
	return f;
}

void place_features_free(place_features *f)
{
	if (!f)
		return;
	free(f->off);
	free(f->prev_off);
	free(f->prev_kind);
	free(f->nbr);
	free(f->w);
	free(f->spine_vid);
	free(f->spine_leaf_off);
	free(f->spine_leaves);
	free(f->leaf_spine_off);
	free(f->leaf_spine_k);
	free(f->leaf_w);
	free(f->host_kind);
	free(f->kind_rep);
	free(f->kind_head);
	free(f->kind_nleaves);
	free(f->kind_leaf);
	free(f->kind_w);
	free(f->type_next);
	free(f->type_kind);
	free(f->type_key);
	free(f->host_vertex);
	free(f->kind_idle);
	free(f->kind_down);
	free(f->kind_rem);
	free(f->kind_load);
	free(f->kind_util);
	free(f->fill);
	free(f->leaf_idle);
	free(f->leaf_hosts);
	free(f->leaf_down);
	free(f->leaf_load);
	free(f->leaf_seen);
	free(f->port_off);
	free(f->port_up);
	free(f->port_down);
	free(f->touched);
	free(f->group_idle);
	free(f->host_rem);
	free(f->leaf_rem);
	free(f->group_rem);
	free(f->group_cnt);
	free(f->stamp);
	place_model_free(f->model);
	free(f);
}

int place_features_max_vertices(const place_features *f) { return f->max_nv; }
int place_features_max_edges(const place_features *f) { return f->max_ne; }
const int32_t *place_features_host_vertex(const place_features *f) { return f->host_vertex; }
int place_features_nvertices(const place_features *f) { return f->nv; }
int place_features_ntypes(const place_features *f) { return f->T; }
int place_features_nedges(const place_features *f) { return f->ne; }
const int32_t *place_features_offsets(const place_features *f) { return f->off; }
const int32_t *place_features_neighbours(const place_features *f) { return f->nbr; }
const float *place_features_weights(const place_features *f) { return f->w; }

/* Background flows on leaf l's up-links per cable-equivalent of capacity:
 * 1 means as many flows as the up-links have host-cable-sized lanes. */
static double leaf_uplink_load(const place_cluster *c, const place_state *s, int l,
			       double cable)
{
	double lanes = c->leaf_up_gbps[l] / cable;

	return lanes > 0 ? s->bg_flows[place_res_leaf_up(c, l)] / lanes : 0;
}

static int host_idle(const place_state *s, int h)
{
	return !s->flags[h] && !s->njobs[h];
}

static float host_free_share(const place_state *s, int h)
{
	if (s->flags[h])
		return 0;
	if (s->total_gpus[h] > 0)
		return (float)s->free_gpus[h] / (float)s->total_gpus[h];
	if (s->total_cores[h] > 0)
		return (float)s->free_cores[h] / (float)s->total_cores[h];
	return (float)!s->njobs[h];
}

/* Where the steps at or below h (>= 0, finite) end, give or take one:
 * 4 log1p(h) = 4 ln2 log2(1 + h), and for 1 + h = 2^e (1 + m), m in
 * [0, 1), log2(1 + h) lies in [e + m, e + m + 0.09): under a quarter of a
 * step above the guess. */
static int remaining_guess(double h)
{
	double x = 1.0 + h, m;
	uint64_t b;
	int e, k;

	memcpy(&b, &x, sizeof(b));
	e = (int)(b >> 52 & 0x7ff) - 1023;
	m = (double)(b & ((UINT64_C(1) << 52) - 1)) * 0x1p-52;
	k = (int)(4.0 * 0.6931471805599453 * (e + m));
	return k < 0 ? 0 : k > PLACE_REM_STEPS ? PLACE_REM_STEPS : k;
}

float place_features_remaining(const place_features *f, double end_s, double now_s)
{
	double h = end_s > now_s ? (end_s - now_s) / 3600.0 : 0;
	int k;

	if (!(end_s > 0))
		return 0;
	if (!(h < f->rem_step[PLACE_REM_STEPS - 1])) /* past the table */
		return (float)(floor(4.0 * log1p(h)) / 4.0);
	/* the steps at or below h, counted from the guess: the table rises,
	 * so the walk ends where a search over all of it would */
	k = remaining_guess(h);
	while (k < PLACE_REM_STEPS && f->rem_step[k] <= h)
		k++;
	while (k > 0 && f->rem_step[k - 1] > h)
		k--;
	return (float)(k / 4.0);
}

/* Per host: the remaining time of the running jobs. */
static void count_remaining(place_features *f, const place_state *s)
{
	memset(f->host_rem, 0, (size_t)f->H * sizeof(float));
	for (int j = 0; j < s->njobs_running; j++) {
		float r = place_features_remaining(f, s->jobs[j].end_s, s->now_s);

		for (int i = 0; i < s->jobs[j].nhosts; i++)
			if (r > f->host_rem[s->jobs[j].hosts[i]])
				f->host_rem[s->jobs[j].hosts[i]] = r;
	}
}

/* Per-leaf and per-group counts of this state, summed per host kind first
 * (the hosts of a kind share their leaves): counts are integers, and
 * remaining times multiples of 1/4, so the sums are exact in any order. */
static void count_state(place_features *f, const place_state *s)
{
	const place_cluster *c = f->c;
	int R = c->nrails;
	double top = f->top;

	count_remaining(f, s);
	memset(f->leaf_idle, 0, (size_t)f->L * sizeof(int));
	memset(f->leaf_down, 0, (size_t)f->L * sizeof(int));
	memset(f->leaf_rem, 0, (size_t)f->L * sizeof(double));
	memset(f->group_idle, 0, (size_t)c->ngroups * sizeof(int));
	memset(f->group_rem, 0, (size_t)c->ngroups * sizeof(double));
	memset(f->kind_idle, 0, (size_t)f->nkinds * sizeof(int));
	memset(f->kind_down, 0, (size_t)f->nkinds * sizeof(int));
	memset(f->kind_rem, 0, (size_t)f->nkinds * sizeof(double));
	for (int h = 0; h < f->H; h++) {
		int idle = host_idle(s, h), k = f->host_kind[h];

		f->group_idle[c->host_group[h]] += idle;
		f->group_rem[c->host_group[h]] += f->host_rem[h];
		f->kind_idle[k] += idle;
		f->kind_down[k] += s->flags[h] != 0;
		f->kind_rem[k] += f->host_rem[h];
	}
	for (int l = 0; l < f->L; l++)
		f->leaf_load[l] = leaf_uplink_load(c, s, l, top);
	for (int k = 0; k < f->nkinds; k++) {
		const int *leaf = c->host_leaf + (size_t)f->kind_rep[k] * R;

		f->kind_load[k] = 0;
		f->kind_util[k] = 0;
		for (int r = 0; r < R; r++) {
			if (leaf[r] < 0)
				continue;
			f->leaf_idle[leaf[r]] += f->kind_idle[k];
			f->leaf_down[leaf[r]] += f->kind_down[k];
			f->leaf_rem[leaf[r]] += f->kind_rem[k];
			if ((float)f->leaf_load[leaf[r]] > f->kind_load[k])
				f->kind_load[k] = (float)f->leaf_load[leaf[r]];
			if ((float)s->leaf_util[leaf[r]] > f->kind_util[k])
				f->kind_util[k] = (float)s->leaf_util[leaf[r]];
		}
	}
	count_ports(f, s);
}

static float group_free(const place_features *f, int g)
{
	const place_cluster *c = f->c;

	return g >= 0 && c->group_nhosts[g] > 0 ? (float)f->group_idle[g] / c->group_nhosts[g]
						 : 0;
}

/* Host h's feature row. */
static void host_row(const place_features *f, const place_state *s, int h, float *x)
{
	const place_cluster *c = f->c;

	memset(x, 0, PLACE_FEAT_VERTEX * sizeof(float));
	x[0] = 1;
	x[3] = host_free_share(s, h);
	x[4] = s->flags[h] != 0;
	x[5] = f->kind_load[f->host_kind[h]];
	x[6] = f->kind_util[f->host_kind[h]];
	x[7] = group_free(f, c->host_group[h]);
	x[8] = f->host_rem[h];
}

/* The columns in which hosts of one kind differ (free share, down,
 * remaining time; host_row's others are the kind's or its group's),
 * packed: rows with different keys differ, so the search for a host's
 * type compares keys and only confirms a match on those columns. */
static uint64_t row_key(float free_share, float down, float rem)
{
	uint32_t a, b;

	memcpy(&a, &free_share, sizeof(a));
	memcpy(&b, &rem, sizeof(b));
	return ((uint64_t)a << 32 | b) ^ (down != 0);
}

/* Whether row x has these varying columns, bit for bit. */
static int row_varies_as(const float *x, float free_share, float down, float rem)
{
	float v[3] = { free_share, down, rem };

	return !memcmp(&x[3], &v[0], 2 * sizeof(float)) && !memcmp(&x[8], &v[2], sizeof(float));
}

/* Hosts -> types: the first host of each (kind, feature row) makes a new
 * vertex (in host order, so the graph is deterministic); the others map
 * to it. Writes the type rows to out[0..T); a host's whole row is made
 * only when it makes a type. */
static void assign_types(place_features *f, const place_state *s, float *out)
{
	for (int k = 0; k < f->nkinds; k++)
		f->kind_head[k] = -1;
	f->T = 0;
	for (int h = 0; h < f->H; h++) {
		int k = f->host_kind[h], t = f->kind_head[k];
		float free_share = host_free_share(s, h), down = s->flags[h] != 0;
		float rem = f->host_rem[h];
		uint64_t key = row_key(free_share, down, rem);

		while (t >= 0 && (f->type_key[t] != key ||
				  !row_varies_as(out + (size_t)t * PLACE_FEAT_VERTEX, free_share,
						 down, rem)))
			t = f->type_next[t];
		if (t < 0) {
			t = f->T++;
			host_row(f, s, h, out + (size_t)t * PLACE_FEAT_VERTEX);
			f->type_key[t] = key;
			f->type_kind[t] = k;
			f->type_next[t] = f->kind_head[k];
			f->kind_head[k] = t;
		}
		f->host_vertex[h] = t;
	}
}

/* The CSR of this state's types: type - leaf per rail of its kind, then
 * leaf - spine (static, copied from the precomputed lists, and only when
 * the rows moved since the last build); both directions; each leaf lists
 * its types, then its spines. When the types are of the same kinds in the
 * same order as at the last build, so is the whole graph: it is kept. */
static void build_csr(place_features *f)
{
	const place_cluster *c = f->c;
	int R = c->nrails, T = f->T, L = f->L;
	int32_t *off = f->off, *at = f->fill; /* at: per leaf, where its next entry goes */

	f->nv = T + L + f->S;
	if (T == f->prev_T && !memcmp(f->type_kind, f->prev_kind, (size_t)T * sizeof(int))) {
		f->ne = f->off[f->nv]; /* the same types as the last build: the same graph */
		return;
	}
	off[0] = 0;
	memset(at, 0, (size_t)L * sizeof(int));
	for (int t = 0; t < T; t++) {
		int k = f->type_kind[t];

		off[t + 1] = off[t] + f->kind_nleaves[k];
		for (int i = 0; i < f->kind_nleaves[k]; i++)
			at[f->kind_leaf[k * R + i]]++;
	}
	for (int l = 0; l < L; l++)
		off[T + l + 1] = off[T + l] + at[l] + c->leaf_spine_off[l + 1] - c->leaf_spine_off[l];
	for (int k = 0; k < f->S; k++)
		off[T + L + k + 1] = off[T + L + k] + f->spine_leaf_off[k + 1] - f->spine_leaf_off[k];
	f->ne = off[f->nv];
	for (int l = 0; l < L; l++)
		at[l] = off[T + l];
	for (int t = 0; t < T; t++) {
		int k = f->type_kind[t], e = off[t];
		const int *leaf = f->kind_leaf + (size_t)k * R;
		const float *wt = f->kind_w + (size_t)k * R;

		for (int i = 0; i < f->kind_nleaves[k]; i++) {
			f->nbr[e + i] = T + leaf[i];
			f->w[e + i] = wt[i];
			f->nbr[at[leaf[i]]] = t;
			f->w[at[leaf[i]]++] = wt[i];
		}
	}
	memcpy(f->prev_kind, f->type_kind, (size_t)T * sizeof(int));
	if (T == f->prev_T && !memcmp(off, f->prev_off, ((size_t)f->nv + 1) * sizeof(int32_t)))
		return; /* the leaf - spine entries are where the last build put them */
	f->prev_T = T;
	memcpy(f->prev_off, off, ((size_t)f->nv + 1) * sizeof(int32_t));
	for (int l = 0; l < L; l++) /* at[l]: after the leaf's types */
		for (int i = f->leaf_spine_off[l]; i < f->leaf_spine_off[l + 1]; i++, at[l]++) {
			f->nbr[at[l]] = T + L + f->leaf_spine_k[i];
			f->w[at[l]] = f->leaf_w[l];
		}
	for (int k = 0; k < f->S; k++) {
		int e = off[T + L + k];

		for (int i = f->spine_leaf_off[k]; i < f->spine_leaf_off[k + 1]; i++, e++) {
			f->nbr[e] = T + f->spine_leaves[i];
			f->w[e] = f->leaf_w[f->spine_leaves[i]];
		}
	}
}

/* This state's counts, and the analytic model's, once per state version. */
static void prepare_state(place_features *f, const place_state *s)
{
	char why[8];

	if (f->prepared == s && f->prepared_version == s->version)
		return;
	f->model_scorer.prepare(f->model_scorer.ctx, f->c, s, why, sizeof(why));
	count_state(f, s);
	f->prepared = s;
	f->prepared_version = s->version;
}

/* A spine's row: the mean of the leaves below it in columns 3.., summed in
 * locals (in registers, where an array would be summed through memory),
 * in the leaves' order. */
static void spine_row(const place_features *f, float *out, int v)
{
	float *x = out + (size_t)v * PLACE_FEAT_VERTEX;
	float s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0, s8 = 0;
	int deg = f->off[v + 1] - f->off[v];

	_Static_assert(PLACE_FEAT_VERTEX == 9, "spine_row sums columns 3 to 8");
	for (int k = f->off[v]; k < f->off[v + 1]; k++) {
		const float *y = out + (size_t)f->nbr[k] * PLACE_FEAT_VERTEX;

		s3 += y[3];
		s4 += y[4];
		s5 += y[5];
		s6 += y[6];
		s7 += y[7];
		s8 += y[8];
	}
	x[2] = 1;
	x[3] = deg > 0 ? s3 / (float)deg : s3;
	x[4] = deg > 0 ? s4 / (float)deg : s4;
	x[5] = deg > 0 ? s5 / (float)deg : s5;
	x[6] = deg > 0 ? s6 / (float)deg : s6;
	x[7] = deg > 0 ? s7 / (float)deg : s7;
	x[8] = deg > 0 ? s8 / (float)deg : s8;
}

void place_features_vertices(place_features *f, const place_state *s, float *out)
{
	const place_cluster *c = f->c;
	int T, L = f->L;

	prepare_state(f, s);
	assign_types(f, s, out);
	build_csr(f);
	T = f->T;
	memset(out + (size_t)T * PLACE_FEAT_VERTEX, 0,
	       (size_t)(f->nv - T) * PLACE_FEAT_VERTEX * sizeof(float));
	for (int l = 0; l < L; l++) {
		float *x = out + (size_t)(T + l) * PLACE_FEAT_VERTEX;
		int n = f->leaf_hosts[l];

		x[1] = 1;
		x[3] = n ? (float)f->leaf_idle[l] / n : 0;
		x[4] = n ? (float)f->leaf_down[l] / n : 0;
		x[5] = (float)f->leaf_load[l];
		x[6] = (float)s->leaf_util[l];
		x[7] = group_free(f, c->leaf_group[l]);
		x[8] = n ? (float)(f->leaf_rem[l] / n) : 0;
	}
	for (int v = T + L; v < f->nv; v++)
		spine_row(f, out, v);
}

/* Ring flows in host order: shares crossing leaves and groups, and the
 * highest background load on a leaf up-link its crossing flows leave by. */
static void ring_shape(place_features *f, const int *hosts, int n, double *xleaf,
		       double *xgroup, double *maxload)
{
	const place_cluster *c = f->c;
	int R = c->nrails;
	double flows = 0, xl = 0, xg = 0, ml = 0;

	for (int i = 0; n > 1 && i < n; i++) {
		int a = hosts[i], b = hosts[(i + 1) % n];

		for (int r = 0; r < R; r++) {
			int la = c->host_leaf[a * R + r], lb = c->host_leaf[b * R + r];

			if (la < 0 || lb < 0)
				continue;
			flows++;
			xg += c->host_group[a] != c->host_group[b];
			if (la == lb)
				continue;
			xl++;
			if (f->leaf_load[la] > ml)
				ml = f->leaf_load[la];
			if (f->leaf_load[lb] > ml)
				ml = f->leaf_load[lb];
		}
	}
	*xleaf = flows > 0 ? xl / flows : 0;
	*xgroup = flows > 0 ? xg / flows : 0;
	*maxload = ml;
}

/* Over the groups a set spans: the mean remaining_log_h of their hosts,
 * and how many wholly idle groups it would break (use in part). */
static void group_context(place_features *f, const int *hosts, int n, float *rem,
			  float *broken)
{
	const place_cluster *c = f->c;
	double sum = 0, cnt = 0;
	int b = 0;

	for (int i = 0; i < n; i++)
		f->group_cnt[c->host_group[hosts[i]]]++;
	for (int i = 0; i < n; i++) {
		int g = c->host_group[hosts[i]];

		if (f->group_cnt[g] == 0)
			continue; /* counted already */
		sum += f->group_rem[g];
		cnt += c->group_nhosts[g];
		b += f->group_idle[g] == c->group_nhosts[g] && f->group_cnt[g] < c->group_nhosts[g];
		f->group_cnt[g] = 0;
	}
	*rem = cnt > 0 ? (float)(sum / cnt) : 0;
	*broken = (float)b;
}

void place_features_sets(place_features *f, const place_state *s, const place_request *r,
			 place_candidate *cands, int n, float *out)
{
	const place_cluster *c = f->c;
	char why[8];

	prepare_state(f, s);
	f->model_scorer.score(f->model_scorer.ctx, c, s, r, cands, n, why, sizeof(why));
	for (int i = 0; i < n; i++) {
		const place_candidate *k = &cands[i];
		float *x = out + (size_t)i * PLACE_FEAT_SET;
		int groups, leaves, diam;
		double xl, xg, ml;

		place_set_shape(c, k->hosts, k->nhosts, f->stamp, &groups, &leaves, &diam);
		ring_shape(f, k->hosts, k->nhosts, &xl, &xg, &ml);
		x[0] = (float)log2(k->nhosts > 0 ? (double)k->nhosts : 1.0);
		x[1] = (float)groups;
		x[2] = (float)leaves / (float)(c->nrails > 0 ? c->nrails : 1);
		x[3] = (float)diam;
		x[PLACE_FEAT_SET_XLEAF] = (float)xl;
		x[5] = (float)xg;
		x[6] = (float)ml;
		x[7] = (float)(k->cost - k->frag_cost);
		x[8] = (float)k->frag_cost;
		x[9] = (float)(r->comm.bytes_per_iter / 1e9);
		x[10] = (float)r->comm.compute_s_per_iter;
		x[11] = (float)max_port_flows(f, k->hosts, k->nhosts);
		x[12] = (float)s->queue_hosts / (float)(f->H > 0 ? f->H : 1);
		x[13] = (float)log2(1.0 + s->queue_jobs);
		group_context(f, k->hosts, k->nhosts, &x[14], &x[15]);
	}
}
