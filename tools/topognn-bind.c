/*
 * topognn-bind: the node-side binding planner outside Slurm, for admins and
 * tests. Each mode is one function:
 *   --irq-audit    report where the chosen adapters' IRQs fire (text or --json)
 *   --irq-enforce  spread them off the job's cores, saving the originals
 *   --irq-restore  put a job's saved IRQ affinities back
 *   --irq-recover  restore saved state of jobs no longer running
 *   --hwloc FILE   plan a step's HCAs, NCCL/UCX variables and CPU lists
 */
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bind_irq.h"
#include "bind_plan.h"
#include "topo_hwloc.h"
#include "topo_num.h"

#define DEFAULT_STATE_DIR "/var/lib/topognn/irq"

typedef struct bind_args {
	int mode;
	int json;
	bind_roots roots;
	char *hcas;          /* "mlx5_0,mlx5_1"; NULL every HCA */
	const char *job_cpus;
	const char *housekeeping;
	const char *job;
	const char *state_dir;
	char *running;       /* --irq-recover: job ids still running */
	const char *hwloc;   /* plan mode: the host's lstopo XML */
	const char *gpus, *cores, *plan, *nic, *socket_ifname;
	int ntasks, no_rail_align, cpu_bind, sharp;
	const char *user_env[64]; /* --user-env NAME=VALUE, NULL-terminated */
	int nuser_env;
} bind_args;

enum { MODE_NONE, MODE_AUDIT, MODE_ENFORCE, MODE_RESTORE, MODE_RECOVER, MODE_PLAN };

static void usage(FILE *f)
{
	fprintf(f,
		"usage: topognn-bind --irq-audit [--hca LIST] [--job-cpus LIST] [--json]\n"
		"       topognn-bind --irq-enforce --job ID [--hca LIST] [--job-cpus LIST]\n"
		"                    [--housekeeping LIST] [--state-dir DIR]\n"
		"       topognn-bind --irq-restore --job ID [--state-dir DIR]\n"
		"       topognn-bind --irq-recover [--running ID,...] [--state-dir DIR]\n"
		"       topognn-bind --hwloc FILE [--gpus LIST] [--cores LIST] [--plan STR]\n"
		"                    [--nic auto|none|LIST] [--socket-ifname IF] [--no-rail-align] [--sharp]\n"
		"                    [--cpu-bind [--ntasks N]] [--user-env NAME=VALUE]... [--json]\n"
		"common: [--proc-root DIR] [--sys-root DIR] (a fake tree: no root check)\n"
		"see topognn-bind(1)\n");
}

static void print_error(const topo_error *err)
{
	char buf[TOPO_ERROR_TEXT_LEN + TOPO_ERROR_SOURCE_LEN + 32];

	fprintf(stderr, "topognn-bind: %s\n", topo_error_format(err, buf, sizeof(buf)));
}

static void log_line(void *ctx, const char *msg)
{
	fprintf((FILE *)ctx, "%s\n", msg);
}

/* Split "a,b,c" in place into bind_nic_req entries (NULL list: *n = 0). */
static bind_nic_req *split_hcas(char *list, size_t *n)
{
	bind_nic_req *v;
	size_t cap = 1;
	char *save = NULL;

	*n = 0;
	if (!list)
		return NULL;
	for (const char *p = list; *p; p++)
		cap += *p == ',';
	v = calloc(cap, sizeof(*v));
	if (!v)
		return NULL;
	for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		v[(*n)++].name = tok;
	return v;
}

static bind_irq_set *load(const bind_args *a)
{
	size_t n;
	char *copy = a->hcas ? strdup(a->hcas) : NULL;
	bind_nic_req *req = split_hcas(copy, &n);
	topo_error err;
	bind_irq_set *set;

	if (a->hcas && (!copy || !req || n == 0)) {
		fprintf(stderr, "topognn-bind: --hca needs adapter names like mlx5_0,mlx5_1\n");
		free(copy);
		free(req);
		return NULL;
	}
	set = bind_irq_load(&a->roots, req, n, &err);
	if (!set)
		print_error(&err);
	free(req);
	free(copy);
	return set;
}

static json_t *cpus_json(const bind_cpuset *s)
{
	char *text = bind_cpuset_format(s);
	json_t *j = json_string(text ? text : "");

	free(text);
	return j;
}

