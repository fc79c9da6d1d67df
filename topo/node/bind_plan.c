/*
 * bind_plan: a job step's HCAs, NCCL/UCX variables and per-task CPU lists on
 * one host. The rules are in bind_plan.h; this file holds the mechanics.
 */
#include "bind_plan.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bind_cpuset.h"
#include "bind_roce.h"
#include "topo_affinity.h"
#include "topo_alloc.h"
#include "topo_num.h"
#include "topo_nicrole.h"

#define SRC "<plan>"

/* One candidate HCA while planning. */
typedef struct hca_slot {
	const topo_affinity_hca *a;
	int rail;
	int port;     /* as used in variables */
	int allowed;  /* usable by this step (plan rails, --topognn-nic list) */
	int compute;  /* on the compute fabric (not a storage/management port) */
	int uses;     /* GPUs of the step given it so far */
	int chosen;
	int order;    /* position in a --topognn-nic list; else rail */
} hca_slot;

typedef struct planner {
	const topo_affinity *aff;
	hca_slot *slots; /* aff->nhcas */
	bind_plan *plan;
	topo_error *err;
} planner;

/* ---- small helpers -------------------------------------------------------- */

static int add_note(bind_plan *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int add_note(bind_plan *p, const char *fmt, ...)
{
	char buf[512];
	char **v;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	v = realloc(p->notes, (p->nnotes + 1) * sizeof(*v));
	if (!v)
		return -1;
	p->notes = v;
	v[p->nnotes] = strdup(buf);
	if (!v[p->nnotes])
		return -1;
	p->nnotes++;
	return 0;
}

/* ---- GPU lists and plans ------------------------------------------------- */

static int parse_index(const char *s, size_t len, int *out)
{
	long v = 0;

	if (len == 0 || len > 6)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = (int)v;
	return 0;
}

int bind_parse_gpu_list(const char *text, const char *source, int **out, int *n, topo_error *err)
{
	int *v = NULL;
	size_t cap = 0;
	const char *p = text ? text : "";

	*out = NULL;
	*n = 0;
	while (isspace((unsigned char)*p))
		p++;
	if (*p == '\0' || strncmp(p, "NoDevFiles", 10) == 0)
		return 0;
	while (*p) {
		size_t len = strcspn(p, ",");
		const char *dash;
		int lo, hi;
		size_t a = 0, b = len;

		while (a < b && isspace((unsigned char)p[a]))
			a++;
		while (b > a && isspace((unsigned char)p[b - 1]))
			b--;
		dash = memchr(p + a, '-', b - a);
		if (dash ? parse_index(p + a, (size_t)(dash - p) - a, &lo) < 0 ||
				   parse_index(dash + 1, p + b - dash - 1, &hi) < 0 || hi < lo ||
				   hi - lo > 4095
			 : parse_index(p + a, b - a, &lo) < 0) {
			topo_error_set(err, source, 0,
				       "GPU list \"%s\": \"%.*s\" is not a GPU index or range "
				       "(GPU UUIDs are not supported; use indices in PCI bus id order)",
				       text, (int)(b - a), p + a);
			free(v);
			return -1;
		}
		if (!dash)
			hi = lo;
		for (int i = lo; i <= hi; i++) {
			if (topo_grow(&v, &cap, (size_t)*n + 1, sizeof(*v), 8) < 0) {
				topo_error_set(err, source, 0, "out of memory");
				free(v);
				return -1;
			}
			v[(*n)++] = i;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	*out = v;
	return 0;
}

int bind_gpus_from_env(bind_getenv_fn getenv_fn, void *ctx, int **out, int *n, const char **from,
		       topo_error *err)
{
	static const char *const vars[] = { "SLURM_STEP_GPUS", "SLURM_JOB_GPUS",
					    "CUDA_VISIBLE_DEVICES" };

	*out = NULL;
	*n = 0;
	*from = NULL;
	for (size_t i = 0; getenv_fn && i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = getenv_fn(ctx, vars[i]);

		if (v) {
			*from = vars[i];
			return bind_parse_gpu_list(v, vars[i], out, n, err);
		}
	}
	return 0;
}

/* The next ';'-separated item of a plan (leading blanks skipped): its start
 * and *len, advancing *p; NULL at the end. */
static const char *plan_item(const char **p, size_t *len)
{
	const char *item;

	if (!**p)
		return NULL;
	*len = strcspn(*p, ";");
	item = *p;
	*p += *len;
	if (**p == ';')
		(*p)++;
	while (*len && isspace((unsigned char)*item)) {
		item++;
		(*len)--;
	}
	return item;
}

int bind_plan_sharp(const char *plan)
{
	const char *p = plan ? plan : "", *item;
	size_t len;
	int sharp = 0;

	while ((item = plan_item(&p, &len)) != NULL)
		if (len == 7 && !strncmp(item, "sharp=", 6) && (item[6] == '0' || item[6] == '1'))
			sharp = item[6] == '1';
	return sharp;
}

int bind_plan_rails(const char *plan, char **rails, topo_error *err)
{
	const char *p = plan ? plan : "", *item;
	bind_cpuset set;
	size_t len;
	int count;

	*rails = NULL;
	bind_cpuset_init(&set);
	while ((item = plan_item(&p, &len)) != NULL) {
		if (len >= 5 && strncmp(item, "rail=", 5) == 0) {
			char *text = strndup(item + 5, len - 5);
			bind_cpuset one;

			bind_cpuset_init(&one);
			if (!text || bind_cpuset_parse(&one, text, "TOPOGNN_PLAN", 0, err) < 0) {
				if (!text)
					topo_error_set(err, "TOPOGNN_PLAN", 0, "out of memory");
				else
					topo_error_set(err, "TOPOGNN_PLAN", 0,
						       "plan \"%s\": rail list \"%s\" is not like 0-3 or 1,3",
						       plan, text);
				free(text);
				bind_cpuset_free(&one);
				bind_cpuset_free(&set);
				return -1;
			}
			for (int r = bind_cpuset_next(&one, -1); r >= 0; r = bind_cpuset_next(&one, r))
				bind_cpuset_add(&set, r);
			bind_cpuset_free(&one);
			free(text);
		}
	}
	count = bind_cpuset_count(&set);
	if (count > 0) {
		*rails = bind_cpuset_format(&set);
		if (!*rails) {
			topo_error_set(err, "TOPOGNN_PLAN", 0, "out of memory");
			count = -1;
		}
	}
	bind_cpuset_free(&set);
	return count;
}

/* ---- HCA slots ------------------------------------------------------------ */

static const char *local_part(const char *name)
{
	const char *slash = strchr(name, '/');

	return slash ? slash + 1 : name;
}

static int cmp_by_busid(const void *a, const void *b)
{
	const hca_slot *x = *(hca_slot *const *)a, *y = *(hca_slot *const *)b;
	const char *bx = x->a->pci_busid ? x->a->pci_busid : "~";
	const char *by = y->a->pci_busid ? y->a->pci_busid : "~";
	int c = strcmp(bx, by);

	return c ? c : strcmp(x->a->name, y->a->name);
}

/* Rails: the graph's when set, else the position in PCI bus id order. */
static int fill_slots(planner *pl, const topo_graph *g)
{
	const topo_affinity *aff = pl->aff;
	hca_slot **byid;

	pl->slots = calloc(aff->nhcas ? aff->nhcas : 1, sizeof(*pl->slots));
	byid = calloc(aff->nhcas ? aff->nhcas : 1, sizeof(*byid));
	if (!pl->slots || !byid) {
		free(byid);
		return -1;
	}
	for (int i = 0; i < aff->nhcas; i++) {
		char full[512];
		int v;

		pl->slots[i].a = &aff->hcas[i];
		pl->slots[i].port = aff->hcas[i].port > 0 ? aff->hcas[i].port : 1;
		snprintf(full, sizeof(full), "%s/%s", aff->host, aff->hcas[i].name);
		v = topo_graph_find(g, TOPO_V_HCA, full);
		pl->slots[i].rail = v >= 0 ? topo_graph_vertex(g, v)->rail : -1;
		pl->slots[i].compute = v < 0 || topo_nic_role_of(g, v) == TOPO_NIC_COMPUTE;
		pl->slots[i].allowed = pl->slots[i].compute;
		byid[i] = &pl->slots[i];
	}
	qsort(byid, aff->nhcas, sizeof(*byid), cmp_by_busid);
	for (int i = 0, k = 0; i < aff->nhcas; i++) {
		if (byid[i]->rail < 0 && byid[i]->compute)
			byid[i]->rail = k;
		k += byid[i]->compute;
		byid[i]->order = byid[i]->rail;
	}
	free(byid);
	return 0;
}

static hca_slot *slot_named(planner *pl, const char *name)
{
	for (int i = 0; i < pl->aff->nhcas; i++)
		if (strcmp(pl->slots[i].a->name, name) == 0)
			return &pl->slots[i];
	return NULL;
}

static void hca_names(const planner *pl, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; i < pl->aff->nhcas && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%s", i ? ", " : "", pl->slots[i].a->name);
	if (pl->aff->nhcas == 0)
		snprintf(buf, len, "none");
}

/* --topognn-nic=LIST: allow exactly the named HCAs ("mlx5_0" or "mlx5_0:2"). */
static int allow_list(planner *pl, const char *list)
{
	char *copy = strdup(list), *save = NULL;
	int order = 0;

	if (!copy) {
		topo_error_set(pl->err, "--topognn-nic", 0, "out of memory");
		return -1;
	}
	for (int i = 0; i < pl->aff->nhcas; i++)
		pl->slots[i].allowed = 0;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');
		hca_slot *s;
		int port = 0;

		while (isspace((unsigned char)*tok))
			tok++;
		if (colon) {
			*colon = '\0';
			if (parse_index(colon + 1, strlen(colon + 1), &port) < 0 || port < 1) {
				topo_error_set(pl->err, "--topognn-nic", 0,
					       "\"%s\": port \"%s\" of %s is not a port number", list,
					       colon + 1, tok);
				free(copy);
				return -1;
			}
		}
		s = slot_named(pl, tok);
		if (!s) {
			char names[256];

			hca_names(pl, names, sizeof(names));
			topo_error_set(pl->err, "--topognn-nic", 0,
				       "\"%s\" names %s, which host %s does not have (its HCAs: %s)",
				       list, tok, pl->aff->host, names);
			free(copy);
			return -1;
		}
		if (!s->compute) {
			topo_error_set(pl->err, "--topognn-nic", 0,
				       "\"%s\" names %s, a storage or management port of host %s; "
				       "NCCL and UCX only get compute-fabric HCAs",
				       list, tok, pl->aff->host);
			free(copy);
			return -1;
		}
		if (port)
			s->port = port;
		if (!s->allowed)
			s->order = order++;
		s->allowed = 1;
	}
	free(copy);
	if (order == 0) {
		topo_error_set(pl->err, "--topognn-nic", 0,
			       "\"%s\" names no HCA (want auto, none or a list like mlx5_0,mlx5_1)",
			       list);
		return -1;
	}
	return 0;
}

/* Plan rails: allow only HCAs on them (all, with a note, if none is). */
static int allow_rails(planner *pl, const char *rails)
{
	bind_cpuset set;
	int any = 0;

	bind_cpuset_init(&set);
	if (bind_cpuset_parse(&set, rails, "TOPOGNN_PLAN", 0, pl->err) < 0)
		return -1;
	for (int i = 0; i < pl->aff->nhcas; i++)
		any |= pl->slots[i].compute && bind_cpuset_has(&set, pl->slots[i].rail);
	for (int i = 0; any && i < pl->aff->nhcas; i++)
		pl->slots[i].allowed = pl->slots[i].compute && bind_cpuset_has(&set, pl->slots[i].rail);
	bind_cpuset_free(&set);
	if (!any && add_note(pl->plan,
			     "the plan's rails %s match no HCA of host %s; HCAs chosen by locality only",
			     rails, pl->aff->host) < 0)
		return -1;
	return 0;
}

/* The least used allowed slot among those `pick` accepts; ties: lowest order. */
static hca_slot *least_used(planner *pl, int (*pick)(const hca_slot *, const void *),
			    const void *arg)
{
	hca_slot *best = NULL;

	for (int i = 0; i < pl->aff->nhcas; i++) {
		hca_slot *s = &pl->slots[i];

		if (!s->allowed || !pick(s, arg))
			continue;
		if (!best || s->uses < best->uses || (s->uses == best->uses && s->order < best->order))
			best = s;
	}
	return best;
}

static int pick_nearest(const hca_slot *s, const void *arg)
{
	const topo_affinity_gpu *gpu = arg;

	for (int k = 0; k < gpu->nnearest; k++)
		if (strcmp(gpu->nearest_hcas[k], s->a->name) == 0)
			return 1;
	return 0;
}

static int pick_numa(const hca_slot *s, const void *arg)
{
	const topo_affinity_gpu *gpu = arg;

	return gpu->numa >= 0 && s->a->numa == gpu->numa;
}

static int pick_any(const hca_slot *s, const void *arg)
{
	(void)s;
	(void)arg;
	return 1;
}

static int pick_cores(const hca_slot *s, const void *arg)
{
	const bind_cpuset *cores = arg;
	bind_cpuset local;
	int hit;

	if (!s->a->cpuset)
		return 0;
	bind_cpuset_init(&local);
	hit = bind_cpuset_parse(&local, s->a->cpuset, SRC, 0, NULL) == 0 &&
	      bind_cpuset_intersects(&local, cores);
	bind_cpuset_free(&local);
	return hit;
}

/* ---- building the plan ---------------------------------------------------- */

static int set_gpus(planner *pl, const bind_request *req)
{
	bind_plan *p = pl->plan;
	int *idx, n = 0, fail = 0;

	if (req->ngpus <= 0)
		return 0;
	idx = malloc(req->ngpus * sizeof(*idx));
	if (!idx)
		goto oom;
	memcpy(idx, req->gpus, req->ngpus * sizeof(*idx));
	qsort(idx, req->ngpus, sizeof(*idx), topo_cmp_int);
	for (int i = 0; i < req->ngpus; i++)
		if (i == 0 || idx[i] != idx[i - 1])
			idx[n++] = idx[i];
	for (int i = 0; i < n; i++) {
		if (idx[i] < 0 || idx[i] >= pl->aff->ngpus) {
			topo_error_set(pl->err, SRC, 0,
				       "GPU %d is not on host %s, which has %d GPU(s) (indices in PCI bus id order)",
				       idx[i], pl->aff->host, pl->aff->ngpus);
			free(idx);
			return -1;
		}
	}
	/* room for the request's count: n distinct ones are at most that many */
	p->gpus = calloc((size_t)req->ngpus, sizeof(*p->gpus));
	if (!p->gpus) {
		free(idx);
		goto oom;
	}
	p->ngpus = n;
	for (int i = 0; i < n; i++) {
		const topo_affinity_gpu *a = &pl->aff->gpus[idx[i]];

		p->gpus[i].index = idx[i];
		p->gpus[i].pci_busid = topo_strdup_opt(a->pci_busid, &fail);
		p->gpus[i].numa = a->numa;
		p->gpus[i].rail = -1;
	}
	free(idx);
	if (!fail)
		return 0;
oom:
	topo_error_set(pl->err, SRC, 0, "out of memory");
	return -1;
}

/* Give every step GPU an HCA; mark the chosen HCAs. */
static int assign_gpus(planner *pl)
{
	bind_plan *p = pl->plan;

	for (int i = 0; i < p->ngpus; i++) {
		const topo_affinity_gpu *gpu = &pl->aff->gpus[p->gpus[i].index];
		hca_slot *s = least_used(pl, pick_nearest, gpu);

		if (!s)
			s = least_used(pl, pick_numa, gpu);
		if (!s)
			s = least_used(pl, pick_any, gpu);
		if (!s)
			continue;
		s->uses++;
		s->chosen = 1;
		p->gpus[i].hca = strdup(s->a->name);
		if (!p->gpus[i].hca)
			return -1;
		p->gpus[i].rail = s->rail;
	}
	return 0;
}

/* No GPUs: the allowed HCAs local to the cores, else all allowed. */
static int assign_cpu_only(planner *pl, const bind_cpuset *cores, int cores_known)
{
	int any = 0;

	for (int i = 0; cores_known && i < pl->aff->nhcas; i++)
		if (pl->slots[i].allowed && pick_cores(&pl->slots[i], cores))
			any = pl->slots[i].chosen = 1;
	for (int i = 0; !any && i < pl->aff->nhcas; i++)
		pl->slots[i].chosen = pl->slots[i].allowed;
	return 0;
}

static int cmp_slot_order(const void *a, const void *b)
{
	const hca_slot *x = *(hca_slot *const *)a, *y = *(hca_slot *const *)b;

	return (x->order > y->order) - (x->order < y->order);
}

static int list_hcas(planner *pl)
{
	bind_plan *p = pl->plan;
	hca_slot **v = calloc(pl->aff->nhcas ? pl->aff->nhcas : 1, sizeof(*v));
	int n = 0, fail = 0;

	if (!v)
		return -1;
	for (int i = 0; i < pl->aff->nhcas; i++)
		if (pl->slots[i].chosen)
			v[n++] = &pl->slots[i];
	qsort(v, n, sizeof(*v), cmp_slot_order);
	p->hcas = calloc(n ? n : 1, sizeof(*p->hcas));
	if (!p->hcas) {
		free(v);
		return -1;
	}
	p->nhcas = n;
	for (int i = 0; i < n; i++) {
		p->hcas[i].name = topo_strdup_opt(v[i]->a->name, &fail);
		p->hcas[i].port = v[i]->port;
		p->hcas[i].rail = v[i]->rail;
		p->hcas[i].numa = v[i]->a->numa;
		p->hcas[i].netdev = topo_strdup_opt(v[i]->a->netdev, &fail);
		p->hcas[i].roce = v[i]->a->link_layer == TOPO_LL_ETH;
		p->hcas[i].gid_index = -1;
	}
	free(v);
	return fail ? -1 : 0;
}

static int add_env(bind_plan *p, const bind_request *req, const char *name, const char *value)
{
	bind_plan_env *e;
	const char *user = req->getenv ? req->getenv(req->getenv_ctx, name) : NULL;
	int fail = 0;

	e = realloc(p->env, (p->nenv + 1) * sizeof(*e));
	if (!e)
		return -1;
	p->env = e;
	e = &p->env[p->nenv++];
	e->name = topo_strdup_opt(name, &fail);
	e->value = topo_strdup_opt(value, &fail);
	e->user_value = topo_strdup_opt(user, &fail);
	return fail ? -1 : 0;
}

/* RoCE ports: their GID index and, unless the admin chose, their netdevs
 * for NCCL's sockets. */
static int plan_roce(bind_plan *p, const bind_request *req, const bind_policy *pol)
{
	char ifnames[512] = "=", num[16];
	size_t off = 1;
	int gid = -1;

	for (int i = 0; i < p->nhcas; i++) {
		bind_plan_hca *h = &p->hcas[i];

		if (!h->roce)
			continue;
		h->gid_index = bind_roce_gid_index(pol->sysfs_root, h->name, h->port);
		if (h->gid_index >= 0 && gid < 0)
			gid = h->gid_index;
		else if (h->gid_index >= 0 && h->gid_index != gid &&
			 add_note(p, "RoCE port %s:%d has RoCE v2 GID index %d, not %d; NCCL takes "
				  "one index for all", h->name, h->port, h->gid_index, gid) < 0)
			return -1;
		if (h->netdev && off + strlen(h->netdev) + 2 < sizeof(ifnames))
			off += (size_t)snprintf(ifnames + off, sizeof(ifnames) - off, "%s%s",
						off > 1 ? "," : "", h->netdev);
	}
	snprintf(num, sizeof(num), "%d", gid);
	if (gid >= 0 && add_env(p, req, "NCCL_IB_GID_INDEX", num) < 0)
		return -1;
	if (off > 1 && !(pol->socket_ifname && *pol->socket_ifname) &&
	    add_env(p, req, "NCCL_SOCKET_IFNAME", ifnames) < 0)
		return -1;
	return 0;
}

static int plan_env(bind_plan *p, const bind_request *req, const bind_policy *pol, int nic_none)
{
	size_t len = 1;
	char *nccl, *ucx;
	int rc;

	/* SHARP: the controller found the allocation under one SHARP tree and
	 * the admin lets NCCL use it (CollNet) */
	if (pol->collnet && bind_plan_sharp(req->plan) &&
	    add_env(p, req, "NCCL_COLLNET_ENABLE", "1") < 0)
		return -1;
	if (nic_none)
		return 0;
	if (p->nhcas > 0) {
		for (int i = 0; i < p->nhcas; i++)
			len += strlen(p->hcas[i].name) + 16;
		nccl = malloc(len + 1);
		ucx = malloc(len);
		if (!nccl || !ucx) {
			free(nccl);
			free(ucx);
			return -1;
		}
		ucx[0] = '\0';
		for (int i = 0, off = 0; i < p->nhcas; i++)
			off += snprintf(ucx + off, len - off, "%s%s:%d", i ? "," : "",
					p->hcas[i].name, p->hcas[i].port);
		snprintf(nccl, len + 1, "=%s", ucx);
		rc = add_env(p, req, "NCCL_IB_HCA", nccl) < 0 ||
		     add_env(p, req, "UCX_NET_DEVICES", ucx) < 0;
		free(nccl);
		free(ucx);
		if (rc)
			return -1;
	}
	if (pol->socket_ifname && *pol->socket_ifname &&
	    add_env(p, req, "NCCL_SOCKET_IFNAME", pol->socket_ifname) < 0)
		return -1;
	return pol->sysfs_root ? plan_roce(p, req, pol) : 0;
}

/* The CPUs local to GPU `g` and its HCA, within the cores. */
static char *task_cpus(planner *pl, const bind_plan_gpu *g, const bind_cpuset *cores,
		       int cores_known)
{
	bind_cpuset local, hca;
	const char *gpu_set = g ? pl->aff->gpus[g->index].cpuset : NULL;
	hca_slot *s = g && g->hca ? slot_named(pl, g->hca) : NULL;
	char *text;

	bind_cpuset_init(&local);
	bind_cpuset_init(&hca);
	if (gpu_set && bind_cpuset_parse(&local, gpu_set, SRC, 0, NULL) == 0 && s &&
	    s->a->cpuset && bind_cpuset_parse(&hca, s->a->cpuset, SRC, 0, NULL) == 0 &&
	    bind_cpuset_intersects(&local, &hca))
		bind_cpuset_intersect(&local, &hca);
	if (cores_known) {
		if (bind_cpuset_count(&local) == 0)
			bind_cpuset_copy(&local, cores);
		else
			bind_cpuset_intersect(&local, cores);
		if (bind_cpuset_count(&local) == 0) {
			bind_cpuset_copy(&local, cores);
			add_note(pl->plan,
				 "GPU %d's local CPUs are not among the allocated cores; its task keeps all of them",
				 g ? g->index : -1);
		}
	}
	text = bind_cpuset_format(&local);
	bind_cpuset_free(&local);
	bind_cpuset_free(&hca);
	return text;
}

static int plan_tasks(planner *pl, const bind_request *req, const bind_cpuset *cores,
		      int cores_known)
{
	bind_plan *p = pl->plan;
	int n = req->ntasks > 0 ? req->ntasks : (p->ngpus > 0 ? p->ngpus : 1);

	p->tasks = calloc(n, sizeof(*p->tasks));
	if (!p->tasks)
		return -1;
	p->ntasks = n;
	for (int t = 0; t < n; t++) {
		const bind_plan_gpu *g = p->ngpus ? &p->gpus[t % p->ngpus] : NULL;

		p->tasks[t].task = t;
		p->tasks[t].gpu = g ? g->index : -1;
		p->tasks[t].cpus = task_cpus(pl, g, cores, cores_known);
		if (!p->tasks[t].cpus)
			return -1;
	}
	return 0;
}

static int plan_nics(planner *pl, const bind_request *req, const bind_policy *pol,
		     const bind_cpuset *cores, int cores_known, int *nic_none)
{
	const char *nic = req->nic && *req->nic ? req->nic : "auto";
	bind_plan *p = pl->plan;
	char *rails = NULL;
	int nr;

	*nic_none = strcmp(nic, "none") == 0;
	p->nic_mode = strdup(*nic_none ? "none" : strcmp(nic, "auto") == 0 ? "auto" : "list");
	if (!p->nic_mode)
		goto oom;
	if (*nic_none)
		return 0;
	if (strcmp(p->nic_mode, "list") == 0) {
		/* The user's list is used whole; GPUs take the nearest of it. */
		if (allow_list(pl, nic) < 0)
			return -1;
		for (int i = 0; i < pl->aff->nhcas; i++)
			pl->slots[i].chosen = pl->slots[i].allowed;
		return assign_gpus(pl) < 0 ? -2 : 0;
	}
	nr = bind_plan_rails(req->plan, &rails, pl->err);
	if (nr < 0)
		return -1;
	if (nr > 0 && pol->rail_aligned) {
		p->rails = rails;
		if (allow_rails(pl, rails) < 0)
			return -1;
	} else {
		free(rails);
	}
	if (p->ngpus > 0)
		return assign_gpus(pl) < 0 ? -2 : 0;
	return assign_cpu_only(pl, cores, cores_known);
oom:
	topo_error_set(pl->err, SRC, 0, "out of memory");
	return -1;
}

bind_plan *bind_plan_make(const topo_graph *g, int host, const bind_request *req,
			  const bind_policy *policy, topo_error *err)
{
	static const bind_policy defaults = { NULL, 1, 0, NULL, 0 };
	const bind_policy *pol = policy ? policy : &defaults;
	const topo_vertex *hv = host >= 0 && (size_t)host < topo_graph_nvertices(g)
					? topo_graph_vertex(g, host)
					: NULL;
	planner pl = { 0 };
	bind_cpuset cores;
	int cores_known = req->cores != NULL, nic_none = 0, rc;

	topo_error_clear(err);
	if (!hv || hv->kind != TOPO_V_HOST) {
		topo_error_set(err, SRC, 0, "vertex %d is not a host", host);
		return NULL;
	}
	bind_cpuset_init(&cores);
	if (cores_known && bind_cpuset_parse(&cores, req->cores, "allocated cores", 0, err) < 0)
		return NULL;
	pl.err = err;
	pl.aff = topo_affinity_of_host(g, host);
	pl.plan = calloc(1, sizeof(*pl.plan));
	if (!pl.aff || !pl.plan || fill_slots(&pl, g) < 0 ||
	    !(pl.plan->host = strdup(local_part(hv->name))))
		goto oom;
	if (set_gpus(&pl, req) < 0)
		goto fail;
	rc = plan_nics(&pl, req, pol, &cores, cores_known, &nic_none);
	if (rc == -1)
		goto fail;
	if (rc < 0 || list_hcas(&pl) < 0 || plan_env(pl.plan, req, pol, nic_none) < 0)
		goto oom;
	if (!nic_none && pl.plan->nhcas == 0 &&
	    add_note(pl.plan, "host %s has no RDMA HCA; no HCA variable planned", pl.aff->host) < 0)
		goto oom;
	if (pol->cpu_bind && plan_tasks(&pl, req, &cores, cores_known) < 0)
		goto oom;
	bind_cpuset_free(&cores);
	free(pl.slots);
	topo_affinity_free((topo_affinity *)pl.aff);
	return pl.plan;
oom:
	topo_error_set(err, SRC, 0, "out of memory");
fail:
	bind_cpuset_free(&cores);
	free(pl.slots);
	if (pl.aff)
		topo_affinity_free((topo_affinity *)pl.aff);
	bind_plan_free(pl.plan);
	return NULL;
}

void bind_plan_free(bind_plan *p)
{
	if (!p)
		return;
	free(p->host);
	free(p->nic_mode);
	free(p->rails);
	for (int i = 0; i < p->ngpus; i++) {
		free(p->gpus[i].pci_busid);
		free(p->gpus[i].hca);
	}
	free(p->gpus);
	for (int i = 0; i < p->nhcas; i++) {
		free(p->hcas[i].name);
		free(p->hcas[i].netdev);
	}
	free(p->hcas);
	for (int i = 0; i < p->nenv; i++) {
		free(p->env[i].name);
		free(p->env[i].value);
		free(p->env[i].user_value);
	}
	free(p->env);
	for (int i = 0; i < p->ntasks; i++)
		free(p->tasks[i].cpus);
	free(p->tasks);
	for (int i = 0; i < p->nnotes; i++)
		free(p->notes[i]);
	free(p->notes);
	free(p);
}

const bind_plan_env *bind_plan_find_env(const bind_plan *p, const char *name)
{
	for (int i = 0; p && i < p->nenv; i++)
		if (strcmp(p->env[i].name, name) == 0)
			return &p->env[i];
	return NULL;
}

/* ---- JSON ----------------------------------------------------------------- */

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *int_or_null(int v)
{
	return v >= 0 ? json_integer(v) : json_null();
}

static json_t *effective(const bind_plan *p, const char *name)
{
	const bind_plan_env *e = bind_plan_find_env(p, name);

	return e ? json_string(e->user_value ? e->user_value : e->value) : json_null();
}

int bind_plan_to_json(const bind_plan *p, json_t **out)
{
	json_t *o = json_object(), *env = json_object(), *kept = json_array();
	json_t *gpus = json_array(), *hcas = json_array(), *tasks = json_array();
	json_t *notes = json_array();
	int fail = !o || !env || !kept || !gpus || !hcas || !tasks || !notes;

	for (int i = 0; !fail && i < p->nenv; i++) {
		const bind_plan_env *e = &p->env[i];

		fail |= json_object_set_new(env, e->name, json_string(e->value));
		if (e->user_value)
			fail |= json_array_append_new(
				kept, json_pack("{s:s, s:s, s:s}", "name", e->name, "user_value",
						e->user_value, "planned", e->value));
	}
	for (int i = 0; !fail && i < p->ngpus; i++)
		fail |= json_array_append_new(
			gpus, json_pack("{s:i, s:o, s:o, s:o, s:o}", "index", p->gpus[i].index,
					"pci_busid", str_or_null(p->gpus[i].pci_busid), "numa",
					int_or_null(p->gpus[i].numa), "hca",
					str_or_null(p->gpus[i].hca), "rail",
					int_or_null(p->gpus[i].rail)));
	for (int i = 0; !fail && i < p->nhcas; i++)
		fail |= json_array_append_new(
			hcas, json_pack("{s:s, s:i, s:i, s:o, s:o}", "name", p->hcas[i].name, "port",
					p->hcas[i].port, "rail", p->hcas[i].rail, "numa",
					int_or_null(p->hcas[i].numa), "netdev",
					str_or_null(p->hcas[i].netdev)));
	for (int i = 0; !fail && i < p->ntasks; i++)
		fail |= json_array_append_new(
			tasks, json_pack("{s:i, s:o, s:s}", "task", p->tasks[i].task, "gpu",
					 int_or_null(p->tasks[i].gpu), "cpus", p->tasks[i].cpus));
	for (int i = 0; !fail && i < p->nnotes; i++)
		fail |= json_array_append_new(notes, json_string(p->notes[i]));
	if (!fail)
		fail = json_object_set_new(o, "host", json_string(p->host)) ||
		       json_object_set_new(o, "nic", json_string(p->nic_mode)) ||
		       json_object_set_new(o, "rails", str_or_null(p->rails)) ||
		       json_object_set_new(o, "NCCL_IB_HCA", effective(p, "NCCL_IB_HCA")) ||
		       json_object_set_new(o, "UCX_NET_DEVICES", effective(p, "UCX_NET_DEVICES")) ||
		       json_object_set(o, "env", env) || json_object_set(o, "kept", kept) ||
		       json_object_set(o, "gpus", gpus) || json_object_set(o, "hcas", hcas) ||
		       json_object_set(o, "tasks", tasks) || json_object_set(o, "notes", notes);
	json_decref(env);
	json_decref(kept);
	json_decref(gpus);
	json_decref(hcas);
	json_decref(tasks);
	json_decref(notes);
	if (fail) {
		json_decref(o);
		return -1;
	}
	*out = o;
	return 0;
}
