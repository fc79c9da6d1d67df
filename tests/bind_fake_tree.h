/* bind_fake_tree.h: the fake proc/sys tree of the IRQ tests (test_bind_irq,
 * test_bind_trust), reproducing the incident: two NICs (mlx5_0 on NUMA 0,
 * mlx5_1 on NUMA 1), 8 completion IRQs each, all on core 0; a third NIC
 * (mlx5_2) the job is not given; IRQs 0 (timer) and 9 (acpi) of no NIC.
 * NUMA0 = CPUs 0-7, NUMA1 = CPUs 8-15. Static helpers: include once per test. */
#ifndef BIND_FAKE_TREE_H
#define BIND_FAKE_TREE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_tmp.h"
#include <sys/stat.h>
#include <unistd.h>

#include "bind_cpuset.h"
#include "bind_irq.h"

/* IRQs: mlx5_0 100-107, mlx5_1 110-117, mlx5_2 120-127 (not given), others */
static const int all_irqs[] = { 0,   9,   100, 101, 102, 103, 104, 105, 106, 107, 110, 111, 112,
				113, 114, 115, 116, 117, 120, 121, 122, 123, 124, 125, 126, 127 };
#define NALL (sizeof(all_irqs) / sizeof(all_irqs[0]))

typedef struct tree {
	char root[128]; /* under $TMPDIR (test_tmp.h) */
	char proc[160];
	char sys[160];
	char state[160];
	char *saved[NALL]; /* contents of every smp_affinity_list after building */
	char log[64][256];
	int nlog;
} tree;

static inline void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static inline char *get(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 65536);
	size_t n;

	assert_non_null(buf);
	if (!f) {
		free(buf);
		return NULL;
	}
	n = fread(buf, 1, 65535, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static inline void mkdirs(const char *path)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(buf, 0755);
			*p = '/';
		}
	mkdir(buf, 0755);
}

static inline void affinity_path(const tree *t, int irq, char *buf, size_t len)
{
	snprintf(buf, len, "%s/irq/%d/smp_affinity_list", t->proc, irq);
}

static inline char *affinity(const tree *t, int irq)
{
	char path[256];

	affinity_path(t, irq, path, sizeof(path));
	return get(path);
}

static inline void set_affinity(const tree *t, int irq, const char *text)
{
	char path[256];

	affinity_path(t, irq, path, sizeof(path));
	put(path, text);
}

/* One adapter: its PCI device with msi_irqs, numa_node, local_cpulist and the class link. */
static inline void add_nic(const tree *t, const char *name, const char *bdf, int numa, const char *cpus,
		    int first_irq, int nirqs)
{
	char dev[256], path[400], link[420];

	snprintf(dev, sizeof(dev), "%s/devices/pci0000:00/%s", t->sys, bdf);
	snprintf(path, sizeof(path), "%s/msi_irqs", dev);
	mkdirs(path);
	for (int i = 0; i < nirqs; i++) {
		snprintf(path, sizeof(path), "%s/msi_irqs/%d", dev, first_irq + i);
		put(path, "msix\n");
	}
	snprintf(path, sizeof(path), "%s/numa_node", dev);
	put(path, numa ? "1\n" : "0\n");
	snprintf(path, sizeof(path), "%s/local_cpulist", dev);
	put(path, cpus);
	snprintf(path, sizeof(path), "%s/class/infiniband/%s", t->sys, name);
	mkdirs(path);
	snprintf(link, sizeof(link), "%s/device", path);
	assert_int_equal(symlink(dev, link), 0);
}

static inline void interrupts_line(FILE *f, int irq, const char *chip, const char *desc)
{
	fprintf(f, "%4d:", irq);
	for (int c = 0; c < 16; c++)
		fprintf(f, " %10d", c == 0 ? 1000 + irq : 0);
	fprintf(f, "  %s  %s\n", chip, desc);
}

