/* bind_irq: IRQ audit, enforce, restore and recover for a job's adapters (see bind_irq.h). */
#define _GNU_SOURCE
#include "bind_irq.h"

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

#define MAX_PROC_FILE (16u << 20) /* /proc/interrupts of a 1k-CPU host is a few MB */

struct bind_irq_set {
	bind_nic_info *nics;
	size_t nnics;
	bind_irq_info *irqs;
	size_t nirqs, capirqs;
};

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

/* ---------------------------------------------------------------- helpers */

static const char *proc_root(const bind_roots *r)
{
	return r && r->proc ? r->proc : "/proc";
}

static const char *sys_root(const bind_roots *r)
{
	return r && r->sys ? r->sys : "/sys";
}

static void say(const bind_log *log, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const bind_log *log, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!log || !log->fn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log->fn(log->ctx, msg);
}

static int path_fmt(char *buf, size_t len, topo_error *err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int path_fmt(char *buf, size_t len, topo_error *err, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len) {
		topo_error_set(err, buf, 0, "path is longer than %zu bytes", len - 1);
		return -1;
	}
	return 0;
}

/*
 * Read a whole file (proc files report size 0, so read until EOF) into a
 * NUL-terminated buffer. Returns NULL with `err` naming the file when it is
 * missing, a directory, unreadable or too large; *missing is set (if not
 * NULL) when it does not exist.
 */
static char *read_fd(int fd, const char *path, size_t *len_out, topo_error *err);

static char *read_all(const char *path, size_t *len_out, int *missing, topo_error *err)
{
	int fd;

	if (missing)
		*missing = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (missing && errno == ENOENT)
			*missing = 1;
		topo_error_set(err, path, 0, "cannot open: %s", strerror(errno));
		return NULL;
	}
	return read_fd(fd, path, len_out, err);
}

/* Is a file ours to trust: a regular file (a directory when `dir`) owned by
 * us (root in production) that neither group nor others may write? */
static int trusted_stat(const struct stat *st, int dir, const char *path, topo_error *err)
{
	if ((dir ? S_ISDIR(st->st_mode) : S_ISREG(st->st_mode)) && st->st_uid == geteuid() &&
	    !(st->st_mode & (S_IWGRP | S_IWOTH)))
		return 0;
	topo_error_set(err, path, 0,
		       "not trusted: want a %s owned by uid %u, not writable by group or others (it is uid %u, mode %04o); ignored",
		       dir ? "directory" : "regular file", (unsigned)geteuid(),
		       (unsigned)st->st_uid, (unsigned)(st->st_mode & 07777));
	return -1;
}

static int trusted_fd(int fd, const char *path, topo_error *err)
{
	struct stat st;

	if (fstat(fd, &st) < 0) {
		topo_error_set(err, path, 0, "cannot stat: %s", strerror(errno));
		return -1;
	}
	return trusted_stat(&st, 0, path, err);
}

/* Read one of our own files (state): never through a symlink, and only when
 * trusted_fd() accepts it. */
static char *read_owned(const char *path, topo_error *err)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0) {
		topo_error_set(err, path, 0, "cannot open%s: %s",
			       errno == ELOOP ? " (a symlink; ignored)" : "", strerror(errno));
		return NULL;
	}
	if (trusted_fd(fd, path, err) < 0) {
		close(fd);
		return NULL;
	}
	return read_fd(fd, path, NULL, err);
}

/* Read fd to EOF into a NUL-terminated buffer; closes fd. */
static char *read_fd(int fd, const char *path, size_t *len_out, topo_error *err)
{
	size_t cap = 4096, len = 0;
	char *buf;

	buf = malloc(cap);
	if (!buf) {
		close(fd);
		topo_error_set(err, path, 0, "out of memory reading the file");
		return NULL;
	}
	for (;;) {
		ssize_t got;

		if (len + 1 >= cap) {
			char *bigger;

			if (cap >= MAX_PROC_FILE) {
				topo_error_set(err, path, 0, "file is larger than %u bytes", MAX_PROC_FILE);
				goto fail;
			}
			bigger = realloc(buf, cap * 2);
			if (!bigger) {
				topo_error_set(err, path, 0, "out of memory reading the file");
				goto fail;
			}
			buf = bigger;
			cap *= 2;
		}
		got = read(fd, buf + len, cap - len - 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			topo_error_set(err, path, 0, "cannot read: %s", strerror(errno));
			goto fail;
		}
		if (got == 0)
			break;
		len += (size_t)got;
	}
	close(fd);
	buf[len] = '\0';
	if (len_out)
		*len_out = len;
	return buf;
fail:
	close(fd);
	free(buf);
	return NULL;
}

