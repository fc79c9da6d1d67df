/*****************************************************************************\
 *  topognn_class.c - a job's communication profile for the engine.
 *
 *  The class (heavy, light, none) comes from the engine's classifier
 *  (topo/place_classify.h) with the ClassRule= and Default*Class= lines of
 *  topognn.conf, fed with what slurmctld knows of the job: partition,
 *  account, QOS, name, comment, node and GPU counts. Here only the job
 *  record is translated; the rules and their order live in place_classify.
 *  A class becomes a ring all-reduce of HeavyBytesPerIter or
 *  LightBytesPerIter bytes per host and iteration (none: no traffic); a
 *  SHARP user (ClassRule sharp=yes, or comm=CLASS,sharp in the comment)
 *  may reduce in the network. topognn_plan_sharp() says, for the job plan,
 *  whether a SHARP user's real allocation lies under one SHARP tree.
\*****************************************************************************/

#include <stdlib.h>
#include <string.h>

#include "src/common/slurm_xlator.h"

#include "src/common/list.h"
#include "src/common/xstring.h"
#include "src/interfaces/gres.h"
#include "src/slurmctld/slurmctld.h"

#include "topognn.h"
#include "topo_num.h"

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
	comm->cls = place_classify_job(conf->classifier, &info, &comm->sharp, why);
	if (comm->cls == PLACE_COMM_HEAVY)
		comm->bytes_per_iter = conf->heavy_bytes;
	else if (comm->cls == PLACE_COMM_LIGHT)
		comm->bytes_per_iter = conf->light_bytes;
}

extern const char *topognn_plan_sharp(const topognn_ctx_t *ctx,
				      job_record_t *job_ptr)
{
	place_comm comm;
	int *hosts, n = 0, eligible;
	uint32_t nodes = bit_set_count(job_ptr->node_bitmap);

	if (!place_cluster_has_sharp(ctx->cluster))
		return NULL;
	topognn_classify(&ctx->conf, job_ptr, nodes, &comm, NULL);
	if (!comm.sharp || comm.cls == PLACE_COMM_NONE)
		return NULL;
	hosts = xcalloc(nodes + 1, sizeof(int));
	for (int i = 0; i < ctx->node_cnt; i++) {
		if (!bit_test(job_ptr->node_bitmap, i))
			continue;
		if (ctx->node_host[i] < 0) { /* a node outside the graph */
			xfree(hosts);
			return "sharp=0";
		}
		hosts[n++] = ctx->node_host[i];
	}
	qsort(hosts, n, sizeof(int), topo_cmp_int);
	eligible = place_cluster_sharp_eligible(ctx->cluster, hosts, n);
	xfree(hosts);
	return eligible ? "sharp=1" : "sharp=0";
}
