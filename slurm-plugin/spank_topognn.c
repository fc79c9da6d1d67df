/*****************************************************************************\
 *  spank_topognn.c - node side of topognn: give every job step the HCAs
 *  nearest its GPUs (NCCL_IB_HCA, UCX_NET_DEVICES, NCCL_SOCKET_IFNAME), bind
 *  its tasks to local cores (opt-in), and audit (or, opt-in, enforce) where
 *  the HCAs' interrupts fire, once per job per node, restoring them at job end.
 *
 *  plugstack.conf:
 *    optional /usr/lib/slurm/spank_topognn.so hwloc=/etc/topognn/%n.xml \
 *        socket_ifname=eth0 irq=audit state_dir=/var/lib/topognn/irq \
 *        report_dir=/var/lib/topognn/report [cpu_bind=yes] [rail_aligned=no] \
 *        [housekeeping=0-1] [proc_root=DIR sys_root=DIR] \
 *        [nic_role=storage=REGEX ...]  (up to 8; NICs never given to NCCL)
 *        [sharp=yes]  (NCCL_COLLNET_ENABLE=1 for jobs whose plan says sharp=1)
 *  (%n: this node's Slurm name, %h: its host name; no hwloc=: live hwloc.)
 *
 *  Callbacks:
 *    slurm_spank_init         register --topognn-nic; remote: recover stale
 *                             IRQ state (a node that crashed mid-job)
 *    slurm_spank_slurmd_init  recover stale IRQ state at slurmd start
 *    slurm_spank_task_init_privileged
 *                             once per job per node when prep/topognn did
 *                             not: IRQ audit, report (never enforce)
 *    slurm_spank_task_init    the step's variables; CPU binding (cpu_bind=yes)
 *    slurm_spank_exit         extern step: restore IRQs
 *
 *  Not SPANK callbacks: topognn_spank_job_start/_end, called inside slurmd by
 *  prep/topognn's prolog and epilog (IRQ audit/enforce and report; restore).
 *  The plugin defines no slurm_spank_job_prolog/_epilog on purpose: with one,
 *  slurmd execs `slurmstepd spank prolog` with the job's spank_job_env for
 *  every job, and a job whose environment is too big for execve (E2BIG: one
 *  entry over 128 KiB, set through the API) fails that exec, so slurmd drains
 *  the node (issue 21). slurmd keeps this plugin loaded from
 *  slurm_spank_slurmd_init on, and prep/topognn finds the two entry points
 *  through the plugin's handle, as it finds topology/topognn's in slurmctld.
 *
 *  Trust (docs/security.md): root callbacks take the node name from their
 *  own process environment (never the job's), accept only root-owned state
 *  files, write every file with O_EXCL/O_NOFOLLOW or a fresh mkostemp name,
 *  and move IRQs only from the prolog of a job that has the node to itself.
 *
 *  Never fails a job: every problem is logged (slurm_error/slurm_info) and
 *  the callback returns 0. The planning is in topo/node/bind_plan.c, the IRQ work
 *  in topo/node/bind_irq_*.c; docs/node-side.md documents files and formats.
\*****************************************************************************/

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "bind_cpuset.h"
#include "bind_irq.h"
#include "bind_plan.h"
#include "spank_topognn.h"
#include "topo_hwloc.h"
#include "topo_io.h"
#include "topo_nicrole.h"

SPANK_PLUGIN(topognn, 1);

#define PREFIX "topognn: "
#define SET_PREFIX "TOPOGNN_SET_" /* TOPOGNN_SET_<NAME>: the value we set */

enum irq_mode { IRQ_OFF, IRQ_AUDIT, IRQ_ENFORCE };

/* Plugin arguments; the only global state, as in every SPANK plugin. */
static struct {
	char *hwloc;
	char *socket_ifname;
	char *state_dir;
	char *report_dir;
	char *housekeeping;
	char *proc_root, *sys_root;
	char *nic_role[8]; /* "ROLE=REGEX" rules (topo_nicrole.h) */
	int nnic_roles;
	enum irq_mode irq;
	int cpu_bind;
	int rail_aligned;
	int sharp;
	int parsed;
} conf;

