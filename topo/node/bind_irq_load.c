/*
 * bind_irq_load: reading a job's adapters and their IRQs (see bind_irq.h):
 * /proc/interrupts, msi_irqs, locality and affinity files. Reads only.
 */
#define _GNU_SOURCE
#include "bind_irq_internal.h"
#include "topo_alloc.h"
#include "topo_num.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* One line of /proc/interrupts for a numbered IRQ. */
typedef struct proc_irq {
	int irq;
	char *desc;
	unsigned long long count;
} proc_irq;

typedef struct proc_table {
	proc_irq *v;
	size_t n, cap;
} proc_table;

static int is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* ------------------------------------------------------- /proc/interrupts */

static void proc_table_free(proc_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].desc);
	free(t->v);
	t->v = NULL;
	t->n = t->cap = 0;
}

static const proc_irq *proc_table_find(const proc_table *t, int irq)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].irq == irq)
			return &t->v[i];
	return NULL;
}

/* Does this token end the chip/hwirq part ("1048576-edge", "PCI-MSI-edge", "2-fasteoi")? */
static int is_trigger_token(const char *tok, size_t len)
{
	static const char *const ends[] = { "-edge", "-level", "-fasteoi", "-simple", "-eoi" };

	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
		size_t n = strlen(ends[i]);

		if (len >= n && memcmp(tok + len - n, ends[i], n) == 0)
			return 1;
	}
	return 0;
}

/* Parse one numbered IRQ line (after "NN:") with `ncpus` counts. */
static int parse_irq_line(proc_table *t, int irq, const char *p, int ncpus, const char *src,
			  int line, topo_error *err)
{
	unsigned long long total = 0;
	const char *tok[64];
	size_t toklen[64], ntok = 0, first_desc;
	const char *end;
	proc_irq *e;

	for (int c = 0; c < ncpus; c++) {
		unsigned long long v = 0;
		const char *start;

		while (*p == ' ' || *p == '\t')
			p++;
		start = p;
		while (isdigit((unsigned char)*p))
			v = v * 10 + (unsigned long long)(*p++ - '0');
		if (p == start || (*p && !isspace((unsigned char)*p))) {
			size_t n = strcspn(start, " \t\n");

			topo_error_set(err, src, line,
				       "irq %d: per-CPU count %d of %d is \"%.*s\", not a number", irq,
				       c + 1, ncpus, n > 32 ? 32 : (int)n, start);
			return -1;
		}
		total += v;
	}
	/* chip, hwirq-trigger, then the actions (the description) */
	end = p + strcspn(p, "\n");
	while (ntok < 64) {
		while (p < end && isspace((unsigned char)*p))
			p++;
		if (p >= end)
			break;
		tok[ntok] = p;
		while (p < end && !isspace((unsigned char)*p))
			p++;
		toklen[ntok] = (size_t)(p - tok[ntok]);
		ntok++;
	}
	first_desc = ntok >= 3 ? 2 : ntok;
	for (size_t i = 0; i < ntok; i++)
		if (is_trigger_token(tok[i], toklen[i])) {
			first_desc = i + 1;
			break;
		}
	if (topo_grow(&t->v, &t->cap, t->n + 1, sizeof(*t->v), 64))
		goto oom;
	e = &t->v[t->n];
	e->irq = irq;
	e->count = total;
	if (first_desc < ntok) {
		const char *d = tok[first_desc];
		const char *dend = tok[ntok - 1] + toklen[ntok - 1];

		e->desc = strndup(d, (size_t)(dend - d));
	} else {
		e->desc = strdup("");
	}
	if (!e->desc)
		goto oom;
	t->n++;
	return 0;
oom:
	topo_error_set(err, src, line, "out of memory");
	return -1;
}

/* Parse /proc/interrupts text: the CPU header row, then numbered IRQ lines
 * (named rows like "NMI:" or "ERR:" are skipped). */
