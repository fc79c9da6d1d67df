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
 *  the callback returns 0. This file is the SPANK adapter only: option
 *  parsing, the job's variables and the callbacks. The once-per-job work
 *  (markers, plan, IRQ audit/enforce, report, restore, stale-state
 *  recovery) is topo/node/bind_job.c, Slurm-free and tested by
 *  tests/test_bind_job.c; the planning is topo/node/bind_plan.c, the IRQ
 *  work topo/node/bind_irq_*.c; docs/node-side.md documents files and formats.
\*****************************************************************************/

#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "bind_cpuset.h"
#include "bind_job.h"
#include "bind_plan.h"
#include "spank_topognn.h"

SPANK_PLUGIN(topognn, 1);

#define PREFIX "topognn: "

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
	bind_job_irq irq;
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
	conf.irq = BIND_JOB_IRQ_AUDIT;
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
				conf.irq = BIND_JOB_IRQ_OFF;
			else if (!strcmp(v, "audit"))
				conf.irq = BIND_JOB_IRQ_AUDIT;
			else if (!strcmp(v, "enforce"))
				conf.irq = BIND_JOB_IRQ_ENFORCE;
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

static const char *env_getenv(void *ctx, const char *name)
{
	return raw_getenv(ctx, name);
}

static void log_msg(int error, const char *msg)
{
	if (error)
		slurm_error(PREFIX "%s", msg);
	else
		slurm_info(PREFIX "%s", msg);
}

/* The arguments as bind_job takes them (topo/node/bind_job.h). */
static bind_job_conf job_conf(void)
{
	bind_job_conf c = {
		.hwloc = conf.hwloc, .socket_ifname = conf.socket_ifname,
		.state_dir = conf.state_dir, .report_dir = conf.report_dir,
		.housekeeping = conf.housekeeping, .proc_root = conf.proc_root,
		.sys_root = conf.sys_root, .nic_role = (const char *const *)conf.nic_role,
		.nnic_roles = conf.nnic_roles, .irq = conf.irq, .cpu_bind = conf.cpu_bind,
		.rail_aligned = conf.rail_aligned, .sharp = conf.sharp, .log = log_msg,
	};

	return c;
}

static void log_error(const char *what, const topo_error *err)
{
	char buf[TOPO_ERROR_TEXT_LEN + TOPO_ERROR_SOURCE_LEN + 32];

	slurm_error(PREFIX "%s: %s", what, topo_error_format(err, buf, sizeof(buf)));
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

static void recover_stale(void)
{
	bind_job_conf jc = job_conf();

	bind_job_recover(&jc);
}

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
	bind_job_conf jc;
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
	jc = job_conf();
	bind_job_start(&jc, env_getenv, c, job, NULL, cpus, "task");
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
	bind_job_conf jc;
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
	jc = job_conf();
	if (bind_job_node_name(&jc, node, sizeof(node), NULL) < 0) {
		free(c);
		return 0;
	}
	if (conf.cpu_bind) {
		cpus = current_cpus();
		if (spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &ntasks) != ESPANK_SUCCESS)
			ntasks = 0;
	}
	p = bind_job_plan(&jc, env_getenv, c, node, cpus, (int)ntasks, nic_option);
	for (int i = 0; p && i < p->nenv; i++) {
		const bind_plan_env *e = &p->env[i];

		if (e->user_value) {
			slurm_info(PREFIX "%s kept as set by the user (%s); topognn planned %s",
				   e->name, e->user_value, e->value);
			continue;
		}
		snprintf(key, sizeof(key), BIND_JOB_SET_PREFIX "%s", e->name);
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
	    step == SLURM_EXTERN_CONT && job_id_of(sp, job, sizeof(job)) == 0) {
		bind_job_conf jc = job_conf();

		bind_job_end(&jc, job, NULL);
	}
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
	bind_job_conf jc;
	env_ctx *c;

	if (!conf.parsed) {
		slurm_error(PREFIX "job %s: the plugin's arguments were not read in slurmd (no slurm_spank_slurmd_init): no prolog work",
			    job ? job : "?");
		return 0;
	}
	if (!job || !node || !(c = calloc(1, sizeof(*c))))
		return 0;
	c->env = env;
	jc = job_conf();
	pthread_mutex_lock(&job_lock);
	bind_job_start(&jc, env_getenv, c, job, node, NULL, "prolog");
	pthread_mutex_unlock(&job_lock);
	free(c);
	return 0;
}

/* From slurmd's epilog (prep/topognn's prep_p_epilog), see spank_topognn.h. */
int topognn_spank_job_end(const char *job, const char *node)
{
	bind_job_conf jc;

	if (!conf.parsed || !job || !node)
		return 0;
	jc = job_conf();
	pthread_mutex_lock(&job_lock);
	bind_job_end(&jc, job, node);
	pthread_mutex_unlock(&job_lock);
	return 0;
}
