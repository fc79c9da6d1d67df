/*
 * bind_job: the node side's once-per-job work (see bind_job.h): markers,
 * plan, IRQ audit/enforce, report, restore and stale-state recovery.
 * Moved out of the SPANK adapter (slurm-plugin/spank_topognn.c) so it can
 * be tested without Slurm; the messages and the trust rules are the same.
 */
#define _GNU_SOURCE
#include "bind_job.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "bind_irq.h"
#include "topo_hwloc.h"
#include "topo_io.h"
#include "topo_nicrole.h"

/* What the callers hand down: the configuration and the variables. */
typedef struct job_ctx {
	const bind_job_conf *conf;
	bind_job_getenv_fn getenv;
	void *ctx;
} job_ctx;

static void say(const bind_job_conf *conf, int error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void say(const bind_job_conf *conf, int error, const char *fmt, ...)
{
	char msg[8192];
	va_list ap;

	if (!conf->log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	conf->log(error, msg);
}

static const char *raw_getenv(job_ctx *c, const char *name)
{
	return c->getenv ? c->getenv(c->ctx, name) : NULL;
}

static const char *raw_getenv_cb(void *ctx, const char *name)
{
	return raw_getenv(ctx, name);
}

/* A variable counts as user-set unless it holds what we set in an earlier
 * step of this job (TOPOGNN_SET_<NAME> records that). */
static const char *user_getenv(void *ctx, const char *name)
{
	job_ctx *c = ctx;
	const char *v = raw_getenv(c, name), *ours;
	char key[128];

	if (!v)
		return NULL;
	snprintf(key, sizeof(key), BIND_JOB_SET_PREFIX "%s", name);
	ours = raw_getenv(c, key);
	return ours && !strcmp(ours, v) ? NULL : v;
}

/* Expand %n (node name) and %h (host name) in a configured path. */
static char *expand(const char *pattern, const char *node)
{
	char host[256] = "", out[4096];
	size_t o = 0;

	if (!pattern)
		return NULL;
	gethostname(host, sizeof(host) - 1);
	for (const char *p = pattern; *p && o < sizeof(out) - 1; p++) {
		const char *sub = NULL;

		if (p[0] == '%' && p[1] == 'n')
			sub = node;
		else if (p[0] == '%' && p[1] == 'h')
			sub = host;
		if (sub) {
			o += snprintf(out + o, sizeof(out) - o, "%s", sub);
			p++;
		} else {
			out[o++] = *p;
		}
	}
	out[o < sizeof(out) ? o : sizeof(out) - 1] = '\0';
	return strdup(out);
}

/* This node's Slurm name, from our own process environment: slurmstepd sets
 * SLURMD_NODENAME in its environment at start, and slurmd sets it in the
 * prolog's and epilog's. Never from the job's environment (spank_getenv),
 * which its user controls. Else the host name. Returns 0, or -1 (logged)
 * when the name is not safe to put into a path (bind_name_ok). */
int bind_job_node_name(const bind_job_conf *conf, char *buf, size_t len, const char *given)
{
	const char *n = given ? given : getenv("SLURMD_NODENAME");

	if (n && *n)
		snprintf(buf, len, "%s", n);
	else if (gethostname(buf, len - 1) < 0)
		buf[0] = '\0';
	buf[len - 1] = '\0';
	if (!bind_name_ok(buf)) {
		say(conf, 1, "node name \"%.64s\" is not 1-64 letters, digits, '.', '_', '-' without \"..\": refused, no IRQ work",
			    buf);
		return -1;
	}
	return 0;
}

/* mkdir -p for our own directories (root-owned, world-readable). */
static int make_dirs(const char *path)
{
	char tmp[4096];

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(tmp, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

/* ---- the host and the plan ------------------------------------------------ */

static void log_error(const bind_job_conf *conf, const char *what, const topo_error *err)
{
	char buf[TOPO_ERROR_TEXT_LEN + TOPO_ERROR_SOURCE_LEN + 32];

	say(conf, 1, "%s: %s", what, topo_error_format(err, buf, sizeof(buf)));
}

/* Load this node's host model. Returns the host id, -1 (logged) on error. */
static int load_host(const bind_job_conf *conf, topo_graph *g, const char *node,
		     topo_error *err)
{
	char *path = expand(conf->hwloc, node);
	int host;

	host = path ? topo_load_hwloc_xml(g, path, node, err) : topo_load_hwloc_live(g, err);
	free(path);
	return host;
}

/* Tag storage/management NICs by the nic_role= rules. 0, or -1 (err). */
static int tag_nic_roles(const bind_job_conf *conf, topo_graph *g, topo_error *err)
{
	topo_nic_rules *r;
	int rc;

	if (!conf->nnic_roles)
		return 0;
	r = topo_nic_rules_new((const char *const *)conf->nic_role, conf->nnic_roles, err);
	if (!r)
		return -1;
	rc = topo_nic_rules_apply(g, r);
	topo_nic_rules_free(r);
	if (rc < 0)
		topo_error_set(err, "", 0, "out of memory");
	return rc < 0 ? -1 : 0;
}

/* Plan for the GPUs and plan found in env and the --topognn-nic value `nic`
 * (NULL: auto); NULL (logged) on error. */
static bind_plan *make_plan(job_ctx *c, const char *node, const char *cores, int ntasks,
			    const char *nic)
{
	const bind_job_conf *conf = c->conf;
	topo_graph *g = topo_graph_new();
	bind_policy pol = { conf->socket_ifname, conf->rail_aligned, conf->cpu_bind,
			    conf->sys_root ? conf->sys_root : "/sys", conf->sharp };
	bind_request req = { 0 };
	const char *from, *plan;
	topo_error err;
	bind_plan *p = NULL;
	int *gpus = NULL, host;

	if (!g)
		return NULL;
	host = load_host(conf, g, node, &err);
	if (host < 0) {
		log_error(conf, "host model", &err);
		goto out;
	}
	if (tag_nic_roles(conf, g, &err) < 0)
		log_error(conf, "nic_role", &err); /* logged; the plan goes on untagged */
	if (bind_gpus_from_env(raw_getenv_cb, c, &gpus, &req.ngpus, &from, &err) < 0) {
		log_error(conf, "GPUs", &err);
		goto out;
	}
	plan = raw_getenv(c, "TOPOGNN_PLAN");
	if (!plan)
		plan = raw_getenv(c, "SPANK_TOPOGNN_PLAN");
	req.gpus = gpus;
	req.cores = cores;
	req.plan = plan;
	req.nic = nic;
	req.ntasks = ntasks;
	req.getenv = user_getenv;
	req.getenv_ctx = c;
	p = bind_plan_make(g, host, &req, &pol, &err);
	if (!p)
		log_error(conf, "plan", &err);
	for (int i = 0; p && i < p->nnotes; i++)
		say(conf, 0, "%s", p->notes[i]);
out:
	free(gpus);
	topo_graph_free(g);
	return p;
}

/* ---- IRQ state: markers, recovery ----------------------------------------- */

static void boot_id(char *buf, size_t len)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");

	buf[0] = '\0';
	if (f) {
		if (!fgets(buf, (int)len, f))
			buf[0] = '\0';
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = '\0';
}

static void marker_path(char *buf, size_t len, const char *dir, const char *job)
{
	snprintf(buf, len, "%s/job-%s.boot", dir, job);
}

/* A marker we wrote: a regular file of root's (or ours: we are root),
 * never through a symlink, not writable by others. */
static FILE *open_marker(const char *path)
{
	topo_error err;

	return topo_fopen_input(path, TOPO_OPEN_NOFOLLOW | TOPO_OPEN_TRUSTED, 4096, &err);
}

/* A job is running when its marker holds this boot's id. */
static int job_running(void *ctx, const char *job)
{
	const char *dir = ctx;
	char path[4096], id[64], now[64];
	FILE *f;

	marker_path(path, sizeof(path), dir, job);
	f = open_marker(path);
	if (!f)
		return 0;
	if (!fgets(id, sizeof(id), f))
		id[0] = '\0';
	fclose(f);
	id[strcspn(id, "\n")] = '\0';
	boot_id(now, sizeof(now));
	return *now && !strcmp(id, now);
}

static void log_change(void *ctx, const char *msg)
{
	const bind_job_conf *conf = ctx;

	say(conf, 0, "%s", msg);
}

static bind_roots roots(const bind_job_conf *conf)
{
	bind_roots r = { conf->proc_root, conf->sys_root, conf->proc_root != NULL };

	return r;
}

int bind_job_recover(const bind_job_conf *conf)
{
	char node[256];
	char *dir;
	bind_roots r = roots(conf);
	bind_log log = { log_change, (void *)conf };
	topo_error err;
	struct stat st;
	int n = 0;

	if (conf->irq == BIND_JOB_IRQ_OFF || geteuid() != 0 ||
	    bind_job_node_name(conf, node, sizeof(node), NULL) < 0)
		return 0;
	dir = expand(conf->state_dir, node);
	if (dir && stat(dir, &st) == 0) {
		n = bind_irq_recover(&r, dir, job_running, dir, &log, &err);
		if (n < 0)
			log_error(conf, "IRQ recovery", &err);
		else if (n > 0)
			say(conf, 0, "restored the saved IRQ affinities of %d ended job(s)", n);
	}
	free(dir);
	return n;
}

/* ---- once per job per node ------------------------------------------------ */

static json_t *audit_json(const bind_audit *au)
{
	json_t *a = json_array();

	for (size_t i = 0; i < au->n; i++)
		json_array_append_new(a, json_pack("{s:s, s:o, s:s, s:s, s:s}", "kind",
						   au->v[i].kind, "irq",
						   au->v[i].irq < 0 ? json_null()
								    : json_integer(au->v[i].irq),
						   "hca", au->v[i].hca, "cpus", au->v[i].cpus,
						   "text", au->v[i].text));
	return a;
}

/* Enforce for job `job` (the prolog only, see bind_enforce_scope); the outcome
 * goes into o. */
static void enforce(const bind_job_conf *conf, json_t *o, const bind_irq_set *set, const char *job, const char *job_cpus,
		    const char *state_dir)
{
	bind_roots r = roots(conf);
	bind_log log = { log_change, (void *)conf };
	bind_enforce_opts eo = { job, job_cpus, conf->housekeeping, state_dir };
	char buf[TOPO_ERROR_TEXT_LEN + TOPO_ERROR_SOURCE_LEN + 32];
	topo_error err;
	int n = bind_irq_enforce(&r, set, &eo, &log, &err);

	if (n < 0) {
		log_error(conf, "IRQ enforce", &err);
		json_object_set_new(o, "status", json_string("error"));
		json_object_set_new(o, "error",
				    json_string(topo_error_format(&err, buf, sizeof(buf))));
	}
	json_object_set_new(o, "changed", json_integer(n < 0 ? 0 : n));
}

/* May this caller enforce, and on which CPUs does the job run? Only the
 * prolog (its environment comes from slurmd, not from the job's user), and
 * only for a job that has the node to itself. Returns 1 with *cpus set, or 0
 * with the reason in o ("enforce": "skipped", "why"). */
static int may_enforce(job_ctx *c, json_t *o, int prolog, char **cpus)
{
	const bind_job_conf *conf = c->conf;
	bind_roots r = roots(conf);
	char why[256], buf[TOPO_ERROR_TEXT_LEN + TOPO_ERROR_SOURCE_LEN + 32];
	topo_error err;
	int rc = 0;

	*cpus = NULL;
	if (!prolog)
		snprintf(why, sizeof(why),
			 "enforce runs only in the prolog (no prolog ran: add prep/topognn to PrEpPlugins)");
	else if ((rc = bind_enforce_scope(&r, raw_getenv(c, "SLURM_JOB_OVERSUBSCRIBE"), cpus, why,
					  sizeof(why), &err)) < 0)
		snprintf(why, sizeof(why), "job CPUs unknown: %s",
			 topo_error_format(&err, buf, sizeof(buf)));
	if (rc == 1)
		return 1;
	json_object_set_new(o, "enforce", json_string("skipped"));
	json_object_set_new(o, "why", json_string(why));
	say(conf, 0, "IRQ enforce skipped: %s", why);
	return 0;
}

/* Audit (and, from the prolog of a job that has the node, enforce) the IRQs
 * of the plan's HCAs; the outcome as JSON. `task_cpus`: the calling task's
 * CPUs for the audit when not in the prolog. */
static json_t *irq_work(job_ctx *c, const bind_plan *p, const char *job, int prolog,
			const char *task_cpus, const char *state_dir)
{
	const bind_job_conf *conf = c->conf;
	json_t *o = json_object();
	bind_roots r = roots(conf);
	bind_nic_req *req = calloc(p->nhcas ? p->nhcas : 1, sizeof(*req));
	bind_irq_set *set = NULL;
	bind_audit au = { 0 };
	topo_error err;
	char buf[TOPO_ERROR_TEXT_LEN + TOPO_ERROR_SOURCE_LEN + 32];
	char *job_cpus = NULL;
	int enf = 0;

	json_object_set_new(o, "mode", json_string(conf->irq == BIND_JOB_IRQ_ENFORCE ? "enforce" : "audit"));
	if (!req || p->nhcas == 0) {
		json_object_set_new(o, "status", json_string("skipped"));
		json_object_set_new(o, "error", json_string(req ? "no HCA planned" : "out of memory"));
		free(req);
		return o;
	}
	if (conf->irq == BIND_JOB_IRQ_ENFORCE)
		enf = may_enforce(c, o, prolog, &job_cpus);
	for (int i = 0; i < p->nhcas; i++)
		req[i].name = p->hcas[i].name;
	set = bind_irq_load(&r, req, p->nhcas, &err);
	if (!set || bind_irq_audit(set, job_cpus ? job_cpus : task_cpus, &au, &err) < 0) {
		log_error(conf, "IRQ audit", &err);
		json_object_set_new(o, "status", json_string("error"));
		json_object_set_new(o, "error",
				    json_string(topo_error_format(&err, buf, sizeof(buf))));
		goto out;
	}
	for (size_t i = 0; i < au.n; i++)
		say(conf, 0, "job %s IRQ %s: %s", job, au.v[i].kind, au.v[i].text);
	json_object_set_new(o, "status", json_string("ok"));
	json_object_set_new(o, "findings", audit_json(&au));
	if (enf)
		enforce(conf, o, set, job, job_cpus, state_dir);
out:
	bind_audit_free(&au);
	bind_irq_set_free(set);
	free(job_cpus);
	free(req);
	return o;
}

/* When the report's name is taken by something rename() cannot replace (a
 * directory another user made there: EISDIR, ENOTEMPTY), the report goes to
 * job-<id>.<node>.<16 random hex digits>.json, a name no user can plant in
 * advance (placement-report reads the job and node from the content).
 * Returns 0 with the new name in path, or -1 (errno set). */
static int put_aside(const bind_job_conf *conf, const char *tmp, char *path, size_t len, const char *dir, const char *job,
		     const char *node)
{
	unsigned char r[8];
	char hex[17];
	int saved = errno;

	if (saved != EISDIR && saved != ENOTEMPTY && saved != EEXIST && saved != ENOTDIR)
		return -1;
	if (getentropy(r, sizeof(r)) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(r); i++)
		snprintf(hex + 2 * i, 3, "%02x", r[i]);
	say(conf, 0, "report name %s is taken (%s, not a file we may replace): using another name",
		   path, strerror(saved));
	snprintf(path, len, "%s/job-%s.%s.%s.json", dir, job, node, hex);
	return rename(tmp, path);
}

/* Write the report atomically: <report_dir>/job-<id>.<node>.json. The
 * directory may be shared and writable by others, so the temp file is a new
 * name from mkostemp (O_CREAT|O_EXCL: never a planted file or symlink),
 * fchmod 0644 on the descriptor, then rename(), which replaces whatever the
 * name was (a symlink included) without following it; a name rename()
 * cannot replace is put aside (put_aside). */
static void write_report(const bind_job_conf *conf, const char *dir, const char *job, const char *node, json_t *rep)
{
	char path[4096], tmp[4200];
	int fd;

	if (make_dirs(dir) < 0) {
		say(conf, 1, "report directory %s: %s", dir, strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/job-%s.%s.json", dir, job, node);
	snprintf(tmp, sizeof(tmp), "%s/.job-%s.%s.json.XXXXXX", dir, job, node);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		say(conf, 1, "cannot create a report in %s: %s", dir, strerror(errno));
		return;
	}
	if (fchmod(fd, 0644) < 0 ||
	    json_dumpfd(rep, fd, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0 || fsync(fd) < 0) {
		say(conf, 1, "cannot write report %s: %s", tmp, strerror(errno));
		close(fd);
		unlink(tmp);
		return;
	}
	if (close(fd) < 0) {
		say(conf, 1, "cannot write report %s: %s", tmp, strerror(errno));
		unlink(tmp);
		return;
	}
	if (rename(tmp, path) < 0 && put_aside(conf, tmp, path, sizeof(path), dir, job, node) < 0) {
		say(conf, 1, "cannot put report %s in place: %s", path, strerror(errno));
		unlink(tmp);
		return;
	}
	say(conf, 0, "job %s: report written to %s", job, path);
}

/* The first caller for a job on this node creates its marker and does the
 * IRQ work and the report; later callers return at once. `given_node`: this
 * node's name from slurmd (NULL: node_name()). */
static int job_once(job_ctx *c, const char *job, const char *given_node, const char *task_cpus,
		    const char *where)
{
	const bind_job_conf *conf = c->conf;
	char node[256], marker[4096], id[64];
	int prolog = strcmp(where, "prolog") == 0;
	char *state_dir = NULL, *report_dir = NULL;
	bind_plan *p = NULL;
	json_t *rep = NULL, *pj = NULL;
	int fd, did = 0;

	if (bind_job_node_name(conf, node, sizeof(node), given_node) < 0 || !bind_name_ok(job))
		return 0;
	state_dir = expand(conf->state_dir, node);
	report_dir = expand(conf->report_dir, node);
	if (!state_dir || !report_dir || make_dirs(state_dir) < 0) {
		say(conf, 1, "state directory %s: %s", state_dir ? state_dir : "?",
			    strerror(errno));
		goto out;
	}
	marker_path(marker, sizeof(marker), state_dir, job);
	fd = open(marker, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		if (errno != EEXIST)
			say(conf, 1, "marker %s: %s", marker, strerror(errno));
		goto out;
	}
	boot_id(id, sizeof(id));
	if (dprintf(fd, "%s\n", id) < 0)
		say(conf, 1, "marker %s: %s", marker, strerror(errno));
	close(fd);
	did = 1;

	p = make_plan(c, node, NULL, 0, NULL); /* root's work: never the user's --topognn-nic */
	rep = json_object();
	json_object_set_new(rep, "job_id", json_string(job));
	json_object_set_new(rep, "node", json_string(node));
	json_object_set_new(rep, "time", json_integer(time(NULL)));
	json_object_set_new(rep, "from", json_string(where));
	json_object_set_new(rep, "hwloc", conf->hwloc ? json_string(conf->hwloc)
						     : json_string("<live>"));
	if (p && bind_plan_to_json(p, &pj) == 0)
		json_object_set_new(rep, "plan", pj);
	else
		json_object_set_new(rep, "plan", json_null());
	if (conf->irq != BIND_JOB_IRQ_OFF && p)
		json_object_set_new(rep, "irq", irq_work(c, p, job, prolog, task_cpus, state_dir));
	else
		json_object_set_new(rep, "irq", json_pack("{s:s, s:s}", "mode",
							  conf->irq == BIND_JOB_IRQ_OFF ? "off" : "audit",
							  "status", "skipped"));
	write_report(conf, report_dir, job, node, rep);
out:
	json_decref(rep);
	bind_plan_free(p);
	free(state_dir);
	free(report_dir);
	return did;
}

void bind_job_end(const bind_job_conf *conf, const char *job, const char *given_node)
{
	char node[256], marker[4096];
	char *dir;
	bind_roots r = roots(conf);
	bind_log log = { log_change, (void *)conf };
	topo_error err;

	if (bind_job_node_name(conf, node, sizeof(node), given_node) < 0 || !bind_name_ok(job) ||
	    !(dir = expand(conf->state_dir, node)))
		return;
	if (conf->irq == BIND_JOB_IRQ_ENFORCE && geteuid() == 0 &&
	    bind_irq_restore(&r, dir, job, &log, &err) < 0)
		log_error(conf, "IRQ restore", &err);
	marker_path(marker, sizeof(marker), dir, job);
	if (unlink(marker) < 0 && errno != ENOENT)
		say(conf, 1, "cannot remove %s: %s", marker, strerror(errno));
	free(dir);
}


bind_plan *bind_job_plan(const bind_job_conf *conf, bind_job_getenv_fn env, void *ctx,
			 const char *node, const char *cores, int ntasks, const char *nic)
{
	job_ctx c = { conf, env, ctx };

	return make_plan(&c, node, cores, ntasks, nic);
}

int bind_job_start(const bind_job_conf *conf, bind_job_getenv_fn env, void *ctx,
		   const char *job, const char *node, const char *task_cpus, const char *where)
{
	job_ctx c = { conf, env, ctx };

	if (!job || !where)
		return 0;
	return job_once(&c, job, node, task_cpus, where);
}
