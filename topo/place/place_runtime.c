#define _GNU_SOURCE /* getline */
/*
 * place_runtime: online run-time prediction (see place_runtime.h).
 *
 * State: one entity per user and per group, in an open-addressing hash,
 * each with a ring of its last RT_RING ended jobs, a ledger of its
 * estimators' recent absolute errors, and its run time / limit ratio.
 * A global ledger scores the same estimators over all jobs (used while a
 * user has too few of its own), and a "cold" ledger decides, for jobs of
 * users and groups never seen, between the limit and the global ratio x
 * the limit.
 */
#include "place_runtime.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "topo_num.h"

#define RT_RING 16
#define RT_MIN_SCORED 3     /* a user's own ledger decides from this many */
#define RT_ALPHA 0.3        /* weight of the newest error in a user's ledger */
#define RT_ALPHA_GLOBAL 0.02
#define RT_FORMAT "topognn-runtime"
#define RT_VERSION 1
/* counts a saved state may hold: far beyond any cluster, and below where
 * one more job could push a count past what loads again */
#define RT_MAX_COUNT 4e18
#define RT_MAX_RATIO 1e3    /* run time / limit learned, at most */
#define RT_MAX_SECONDS 1e11 /* a run time learned, at most (3,000 years) */
#define RT_MAX_SAVED 1e12   /* any saved time or error, at most */

enum { EST_LIMIT, EST_LAST2, EST_SIG2, EST_LIM3, EST_MED5, EST_RATIO, EST_LAST1, NEST };
enum { COLD_LIMIT, COLD_RATIO, NCOLD };

typedef struct rt_past {
	double runtime, limit;
	int size;
	uint32_t app;
} rt_past;

/* Errors of the estimators: exponentially weighted, a plain mean for the
 * first 1/alpha scores so the first ones do not start from 0. */
typedef struct rt_ledger {
	long n;
	double err[NEST];
} rt_ledger;

typedef struct rt_entity {
	uint64_t key;       /* kind << 32 | id */
	long nobs;
	double ratio;       /* EW run time / limit; < 0: none yet */
	rt_ledger led;
	int head, n;        /* ring: past[(head - 1 - k) mod RING] is the k-th newest */
	rt_past past[RT_RING];
} rt_entity;

struct place_runtime {
	rt_entity *ent;
	int nent, cap;
	int *slot;          /* entity index + 1, 0 empty */
	int nslot;
	long nobs;
	double ratio;       /* all jobs with a limit: EW run time / limit, < 0 none */
	double mean_runtime;
	rt_ledger global;
	long cold_n;
	double cold_err[NCOLD];
};

enum { KIND_USER = 1, KIND_GROUP = 2 };