/* Write `len` bytes to an existing file in one write() (proc files want that). */
static int write_all(const char *path, const char *data, size_t len, topo_error *err)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	ssize_t put;

	if (fd < 0) {
		topo_error_set(err, path, 0, "cannot open for writing: %s", strerror(errno));
		return -1;
	}
	do
		put = write(fd, data, len);
	while (put < 0 && errno == EINTR);
	if (put < 0 || (size_t)put != len) {
		topo_error_set(err, path, 0, "cannot write %zu bytes: %s", len,
			       put < 0 ? strerror(errno) : "short write");
		close(fd);
		return -1;
	}
	if (close(fd) < 0) {
		topo_error_set(err, path, 0, "cannot write: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static int is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Parse a non-negative decimal int filling the whole string; -1 if it is not one. */
static int parse_uint(const char *s, size_t len)
{
	long v = 0;

	if (len == 0)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
		if (v > INT_MAX)
			return -1;
	}
	return (int)v;
}

/* Copy the first line of `s` without trailing white space into `out` (for messages). */
static void first_line(const char *s, char *out, size_t len)
{
	size_t n = strcspn(s, "\n");

	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	if (n >= len)
		n = len - 1;
	memcpy(out, s, n);
	out[n] = '\0';
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
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		proc_irq *bigger = realloc(t->v, cap * sizeof(*bigger));

		if (!bigger)
			goto oom;
		t->v = bigger;
		t->cap = cap;
	}
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
		irq = parse_uint(label, (size_t)(colon - label));
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

static int add_irq(bind_irq_set *set, size_t nic, int irq, const proc_irq *pi,
		   const bind_roots *roots, topo_error *err)
{
	char path[PATH_MAX];
	bind_irq_info *q;
	char *text;
	int missing;

	if (set->nirqs == set->capirqs) {
		size_t cap = set->capirqs ? set->capirqs * 2 : 32;
		bind_irq_info *bigger = realloc(set->irqs, cap * sizeof(*bigger));

		if (!bigger) {
			topo_error_set(err, "", 0, "out of memory");
			return -1;
		}
		set->irqs = bigger;
		set->capirqs = cap;
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
	if (path_fmt(path, sizeof(path), err, "%s/irq/%d/smp_affinity_list", proc_root(roots), irq))
		return -1;
	text = read_all(path, NULL, NULL, err);
	if (!text)
		return -1;
	if (bind_cpuset_parse(&q->affinity, text, path, 1, err) < 0) {
		free(text);
		return -1;
	}
	free(text);
	if (path_fmt(path, sizeof(path), err, "%s/irq/%d/effective_affinity_list", proc_root(roots),
		     irq))
		return -1;
	text = read_all(path, NULL, &missing, err);
	if (!text && !missing)
		return -1;
	if (text) {
		int rc = bind_cpuset_parse(&q->effective, text, path, 1, err);

		free(text);
		if (rc < 0)
			return -1;
		q->has_effective = 1;
	}
	topo_error_clear(err);
	if (bind_cpuset_copy(&q->used, q->has_effective && bind_cpuset_count(&q->effective)
						   ? &q->effective
						   : &q->affinity) < 0) {
		topo_error_set(err, "", 0, "out of memory");
		return -1;
	}
	return 0;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
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
	if (path_fmt(path, sizeof(path), err, "%s/device/msi_irqs", base))
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
			irq = parse_uint(de->d_name, strlen(de->d_name));
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
	qsort(v, n, sizeof(*v), cmp_int);
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
	int missing;

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
	if (path_fmt(base, baselen, err, "%s/class/infiniband/%s", sys_root(roots), req->name))
		return -1;
	if (!is_dir(base)) {
		nic->sysclass = "net";
		if (path_fmt(base, baselen, err, "%s/class/net/%s", sys_root(roots), req->name))
			return -1;
	}
	if (!is_dir(base)) {
		topo_error_set(err, "", 0, "no adapter \"%s\" in %s/class/infiniband or %s/class/net",
			       req->name, sys_root(roots), sys_root(roots));
		return -1;
	}
	if (path_fmt(path, sizeof(path), err, "%s/device", base))
		return -1;
	if (realpath(path, real)) {
		const char *slash = strrchr(real, '/');
		const char *bdf = slash ? slash + 1 : real;

		if (strchr(bdf, ':') && strchr(bdf, '.') && !(nic->pci = strdup(bdf))) {
			topo_error_set(err, "", 0, "out of memory");
			return -1;
		}
	}
	if (path_fmt(path, sizeof(path), err, "%s/device/numa_node", base))
		return -1;
	text = read_all(path, NULL, &missing, err);
	if (!text && !missing)
		return -1;
	if (text) {
		char *end;
		long v = strtol(text, &end, 10);

		while (isspace((unsigned char)*end))
			end++;
		if (end == text || *end || v < -1 || v > INT_MAX) {
			char shown[64];

			first_line(text, shown, sizeof(shown));
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
	if (path_fmt(path, sizeof(path), err, "%s/device/local_cpulist", base))
		return -1;
	text = read_all(path, NULL, &missing, err);
	if (!text && !missing)
		return -1;
	if (text) {
		int rc = bind_cpuset_parse(&nic->local, text, path, 1, err);

		free(text);
		if (rc < 0)
			return -1;
	}
	topo_error_clear(err);
	return 0;
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
	if (path_fmt(path, sizeof(path), err, "%s/class/infiniband", sys_root(roots)))
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

	topo_error_clear(err);
	set = calloc(1, sizeof(*set));
	if (!set) {
		topo_error_set(err, "", 0, "out of memory");
		return NULL;
	}
	if (path_fmt(path, sizeof(path), err, "%s/interrupts", proc_root(roots)))
		goto fail;
	text = read_all(path, NULL, NULL, err);
	if (!text || parse_interrupts(&pt, text, path, err) < 0)
		goto fail;
	if (n == 0) {
		if (list_all_hcas(roots, &all, &n, &names, err) < 0)
			goto fail;
		nics = all;
	}
	set->nics = calloc(n ? n : 1, sizeof(*set->nics));
	if (!set->nics) {
		topo_error_set(err, "", 0, "out of memory");
		goto fail;
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
				goto fail;
			}
		if (nic_describe(nic, &nics[i], roots, base, sizeof(base), err) < 0 ||
		    nic_irq_numbers(base, nic, &pt, &irqs, &nirqs, err) < 0)
			goto fail;
		nic->first = set->nirqs;
		for (size_t j = 0; j < nirqs; j++) {
			const proc_irq *pi = proc_table_find(&pt, irqs[j]);

			if (!pi)
				continue; /* allocated but never requested: no traffic */
			if (add_irq(set, i, irqs[j], pi, roots, err) < 0) {
				free(irqs);
				goto fail;
			}
			nic->nirqs++;
		}
		free(irqs);
		mark_completion(set, nic);
	}
	free(text);
	proc_table_free(&pt);
	free(all);
	for (size_t i = 0; names && names[i]; i++)
		free(names[i]);
	free(names);
	return set;
fail:
	free(text);
	proc_table_free(&pt);
	free(all);
	for (size_t i = 0; names && names[i]; i++)
		free(names[i]);
	free(names);
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

/* ------------------------------------------------------------------ audit */

static int add_finding(bind_audit *a, const char *kind, int irq, const char *hca,
		       const bind_cpuset *cpus, topo_error *err, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));
static int add_finding(bind_audit *a, const char *kind, int irq, const char *hca,
		       const bind_cpuset *cpus, topo_error *err, const char *fmt, ...)
{
	bind_finding *f, *bigger = realloc(a->v, (a->n + 1) * sizeof(*bigger));
	char text[512];
	va_list ap;

	if (!bigger)
		goto oom;
	a->v = bigger;
	f = &a->v[a->n];
	f->kind = kind;
	f->irq = irq;
	f->hca = hca;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	f->cpus = bind_cpuset_format(cpus);
	f->text = strdup(text);
	a->n++;
	if (!f->cpus || !f->text)
		goto oom;
	return 0;
oom:
	topo_error_set(err, "", 0, "out of memory");
	return -1;
}

void bind_audit_free(bind_audit *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n; i++) {
		free(a->v[i].cpus);
		free(a->v[i].text);
	}
	free(a->v);
	a->v = NULL;
	a->n = 0;
}

/* The IRQs of adapters other than q's that fire on one of q's cores; their
 * cores are collected into `shared`. Returns how many, naming one of them. */
static size_t others_on_cores(const bind_irq_set *set, const bind_irq_info *q, bind_cpuset *shared,
			      size_t *other_nic)
{
	size_t n = 0;
	bind_cpuset tmp;

	bind_cpuset_init(&tmp);
	bind_cpuset_clear(shared);
	for (size_t j = 0; j < set->nirqs; j++) {
		const bind_irq_info *o = &set->irqs[j];

		if (o->nic == q->nic || !bind_cpuset_intersects(&q->used, &o->used))
			continue;
		if (bind_cpuset_copy(&tmp, &q->used) == 0) {
			bind_cpuset_intersect(&tmp, &o->used);
			for (int c = bind_cpuset_next(&tmp, -1); c >= 0; c = bind_cpuset_next(&tmp, c))
				bind_cpuset_add(shared, c);
		}
		if (n++ == 0)
			*other_nic = o->nic;
	}
	bind_cpuset_free(&tmp);
	return n;
}

static int audit_irq(const bind_irq_set *set, const bind_irq_info *q, const bind_cpuset *job,
		     bind_cpuset *scratch, bind_audit *out, topo_error *err)
{
	const bind_nic_info *nic = &set->nics[q->nic];
	size_t other = 0, nothers = others_on_cores(set, q, scratch, &other);
	char *cores = bind_cpuset_format(&q->used);
	int rc = -1;

	if (!cores) {
		topo_error_set(err, "", 0, "out of memory");
		return -1;
	}
	if (nothers && add_finding(out, BIND_SHARED_CORE, q->irq, nic->name, scratch, err,
				   "irq %d (%s) shares core(s) %s with %zu IRQ(s) of another adapter (%s)",
				   q->irq, nic->name, cores, nothers, set->nics[other].name) < 0)
		goto done;
	if (bind_cpuset_count(&nic->local) && bind_cpuset_count(&q->used) &&
	    !bind_cpuset_intersects(&q->used, &nic->local)) {
		char *local = bind_cpuset_format(&nic->local);

		rc = add_finding(out, BIND_REMOTE_NUMA, q->irq, nic->name, &q->used, err,
				 "irq %d (%s) fires on core(s) %s, none of them local to %s (NUMA %d, CPUs %s)",
				 q->irq, nic->name, cores, nic->name, nic->numa, local ? local : "?");
		free(local);
		if (rc < 0)
			goto done;
		rc = -1;
	}
	if (bind_cpuset_intersects(&q->used, job)) {
		if (bind_cpuset_copy(scratch, &q->used) < 0) {
			topo_error_set(err, "", 0, "out of memory");
			goto done;
		}
		bind_cpuset_intersect(scratch, job);
		if (add_finding(out, BIND_ON_JOB_CORES, q->irq, nic->name, scratch, err,
				"irq %d (%s) fires on core(s) %s where the job computes", q->irq,
				nic->name, cores) < 0)
			goto done;
	}
	rc = 0;
done:
	free(cores);
	return rc;
}

/* all-on-one-core: 2+ completion IRQs whose cores together are one core. */
static int audit_nic(const bind_irq_set *set, size_t k, bind_cpuset *scratch, bind_audit *out,
		     topo_error *err)
{
	const bind_nic_info *nic = &set->nics[k];
	size_t ncomp = 0;

	bind_cpuset_clear(scratch);
	for (size_t i = nic->first; i < nic->first + nic->nirqs; i++) {
		const bind_irq_info *q = &set->irqs[i];

		if (!q->completion)
			continue;
		ncomp++;
		for (int c = bind_cpuset_next(&q->used, -1); c >= 0; c = bind_cpuset_next(&q->used, c))
			if (bind_cpuset_add(scratch, c) < 0) {
				topo_error_set(err, "", 0, "out of memory");
				return -1;
			}
	}
	if (ncomp < 2 || bind_cpuset_count(scratch) != 1)
		return 0;
	return add_finding(out, BIND_ALL_ON_ONE_CORE, -1, nic->name, scratch, err,
			   "all %zu completion IRQs of %s fire on core %d", ncomp, nic->name,
			   bind_cpuset_next(scratch, -1));
}

int bind_irq_audit(const bind_irq_set *set, const char *job_cpus, bind_audit *out,
		   topo_error *err)
{
	bind_cpuset job, scratch;
	int rc = -1;

	out->v = NULL;
	out->n = 0;
	topo_error_clear(err);
	bind_cpuset_init(&job);
	bind_cpuset_init(&scratch);
	if (job_cpus && bind_cpuset_parse(&job, job_cpus, "job CPUs", 0, err) < 0)
		goto done;
	for (size_t i = 0; i < set->nirqs; i++)
		if (audit_irq(set, &set->irqs[i], &job, &scratch, out, err) < 0)
			goto done;
	for (size_t k = 0; k < set->nnics; k++)
		if (audit_nic(set, k, &scratch, out, err) < 0)
			goto done;
	rc = 0;
done:
	bind_cpuset_free(&job);
	bind_cpuset_free(&scratch);
	if (rc < 0)
		bind_audit_free(out);
	return rc;
}

/* ------------------------------------------------------------ saved state */

#define STATE_MAGIC "topognn-irq-state 1"

/* One file enforce changed: where, whose, and its bytes before. */
typedef struct saved_file {
	int irq;
	char hca[64];
	char *path;
	char *orig;
	size_t origlen;
	int cpu; /* enforce: the new core */
} saved_file;

typedef struct saved_list {
	saved_file *v;
	size_t n;
} saved_list;

static void saved_list_free(saved_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].path);
		free(l->v[i].orig);
	}
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

