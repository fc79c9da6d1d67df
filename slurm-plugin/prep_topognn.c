/*****************************************************************************\
 *  prep_topognn.c - prep/topognn: commit topology/topognn's decision when a
 *	job really starts.
 *
 *  slurm.conf:	PrEpPlugins=prep/script,prep/topognn
 *
 *  topology/topognn's eval_nodes runs for test-only, will-run and preemption
 *  passes too, so it cannot tell which evaluation became the allocation.
 *  prep_p_prolog_slurmctld runs once per started job (in slurmctld, job
 *  write lock held) with the allocation in job_ptr: it calls the topology
 *  plugin's topognn_commit_job(), which writes the decision log and sets
 *  the job's plan (TOPOGNN_GROUPS, TOPOGNN_PLAN) in spank_job_env, and adds
 *  the job's hosts and traffic to the engine's state. prep_p_epilog_slurmctld
 *  (job end) calls topognn_end_job(), which takes them out again.
 *
 *  In slurmd, prep_p_prolog (once per job per node, before its first step)
 *  and prep_p_epilog call spank_topognn.so's topognn_spank_job_start/_end:
 *  the node-side IRQ audit/enforce, the report and the restore run inside
 *  slurmd, with the job's variables passed as an array. Nothing is exec'd
 *  with the job's spank_job_env, so no job input can make a prolog fail and
 *  drain the node (issue 21: that is why the SPANK plugin has no
 *  slurm_spank_job_prolog). slurmd loads the SPANK plugin at its start
 *  (slurm_spank_slurmd_init) and keeps it.
 *
 *  Slurm dlopen()s plugins RTLD_LOCAL, so the other plugins' symbols are
 *  found through their own handles (dl_iterate_phdr + RTLD_NOLOAD).
\*****************************************************************************/

#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <string.h>

#include "src/common/slurm_xlator.h"

#include "slurm/slurm_errno.h"
#include "src/common/log.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/common/run_in_daemon.h"
#include "src/interfaces/cred.h"
#include "src/interfaces/prep.h"
#include "src/slurmctld/slurmctld.h"

#include "spank_topognn.h"

const char plugin_name[] = "topognn PrEp plugin";
const char plugin_type[] = "prep/topognn";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

/* slurmd's (and slurmstepd's) configuration: this node's name. Weak, so the
 * plugin also loads in slurmctld, which has no `conf`. */
extern slurmd_conf_t *conf __attribute__((weak));

typedef int (*commit_fn_t)(job_record_t *job_ptr);

/* Another topognn plugin loaded in this process, and two of its entry
 * points, looked up once. */
typedef struct {
	const char *suffix;  /* "/name.so" */
	const char *absent;  /* logged when it is not loaded */
	bool optional;       /* absent is normal: log it at debug level */
	const char *sym[2];
	bool done;
	void *handle;
	void *fn[2];
} peer_t;

/* slurmctld: topognn_commit_job, topognn_end_job */
static peer_t topo = {
	"/topology_topognn.so",
	"topology/topognn is not loaded (TopologyPlugin=topology/topognn?): no decisions are committed",
	false,
	{ "topognn_commit_job", "topognn_end_job" },
};
/* slurmd: topognn_spank_job_start, topognn_spank_job_end */
static peer_t spank = {
	"/spank_topognn.so",
	"spank_topognn.so is not loaded in this process (not in plugstack.conf?): no node-side work at job start",
	true,
	{ "topognn_spank_job_start", "topognn_spank_job_end" },
};
static pthread_mutex_t lookup_lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct {
	const char *suffix; /* "/name.so" */
	char *path;         /* OUT: the loaded object's path */
} find_so_t;

static int _find_so(struct dl_phdr_info *info, size_t size, void *data)
{
	find_so_t *f = data;
	size_t len = info->dlpi_name ? strlen(info->dlpi_name) : 0;
	size_t slen = strlen(f->suffix);

	if (len >= slen && !strcmp(info->dlpi_name + len - slen, f->suffix)) {
		f->path = xstrdup(info->dlpi_name);
		return 1;
	}
	return 0;
}

/* Look p's entry points up once, through the handle of the already loaded
 * object (Slurm loads plugins RTLD_LOCAL); false (logged once) if absent. */
static bool _lookup(peer_t *p)
{
	find_so_t f = { p->suffix, NULL };

	slurm_mutex_lock(&lookup_lock);
	if (p->done)
		goto done;
	p->done = true;
	dl_iterate_phdr(_find_so, &f);
	if (!f.path) {
		if (p->optional)
			debug("%s", p->absent);
		else
			error("%s", p->absent);
		goto done;
	}
	if (!(p->handle = dlopen(f.path, RTLD_LAZY | RTLD_NOLOAD))) {
		error("dlopen(%s): %s", f.path, dlerror());
		goto done;
	}
	for (int i = 0; i < 2; i++)
		p->fn[i] = dlsym(p->handle, p->sym[i]);
	if (!p->fn[0] || !p->fn[1])
		error("%s lacks %s or %s: version mismatch?", f.path, p->sym[0], p->sym[1]);
done:
	xfree(f.path);
	slurm_mutex_unlock(&lookup_lock);
	return p->fn[0] && p->fn[1];
}