static json_t *audit_json(const bind_irq_set *set, const bind_audit *au)
{
	json_t *root = json_object(), *findings = json_array(), *hcas = json_array();

	for (size_t i = 0; i < au->n; i++) {
		const bind_finding *f = &au->v[i];

		json_array_append_new(findings,
				      json_pack("{s:s, s:o, s:s, s:s, s:s}", "kind", f->kind, "irq",
						f->irq < 0 ? json_null() : json_integer(f->irq),
						"hca", f->hca, "cpus", f->cpus, "text", f->text));
	}
	for (size_t k = 0; k < bind_irq_set_nnics(set); k++) {
		const bind_nic_info *nic = bind_irq_set_nic(set, k);
		json_t *irqs = json_array();

		for (size_t i = nic->first; i < nic->first + nic->nirqs; i++) {
			const bind_irq_info *q = bind_irq_set_irq(set, i);

			json_array_append_new(
				irqs, json_pack("{s:i, s:s, s:b, s:I, s:o, s:o}", "irq", q->irq,
						"desc", q->desc, "completion", q->completion, "count",
						(json_int_t)q->count, "affinity", cpus_json(&q->affinity),
						"effective",
						q->has_effective ? cpus_json(&q->effective) : json_null()));
		}
		json_array_append_new(
			hcas, json_pack("{s:s, s:s, s:o, s:o, s:o, s:o}", "name", nic->name, "class",
					nic->sysclass, "pci",
					nic->pci ? json_string(nic->pci) : json_null(), "numa",
					nic->numa >= 0 ? json_integer(nic->numa) : json_null(),
					"local_cpus", cpus_json(&nic->local), "irqs", irqs));
	}
	json_object_set_new(root, "findings", findings);
	json_object_set_new(root, "hcas", hcas);
	return root;
}

static int run_audit(const bind_args *a)
{
	bind_irq_set *set = load(a);
	bind_audit au;
	topo_error err;

	if (!set)
		return 1;
	if (bind_irq_audit(set, a->job_cpus, &au, &err) < 0) {
		print_error(&err);
		bind_irq_set_free(set);
		return 1;
	}
	if (a->json) {
		json_t *j = audit_json(set, &au);

		json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		json_decref(j);
	} else {
		for (size_t i = 0; i < au.n; i++)
			printf("%-16s %s\n", au.v[i].kind, au.v[i].text);
		printf("%zu finding(s) for %zu adapter(s), %zu IRQ(s)\n", au.n,
		       bind_irq_set_nnics(set), bind_irq_set_nirqs(set));
	}
	bind_audit_free(&au);
	bind_irq_set_free(set);
	return 0;
}

static int run_enforce(const bind_args *a)
{
	bind_enforce_opts o = { a->job, a->job_cpus, a->housekeeping, a->state_dir };
	bind_log log = { log_line, stdout };
	bind_irq_set *set;
	topo_error err;
	int n;

	if (!a->job) {
		fprintf(stderr, "topognn-bind: --irq-enforce needs --job ID\n");
		return 1;
	}
	set = load(a);
	if (!set)
		return 1;
	n = bind_irq_enforce(&a->roots, set, &o, &log, &err);
	bind_irq_set_free(set);
	if (n < 0) {
		print_error(&err);
		return 1;
	}
	printf("%d IRQ affinit%s changed\n", n, n == 1 ? "y" : "ies");
	return 0;
}

static int run_restore(const bind_args *a)
{
	bind_log log = { log_line, stdout };
	topo_error err;
	int n;

	if (!a->job) {
		fprintf(stderr, "topognn-bind: --irq-restore needs --job ID\n");
		return 1;
	}
	n = bind_irq_restore(&a->roots, a->state_dir, a->job, &log, &err);
	if (n < 0) {
		print_error(&err);
		return 1;
	}
	if (n == 0)
		printf("job %s: no saved IRQ state in %s\n", a->job, a->state_dir);
	return 0;
}

/* Is `job` one of the comma-separated ids in ctx? */
static int in_running_list(void *ctx, const char *job)
{
	const char *list = ctx;
	size_t n = strlen(job);

	while (list && *list) {
		size_t len = strcspn(list, ",");

		if (len == n && strncmp(list, job, n) == 0)
			return 1;
		list += len + (list[len] == ',');
	}
	return 0;
}

