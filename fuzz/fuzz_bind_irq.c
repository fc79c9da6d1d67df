/*
 * libFuzzer target for the binding planner's parsers: the first byte picks
 *   0: a CPU list (parse, format, parse again: same set),
 *   1: /proc/interrupts of a small fake tree (load + audit),
 *   2: an IRQ state file (restore on the fake tree).
 * The fake tree lives in a mkdtemp directory made once per process, on
 * $TMPDIR, else /dev/shm (tmpfs: inputs 1 and 2 write a file each), else /tmp.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bind_cpuset.h"
#include "bind_irq.h"

static char root[512], proc[600], sys[600], state[600];

static void put(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f)
		abort();
	fwrite(data, 1, len, f);
	fclose(f);
}

static void setup(void)
{
	const char *t = getenv("TMPDIR");
	char path[1024], dev[1024];

	if (root[0])
		return;
	snprintf(root, sizeof(root), "%s/fuzz_bind_irq.XXXXXX",
		 t && *t ? t : access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	if (!mkdtemp(root))
		abort();
	snprintf(proc, sizeof(proc), "%s/proc", root);
	snprintf(sys, sizeof(sys), "%s/sys", root);
	snprintf(state, sizeof(state), "%s/state", root);
	mkdir(proc, 0755);
	mkdir(state, 0755);
	snprintf(path, sizeof(path), "%s/irq", proc);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/irq/100", proc);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/irq/100/smp_affinity_list", proc);
	put(path, "0\n", 2);
	mkdir(sys, 0755);
	snprintf(dev, sizeof(dev), "%s/dev", sys);
	mkdir(dev, 0755);
	snprintf(path, sizeof(path), "%s/dev/msi_irqs", sys);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/dev/msi_irqs/100", sys);
	put(path, "msix\n", 5);
	snprintf(path, sizeof(path), "%s/class", sys);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/class/infiniband", sys);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/class/infiniband/mlx5_0", sys);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/class/infiniband/mlx5_0/device", sys);
	if (symlink(dev, path) < 0)
		abort();
}

static void fuzz_cpulist(const char *text)
{
	bind_cpuset a, b;
	topo_error err;

	bind_cpuset_init(&a);
	bind_cpuset_init(&b);
	if (bind_cpuset_parse(&a, text, "fuzz", 1, &err) == 0) {
		char *out = bind_cpuset_format(&a);

		if (out) {
			if (bind_cpuset_parse(&b, out, "fuzz", 1, &err) < 0 || !bind_cpuset_equal(&a, &b))
				abort();
			free(out);
		}
	}
	bind_cpuset_free(&a);
	bind_cpuset_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	bind_roots r = { proc, sys, 1 };
	char path[1024];
	topo_error err;

	setup();
	if (size < 1)
		return 0;
	if (data[0] % 3 == 0) {
		char *text = malloc(size);

		if (!text)
			return 0;
		memcpy(text, data + 1, size - 1);
		text[size - 1] = '\0';
		fuzz_cpulist(text);
		free(text);
	} else if (data[0] % 3 == 1) {
		bind_irq_set *set;

		snprintf(path, sizeof(path), "%s/interrupts", proc);
		put(path, data + 1, size - 1);
		set = bind_irq_load(&r, NULL, 0, &err);
		if (set) {
			bind_audit a;

			if (bind_irq_audit(set, "1", &a, &err) == 0)
				bind_audit_free(&a);
			bind_irq_set_free(set);
		}
	} else {
		snprintf(path, sizeof(path), "%s/job-1.state", state);
		put(path, data + 1, size - 1);
		bind_irq_restore(&r, state, "1", NULL, &err);
		unlink(path);
	}
	return 0;
}