static char *nic_option; /* --topognn-nic value, NULL: auto */

static int nic_option_cb(int val, const char *optarg, int remote);

static struct spank_option nic_opt = {
	"topognn-nic", "auto|none|LIST",
	"HCAs for NCCL/UCX: auto (nearest to the GPUs, default), none (set nothing), "
	"or a list like mlx5_0,mlx5_2",
	1, 0, nic_option_cb
};

/* ---- arguments ------------------------------------------------------------ */

static int nic_option_cb(int val, const char *optarg, int remote)
{
	(void)val;
	(void)remote;
	if (!optarg || !*optarg || strlen(optarg) > 1024 ||
	    strspn(optarg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:,-") !=
		    strlen(optarg)) {
		slurm_error(PREFIX "--topognn-nic wants auto, none or HCA names like mlx5_0,mlx5_1");
		return -1;
	}
	free(nic_option);
	nic_option = strdup(optarg);
	return 0;
}

static int set_str(char **field, const char *value)
{
	free(*field);
	*field = strdup(value);
	return *field ? 0 : -1;
}

static int yes_no(const char *key, const char *value, int *out)
{
	if (!strcmp(value, "yes") || !strcmp(value, "1")) {
		*out = 1;
	} else if (!strcmp(value, "no") || !strcmp(value, "0")) {
		*out = 0;
	} else {
		slurm_error(PREFIX "plugstack.conf: %s=%s: want yes or no", key, value);
		return -1;
	}
	return 0;
}

static void parse_args(int ac, char **av)
{
	if (conf.parsed)
		return;
	conf.parsed = 1;
	conf.irq = IRQ_AUDIT;
	conf.rail_aligned = 1;
	set_str(&conf.state_dir, "/var/lib/topognn/irq");
	set_str(&conf.report_dir, "/var/lib/topognn/report");
	for (int i = 0; i < ac; i++) {
		char *eq = strchr(av[i], '=');
		const char *v = eq ? eq + 1 : "";
		size_t klen = eq ? (size_t)(eq - av[i]) : strlen(av[i]);
		char key[32];

		snprintf(key, sizeof(key), "%.*s", (int)(klen < 31 ? klen : 31), av[i]);
		if (!strcmp(key, "hwloc"))
			set_str(&conf.hwloc, v);
		else if (!strcmp(key, "socket_ifname"))
			set_str(&conf.socket_ifname, v);
		else if (!strcmp(key, "state_dir"))
			set_str(&conf.state_dir, v);
		else if (!strcmp(key, "report_dir"))
			set_str(&conf.report_dir, v);
		else if (!strcmp(key, "housekeeping"))
			set_str(&conf.housekeeping, v);
		else if (!strcmp(key, "proc_root"))
			set_str(&conf.proc_root, v);
		else if (!strcmp(key, "sys_root"))
			set_str(&conf.sys_root, v);
		else if (!strcmp(key, "nic_role") && conf.nnic_roles < 8)
			set_str(&conf.nic_role[conf.nnic_roles++], v);
		else if (!strcmp(key, "cpu_bind"))
			yes_no(key, v, &conf.cpu_bind);
		else if (!strcmp(key, "rail_aligned"))
			yes_no(key, v, &conf.rail_aligned);
		else if (!strcmp(key, "sharp"))
			yes_no(key, v, &conf.sharp);
		else if (!strcmp(key, "irq")) {
			if (!strcmp(v, "off"))
				conf.irq = IRQ_OFF;
			else if (!strcmp(v, "audit"))
				conf.irq = IRQ_AUDIT;
			else if (!strcmp(v, "enforce"))
				conf.irq = IRQ_ENFORCE;
			else
				slurm_error(PREFIX "plugstack.conf: irq=%s: want audit, enforce or off; auditing",
					    v);
		} else {
			slurm_error(PREFIX "plugstack.conf: unknown argument \"%s\" ignored", av[i]);
		}
	}
}

/* ---- environment access ---------------------------------------------------- */

/* getenv for the planner: the task's environment (spank) or the job's
 * variables that slurmd gave prep/topognn (env: "NAME=value", NULL-ended;
 * the first match wins). */
typedef struct env_ctx {
	spank_t sp;              /* NULL: env */
	const char *const *env;
	char buf[6][4096];
	int next;
} env_ctx;

static const char *array_getenv(const char *const *env, const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; env && env[i]; i++)
		if (!strncmp(env[i], name, len) && env[i][len] == '=')
			return env[i] + len + 1;
	return NULL;
}