static saved_file *saved_list_add(saved_list *l)
{
	saved_file *bigger = realloc(l->v, (l->n + 1) * sizeof(*bigger));

	if (!bigger)
		return NULL;
	l->v = bigger;
	memset(&l->v[l->n], 0, sizeof(l->v[l->n]));
	return &l->v[l->n++];
}

int bind_name_ok(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (n == 0 || n > 64 || name[0] == '.')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr("._-", name[i]))
			return 0;
	return strstr(name, "..") == NULL;
}

static int valid_job_id(const char *id)
{
	return bind_name_ok(id);
}

/* The state directory must be ours (trusted_stat), else anyone could plant
 * or swap state. */
static int state_dir_ok(const char *dir, topo_error *err)
{
	struct stat st;

	if (stat(dir, &st) < 0) {
		topo_error_set(err, dir, 0, "state directory: %s", strerror(errno));
		return -1;
	}
	return trusted_stat(&st, 1, dir, err);
}

static int state_path(char *buf, size_t len, const char *dir, const char *job_id, topo_error *err)
{
	if (!valid_job_id(job_id)) {
		topo_error_set(err, "", 0,
			       "job id \"%s\" is not 1-64 characters of letters, digits, '.', '_', '-'",
			       job_id ? job_id : "(null)");
		return -1;
	}
	return path_fmt(buf, len, err, "%s/job-%s.state", dir, job_id);
}