static int run_recover(const bind_args *a)
{
	bind_log log = { log_line, stdout };
	topo_error err;
	int n = bind_irq_recover(&a->roots, a->state_dir, in_running_list, a->running, &log, &err);

	if (n < 0) {
		print_error(&err);
		return 1;
	}
	printf("%d job(s) restored\n", n);
	return 0;
}

/* --user-env NAME=VALUE entries stand for what the user set in the job. */
static const char *user_getenv(void *ctx, const char *name)
{
	const bind_args *a = ctx;
	size_t n = strlen(name);

	for (int i = 0; i < a->nuser_env; i++)
		if (strncmp(a->user_env[i], name, n) == 0 && a->user_env[i][n] == '=')
			return a->user_env[i] + n + 1;
	return NULL;
}

static void print_plan_text(const bind_plan *p)
{
	for (int i = 0; i < p->ngpus; i++)
		printf("gpu%d %s -> %s (rail %d)\n", p->gpus[i].index,
		       p->gpus[i].pci_busid ? p->gpus[i].pci_busid : "?",
		       p->gpus[i].hca ? p->gpus[i].hca : "-", p->gpus[i].rail);
	for (int i = 0; i < p->ntasks; i++)
		printf("task%d gpu %d cpus %s\n", p->tasks[i].task, p->tasks[i].gpu,
		       p->tasks[i].cpus);
	for (int i = 0; i < p->nenv; i++) {
		if (p->env[i].user_value)
			printf("# %s kept as set by the user: %s (planned %s)\n", p->env[i].name,
			       p->env[i].user_value, p->env[i].value);
		else
			printf("%s=%s\n", p->env[i].name, p->env[i].value);
	}
	for (int i = 0; i < p->nnotes; i++)
		printf("# note: %s\n", p->notes[i]);
}

static int run_plan(const bind_args *a)
{
	topo_graph *g = topo_graph_new();
	bind_policy pol = { a->socket_ifname, !a->no_rail_align, a->cpu_bind, a->roots.sys,
			    a->sharp };
	bind_request req = { NULL, 0, a->cores, a->plan, a->nic, a->ntasks, user_getenv, (void *)a };
	topo_error err;
	bind_plan *p = NULL;
	int *gpus = NULL, host, rc = 1;

	if (!g)
		return 1;
	host = topo_load_hwloc_xml(g, a->hwloc, NULL, &err);
	if (host < 0 || bind_parse_gpu_list(a->gpus, "--gpus", &gpus, &req.ngpus, &err) < 0)
		goto out;
	req.gpus = gpus;
	p = bind_plan_make(g, host, &req, &pol, &err);
	if (!p)
		goto out;
	if (a->json) {
		json_t *j;

		if (bind_plan_to_json(p, &j) < 0) {
			topo_error_set(&err, "", 0, "out of memory");
			goto out;
		}
		json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		json_decref(j);
	} else {
		print_plan_text(p);
	}
	rc = 0;
out:
	if (rc)
		print_error(&err);
	bind_plan_free(p);
	free(gpus);
	topo_graph_free(g);
	return rc;
}

/* Saved state records file paths: make the roots absolute so a restore from
 * another directory writes the same files. */
static int absolute_roots(bind_args *a)
{
	static char proc[PATH_MAX], sys[PATH_MAX];

	if (a->roots.proc && !realpath(a->roots.proc, proc)) {
		fprintf(stderr, "topognn-bind: --proc-root %s: no such directory\n", a->roots.proc);
		return -1;
	}
	if (a->roots.sys && !realpath(a->roots.sys, sys)) {
		fprintf(stderr, "topognn-bind: --sys-root %s: no such directory\n", a->roots.sys);
		return -1;
	}
	if (a->roots.proc)
		a->roots.proc = proc;
	if (a->roots.sys)
		a->roots.sys = sys;
	return 0;
}