static const char *raw_getenv(env_ctx *c, const char *name)
{
	char *b;

	if (!c->sp)
		return array_getenv(c->env, name);
	b = c->buf[c->next];
	c->next = (c->next + 1) % 6;
	if (spank_getenv(c->sp, name, b, sizeof(c->buf[0])) != ESPANK_SUCCESS)
		return NULL;
	return b;
}

/* A variable counts as user-set unless it holds what we set in an earlier
 * step of this job (TOPOGNN_SET_<NAME> records that). */
static const char *user_getenv(void *ctx, const char *name)
{
	env_ctx *c = ctx;
	const char *v = raw_getenv(c, name), *ours;
	char key[128];

	if (!v)
		return NULL;
	snprintf(key, sizeof(key), SET_PREFIX "%s", name);
	ours = raw_getenv(c, key);
	return ours && !strcmp(ours, v) ? NULL : v;
}

static const char *env_getenv(void *ctx, const char *name)
{
	return raw_getenv(ctx, name);
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
static int node_name(char *buf, size_t len, const char *given)
{
	const char *n = given ? given : getenv("SLURMD_NODENAME");

	if (n && *n)
		snprintf(buf, len, "%s", n);
	else if (gethostname(buf, len - 1) < 0)
		buf[0] = '\0';
	buf[len - 1] = '\0';
	if (!bind_name_ok(buf)) {
		slurm_error(PREFIX "node name \"%.64s\" is not 1-64 letters, digits, '.', '_', '-' without \"..\": refused, no IRQ work",
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

static void log_error(const char *what, const topo_error *err)
{
	char buf[TOPO_ERROR_TEXT_LEN + TOPO_ERROR_SOURCE_LEN + 32];

	slurm_error(PREFIX "%s: %s", what, topo_error_format(err, buf, sizeof(buf)));
}

/* Load this node's host model. Returns the host id, -1 (logged) on error. */
static int load_host(topo_graph *g, const char *node, topo_error *err)
{
	char *path = expand(conf.hwloc, node);
	int host;

	host = path ? topo_load_hwloc_xml(g, path, node, err) : topo_load_hwloc_live(g, err);
	free(path);
	return host;
}

/* Tag storage/management NICs by the nic_role= rules. 0, or -1 (err). */
static int tag_nic_roles(topo_graph *g, topo_error *err)
{
	topo_nic_rules *r;
	int rc;

	if (!conf.nnic_roles)
		return 0;
	r = topo_nic_rules_new((const char *const *)conf.nic_role, conf.nnic_roles, err);
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
static bind_plan *make_plan(env_ctx *c, const char *node, const char *cores, int ntasks,
			    const char *nic)
{
	topo_graph *g = topo_graph_new();
	bind_policy pol = { conf.socket_ifname, conf.rail_aligned, conf.cpu_bind,
			    conf.sys_root ? conf.sys_root : "/sys", conf.sharp };
	bind_request req = { 0 };
	const char *from, *plan;
	topo_error err;
	bind_plan *p = NULL;
	int *gpus = NULL, host;

	if (!g)
		return NULL;
	host = load_host(g, node, &err);
	if (host < 0) {
		log_error("host model", &err);
		goto out;
	}
	if (tag_nic_roles(g, &err) < 0)
		log_error("nic_role", &err); /* logged; the plan goes on untagged */
	if (bind_gpus_from_env(env_getenv, c, &gpus, &req.ngpus, &from, &err) < 0) {
		log_error("GPUs", &err);
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
		log_error("plan", &err);
	for (int i = 0; p && i < p->nnotes; i++)
		slurm_info(PREFIX "%s", p->notes[i]);
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
	(void)ctx;
	slurm_info(PREFIX "%s", msg);
}

static bind_roots roots(void)
{
	bind_roots r = { conf.proc_root, conf.sys_root, conf.proc_root != NULL };

	return r;
}

static void recover_stale(void)
{
	char node[256];
	char *dir;
	bind_roots r = roots();
	bind_log log = { log_change, NULL };
	topo_error err;
	struct stat st;
	int n;

	if (conf.irq == IRQ_OFF || geteuid() != 0 || node_name(node, sizeof(node), NULL) < 0)
		return;
	dir = expand(conf.state_dir, node);
	if (dir && stat(dir, &st) == 0) {
		n = bind_irq_recover(&r, dir, job_running, dir, &log, &err);
		if (n < 0)
			log_error("IRQ recovery", &err);
		else if (n > 0)
			slurm_info(PREFIX "restored the saved IRQ affinities of %d ended job(s)", n);
	}
	free(dir);
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
static void enforce(json_t *o, const bind_irq_set *set, const char *job, const char *job_cpus,
		    const char *state_dir)
{
	bind_roots r = roots();
	bind_log log = { log_change, NULL };
	bind_enforce_opts eo = { job, job_cpus, conf.housekeeping, state_dir };
	char buf[TOPO_ERROR_TEXT_LEN + TOPO_ERROR_SOURCE_LEN + 32];
	topo_error err;
	int n = bind_irq_enforce(&r, set, &eo, &log, &err);

	if (n < 0) {
		log_error("IRQ enforce", &err);
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
static int may_enforce(env_ctx *c, json_t *o, int prolog, char **cpus)
{
	bind_roots r = roots();
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
	slurm_info(PREFIX "IRQ enforce skipped: %s", why);
	return 0;
}

/* Audit (and, from the prolog of a job that has the node, enforce) the IRQs
 * of the plan's HCAs; the outcome as JSON. `task_cpus`: the calling task's
 * CPUs for the audit when not in the prolog. */
static json_t *irq_work(env_ctx *c, const bind_plan *p, const char *job, int prolog,
			const char *task_cpus, const char *state_dir)
{
	json_t *o = json_object();
	bind_roots r = roots();
	bind_nic_req *req = calloc(p->nhcas ? p->nhcas : 1, sizeof(*req));
	bind_irq_set *set = NULL;
	bind_audit au = { 0 };
	topo_error err;
	char buf[TOPO_ERROR_TEXT_LEN + TOPO_ERROR_SOURCE_LEN + 32];
	char *job_cpus = NULL;
	int enf = 0;

	json_object_set_new(o, "mode", json_string(conf.irq == IRQ_ENFORCE ? "enforce" : "audit"));
	if (!req || p->nhcas == 0) {
		json_object_set_new(o, "status", json_string("skipped"));
		json_object_set_new(o, "error", json_string(req ? "no HCA planned" : "out of memory"));
		free(req);
		return o;
	}
	if (conf.irq == IRQ_ENFORCE)
		enf = may_enforce(c, o, prolog, &job_cpus);
	for (int i = 0; i < p->nhcas; i++)
		req[i].name = p->hcas[i].name;
	set = bind_irq_load(&r, req, p->nhcas, &err);
	if (!set || bind_irq_audit(set, job_cpus ? job_cpus : task_cpus, &au, &err) < 0) {
		log_error("IRQ audit", &err);
		json_object_set_new(o, "status", json_string("error"));
		json_object_set_new(o, "error",
				    json_string(topo_error_format(&err, buf, sizeof(buf))));
		goto out;
	}
	for (size_t i = 0; i < au.n; i++)
		slurm_info(PREFIX "job %s IRQ %s: %s", job, au.v[i].kind, au.v[i].text);
	json_object_set_new(o, "status", json_string("ok"));
	json_object_set_new(o, "findings", audit_json(&au));
	if (enf)
		enforce(o, set, job, job_cpus, state_dir);
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
static int put_aside(const char *tmp, char *path, size_t len, const char *dir, const char *job,
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
	slurm_info(PREFIX "report name %s is taken (%s, not a file we may replace): using another name",
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
static void write_report(const char *dir, const char *job, const char *node, json_t *rep)
{
	char path[4096], tmp[4200];
	int fd;

	if (make_dirs(dir) < 0) {
		slurm_error(PREFIX "report directory %s: %s", dir, strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/job-%s.%s.json", dir, job, node);
	snprintf(tmp, sizeof(tmp), "%s/.job-%s.%s.json.XXXXXX", dir, job, node);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		slurm_error(PREFIX "cannot create a report in %s: %s", dir, strerror(errno));
		return;
	}
	if (fchmod(fd, 0644) < 0 ||
	    json_dumpfd(rep, fd, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0 || fsync(fd) < 0) {
		slurm_error(PREFIX "cannot write report %s: %s", tmp, strerror(errno));
		close(fd);
		unlink(tmp);
		return;
	}
	if (close(fd) < 0) {
		slurm_error(PREFIX "cannot write report %s: %s", tmp, strerror(errno));
		unlink(tmp);
		return;
	}
	if (rename(tmp, path) < 0 && put_aside(tmp, path, sizeof(path), dir, job, node) < 0) {
		slurm_error(PREFIX "cannot put report %s in place: %s", path, strerror(errno));
		unlink(tmp);
		return;
	}
	slurm_info(PREFIX "job %s: report written to %s", job, path);
}

/* The first caller for a job on this node creates its marker and does the
 * IRQ work and the report; later callers return at once. `given_node`: this
 * node's name from slurmd (NULL: node_name()). */
static void job_once(env_ctx *c, const char *job, const char *given_node, const char *task_cpus,
		     const char *where)
{
	char node[256], marker[4096], id[64];
	int prolog = strcmp(where, "prolog") == 0;
	char *state_dir = NULL, *report_dir = NULL;
	bind_plan *p = NULL;
	json_t *rep = NULL, *pj = NULL;
	int fd;

	if (node_name(node, sizeof(node), given_node) < 0 || !bind_name_ok(job))
		return;
	state_dir = expand(conf.state_dir, node);
	report_dir = expand(conf.report_dir, node);
	if (!state_dir || !report_dir || make_dirs(state_dir) < 0) {
		slurm_error(PREFIX "state directory %s: %s", state_dir ? state_dir : "?",
			    strerror(errno));
		goto out;
	}
	marker_path(marker, sizeof(marker), state_dir, job);
	fd = open(marker, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		if (errno != EEXIST)
			slurm_error(PREFIX "marker %s: %s", marker, strerror(errno));
		goto out;
	}
	boot_id(id, sizeof(id));
	if (dprintf(fd, "%s\n", id) < 0)
		slurm_error(PREFIX "marker %s: %s", marker, strerror(errno));
	close(fd);

	p = make_plan(c, node, NULL, 0, NULL); /* root's work: never the user's --topognn-nic */
	rep = json_object();
	json_object_set_new(rep, "job_id", json_string(job));
	json_object_set_new(rep, "node", json_string(node));
	json_object_set_new(rep, "time", json_integer(time(NULL)));
	json_object_set_new(rep, "from", json_string(where));
	json_object_set_new(rep, "hwloc", conf.hwloc ? json_string(conf.hwloc)
						     : json_string("<live>"));
	if (p && bind_plan_to_json(p, &pj) == 0)
		json_object_set_new(rep, "plan", pj);
	else
		json_object_set_new(rep, "plan", json_null());
	if (conf.irq != IRQ_OFF && p)
		json_object_set_new(rep, "irq", irq_work(c, p, job, prolog, task_cpus, state_dir));
	else
		json_object_set_new(rep, "irq", json_pack("{s:s, s:s}", "mode",
							  conf.irq == IRQ_OFF ? "off" : "audit",
							  "status", "skipped"));
	write_report(report_dir, job, node, rep);
out:
	json_decref(rep);
	bind_plan_free(p);
	free(state_dir);
	free(report_dir);
}

static void job_end(const char *job, const char *given_node)
{
	char node[256], marker[4096];
	char *dir;
	bind_roots r = roots();
	bind_log log = { log_change, NULL };
	topo_error err;

	if (node_name(node, sizeof(node), given_node) < 0 || !bind_name_ok(job) ||
	    !(dir = expand(conf.state_dir, node)))
		return;
	if (conf.irq == IRQ_ENFORCE && geteuid() == 0 &&
	    bind_irq_restore(&r, dir, job, &log, &err) < 0)
		log_error("IRQ restore", &err);
	marker_path(marker, sizeof(marker), dir, job);
	if (unlink(marker) < 0 && errno != ENOENT)
		slurm_error(PREFIX "cannot remove %s: %s", marker, strerror(errno));
	free(dir);
}

static int job_id_of(spank_t sp, char *buf, size_t len)
{
	uint32_t id = 0;

	if (spank_get_item(sp, S_JOB_ID, &id) != ESPANK_SUCCESS || id == 0) {
		const char *e = getenv("SLURM_JOB_ID");

		if (!e || !*e)
			return -1;
		snprintf(buf, len, "%s", e);
		return 0;
	}
	snprintf(buf, len, "%u", id);
	return 0;
}

/* ---- SPANK callbacks -------------------------------------------------------- */

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	spank_context_t ctx = spank_context();

	if (ctx == S_CTX_LOCAL || ctx == S_CTX_ALLOCATOR || ctx == S_CTX_REMOTE) {
		if (spank_option_register(sp, &nic_opt) != ESPANK_SUCCESS)
			slurm_error(PREFIX "cannot register --topognn-nic");
	}
	if (ctx == S_CTX_REMOTE || ctx == S_CTX_JOB_SCRIPT || ctx == S_CTX_SLURMD)
		parse_args(ac, av);
	if (ctx == S_CTX_REMOTE)
		recover_stale();
	return 0;
}

int slurm_spank_slurmd_init(spank_t sp, int ac, char **av)
{
	(void)sp;
	parse_args(ac, av);
	recover_stale();
	return 0;
}

/* The CPUs this task may run on now (after cgroup/affinity), as a list;
 * NULL when that is every online CPU (nothing learned). */
static char *current_cpus(void)
{
	cpu_set_t set;
	bind_cpuset s;
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	char *text = NULL;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return NULL;
	bind_cpuset_init(&s);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			bind_cpuset_add(&s, c);
	if (bind_cpuset_count(&s) < online)
		text = bind_cpuset_format(&s);
	bind_cpuset_free(&s);
	return text;
}

int slurm_spank_task_init_privileged(spank_t sp, int ac, char **av)
{
	char job[32];
	env_ctx *c;
	char *cpus;

	if (!spank_remote(sp))
		return 0;
	parse_args(ac, av);
	c = calloc(1, sizeof(*c));
	if (!c || job_id_of(sp, job, sizeof(job)) < 0) {
		free(c);
		return 0;
	}
	c->sp = sp;
	cpus = current_cpus();
	job_once(c, job, NULL, cpus, "task");
	free(cpus);
	free(c);
	return 0;
}

static void bind_task(spank_t sp, const bind_plan *p)
{
	int task = 0;
	bind_cpuset s;
	cpu_set_t set;
	topo_error err;

	if (spank_get_item(sp, S_TASK_ID, &task) != ESPANK_SUCCESS || task < 0 ||
	    task >= p->ntasks || !*p->tasks[task].cpus)
		return;
	bind_cpuset_init(&s);
	if (bind_cpuset_parse(&s, p->tasks[task].cpus, "plan", 0, &err) < 0) {
		log_error("CPU list", &err);
		return;
	}
	CPU_ZERO(&set);
	for (int c = bind_cpuset_next(&s, -1); c >= 0 && c < CPU_SETSIZE;
	     c = bind_cpuset_next(&s, c))
		CPU_SET(c, &set);
	bind_cpuset_free(&s);
	if (sched_setaffinity(0, sizeof(set), &set) < 0)
		slurm_error(PREFIX "task %d: cannot bind to CPUs %s: %s", task,
			    p->tasks[task].cpus, strerror(errno));
	else
		slurm_verbose(PREFIX "task %d bound to CPUs %s", task, p->tasks[task].cpus);
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	env_ctx *c;
	bind_plan *p;
	char node[256], key[128];
	char *cpus = NULL;
	uint32_t ntasks = 0;

	if (!spank_remote(sp))
		return 0;
	parse_args(ac, av);
	c = calloc(1, sizeof(*c));
	if (!c)
		return 0;
	c->sp = sp;
	if (node_name(node, sizeof(node), NULL) < 0) {
		free(c);
		return 0;
	}
	if (conf.cpu_bind) {
		cpus = current_cpus();
		if (spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &ntasks) != ESPANK_SUCCESS)
			ntasks = 0;
	}
	p = make_plan(c, node, cpus, (int)ntasks, nic_option);
	for (int i = 0; p && i < p->nenv; i++) {
		const bind_plan_env *e = &p->env[i];

		if (e->user_value) {
			slurm_info(PREFIX "%s kept as set by the user (%s); topognn planned %s",
				   e->name, e->user_value, e->value);
			continue;
		}
		snprintf(key, sizeof(key), SET_PREFIX "%s", e->name);
		if (spank_setenv(sp, e->name, e->value, 1) != ESPANK_SUCCESS ||
		    spank_setenv(sp, key, e->value, 1) != ESPANK_SUCCESS)
			slurm_error(PREFIX "cannot set %s", e->name);
		else
			slurm_verbose(PREFIX "%s=%s", e->name, e->value);
	}
	if (p && conf.cpu_bind)
		bind_task(sp, p);
	bind_plan_free(p);
	free(cpus);
	free(c);
	return 0;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	uint32_t step = 0;
	char job[32];

	if (!spank_remote(sp))
		return 0;
	parse_args(ac, av);
	/* The extern step ends with the job on every node (PrologFlags=contain). */
	if (spank_get_item(sp, S_JOB_STEPID, &step) == ESPANK_SUCCESS &&
	    step == SLURM_EXTERN_CONT && job_id_of(sp, job, sizeof(job)) == 0)
		job_end(job, NULL);
	return 0;
}

/* ---- called by prep/topognn inside slurmd ----------------------------------- */

/* prep/topognn may run the prologs of several jobs at once (one slurmd thread
 * each): one job's IRQ work at a time. */
static pthread_mutex_t job_lock = PTHREAD_MUTEX_INITIALIZER;

/* From slurmd's prolog (prep/topognn's prep_p_prolog), see spank_topognn.h.
 * Nothing is exec'd, so no job variable's size matters. */
int topognn_spank_job_start(const char *job, const char *node, const char *const *env)
{
	env_ctx *c;

	if (!conf.parsed) {
		slurm_error(PREFIX "job %s: the plugin's arguments were not read in slurmd (no slurm_spank_slurmd_init): no prolog work",
			    job ? job : "?");
		return 0;
	}
	if (!job || !node || !(c = calloc(1, sizeof(*c))))
		return 0;
	c->env = env;
	pthread_mutex_lock(&job_lock);
	job_once(c, job, node, NULL, "prolog");
	pthread_mutex_unlock(&job_lock);
	free(c);
	return 0;
}

/* From slurmd's epilog (prep/topognn's prep_p_epilog), see spank_topognn.h. */
int topognn_spank_job_end(const char *job, const char *node)
{
	if (!conf.parsed || !job || !node)
		return 0;
	pthread_mutex_lock(&job_lock);
	job_end(job, node);
	pthread_mutex_unlock(&job_lock);
	return 0;
}