static int parse_interrupts(proc_table *t, const char *text, const char *src, topo_error *err)
{
	const char *p = text;
	int ncpus = 0, line = 1;

	/* header: "           CPU0       CPU1 ..." */
	while (*p && *p != '\n') {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '\n')
			break;
		if (strncmp(p, "CPU", 3) != 0 || !isdigit((unsigned char)p[3])) {
			topo_error_set(err, src, 1, "header should list CPU columns (\"CPU0 CPU1 ...\")");
			return -1;
		}
		p += 3;
		while (isdigit((unsigned char)*p))
			p++;
		ncpus++;
	}
	if (ncpus == 0) {
		topo_error_set(err, src, 1, "header lists no CPU columns (\"CPU0 CPU1 ...\")");
		return -1;
	}
	while (*p) {
		const char *label, *colon;
		int irq;

		if (*p == '\n')
			p++;
		if (!*p)
			break;
		line++;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\n')
			continue; /* blank line */
		label = p;
		colon = p;
		while (*colon && *colon != ':' && !isspace((unsigned char)*colon))
			colon++;
		if (*colon != ':' || colon == label) {
			topo_error_set(err, src, line, "expected \"IRQ:\" at the start of the line");
			return -1;
		}
		irq = bind_irq_parse_uint(label, (size_t)(colon - label));
		if (irq >= 0) {
			if (proc_table_find(t, irq)) {
				topo_error_set(err, src, line, "irq %d is listed twice", irq);
				return -1;
			}
			if (parse_irq_line(t, irq, colon + 1, ncpus, src, line, err) < 0)
				return -1;
		} else {
			for (const char *q = label; q < colon; q++)
				if (!isalnum((unsigned char)*q) && *q != '_') {
					topo_error_set(err, src, line,
						       "\"%.*s\" is neither an IRQ number nor a counter name",
						       (int)(colon - label), label);
					return -1;
				}
		}
		p = colon + strcspn(colon, "\n");
	}
	return 0;
}

/* ---------------------------------------------------------- loading a NIC */

/* Parse the CPU list in the file `path` into *set. Without `present`, a
 * missing file is an error; with it, *present says whether the file was
 * there and a missing one leaves *set alone. Returns 0, or -1 with err. */
static int read_cpuset(const char *path, bind_cpuset *set, int *present, topo_error *err)
{
	int missing = 0, rc;
	char *text = bind_irq_read_all(path, NULL, present ? &missing : NULL, err);

	if (present)
		*present = 0;
	if (!text) {
		if (!missing)
			return -1;
		topo_error_clear(err);
		return 0;
	}
	rc = bind_cpuset_parse(set, text, path, 1, err);
	free(text);
	if (rc < 0)
		return -1;
	if (present)
		*present = 1;
	return 0;
}

static int add_irq(bind_irq_set *set, size_t nic, int irq, const proc_irq *pi,
		   const bind_roots *roots, topo_error *err)
{
	char path[PATH_MAX];
	bind_irq_info *q;

	if (topo_grow(&set->irqs, &set->capirqs, set->nirqs + 1, sizeof(*set->irqs), 32)) {
		topo_error_set(err, "", 0, "out of memory");
		return -1;
	}
	q = &set->irqs[set->nirqs];
	memset(q, 0, sizeof(*q));
	q->irq = irq;
	q->nic = nic;
	q->count = pi->count;
	bind_cpuset_init(&q->affinity);
	bind_cpuset_init(&q->effective);
	bind_cpuset_init(&q->used);
	q->desc = strdup(pi->desc);
	set->nirqs++; /* from here on the set owns it */
	if (!q->desc) {
		topo_error_set(err, "", 0, "out of memory");
		return -1;
	}
	if (bind_irq_path_fmt(path, sizeof(path), err, "%s/irq/%d/smp_affinity_list", bind_irq_proc_root(roots), irq))
		return -1;
	if (read_cpuset(path, &q->affinity, NULL, err))
		return -1;
	if (bind_irq_path_fmt(path, sizeof(path), err, "%s/irq/%d/effective_affinity_list", bind_irq_proc_root(roots),
		     irq))
		return -1;
	if (read_cpuset(path, &q->effective, &q->has_effective, err))
		return -1;
	if (bind_cpuset_copy(&q->used, q->has_effective && bind_cpuset_count(&q->effective)
						   ? &q->effective
						   : &q->affinity) < 0) {
		topo_error_set(err, "", 0, "out of memory");
		return -1;
	}
	return 0;
}

