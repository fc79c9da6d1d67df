/*****************************************************************************\
 *  topognn_class.c - a job's communication profile for the engine.
 *
 *  The class (heavy, light, none) comes from the engine's classifier
 *  (topo/place_classify.h) with the ClassRule= and Default*Class= lines of
 *  topognn.conf, fed with what slurmctld knows of the job: partition,
 *  account, QOS, name, comment, node and GPU counts. Here only the job
 *  record is translated; the rules and their order live in place_classify.
 *  A class becomes a ring all-reduce of HeavyBytesPerIter or
 *  LightBytesPerIter bytes per host and iteration (none: no traffic).
\*****************************************************************************/

#include <string.h>

#include "src/common/slurm_xlator.h"

#include "src/common/list.h"
#include "src/common/xstring.h"
#include "src/interfaces/gres.h"
#include "src/slurmctld/slurmctld.h"

#include "topognn.h"

/* GPUs of the job in total: allocated once it runs, else requested. */
static int _job_gpus(job_record_t *job_ptr, uint32_t nodes)
{
	list_t *gres = job_ptr->gres_list_alloc ? job_ptr->gres_list_alloc :
		       job_ptr->gres_list_req;
	list_itr_t *itr;
	gres_state_t *gs;
	uint64_t gpus = 0;

	if (!gres)
		return 0;
	itr = list_iterator_create(gres);
	while ((gs = list_next(itr))) {
		gres_job_state_t *js = gs->gres_data;

		if (xstrcmp(gs->gres_name, "gpu") || !js)
			continue;
		if (js->total_gres && js->total_gres != NO_VAL64)
			gpus += js->total_gres;
		else if (js->gres_per_job)
			gpus += js->gres_per_job;
		else
			gpus += js->gres_per_node * nodes;
	}
	list_iterator_destroy(itr);
	return (gpus > 1000000) ? 1000000 : (int) gpus;
}

extern void topognn_classify(const topognn_conf_t *conf, job_record_t *job_ptr,
			     uint32_t nodes, place_comm *comm,
			     const char **why)
{
	place_job_info info = {
		.partition = job_ptr->partition,
		.account = job_ptr->account,
		.qos = job_ptr->qos_ptr ? job_ptr->qos_ptr->name : NULL,
		.name = job_ptr->name,
		.comment = job_ptr->comment,
		.nodes = (int) nodes,
		.gpus = _job_gpus(job_ptr, nodes),
	};

	memset(comm, 0, sizeof(*comm));
	comm->pattern = PLACE_PATTERN_RING;
	comm->compute_s_per_iter = 0.1;
	comm->cls = place_classify(conf->classifier, &info, why);
	if (comm->cls == PLACE_COMM_HEAVY)
		comm->bytes_per_iter = conf->heavy_bytes;
	else if (comm->cls == PLACE_COMM_LIGHT)
		comm->bytes_per_iter = conf->light_bytes;
}