/* The only file enforce writes and restore may write back. */
static int irq_file_path(char *buf, size_t len, const bind_roots *roots, int irq, topo_error *err)
{
	return path_fmt(buf, len, err, "%s/irq/%d/smp_affinity_list", proc_root(roots), irq);
}

static int fsync_dir(const char *dir, topo_error *err)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 || fsync(fd) < 0) {
		topo_error_set(err, dir, 0, "cannot sync the state directory: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/* Append `s` (len bytes) to a growing buffer; -1 when out of memory. */
static int buf_put(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
	if (*len + n + 1 > *cap) {
		size_t cap2 = *cap ? *cap : 256;
		char *bigger;

		while (*len + n + 1 > cap2)
			cap2 *= 2;
		bigger = realloc(*buf, cap2);
		if (!bigger)
			return -1;
		*buf = bigger;
		*cap = cap2;
	}
	memcpy(*buf + *len, s, n);
	*len += n;
	(*buf)[*len] = '\0';
	return 0;
}

static char *state_text(const char *job_id, const saved_list *l)
{
	char *buf = NULL, line[PATH_MAX + 128];
	size_t len = 0, cap = 0;
	int ok;

	snprintf(line, sizeof(line),
		 "# topognn: IRQ affinities before job %s changed them; restored at job end\n"
		 STATE_MAGIC "\njob %s\n", job_id, job_id);
	ok = buf_put(&buf, &len, &cap, line, strlen(line)) == 0;
	for (size_t i = 0; ok && i < l->n; i++) {
		const saved_file *f = &l->v[i];

		snprintf(line, sizeof(line), "save %d %s ", f->irq, f->hca);
		ok = buf_put(&buf, &len, &cap, line, strlen(line)) == 0;
		for (size_t b = 0; ok && b < f->origlen; b++) {
			snprintf(line, sizeof(line), "%02x", (unsigned char)f->orig[b]);
			ok = buf_put(&buf, &len, &cap, line, 2) == 0;
		}
		if (ok && f->origlen == 0)
			ok = buf_put(&buf, &len, &cap, "-", 1) == 0;
		snprintf(line, sizeof(line), " %s\n", f->path);
		ok = ok && buf_put(&buf, &len, &cap, line, strlen(line)) == 0;
	}
	snprintf(line, sizeof(line), "end %zu\n", l->n);
	ok = ok && buf_put(&buf, &len, &cap, line, strlen(line)) == 0;
	if (!ok) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Write the state file durably: a new temp file (mkostemp), fsync, rename
 * (which replaces a name, never follows it), fsync of the directory. */
static int state_write(const char *dir, const char *path, const char *job_id, const saved_list *l,
		       topo_error *err)
{
	char tmp[PATH_MAX];
	char *text = state_text(job_id, l);
	size_t len, off = 0;
	int fd;

	if (!text) {
		topo_error_set(err, path, 0, "out of memory");
		return -1;
	}
	len = strlen(text);
	if (path_fmt(tmp, sizeof(tmp), err, "%s.tmp.XXXXXX", path)) {
		free(text);
		return -1;
	}
	/* mkstemp: a new name, O_CREAT|O_EXCL (never a planted file or symlink), mode 0600 */
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		topo_error_set(err, tmp, 0, "cannot create the state file: %s", strerror(errno));
		free(text);
		return -1;
	}
	while (off < len) {
		ssize_t put = write(fd, text + off, len - off);

		if (put < 0 && errno == EINTR)
			continue;
		if (put <= 0)
			break;
		off += (size_t)put;
	}
	free(text);
	if (off < len || fsync(fd) < 0) {
		topo_error_set(err, tmp, 0, "cannot write the state file: %s", strerror(errno));
		close(fd);
		unlink(tmp);
		return -1;
	}
	if (close(fd) < 0 || rename(tmp, path) < 0) {
		topo_error_set(err, path, 0, "cannot put the state file in place: %s", strerror(errno));
		unlink(tmp);
		return -1;
	}
	return fsync_dir(dir, err);
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* One "save <irq> <hca> <hex> <path>" line. */
static int state_parse_save(saved_list *l, char *p, const char *src, int line, topo_error *err)
{
	char *irq_s = strtok_r(p, " ", &p), *hca = strtok_r(NULL, " ", &p);
	char *hex = strtok_r(NULL, " ", &p);
	saved_file *f;
	size_t hexlen;

	if (!irq_s || !hca || !hex || !p || !*p || parse_uint(irq_s, strlen(irq_s)) < 0 ||
	    strlen(hca) >= sizeof(f->hca)) {
		topo_error_set(err, src, line, "expected \"save IRQ ADAPTER HEXBYTES PATH\"");
		return -1;
	}
	hexlen = strcmp(hex, "-") == 0 ? 0 : strlen(hex);
	if (hexlen % 2) {
		topo_error_set(err, src, line, "saved bytes \"%.32s\" are not hex pairs", hex);
		return -1;
	}
	f = saved_list_add(l);
	if (!f || !(f->path = strdup(p)) || !(f->orig = malloc(hexlen / 2 + 1))) {
		topo_error_set(err, src, line, "out of memory");
		return -1;
	}
	f->irq = parse_uint(irq_s, strlen(irq_s));
	snprintf(f->hca, sizeof(f->hca), "%s", hca);
	for (size_t i = 0; i < hexlen; i += 2) {
		int hi = hexval(hex[i]), lo = hexval(hex[i + 1]);

		if (hi < 0 || lo < 0) {
			topo_error_set(err, src, line, "saved bytes \"%.32s\" are not hex pairs", hex);
			return -1;
		}
		f->orig[i / 2] = (char)(hi * 16 + lo);
	}
	f->origlen = hexlen / 2;
	f->orig[f->origlen] = '\0';
	return 0;
}

/* Read a state file; `job_id` (if not NULL) must match its "job" line. */
static int state_read(const char *path, const char *job_id, char *job_out, size_t job_len,
		      saved_list *l, topo_error *err)
{
	char *text = read_owned(path, err), *p, *next;
	int line = 0, have_magic = 0, have_job = 0, ended = 0;

	if (!text)
		return -1;
	for (p = text; p && *p; p = next) {
		next = strchr(p, '\n');
		if (next)
			*next++ = '\0';
		line++;
		if (ended) {
			if (*p) {
				topo_error_set(err, path, line, "text after the \"end\" line");
				goto fail;
			}
		} else if (p[0] == '#' || p[0] == '\0') {
			continue;
		} else if (!have_magic) {
			if (strcmp(p, STATE_MAGIC) != 0) {
				topo_error_set(err, path, line, "expected \"" STATE_MAGIC "\"");
				goto fail;
			}
			have_magic = 1;
		} else if (!have_job) {
			if (strncmp(p, "job ", 4) != 0 || !valid_job_id(p + 4) ||
			    (job_id && strcmp(p + 4, job_id) != 0)) {
				topo_error_set(err, path, line, "expected \"job %s\"",
					       job_id ? job_id : "ID");
				goto fail;
			}
			snprintf(job_out, job_len, "%s", p + 4);
			have_job = 1;
		} else if (strncmp(p, "save ", 5) == 0) {
			if (state_parse_save(l, p + 5, path, line, err) < 0)
				goto fail;
		} else if (strncmp(p, "end ", 4) == 0) {
			if (parse_uint(p + 4, strlen(p + 4)) != (int)l->n) {
				topo_error_set(err, path, line, "\"%s\" but %zu files are saved", p,
					       l->n);
				goto fail;
			}
			ended = 1;
		} else {
			topo_error_set(err, path, line, "expected \"save ...\" or \"end N\"");
			goto fail;
		}
	}
	if (!ended) {
		topo_error_set(err, path, line, "state file is incomplete (no \"end\" line)");
		goto fail;
	}
	free(text);
	return 0;
fail:
	free(text);
	saved_list_free(l);
	return -1;
}

static int check_root(const bind_roots *roots, const char *what, topo_error *err)
{
	if ((!roots || !roots->fake_tree) && geteuid() != 0) {
		topo_error_set(err, "", 0, "%s changes /proc/irq and needs root (euid 0)", what);
		return -1;
	}
	return 0;
}

/* Current content of an IRQ file as one trimmed line, for log messages. */
static void current_text(const char *path, char *out, size_t len)
{
	char *text = read_all(path, NULL, NULL, NULL);

	snprintf(out, len, "?");
	if (text)
		first_line(text, out, len);
	free(text);
}

/* Is `irq` one of adapter `hca`'s IRQs on this node, as bind_irq_load reads them? */
static int irq_of_adapter(const bind_roots *roots, const char *hca, int irq)
{
	bind_nic_req req = { hca, NULL };
	topo_error e;
	bind_irq_set *set = bind_irq_load(roots, &req, 1, &e);
	int found = 0;

	for (size_t i = 0; set && i < set->nirqs; i++)
		found |= set->irqs[i].irq == irq;
	bind_irq_set_free(set);
	return found;
}

/* Write every saved file of a state file back; keep going past failures.
 * Only the smp_affinity_list of an IRQ of the adapter the line names is
 * ever written: a state file cannot reach any other IRQ or file. */
static int state_apply(const bind_roots *roots, const char *path, const saved_list *l,
		       const bind_log *log, topo_error *err)
{
	int failed = 0;

	for (size_t i = 0; i < l->n; i++) {
		const saved_file *f = &l->v[i];
		char want[PATH_MAX], now[64], before[64];
		topo_error e;

		if (irq_file_path(want, sizeof(want), roots, f->irq, &e) < 0 ||
		    strcmp(want, f->path) != 0) {
			if (!failed++)
				topo_error_set(err, path, 0,
					       "saved path %s is not %s; it was not written",
					       f->path, want);
			continue;
		}
		if (!irq_of_adapter(roots, f->hca, f->irq)) {
			if (!failed++)
				topo_error_set(err, path, 0,
					       "irq %d is not an IRQ of adapter %s on this node; it was not written",
					       f->irq, f->hca);
			continue;
		}
		current_text(f->path, now, sizeof(now));
		if (write_all(f->path, f->orig, f->origlen, &e) < 0) {
			if (!failed++)
				*err = e;
			continue;
		}
		first_line(f->orig, before, sizeof(before));
		say(log, "irq %d (%s) smp_affinity_list %s -> %s, restored from %s", f->irq, f->hca,
		    now, before, path);
	}
	return failed ? -1 : 0;
}

/* Restore one state file and remove it. Returns files restored or -1. */
static int state_restore(const bind_roots *roots, const char *dir, const char *path,
			 const char *job_id, const bind_log *log, topo_error *err)
{
	saved_list l = { 0 };
	char job[80];
	int n;

	if (state_read(path, job_id, job, sizeof(job), &l, err) < 0)
		return -1;
	if (state_apply(roots, path, &l, log, err) < 0) {
		saved_list_free(&l);
		return -1;
	}
	n = (int)l.n;
	saved_list_free(&l);
	if (unlink(path) < 0) {
		topo_error_set(err, path, 0, "restored, but cannot remove the state file: %s",
			       strerror(errno));
		return -1;
	}
	if (fsync_dir(dir, err) < 0)
		return -1;
	say(log, "job %s: %d IRQ affinit%s restored, %s removed", job, n, n == 1 ? "y" : "ies",
	    path);
	return n;
}

int bind_irq_restore(const bind_roots *roots, const char *state_dir, const char *job_id,
		     const bind_log *log, topo_error *err)
{
	char path[PATH_MAX];

	topo_error_clear(err);
	if (state_path(path, sizeof(path), state_dir, job_id, err) < 0)
		return -1;
	if (access(path, F_OK) < 0 && errno == ENOENT)
		return 0;
	if (check_root(roots, "IRQ restore", err) < 0 || state_dir_ok(state_dir, err) < 0)
		return -1;
	return state_restore(roots, state_dir, path, job_id, log, err);
}

/* The job id of a "job-<id>.state" name, or NULL. */
static const char *state_name_job(const char *name, char *job, size_t len)
{
	size_t n = strlen(name);

	if (n <= 10 || strncmp(name, "job-", 4) != 0 || strcmp(name + n - 6, ".state") != 0)
		return NULL;
	snprintf(job, len, "%.*s", (int)(n - 10), name + 4);
	return valid_job_id(job) ? job : NULL;
}

int bind_irq_recover(const bind_roots *roots, const char *state_dir, bind_job_running_fn running,
		     void *ctx, const bind_log *log, topo_error *err)
{
	struct dirent **ents = NULL;
	int n, restored = 0, failed = 0;

	topo_error_clear(err);
	if (access(state_dir, F_OK) < 0 && errno == ENOENT)
		return 0;
	if (state_dir_ok(state_dir, err) < 0)
		return -1;
	n = scandir(state_dir, &ents, NULL, alphasort);
	if (n < 0) {
		topo_error_set(err, state_dir, 0, "cannot list saved IRQ state: %s", strerror(errno));
		return -1;
	}
	for (int i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;
		char path[PATH_MAX], job[80];
		size_t len = strlen(name);
		topo_error e;

		topo_error_clear(&e);
		if (path_fmt(path, sizeof(path), &e, "%s/%s", state_dir, name) < 0) {
			if (!failed++)
				*err = e;
		} else if (len > 14 && strncmp(name, "job-", 4) == 0 &&
			   (strcmp(name + len - 10, ".state.tmp") == 0 ||
			    strstr(name, ".state.tmp."))) {
			/* a save that never completed: nothing was changed after it */
			if (unlink(path) == 0)
				say(log, "removed incomplete saved state %s", path);
		} else if (state_name_job(name, job, sizeof(job)) &&
			   !(running && running(ctx, job))) {
			int got = check_root(roots, "IRQ recover", &e) < 0
					  ? -1
					  : state_restore(roots, state_dir, path, job, log, &e);

			if (got < 0) {
				if (!failed++)
					*err = e;
			} else {
				say(log, "job %s is not running: its saved IRQ state was restored",
				    job);
				restored++;
			}
		}
		free(ents[i]);
	}
	free(ents);
	return failed ? -1 : restored;
}

/* ---------------------------------------------------------------- enforce */

int bind_enforce_scope(const bind_roots *roots, const char *oversubscribe, char **job_cpus,
		       char *why, size_t whylen, topo_error *err)
{
	char path[PATH_MAX];
	char *text;
	bind_cpuset all;

	*job_cpus = NULL;
	topo_error_clear(err);
	if (!oversubscribe || strcmp(oversubscribe, "NO") != 0) {
		snprintf(why, whylen,
			 "the job may share the node (SLURM_JOB_OVERSUBSCRIBE=%s): IRQs are only audited",
			 oversubscribe ? oversubscribe : "unset");
		return 0;
	}
	if (path_fmt(path, sizeof(path), err, "%s/devices/system/cpu/online", sys_root(roots)))
		return -1;
	text = read_all(path, NULL, NULL, err);
	if (!text)
		return -1;
	bind_cpuset_init(&all);
	if (bind_cpuset_parse(&all, text, path, 1, err) < 0) {
		free(text);
		return -1;
	}
	free(text);
	*job_cpus = bind_cpuset_format(&all);
	bind_cpuset_free(&all);
	if (!*job_cpus) {
		topo_error_set(err, path, 0, "out of memory");
		return -1;
	}
	return 1;
}

/* Each adapter's candidate cores (see bind_irq_enforce). */
static int candidates(const bind_irq_set *set, const bind_cpuset *job, const bind_cpuset *hk,
		      int have_hk, bind_cpuset *cand)
{
	for (size_t k = 0; k < set->nnics; k++) {
		const bind_nic_info *nic = &set->nics[k];

		if (have_hk) {
			if (bind_cpuset_copy(&cand[k], hk) < 0)
				return -1;
			bind_cpuset_intersect(&cand[k], &nic->local);
			if (!bind_cpuset_count(&cand[k]) && bind_cpuset_copy(&cand[k], hk) < 0)
				return -1;
		} else {
			if (bind_cpuset_copy(&cand[k], &nic->local) < 0)
				return -1;
			bind_cpuset_subtract(&cand[k], job);
		}
	}
	return 0;
}

/* Split candidate cores so no two adapters share one when avoidable: each
 * core goes to the adapter wanting it that has fewest cores so far (then the
 * one with fewer candidates). An adapter left with none shares its candidates. */
static int split_cores(const bind_irq_set *set, const bind_cpuset *cand, bind_cpuset *mine)
{
	bind_cpuset all;
	int rc = 0;

	bind_cpuset_init(&all);
	for (size_t k = 0; k < set->nnics; k++)
		for (int c = bind_cpuset_next(&cand[k], -1); c >= 0; c = bind_cpuset_next(&cand[k], c))
			rc |= bind_cpuset_add(&all, c);
	for (int c = bind_cpuset_next(&all, -1); rc == 0 && c >= 0; c = bind_cpuset_next(&all, c)) {
		size_t best = set->nnics;

		for (size_t k = 0; k < set->nnics; k++) {
			if (!bind_cpuset_has(&cand[k], c) || !set->nics[k].nirqs)
				continue;
			if (best == set->nnics ||
			    bind_cpuset_count(&mine[k]) < bind_cpuset_count(&mine[best]) ||
			    (bind_cpuset_count(&mine[k]) == bind_cpuset_count(&mine[best]) &&
			     bind_cpuset_count(&cand[k]) < bind_cpuset_count(&cand[best])))
				best = k;
		}
		if (best < set->nnics)
			rc |= bind_cpuset_add(&mine[best], c);
	}
	for (size_t k = 0; rc == 0 && k < set->nnics; k++)
		if (!bind_cpuset_count(&mine[k]))
			rc |= bind_cpuset_copy(&mine[k], &cand[k]);
	bind_cpuset_free(&all);
	return rc ? -1 : 0;
}

/* The files to change: IRQ i of an adapter goes to its (i mod n)-th core;
 * an IRQ already allowed exactly there is left as it is. */
static int make_plan(const bind_roots *roots, const bind_irq_set *set, const bind_cpuset *mine,
		     saved_list *plan, const bind_log *log, topo_error *err)
{
	for (size_t k = 0; k < set->nnics; k++) {
		const bind_nic_info *nic = &set->nics[k];
		int ncores = bind_cpuset_count(&mine[k]), c = -1;

		if (nic->nirqs && !ncores) {
			say(log, "%s: no core to move its IRQs to (no local CPU free of the job); left alone",
			    nic->name);
			continue;
		}
		for (size_t i = nic->first; i < nic->first + nic->nirqs; i++) {
			const bind_irq_info *q = &set->irqs[i];
			char path[PATH_MAX];
			saved_file *f;

			c = bind_cpuset_next(&mine[k], c);
			if (c < 0)
				c = bind_cpuset_next(&mine[k], -1);
			if (bind_cpuset_count(&q->affinity) == 1 && bind_cpuset_has(&q->affinity, c))
				continue;
			if (irq_file_path(path, sizeof(path), roots, q->irq, err) < 0)
				return -1;
			f = saved_list_add(plan);
			if (!f || !(f->path = strdup(path))) {
				topo_error_set(err, "", 0, "out of memory");
				return -1;
			}
			f->irq = q->irq;
			f->cpu = c;
			snprintf(f->hca, sizeof(f->hca), "%s", nic->name);
			f->orig = read_all(path, &f->origlen, NULL, err);
			if (!f->orig)
				return -1;
		}
	}
	return 0;
}

/* Refuse IRQs already held in another job's saved state (restoring in the
 * wrong order would leave one job's setting behind), and a second enforce
 * for the same job (it would save the changed values as the originals). */
static int check_other_states(const char *dir, const char *own, const saved_list *plan,
			      topo_error *err)
{
	struct dirent **ents = NULL;
	int n = scandir(dir, &ents, NULL, alphasort), rc = 0;

	if (n < 0) {
		topo_error_set(err, dir, 0, "cannot list the state directory: %s", strerror(errno));
		return -1;
	}
	for (int i = 0; i < n; i++) {
		char path[PATH_MAX], job[80], other[80];
		saved_list l = { 0 };

		if (rc == 0 && state_name_job(ents[i]->d_name, job, sizeof(job)) &&
		    path_fmt(path, sizeof(path), err, "%s/%s", dir, ents[i]->d_name) == 0) {
			if (strcmp(path, own) == 0) {
				topo_error_set(err, path, 0,
					       "job %s already has saved IRQ state; restore it before enforcing again",
					       job);
				rc = -1;
			} else if (state_read(path, NULL, other, sizeof(other), &l, err) < 0) {
				rc = -1;
			}
			for (size_t a = 0; rc == 0 && a < l.n; a++)
				for (size_t b = 0; rc == 0 && b < plan->n; b++)
					if (strcmp(l.v[a].path, plan->v[b].path) == 0) {
						topo_error_set(err, path, 0,
							       "irq %d is held by job %s's saved state; not changing it",
							       l.v[a].irq, other);
						rc = -1;
					}
			saved_list_free(&l);
		}
		free(ents[i]);
	}
	free(ents);
	return rc;
}

/* Write the plan; on a failure undo the writes made and remove the state file. */
static int apply_plan(const char *dir, const char *spath, const saved_list *plan,
		      const bind_log *log, topo_error *err)
{
	for (size_t i = 0; i < plan->n; i++) {
		const saved_file *f = &plan->v[i];
		char val[16], before[64];

		snprintf(val, sizeof(val), "%d\n", f->cpu);
		if (write_all(f->path, val, strlen(val), err) < 0) {
			topo_error e;

			for (size_t j = 0; j < i; j++)
				write_all(plan->v[j].path, plan->v[j].orig, plan->v[j].origlen, &e);
			unlink(spath);
			fsync_dir(dir, &e);
			say(log, "irq %d (%s): write failed, %zu earlier change(s) undone", f->irq,
			    f->hca, i);
			return -1;
		}
		first_line(f->orig, before, sizeof(before));
		say(log, "irq %d (%s) smp_affinity_list %s -> %d, saved in %s", f->irq, f->hca,
		    before, f->cpu, spath);
	}
	return 0;
}

int bind_irq_enforce(const bind_roots *roots, const bind_irq_set *set,
		     const bind_enforce_opts *opts, const bind_log *log, topo_error *err)
{
	char spath[PATH_MAX];
	bind_cpuset job, hk, *cand, *mine;
	saved_list plan = { 0 };
	int rc = -1;

	topo_error_clear(err);
	if (state_path(spath, sizeof(spath), opts->state_dir, opts->job_id, err) < 0 ||
	    check_root(roots, "IRQ enforce", err) < 0 || state_dir_ok(opts->state_dir, err) < 0)
		return -1;
	if (access(spath, F_OK) == 0) {
		topo_error_set(err, spath, 0,
			       "job %s already has saved IRQ state; restore it before enforcing again",
			       opts->job_id);
		return -1;
	}
	bind_cpuset_init(&job);
	bind_cpuset_init(&hk);
	cand = calloc(set->nnics + 1, sizeof(*cand));
	mine = calloc(set->nnics + 1, sizeof(*mine));
	if (!cand || !mine) {
		topo_error_set(err, "", 0, "out of memory");
		goto done;
	}
	if ((opts->job_cpus && bind_cpuset_parse(&job, opts->job_cpus, "job CPUs", 0, err) < 0) ||
	    (opts->housekeeping &&
	     bind_cpuset_parse(&hk, opts->housekeeping, "housekeeping CPUs", 0, err) < 0))
		goto done;
	if (candidates(set, &job, &hk, opts->housekeeping && bind_cpuset_count(&hk), cand) < 0 ||
	    split_cores(set, cand, mine) < 0) {
		topo_error_set(err, "", 0, "out of memory");
		goto done;
	}
	if (make_plan(roots, set, mine, &plan, log, err) < 0)
		goto done;
	if (plan.n == 0) {
		say(log, "job %s: every IRQ is already where it should be; nothing changed",
		    opts->job_id);
		rc = 0;
		goto done;
	}
	if (check_other_states(opts->state_dir, spath, &plan, err) < 0 ||
	    state_write(opts->state_dir, spath, opts->job_id, &plan, err) < 0 ||
	    apply_plan(opts->state_dir, spath, &plan, log, err) < 0)
		goto done;
	rc = (int)plan.n;
done:
	saved_list_free(&plan);
	for (size_t k = 0; cand && mine && k < set->nnics; k++) {
		bind_cpuset_free(&cand[k]);
		bind_cpuset_free(&mine[k]);
	}
	free(cand);
	free(mine);
	bind_cpuset_free(&job);
	bind_cpuset_free(&hk);
	return rc;
}