/* The adapter's IRQ numbers: msi_irqs entries, else /proc/interrupts lines naming its PCI address. */
static int nic_irq_numbers(const char *base, const bind_nic_info *nic, const proc_table *pt,
			   int **out, size_t *nout, topo_error *err)
{
	char path[PATH_MAX];
	size_t n = 0, cap = 16;
	int *v = malloc(cap * sizeof(*v));
	DIR *d;
	struct dirent *de;

	if (!v) {
		topo_error_set(err, base, 0, "out of memory");
		return -1;
	}
	if (bind_irq_path_fmt(path, sizeof(path), err, "%s/device/msi_irqs", base))
		goto fail;
	d = opendir(path);
	if (!d && errno != ENOENT) {
		topo_error_set(err, path, 0, "cannot list the adapter's MSI IRQs: %s", strerror(errno));
		goto fail;
	}
	if (d) {
		while ((de = readdir(d))) {
			int irq;

			if (de->d_name[0] == '.')
				continue;
			irq = bind_irq_parse_uint(de->d_name, strlen(de->d_name));
			if (irq < 0) {
				topo_error_set(err, path, 0, "entry \"%s\" is not an IRQ number",
					       de->d_name);
				closedir(d);
				goto fail;
			}
			if (n == cap) {
				int *bigger = realloc(v, 2 * cap * sizeof(*v));

				if (!bigger) {
					closedir(d);
					topo_error_set(err, path, 0, "out of memory");
					goto fail;
				}
				v = bigger;
				cap *= 2;
			}
			v[n++] = irq;
		}
		closedir(d);
	} else if (nic->pci) {
		char needle[64];

		snprintf(needle, sizeof(needle), "@pci:%s", nic->pci);
		for (size_t i = 0; i < pt->n; i++) {
			if (!strstr(pt->v[i].desc, needle))
				continue;
			if (n == cap) {
				int *bigger = realloc(v, 2 * cap * sizeof(*v));

				if (!bigger) {
					topo_error_set(err, path, 0, "out of memory");
					goto fail;
				}
				v = bigger;
				cap *= 2;
			}
			v[n++] = pt->v[i].irq;
		}
	}
	qsort(v, n, sizeof(*v), topo_cmp_int);
	*out = v;
	*nout = n;
	return 0;
fail:
	free(v);
	return -1;
}