static inline void build(tree *t)
{
	char path[256];
	FILE *f;

	memset(t, 0, sizeof(*t));
	assert_non_null(test_mkdtemp(t->root, sizeof(t->root), "test_bind_irq.XXXXXX"));
	snprintf(t->proc, sizeof(t->proc), "%s/proc", t->root);
	snprintf(t->sys, sizeof(t->sys), "%s/sys", t->root);
	snprintf(t->state, sizeof(t->state), "%s/state", t->root);
	mkdirs(t->proc);
	mkdirs(t->state);
	add_nic(t, "mlx5_0", "0000:04:00.0", 0, "0-7\n", 100, 9); /* 108: allocated, not requested */
	add_nic(t, "mlx5_1", "0000:84:00.0", 1, "8-15\n", 110, 8);
	add_nic(t, "mlx5_2", "0000:85:00.0", 1, "8-15\n", 120, 8);

	snprintf(path, sizeof(path), "%s/interrupts", t->proc);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "     ");
	for (int c = 0; c < 16; c++)
		fprintf(f, "       CPU%-2d", c);
	fprintf(f, "\n");
	interrupts_line(f, 0, "IR-IO-APIC    2-edge", "timer");
	interrupts_line(f, 9, "IR-IO-APIC    9-fasteoi", "acpi");
	for (int i = 0; i < 8; i++) {
		char d[96];

		snprintf(d, sizeof(d), "mlx5_comp%d@pci:0000:04:00.0", i);
		interrupts_line(f, 100 + i, "IR-PCI-MSI 1048576-edge", d);
		snprintf(d, sizeof(d), "mlx5_comp%d@pci:0000:84:00.0", i);
		interrupts_line(f, 110 + i, "IR-PCI-MSI 69206016-edge", d);
		snprintf(d, sizeof(d), "mlx5_comp%d@pci:0000:85:00.0", i);
		interrupts_line(f, 120 + i, "IR-PCI-MSI 69730304-edge", d);
	}
	fprintf(f, " NMI:          0          0          0          0          0          0"
		   "          0          0          0          0          0          0          0"
		   "          0          0          0   Non-maskable interrupts\n");
	fprintf(f, " ERR:          0\n MIS:          0\n");
	assert_int_equal(fclose(f), 0);

	for (size_t i = 0; i < NALL; i++) {
		snprintf(path, sizeof(path), "%s/irq/%d", t->proc, all_irqs[i]);
		mkdirs(path);
		/* the incident: all on core 0; byte variations to check exact restore */
		set_affinity(t, all_irqs[i], all_irqs[i] == 103 ? "0" :
					     all_irqs[i] == 113 ? "0\n\n" :
					     all_irqs[i] == 0   ? "0-15\n" : "0\n");
		t->saved[i] = affinity(t, all_irqs[i]);
	}
	snprintf(path, sizeof(path), "%s/irq/108", t->proc); /* msi_irqs entry without a line */
	mkdirs(path);
	set_affinity(t, 108, "0-15\n");
}

static inline void destroy(tree *t)
{
	char cmd[192];

	for (size_t i = 0; i < NALL; i++)
		free(t->saved[i]);
	/* test-only cleanup of the mkdtemp tree */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->root);
	assert_int_equal(system(cmd), 0);
}

/* Number of smp_affinity_list files that differ from the tree as built. */
static inline int changed_files(const tree *t)
{
	int n = 0;

	for (size_t i = 0; i < NALL; i++) {
		char *now = affinity(t, all_irqs[i]);

		if (!now || strcmp(now, t->saved[i]) != 0)
			n++;
		free(now);
	}
	return n;
}

static inline void collect(void *ctx, const char *msg)
{
	tree *t = ctx;

	if (t->nlog < 64)
		snprintf(t->log[t->nlog++], sizeof(t->log[0]), "%s", msg);
}

static inline bind_roots roots_of(const tree *t)
{
	bind_roots r = { t->proc, t->sys, 1 };

	return r;
}

static const bind_nic_req given[] __attribute__((unused)) = { { "mlx5_0", NULL }, { "mlx5_1", NULL } };

static inline bind_irq_set *load_given(const tree *t)
{
	bind_roots r = roots_of(t);
	topo_error err;
	bind_irq_set *set = bind_irq_load(&r, given, 2, &err);

	if (!set)
		fail_msg("load: %s:%d: %s", err.source, err.line, err.text);
	return set;
}

static inline size_t count_kind(const bind_audit *a, const char *kind)
{
	size_t n = 0;

	for (size_t i = 0; i < a->n; i++)
		n += strcmp(a->v[i].kind, kind) == 0;
	return n;
}

static inline int state_exists(const tree *t, const char *job)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/job-%s.state", t->state, job);
	return access(path, F_OK) == 0;
}

#endif
