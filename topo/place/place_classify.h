/*
 * place_classify: which communication class a job belongs to, decided from
 * what Slurm already knows about it (partition, account, QOS, job name,
 * comment, node and GPU counts), so users need not change their sbatch
 * scripts. Rules come from a config file of Slurm-style key=value lines;
 * docs/job-classes.md describes them.
 */
#ifndef PLACE_CLASSIFY_H
#define PLACE_CLASSIFY_H

#include "place.h"
#include "topo_error.h"

/* What is known about a job when it is classified (any string may be NULL). */
typedef struct place_job_info {
	const char *partition;
	const char *account;
	const char *qos;
	const char *name;
	const char *comment;
	int nodes;
	int gpus; /* total GPUs of the job */
} place_job_info;

typedef struct place_classifier place_classifier;

/* The rules from text in memory (NUL-terminated); `source` names it in
 * errors ("topognn.conf"). NULL on error, with err holding source, line and
 * a sentence. */
place_classifier *place_classifier_load_mem(const char *text, const char *source, topo_error *err);
/* Read and parse a file. */
place_classifier *place_classifier_load(const char *path, topo_error *err);
/* Built-in defaults only (no rules). */
place_classifier *place_classifier_default(void);
void place_classifier_free(place_classifier *k);

/* Number of ClassRule lines. */
int place_classifier_nrules(const place_classifier *k);

/* The class of a job: a `comm=heavy|light|none` tag in its comment wins,
 * then the first matching rule, then the defaults (multi-node GPU jobs,
 * other multi-node jobs, single-node jobs). If why is not NULL it is set to
 * a static or classifier-owned description ("comment tag", "rule at
 * topognn.conf:3", "default for multi-node GPU jobs"). */
place_comm_class place_classify(const place_classifier *k, const place_job_info *job,
				const char **why);

/* The same, and whether the job is a SHARP user (*sharp, may be NULL): its
 * comment tag says `comm=CLASS,sharp`, or, without a tag, the rule that
 * classed it says `sharp=yes`. Defaults make no SHARP users. */
place_comm_class place_classify_job(const place_classifier *k, const place_job_info *job,
				    int *sharp, const char **why);

#endif