/* Fill name/class/pci/numa/local of one adapter. */
static int nic_describe(bind_nic_info *nic, const bind_nic_req *req, const bind_roots *roots,
			char *base, size_t baselen, topo_error *err)
{
	char path[PATH_MAX], real[PATH_MAX];
	char *text;
	int missing, present; /* a NIC without local_cpulist keeps an empty set */

	nic->numa = -1;
	bind_cpuset_init(&nic->local);
	nic->name = strdup(req->name);
	if (!nic->name) {
		topo_error_set(err, "", 0, "out of memory");
		return -1;
	}
	if (!req->name[0] || strchr(req->name, '/') || strcmp(req->name, ".") == 0 ||
	    strcmp(req->name, "..") == 0) {
		topo_error_set(err, "", 0, "\"%s\" is not an adapter name", req->name);
		return -1;
	}
	nic->sysclass = "infiniband";
	if (bind_irq_path_fmt(base, baselen, err, "%s/class/infiniband/%s", bind_irq_sys_root(roots), req->name))
		return -1;
	if (!is_dir(base)) {
		nic->sysclass = "net";
		if (bind_irq_path_fmt(base, baselen, err, "%s/class/net/%s", bind_irq_sys_root(roots), req->name))
			return -1;
	}
	if (!is_dir(base)) {
		topo_error_set(err, "", 0, "no adapter \"%s\" in %s/class/infiniband or %s/class/net",
			       req->name, bind_irq_sys_root(roots), bind_irq_sys_root(roots));
		return -1;
	}
	if (bind_irq_path_fmt(path, sizeof(path), err, "%s/device", base))
		return -1;
	if (realpath(path, real)) {
		const char *slash = strrchr(real, '/');
		const char *bdf = slash ? slash + 1 : real;

		if (strchr(bdf, ':') && strchr(bdf, '.') && !(nic->pci = strdup(bdf))) {
			topo_error_set(err, "", 0, "out of memory");
			return -1;
		}
	}
	if (bind_irq_path_fmt(path, sizeof(path), err, "%s/device/numa_node", base))
		return -1;
	text = bind_irq_read_all(path, NULL, &missing, err);
	if (!text && !missing)
		return -1;
	if (text) {
		size_t n = strlen(text);
		long v;

		while (n > 0 && isspace((unsigned char)text[n - 1]))
			n--; /* sysfs ends the number with a newline */
		if (topo_parse_long_n(text, n, -1, INT_MAX, &v) < 0) {
			char shown[64];

			bind_irq_first_line(text, shown, sizeof(shown));
			free(text);
			topo_error_set(err, path, 1, "\"%s\" is not a NUMA node number", shown);
			return -1;
		}
		nic->numa = (int)v;
		free(text);
	}
	if (req->local_cpus) {
		char src[128];

		snprintf(src, sizeof(src), "local CPUs of %s", req->name);
		return bind_cpuset_parse(&nic->local, req->local_cpus, src, 0, err);
	}
	if (bind_irq_path_fmt(path, sizeof(path), err, "%s/device/local_cpulist", base))
		return -1;
	return read_cpuset(path, &nic->local, &present, err);
}

/* Mark completion IRQs: "comp" (mlx5) or "TxRx"/"rx"/"tx" queues; if none is
 * recognisable, every IRQ of the adapter except async/event ones. */
static void mark_completion(bind_irq_set *set, const bind_nic_info *nic)
{
	size_t found = 0;

	for (size_t i = nic->first; i < nic->first + nic->nirqs; i++) {
		const char *d = set->irqs[i].desc;

		set->irqs[i].completion = strstr(d, "comp") || strstr(d, "TxRx") ||
					  strstr(d, "-rx-") || strstr(d, "-tx-");
		found += (size_t)set->irqs[i].completion;
	}
	if (found)
		return;
	for (size_t i = nic->first; i < nic->first + nic->nirqs; i++)
		set->irqs[i].completion = !strstr(set->irqs[i].desc, "async");
}

static int list_all_hcas(const bind_roots *roots, bind_nic_req **out, size_t *nout,
			 char ***names_out, topo_error *err)
{
	char path[PATH_MAX];
	struct dirent **ents = NULL;
	int n;
	size_t k = 0;

	*out = NULL;
	*names_out = NULL;
	*nout = 0;
	if (bind_irq_path_fmt(path, sizeof(path), err, "%s/class/infiniband", bind_irq_sys_root(roots)))
		return -1;
	n = scandir(path, &ents, NULL, alphasort);
	if (n < 0) {
		if (errno == ENOENT)
			return 0;
		topo_error_set(err, path, 0, "cannot list HCAs: %s", strerror(errno));
		return -1;
	}
	*out = calloc((size_t)n + 1, sizeof(**out));
	*names_out = calloc((size_t)n + 1, sizeof(char *));
	for (int i = 0; i < n; i++) {
		if (*out && *names_out && ents[i]->d_name[0] != '.') {
			(*names_out)[k] = strdup(ents[i]->d_name);
			(*out)[k].name = (*names_out)[k];
			if ((*names_out)[k])
				k++;
		}
		free(ents[i]);
	}
	free(ents);
	*nout = k;
	if (!*out || !*names_out) {
		topo_error_set(err, path, 0, "out of memory");
		return -1;
	}
	return 0;
}