static int parse_args(int argc, char **argv, bind_args *a)
{
	enum { O_PROC = 256, O_SYS, O_HCA, O_JOBCPUS, O_HK, O_JOB, O_STATE, O_RUNNING, O_HWLOC,
	       O_GPUS, O_CORES, O_PLAN, O_NIC, O_IFNAME, O_NORAIL, O_CPUBIND, O_NTASKS, O_UENV,
	       O_SHARP };
	static const struct option opts[] = {
		{ "irq-audit", no_argument, NULL, 'a' },
		{ "irq-enforce", no_argument, NULL, 'e' },
		{ "irq-restore", no_argument, NULL, 'r' },
		{ "irq-recover", no_argument, NULL, 'R' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "proc-root", required_argument, NULL, O_PROC },
		{ "sys-root", required_argument, NULL, O_SYS },
		{ "hca", required_argument, NULL, O_HCA },
		{ "job-cpus", required_argument, NULL, O_JOBCPUS },
		{ "housekeeping", required_argument, NULL, O_HK },
		{ "job", required_argument, NULL, O_JOB },
		{ "state-dir", required_argument, NULL, O_STATE },
		{ "running", required_argument, NULL, O_RUNNING },
		{ "hwloc", required_argument, NULL, O_HWLOC },
		{ "gpus", required_argument, NULL, O_GPUS },
		{ "cores", required_argument, NULL, O_CORES },
		{ "plan", required_argument, NULL, O_PLAN },
		{ "nic", required_argument, NULL, O_NIC },
		{ "socket-ifname", required_argument, NULL, O_IFNAME },
		{ "no-rail-align", no_argument, NULL, O_NORAIL },
		{ "cpu-bind", no_argument, NULL, O_CPUBIND },
		{ "sharp", no_argument, NULL, O_SHARP },
		{ "ntasks", required_argument, NULL, O_NTASKS },
		{ "user-env", required_argument, NULL, O_UENV },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(a, 0, sizeof(*a));
	a->state_dir = DEFAULT_STATE_DIR;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'a': a->mode = MODE_AUDIT; break;
		case 'e': a->mode = MODE_ENFORCE; break;
		case 'r': a->mode = MODE_RESTORE; break;
		case 'R': a->mode = MODE_RECOVER; break;
		case 'j': a->json = 1; break;
		case 'h': usage(stdout); exit(0);
		case O_PROC: a->roots.proc = optarg; a->roots.fake_tree = 1; break;
		case O_SYS: a->roots.sys = optarg; break;
		case O_HCA: a->hcas = optarg; break;
		case O_JOBCPUS: a->job_cpus = optarg; break;
		case O_HK: a->housekeeping = optarg; break;
		case O_JOB: a->job = optarg; break;
		case O_STATE: a->state_dir = optarg; break;
		case O_RUNNING: a->running = optarg; break;
		case O_HWLOC: a->mode = MODE_PLAN; a->hwloc = optarg; break;
		case O_GPUS: a->gpus = optarg; break;
		case O_CORES: a->cores = optarg; break;
		case O_PLAN: a->plan = optarg; break;
		case O_NIC: a->nic = optarg; break;
		case O_IFNAME: a->socket_ifname = optarg; break;
		case O_NORAIL: a->no_rail_align = 1; break;
		case O_CPUBIND: a->cpu_bind = 1; break;
		case O_SHARP: a->sharp = 1; break;
		case O_NTASKS:
			if (topo_parse_int(optarg, 1, 4096, &a->ntasks) < 0) {
				fprintf(stderr, "topognn-bind: --ntasks wants 1..4096\n");
				return -1;
			}
			break;
		case O_UENV:
			if (!strchr(optarg, '=') || a->nuser_env == 63) {
				fprintf(stderr, "topognn-bind: --user-env wants NAME=VALUE (at most 63)\n");
				return -1;
			}
			a->user_env[a->nuser_env++] = optarg;
			break;
		default: return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "topognn-bind: unexpected argument \"%s\"\n", argv[optind]);
		return -1;
	}
	return a->mode == MODE_NONE ? -1 : absolute_roots(a);
}

int main(int argc, char **argv)
{
	bind_args a;

	if (parse_args(argc, argv, &a) < 0) {
		usage(stderr);
		return 2;
	}
	switch (a.mode) {
	case MODE_AUDIT: return run_audit(&a);
	case MODE_ENFORCE: return run_enforce(&a);
	case MODE_RESTORE: return run_restore(&a);
	case MODE_RECOVER: return run_recover(&a);
	case MODE_PLAN: return run_plan(&a);
	}
	return 2;
}
