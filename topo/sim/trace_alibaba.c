/*
 * trace_alibaba: Alibaba's GPU cluster trace v2023 (openb_pod_list_*.csv).
 *
 * Header: name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,
 * pod_phase,creation_time,deletion_time,scheduled_time. Columns are found
 * by name, so a reordered file still reads. Every pod runs on one host:
 * num_gpu GPUs (0..8; a GPU-sharing pod with gpu_milli < 1000 still takes
 * one whole GPU here) and ceil(cpu_milli / 1000) cores. Submit is
 * creation_time; run time is deletion_time - scheduled_time. Pods never
 * scheduled (empty scheduled_time, phase Pending) or with no run time are
 * skipped and counted; the trace has no requested time, so requested = run
 * time (a perfect estimate, which favours backfill; documented).
 */
#include "trace.h"

#include <errno.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo_num.h"

enum { COL_NAME, COL_CPU, COL_GPU, COL_CREATE, COL_DELETE, COL_SCHED, NCOLS };

static const char *const col_name[NCOLS] = {"name",          "cpu_milli",     "num_gpu",
					    "creation_time", "deletion_time", "scheduled_time"};

#define MAX_COLS 32

/* Split a CSV line (no quoting in this trace) in place. Returns the count. */
static int csv_split(char *line, char **cols)
{
	int n = 0;

	cols[n++] = line;
	for (char *p = line; *p; p++)
		if (*p == ',') {
			*p = '\0';
			if (n == MAX_COLS)
				return MAX_COLS + 1;
			cols[n++] = p + 1;
		}
	return n;
}

static int header(char *line, int *pos, int *ncols, const char *source, topo_error *err)
{
	char *cols[MAX_COLS];
	int n = csv_split(line, cols);

	if (n > MAX_COLS) {
		topo_error_set(err, source, 1, "the header has more than %d columns", MAX_COLS);
		return -1;
	}
	for (int c = 0; c < NCOLS; c++) {
		pos[c] = -1;
		for (int i = 0; i < n; i++)
			if (strcmp(cols[i], col_name[c]) == 0)
				pos[c] = i;
		if (pos[c] < 0) {
			topo_error_set(err, source, 1, "the header has no \"%s\" column", col_name[c]);
			return -1;
		}
	}
	*ncols = n;
	return 0;
}

/* A number in column c; empty is allowed when `empty` is given. */
static int number(char **cols, const int *pos, int c, double *out, int *empty,
		  const char *source, int lineno, topo_error *err)
{
	const char *s = cols[pos[c]];

	if (*s == '\0' && empty) {
		*empty = 1;
		return 0;
	}
	if (topo_parse_double(s, -DBL_MAX, DBL_MAX, out)) {
		topo_error_set(err, source, lineno, "column %s is \"%.40s\", not a number",
			       col_name[c], s);
		return -1;
	}
	return 0;
}

static int pod(topo_trace *t, char *line, const int *pos, int ncols, const char *source,
	       int lineno, topo_error *err)
{
	char *cols[MAX_COLS];
	int n = csv_split(line, cols), no_sched = 0;
	double cpu, gpu, create, del, sched = 0;
	trace_job j;

	if (n != ncols) {
		topo_error_set(err, source, lineno, "has %d columns; the header has %d",
			       n > MAX_COLS ? MAX_COLS + 1 : n, ncols);
		return -1;
	}
	if (number(cols, pos, COL_CPU, &cpu, NULL, source, lineno, err) ||
	    number(cols, pos, COL_GPU, &gpu, NULL, source, lineno, err) ||
	    number(cols, pos, COL_CREATE, &create, NULL, source, lineno, err) ||
	    number(cols, pos, COL_DELETE, &del, NULL, source, lineno, err) ||
	    number(cols, pos, COL_SCHED, &sched, &no_sched, source, lineno, err))
		return -1;
	/* milli-CPUs: a million cores is beyond any node, and keeps the core
	 * count well inside an int */
	if (gpu < 0 || gpu > 64 || cpu < 0 || cpu > 1e9) {
		topo_error_set(err, source, lineno, "asks for %g GPUs and %g milli-CPUs, out of range",
			       gpu, cpu);
		return -1;
	}
	if (no_sched || del <= sched) {
		t->skipped++;
		return 0;
	}
	memset(&j, 0, sizeof(j));
	j.id = lineno - 1;
	j.submit = create;
	j.runtime = del - sched;
	j.requested = j.runtime;
	j.procs = 1;
	j.hosts = 1;
	j.gpus_per_host = (int)gpu;
	j.cores_per_host = (int)((cpu + 999) / 1000);
	if (j.cores_per_host < 1)
		j.cores_per_host = 1;
	j.user = -1;
	j.group = j.app = -1;
	j.log_wait = sched - create >= 0 ? sched - create : -1;
	j.line = lineno;
	j.source = TOPO_TRACE_ALIBABA;
	snprintf(j.name, sizeof(j.name), "%.31s", cols[pos[COL_NAME]]);
	if (trace_push(t, &j)) {
		topo_error_set(err, source, lineno, "out of memory");
		return -1;
	}
	return 0;
}

int trace_load_alibaba(topo_trace *t, FILE *f, const char *source, topo_error *err)
{
	char *buf = NULL;
	size_t cap = 0;
	int lineno = 0, rc = 0, pos[NCOLS], ncols = 0;
	long len;

	while (rc == 0 && (len = trace_getline(&buf, &cap, f)) >= 0) {
		lineno++;
		if (lineno == 1)
			rc = header(buf, pos, &ncols, source, err);
		else if (len > 0)
			rc = pod(t, buf, pos, ncols, source, lineno, err);
	}
	if (rc == 0 && len < 0)
		rc = trace_getline_end(f, source, lineno, err);
	if (rc == 0 && lineno == 0) {
		topo_error_set(err, source, 1, "is empty");
		rc = -1;
	}
	free(buf);
	return rc;
}