static uint64_t ent_key(int kind, int id)
{
	return (uint64_t)kind << 32 | (uint32_t)id;
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

place_runtime *place_runtime_new(void)
{
	place_runtime *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->ratio = -1;
	return p;
}

void place_runtime_free(place_runtime *p)
{
	if (!p)
		return;
	free(p->ent);
	free(p->slot);
	free(p);
}

long place_runtime_observed(const place_runtime *p)
{
	return p->nobs;
}

uint32_t place_runtime_app_hash(const char *name)
{
	uint32_t h = 2166136261u;

	if (!name || !*name)
		return 0;
	for (; *name; name++)
		h = (h ^ (uint8_t)*name) * 16777619u;
	return h ? h : 1;
}

/* ---- the hash of entities ------------------------------------------------- */

static const rt_entity *find(const place_runtime *p, int kind, int id)
{
	uint64_t k = ent_key(kind, id);

	if (id < 0 || p->nslot == 0)
		return NULL;
	for (size_t i = mix(k) & (size_t)(p->nslot - 1);; i = (i + 1) & (size_t)(p->nslot - 1)) {
		if (!p->slot[i])
			return NULL;
		if (p->ent[p->slot[i] - 1].key == k)
			return &p->ent[p->slot[i] - 1];
	}
}

static void slot_put(int *slot, int nslot, uint64_t key, int index)
{
	size_t i = mix(key) & (size_t)(nslot - 1);

	while (slot[i])
		i = (i + 1) & (size_t)(nslot - 1);
	slot[i] = index + 1;
}

/* The entity (kind, id), created when new. NULL: id unknown or no memory. */
static rt_entity *get(place_runtime *p, int kind, int id)
{
	rt_entity *e = (rt_entity *)find(p, kind, id);

	if (e || id < 0)
		return e;
	if (p->nent == p->cap) {
		int cap = p->cap ? 2 * p->cap : 64;
		rt_entity *ent = realloc(p->ent, (size_t)cap * sizeof(*ent));

		if (!ent)
			return NULL;
		p->ent = ent;
		p->cap = cap;
	}
	if (2 * (p->nent + 1) > p->nslot) {
		int nslot = p->nslot ? 2 * p->nslot : 128;
		int *slot = calloc((size_t)nslot, sizeof(int));

		if (!slot)
			return NULL;
		for (int i = 0; i < p->nent; i++)
			slot_put(slot, nslot, p->ent[i].key, i);
		free(p->slot);
		p->slot = slot;
		p->nslot = nslot;
	}
	e = &p->ent[p->nent];
	memset(e, 0, sizeof(*e));
	e->key = ent_key(kind, id);
	e->ratio = -1;
	slot_put(p->slot, p->nslot, e->key, p->nent++);
	return e;
}

/* ---- estimators ----------------------------------------------------------- */

static const rt_past *newest(const rt_entity *e, int k)
{
	return &e->past[((e->head - 1 - k) % RT_RING + RT_RING) % RT_RING];
}

static double median(double *v, int n)
{
	for (int i = 1; i < n; i++) /* n <= 5: insertion sort */
		for (int k = i; k > 0 && v[k] < v[k - 1]; k--) {
			double t = v[k];

			v[k] = v[k - 1];
			v[k - 1] = t;
		}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int same_limit(double a, double b)
{
	return fabs(a - b) < 0.5;
}

/* The newest up to `want` run times of e's ring that match j (sig: same
 * limit, size and application; else same limit). Their count. */
static int matching(const rt_entity *e, const place_runtime_job *j, int sig, int want,
		    double *out)
{
	int n = 0;

	for (int k = 0; k < e->n && n < want; k++) {
		const rt_past *q = newest(e, k);

		if (same_limit(q->limit, j->limit_s) &&
		    (!sig || (q->size == j->size && q->app == j->app)))
			out[n++] = q->runtime;
	}
	return n;
}

/* Every estimator's value for j from entity e (NAN: not available). */
static void estimate(const rt_entity *e, const place_runtime_job *j, double *est)
{
	double v[5];
	int n;

	for (int c = 0; c < NEST; c++)
		est[c] = NAN;
	if (j->limit_s > 0)
		est[EST_LIMIT] = j->limit_s;
	if (!e || e->n == 0)
		return;
	est[EST_LAST1] = newest(e, 0)->runtime;
	est[EST_LAST2] = e->n > 1 ? (newest(e, 0)->runtime + newest(e, 1)->runtime) / 2
				  : est[EST_LAST1];
	n = e->n < 5 ? e->n : 5;
	for (int k = 0; k < n; k++)
		v[k] = newest(e, k)->runtime;
	est[EST_MED5] = median(v, n);
	if (j->limit_s > 0 && e->ratio >= 0)
		est[EST_RATIO] = e->ratio * j->limit_s;
	if (j->limit_s > 0 && (n = matching(e, j, 1, 2, v)) > 0)
		est[EST_SIG2] = n == 2 ? (v[0] + v[1]) / 2 : v[0];
	if (j->limit_s > 0 && (n = matching(e, j, 0, 3, v)) > 0)
		est[EST_LIM3] = median(v, n);
}

/* The entity whose history predicts j: its user's, else its group's. */
static const rt_entity *history_of(const place_runtime *p, const place_runtime_job *j)
{
	const rt_entity *e = find(p, KIND_USER, j->user);

	if (e && e->n > 0)
		return e;
	e = find(p, KIND_GROUP, j->group);
	return e && e->n > 0 ? e : NULL;
}

static double cap_at_limit(double x, const place_runtime_job *j)
{
	if (j->limit_s > 0 && x > j->limit_s)
		x = j->limit_s;
	return x >= 1 ? x : 1;
}

/* A job of an unknown user and group: the limit or the global ratio x the
 * limit, whichever erred less on such jobs; without a limit the mean. */
static double cold_estimate(const place_runtime *p, const place_runtime_job *j, double *est)
{
	est[COLD_LIMIT] = j->limit_s > 0 ? j->limit_s : NAN;
	est[COLD_RATIO] = j->limit_s > 0 && p->ratio >= 0 ? p->ratio * j->limit_s : NAN;
	if (!isnan(est[COLD_RATIO]) &&
	    (isnan(est[COLD_LIMIT]) || p->cold_err[COLD_RATIO] < p->cold_err[COLD_LIMIT]))
		return est[COLD_RATIO];
	if (!isnan(est[COLD_LIMIT]))
		return est[COLD_LIMIT];
	return p->nobs > 0 ? p->mean_runtime : 3600;
}

double place_runtime_predict(const place_runtime *p, const place_runtime_job *j)
{
	const rt_entity *e = history_of(p, j);
	const rt_ledger *led;
	double est[NEST], cold[NCOLD];
	int best = -1;

	if (!e)
		return cap_at_limit(cold_estimate(p, j, cold), j);
	estimate(e, j, est);
	led = e->led.n >= RT_MIN_SCORED ? &e->led : &p->global;
	for (int c = 0; c < NEST; c++)
		if (!isnan(est[c]) && (best < 0 || led->err[c] < led->err[best]))
			best = c;
	return cap_at_limit(est[best], j);
}

double place_runtime_last_two(const place_runtime *p, const place_runtime_job *j)
{
	const rt_entity *e = find(p, KIND_USER, j->user);
	double est[NEST];

	if (!e || e->n == 0)
		return cap_at_limit(j->limit_s > 0 ? j->limit_s
						   : p->nobs > 0 ? p->mean_runtime : 3600, j);
	estimate(e, j, est);
	return cap_at_limit(est[EST_LAST2], j);
}

/* ---- learning ------------------------------------------------------------- */

static double ew(double old, double x, long n, double alpha)
{
	double a = 1.0 / (double)n;

	return old + (x - old) * (a > alpha ? a : alpha);
}

static void score(rt_ledger *led, const double *est, double runtime, double alpha,
		  const place_runtime_job *j)
{
	led->n++;
	for (int c = 0; c < NEST; c++) {
		/* an estimator that has nothing to say errs as the limit would */
		double x = !isnan(est[c]) ? est[c] : !isnan(est[EST_LIMIT]) ? est[EST_LIMIT]
									      : 0;

		led->err[c] = ew(led->err[c], fmin(fabs(cap_at_limit(x, j) - runtime), RT_MAX_SAVED),
				 led->n, alpha);
	}
}

static void learn(rt_entity *e, const place_runtime_job *j, double runtime)
{
	rt_past *q = &e->past[e->head];

	q->runtime = runtime;
	q->limit = fmin(j->limit_s, RT_MAX_SAVED);
	q->size = j->size < -1 ? -1 : j->size > 1000000000 ? 1000000000 : j->size;
	q->app = j->app;
	e->head = (e->head + 1) % RT_RING;
	if (e->n < RT_RING)
		e->n++;
	e->nobs++;
	if (j->limit_s > 0) {
		double r = fmin(runtime / j->limit_s, RT_MAX_RATIO);

		e->ratio = e->ratio < 0 ? r : e->ratio + RT_ALPHA * (r - e->ratio);
	}
}

int place_runtime_observe(place_runtime *p, const place_runtime_job *j, double runtime_s)
{
	rt_entity *hist = (rt_entity *)history_of(p, j), *u, *g;
	double est[NEST];
	int rc = 0;

	if (!(runtime_s > 0))
		return 0;
	runtime_s = fmin(runtime_s, RT_MAX_SECONDS);
	if (hist) {
		estimate(hist, j, est);
		score(&hist->led, est, runtime_s, RT_ALPHA, j);
		score(&p->global, est, runtime_s, RT_ALPHA_GLOBAL, j);
	} else {
		double cold[NCOLD];

		cold_estimate(p, j, cold);
		p->cold_n++;
		for (int c = 0; c < NCOLD; c++)
			if (!isnan(cold[c]))
				p->cold_err[c] = ew(p->cold_err[c],
						    fmin(fabs(cold[c] - runtime_s), RT_MAX_SAVED),
						    p->cold_n, RT_ALPHA_GLOBAL);
	}
	/* history_of's pointer may move when get() grows the table */
	u = get(p, KIND_USER, j->user);
	if (!u && j->user >= 0)
		rc = -1;
	if (u)
		learn(u, j, runtime_s);
	g = get(p, KIND_GROUP, j->group);
	if (!g && j->group >= 0)
		rc = -1;
	if (g)
		learn(g, j, runtime_s);
	p->nobs++;
	p->mean_runtime = ew(p->mean_runtime, runtime_s, p->nobs, RT_ALPHA_GLOBAL);
	if (j->limit_s > 0) {
		double r = fmin(runtime_s / j->limit_s, RT_MAX_RATIO);

		p->ratio = p->ratio < 0 ? r : p->ratio + RT_ALPHA_GLOBAL * (r - p->ratio);
	}
	return rc;
}

/* ---- saving and loading --------------------------------------------------- */

static int save_ledger(FILE *f, const rt_ledger *led)
{
	int rc = fprintf(f, " %ld", led->n) < 0;

	for (int c = 0; c < NEST; c++)
		rc |= fprintf(f, " %.17g", led->err[c]) < 0;
	return rc;
}

int place_runtime_save(const place_runtime *p, FILE *f)
{
	int rc = fprintf(f, "%s %d %d %d\n", RT_FORMAT, RT_VERSION, NEST, RT_RING) < 0;

	rc |= fprintf(f, "global %ld %.17g %.17g", p->nobs, p->ratio, p->mean_runtime) < 0;
	rc |= save_ledger(f, &p->global);
	rc |= fprintf(f, " %ld %.17g %.17g\n", p->cold_n, p->cold_err[0], p->cold_err[1]) < 0;
	for (int i = 0; i < p->nent && !rc; i++) {
		const rt_entity *e = &p->ent[i];

		rc |= fprintf(f, "%s %d %ld %.17g", (e->key >> 32) == KIND_USER ? "user" : "group",
			      (int)(uint32_t)e->key, e->nobs, e->ratio) < 0;
		rc |= save_ledger(f, &e->led);
		rc |= fprintf(f, " %d", e->n) < 0;
		for (int k = e->n - 1; k >= 0; k--) {
			const rt_past *q = newest(e, k);

			rc |= fprintf(f, " %.17g %.17g %d %u", q->runtime, q->limit, q->size,
				      q->app) < 0;
		}
		rc |= fputc('\n', f) == EOF;
	}
	return rc || fflush(f) ? -1 : 0;
}

/* A line being read: the cursor, and where to report. */
typedef struct rt_reader {
	const char *line, *p, *source;
	int lineno;
	topo_error *err;
} rt_reader;

static int bad(rt_reader *r, const char *what)
{
	topo_error_set_at(r->err, r->source, r->lineno, (int)(r->p - r->line) + 1, "%s", what);
	return -1;
}

/* The next number of the line, within [lo, hi]. */
static int num(rt_reader *r, double lo, double hi, const char *what, double *out)
{
	const char *end;

	while (*r->p == ' ')
		r->p++;
	if (topo_parse_double_prefix(r->p, lo, hi, out, &end) ||
	    (*end && *end != ' ' && *end != '\n')) {
		char msg[160];

		snprintf(msg, sizeof(msg), "%s: expected a number from %g to %g", what, lo, hi);
		return bad(r, msg);
	}
	r->p = end;
	return 0;
}

static int inum(rt_reader *r, double lo, double hi, const char *what, long *out)
{
	double x;

	if (num(r, lo, hi, what, &x))
		return -1;
	if (x != floor(x))
		return bad(r, "expected a whole number");
	*out = (long)x;
	return 0;
}

static int load_ledger(rt_reader *r, rt_ledger *led)
{
	if (inum(r, 0, RT_MAX_COUNT, "scored jobs", &led->n))
		return -1;
	for (int c = 0; c < NEST; c++)
		if (num(r, 0, RT_MAX_SAVED, "estimator error", &led->err[c]))
			return -1;
	return 0;
}

static int line_end(rt_reader *r)
{
	while (*r->p == ' ')
		r->p++;
	return *r->p && *r->p != '\n' ? bad(r, "unexpected text at the end of the line") : 0;
}

static int load_header(rt_reader *r)
{
	long v, nest, ring;
	size_t n = strlen(RT_FORMAT);

	if (strncmp(r->p, RT_FORMAT, n) || r->p[n] != ' ')
		return bad(r, "not a topognn run-time predictor state (no \"" RT_FORMAT "\" header)");
	r->p += n;
	if (inum(r, 0, 1e9, "version", &v) || inum(r, 0, 1e9, "estimators", &nest) ||
	    inum(r, 0, 1e9, "ring size", &ring))
		return -1;
	if (v != RT_VERSION || nest != NEST || ring != RT_RING)
		return bad(r, "saved by another version of the predictor; start afresh");
	return line_end(r);
}

static int load_global(rt_reader *r, place_runtime *p)
{
	if (strncmp(r->p, "global ", 7))
		return bad(r, "expected the \"global\" line");
	r->p += 7;
	if (inum(r, 0, RT_MAX_COUNT, "jobs", &p->nobs) || num(r, -1, 1e6, "ratio", &p->ratio) ||
	    num(r, 0, RT_MAX_SAVED, "mean run time", &p->mean_runtime) || load_ledger(r, &p->global) ||
	    inum(r, 0, RT_MAX_COUNT, "cold jobs", &p->cold_n) ||
	    num(r, 0, RT_MAX_SAVED, "cold error", &p->cold_err[0]) ||
	    num(r, 0, RT_MAX_SAVED, "cold error", &p->cold_err[1]))
		return -1;
	return line_end(r);
}

static int load_entity(rt_reader *r, place_runtime *p)
{
	int kind = !strncmp(r->p, "user ", 5) ? KIND_USER : !strncmp(r->p, "group ", 6) ? KIND_GROUP
											  : 0;
	long id, nobs, n;
	double ratio;
	rt_entity *e;

	if (!kind)
		return bad(r, "expected a \"user\" or \"group\" line");
	r->p += kind == KIND_USER ? 5 : 6;
	if (inum(r, 0, 2147483647.0, "id", &id) || inum(r, 0, RT_MAX_COUNT, "jobs", &nobs) ||
	    num(r, -1, 1e6, "ratio", &ratio))
		return -1;
	if (find(p, kind, (int)id))
		return bad(r, "this user or group is listed twice");
	if (!(e = get(p, kind, (int)id)))
		return bad(r, "out of memory");
	e->nobs = nobs;
	e->ratio = ratio;
	if (load_ledger(r, &e->led) || inum(r, 0, RT_RING, "past jobs", &n))
		return -1;
	for (long k = 0; k < n; k++) {
		rt_past *q = &e->past[e->head];
		long size, app;

		if (num(r, 0, RT_MAX_SAVED, "run time", &q->runtime) ||
		    num(r, 0, RT_MAX_SAVED, "limit", &q->limit) || inum(r, -1, 1e9, "size", &size) ||
		    inum(r, 0, 4294967295.0, "application", &app))
			return -1;
		q->size = (int)size;
		q->app = (uint32_t)app;
		e->head = (e->head + 1) % RT_RING;
		e->n++;
	}
	return line_end(r);
}

static void reset(place_runtime *p)
{
	free(p->ent);
	free(p->slot);
	memset(p, 0, sizeof(*p));
	p->ratio = -1;
}

int place_runtime_load(place_runtime *p, FILE *f, const char *source, topo_error *err)
{
	rt_reader r = {.source = source, .err = err};
	char *buf = NULL;
	size_t cap = 0;
	int rc = 0;

	reset(p);
	while (rc == 0 && getline(&buf, &cap, f) >= 0) {
		r.line = r.p = buf;
		r.lineno++;
		rc = r.lineno == 1 ? load_header(&r) : r.lineno == 2 ? load_global(&r, p)
							       : load_entity(&r, p);
	}
	if (rc == 0 && ferror(f)) {
		topo_error_set(err, source, r.lineno, "cannot read the file");
		rc = -1;
	} else if (rc == 0 && r.lineno < 2) {
		topo_error_set(err, source, r.lineno, "the file ends before the \"global\" line");
		rc = -1;
	}
	free(buf);
	if (rc)
		reset(p);
	return rc;
}
