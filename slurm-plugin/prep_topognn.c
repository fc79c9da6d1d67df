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
 *  Slurm dlopen()s plugins RTLD_LOCAL, so the topology plugin's symbol is
 *  found through its own handle (dl_iterate_phdr + RTLD_NOLOAD). In slurmd
 *  this plugin does nothing.
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
#include "src/interfaces/prep.h"
#include "src/slurmctld/slurmctld.h"

const char plugin_name[] = "topognn PrEp plugin";
const char plugin_type[] = "prep/topognn";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

#define TOPO_SO "/topology_topognn.so"

typedef int (*commit_fn_t)(job_record_t *job_ptr);

static commit_fn_t commit_fn = NULL;	/* topognn_commit_job */
static commit_fn_t end_fn = NULL;	/* topognn_end_job */
static void *topo_handle = NULL;
static bool lookup_done = false;
static pthread_mutex_t lookup_lock = PTHREAD_MUTEX_INITIALIZER;

static int _find_topo_so(struct dl_phdr_info *info, size_t size, void *data)
{
	char **path = data;
	size_t len = info->dlpi_name ? strlen(info->dlpi_name) : 0;

	if (len >= strlen(TOPO_SO) &&
	    !strcmp(info->dlpi_name + len - strlen(TOPO_SO), TOPO_SO)) {
		*path = xstrdup(info->dlpi_name);
		return 1;
	}
	return 0;
}

/* Look the topology plugin's entry points up once; false if absent. */
static bool _lookup(void)
{
	char *path = NULL;

	slurm_mutex_lock(&lookup_lock);
	if (lookup_done)
		goto done;
	lookup_done = true;
	dl_iterate_phdr(_find_topo_so, &path);
	if (!path) {
		error("topology/topognn is not loaded (TopologyPlugin=topology/topognn?): no decisions are committed");
		goto done;
	}
	if (!(topo_handle = dlopen(path, RTLD_LAZY | RTLD_NOLOAD))) {
		error("dlopen(%s): %s", path, dlerror());
		goto done;
	}
	commit_fn = dlsym(topo_handle, "topognn_commit_job");
	end_fn = dlsym(topo_handle, "topognn_end_job");
	if (!commit_fn || !end_fn)
		error("%s lacks topognn_commit_job or topognn_end_job: version mismatch?",
		      path);
done:
	xfree(path);
	slurm_mutex_unlock(&lookup_lock);
	return commit_fn && end_fn;
}

extern int init(void)
{
	verbose("%s loaded", plugin_name);
	return SLURM_SUCCESS;
}

extern void fini(void)
{
	slurm_mutex_lock(&lookup_lock);
	if (topo_handle)
		dlclose(topo_handle);
	topo_handle = NULL;
	commit_fn = NULL;
	end_fn = NULL;
	lookup_done = false;
	slurm_mutex_unlock(&lookup_lock);
}

extern void prep_p_register_callbacks(prep_callbacks_t *callbacks)
{
}

extern int prep_p_prolog(job_env_t *job_env, slurm_cred_t *cred)
{
	return SLURM_SUCCESS;
}

extern int prep_p_epilog(job_env_t *job_env, slurm_cred_t *cred)
{
	return SLURM_SUCCESS;
}

extern int prep_p_prolog_slurmctld(job_record_t *job_ptr, bool *async)
{
	*async = false;
	if (_lookup() && commit_fn(job_ptr) != SLURM_SUCCESS)
		debug("%pJ: commit failed", job_ptr);
	return SLURM_SUCCESS;
}

/* The job's load leaves topology/topognn's engine state. */
extern int prep_p_epilog_slurmctld(job_record_t *job_ptr, bool *async)
{
	*async = false;
	if (_lookup())
		(void) end_fn(job_ptr);
	return SLURM_SUCCESS;
}

extern void prep_p_required(prep_call_type_t type, bool *required)
{
	*required = ((type == PREP_PROLOG_SLURMCTLD) ||
		     (type == PREP_EPILOG_SLURMCTLD)) && running_in_slurmctld();
}