bind_irq_set *bind_irq_load(const bind_roots *roots, const bind_nic_req *nics, size_t n,
			    topo_error *err)
{
	char path[PATH_MAX], base[PATH_MAX];
	bind_nic_req *all = NULL;
	char **names = NULL;
	proc_table pt = { 0 };
	bind_irq_set *set;
	char *text = NULL;
	int ok = 0;

	topo_error_clear(err);
	set = calloc(1, sizeof(*set));
	if (!set) {
		topo_error_set(err, "", 0, "out of memory");
		return NULL;
	}
	if (bind_irq_path_fmt(path, sizeof(path), err, "%s/interrupts", bind_irq_proc_root(roots)))
		goto out;
	text = bind_irq_read_all(path, NULL, NULL, err);
	if (!text || parse_interrupts(&pt, text, path, err) < 0)
		goto out;
	if (n == 0) {
		if (list_all_hcas(roots, &all, &n, &names, err) < 0)
			goto out;
		nics = all;
	}
	set->nics = calloc(n ? n : 1, sizeof(*set->nics));
	if (!set->nics) {
		topo_error_set(err, "", 0, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		bind_nic_info *nic = &set->nics[i];
		int *irqs = NULL;
		size_t nirqs = 0;

		set->nnics++;
		for (size_t j = 0; j < i; j++)
			if (strcmp(nics[j].name, nics[i].name) == 0) {
				topo_error_set(err, "", 0, "adapter \"%s\" is named twice",
					       nics[i].name);
				goto out;
			}
		if (nic_describe(nic, &nics[i], roots, base, sizeof(base), err) < 0 ||
		    nic_irq_numbers(base, nic, &pt, &irqs, &nirqs, err) < 0)
			goto out;
		nic->first = set->nirqs;
		for (size_t j = 0; j < nirqs; j++) {
			const proc_irq *pi = proc_table_find(&pt, irqs[j]);

			if (!pi)
				continue; /* allocated but never requested: no traffic */
			if (add_irq(set, i, irqs[j], pi, roots, err) < 0) {
				free(irqs);
				goto out;
			}
			nic->nirqs++;
		}
		free(irqs);
		mark_completion(set, nic);
	}
	ok = 1;
out:
	free(text);
	proc_table_free(&pt);
	free(all);
	for (size_t i = 0; names && names[i]; i++)
		free(names[i]);
	free(names);
	if (ok)
		return set;
	bind_irq_set_free(set);
	return NULL;
}

void bind_irq_set_free(bind_irq_set *set)
{
	if (!set)
		return;
	for (size_t i = 0; i < set->nnics; i++) {
		free(set->nics[i].name);
		free(set->nics[i].pci);
		bind_cpuset_free(&set->nics[i].local);
	}
	for (size_t i = 0; i < set->nirqs; i++) {
		free(set->irqs[i].desc);
		bind_cpuset_free(&set->irqs[i].affinity);
		bind_cpuset_free(&set->irqs[i].effective);
		bind_cpuset_free(&set->irqs[i].used);
	}
	free(set->nics);
	free(set->irqs);
	free(set);
}

size_t bind_irq_set_nnics(const bind_irq_set *set)
{
	return set->nnics;
}

const bind_nic_info *bind_irq_set_nic(const bind_irq_set *set, size_t i)
{
	return i < set->nnics ? &set->nics[i] : NULL;
}

size_t bind_irq_set_nirqs(const bind_irq_set *set)
{
	return set->nirqs;
}

const bind_irq_info *bind_irq_set_irq(const bind_irq_set *set, size_t i)
{
	return i < set->nirqs ? &set->irqs[i] : NULL;
}