static void _forget(peer_t *p)
{
	if (p->handle)
		dlclose(p->handle);
	p->handle = NULL;
	p->fn[0] = p->fn[1] = NULL;
	p->done = false;
}

/* This node's Slurm name in slurmd (or slurmstepd); NULL elsewhere. */
static const char *_node_name(void)
{
	return (&conf && conf) ? conf->node_name : NULL;
}

static void _env_add(const char ***env, int *n, char **from)
{
	for (int i = 0; from && from[i]; i++)
		(*env)[(*n)++] = from[i];
}

/* The job's variables for the SPANK plugin, most trusted first (its look-up
 * takes the first match): SLURM_JOB_OVERSUBSCRIBE from the credential (who
 * may enforce), the GRES variables (SLURM_JOB_GPUS), then spank_job_env (the
 * plan prep_p_prolog_slurmctld set). Pointers into job_env, not copies;
 * xfree the array and *own. */
static const char **_job_vars(job_env_t *job_env, slurm_cred_t *cred, char **own)
{
	int n = 0, cap = 2 + (int) job_env->spank_job_env_size;
	const char **env;

	for (int i = 0; job_env->gres_job_env && job_env->gres_job_env[i]; i++)
		cap++;
	env = xcalloc(cap, sizeof(*env));
	*own = NULL;
	if (cred) {
		slurm_cred_arg_t *arg = slurm_cred_get_args(cred);

		*own = xstrdup_printf("SLURM_JOB_OVERSUBSCRIBE=%s",
				      job_share_string(arg->job_oversubscribe));
		slurm_cred_unlock_args(cred);
		env[n++] = *own;
	}
	_env_add(&env, &n, job_env->gres_job_env);
	for (uint32_t i = 0; i < job_env->spank_job_env_size &&
			     job_env->spank_job_env && job_env->spank_job_env[i]; i++)
		env[n++] = job_env->spank_job_env[i];
	env[n] = NULL;
	return env;
}

extern int init(void)
{
	verbose("%s loaded", plugin_name);
	/* Without the extern step or an Epilog, slurmd skips the epilog of a job
	 * whose steps have all ended, and enforced IRQs would stay moved. */
	if (running_in_slurmd() &&
	    !(slurm_conf.prolog_flags & PROLOG_FLAG_CONTAIN) && !slurm_conf.epilog_cnt)
		info("%s: PrologFlags has no Contain and there is no Epilog: slurmd may skip the epilog of a job whose steps have ended, so spank_topognn.so irq=enforce may leave its IRQs moved",
		     plugin_type);
	return SLURM_SUCCESS;
}

extern void fini(void)
{
	slurm_mutex_lock(&lookup_lock);
	_forget(&topo);
	_forget(&spank);
	slurm_mutex_unlock(&lookup_lock);
}

extern void prep_p_register_callbacks(prep_callbacks_t *callbacks)
{
}

/*
 * The job's id in slurmd's job_env_t: a field of its own up to 24.11, part of
 * step_id since 25.05 (src/slurmd/slurmd/slurmd.h). The one difference in
 * this file between the releases this plugin builds for.
 */
static uint32_t _job_id(const job_env_t *job_env)
{
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 5, 0)
	return job_env->step_id.job_id;
#else
	return job_env->jobid;
#endif
}

/* Never fails: a problem is logged, the job goes on. */
extern int prep_p_prolog(job_env_t *job_env, slurm_cred_t *cred)
{
	const char *node = _node_name();
	const char **env;
	char *own, job[16];

	if (!node || !_lookup(&spank))
		return SLURM_SUCCESS;
	snprintf(job, sizeof(job), "%u", _job_id(job_env));
	env = _job_vars(job_env, cred, &own);
	(void) ((topognn_spank_job_start_fn) spank.fn[0])(job, node, env);
	xfree(env);
	xfree(own);
	return SLURM_SUCCESS;
}

extern int prep_p_epilog(job_env_t *job_env, slurm_cred_t *cred)
{
	const char *node = _node_name();
	char job[16];

	if (!node || !_lookup(&spank))
		return SLURM_SUCCESS;
	snprintf(job, sizeof(job), "%u", _job_id(job_env));
	(void) ((topognn_spank_job_end_fn) spank.fn[1])(job, node);
	return SLURM_SUCCESS;
}

extern int prep_p_prolog_slurmctld(job_record_t *job_ptr, bool *async)
{
	*async = false;
	if (_lookup(&topo) && ((commit_fn_t) topo.fn[0])(job_ptr) != SLURM_SUCCESS)
		debug("%pJ: commit failed", job_ptr);
	return SLURM_SUCCESS;
}

/* The job's load leaves topology/topognn's engine state. */
extern int prep_p_epilog_slurmctld(job_record_t *job_ptr, bool *async)
{
	*async = false;
	if (_lookup(&topo))
		(void) ((commit_fn_t) topo.fn[1])(job_ptr);
	return SLURM_SUCCESS;
}

extern void prep_p_required(prep_call_type_t type, bool *required)
{
	*required = ((type == PREP_PROLOG_SLURMCTLD) ||
		     (type == PREP_EPILOG_SLURMCTLD)) && running_in_slurmctld();
}
