/*
 * trace_swf: the Parallel Workloads Archive's Standard Workload Format.
 *
 * One job per line, 18 whitespace-separated numbers (-1 = unknown):
 *   1 job  2 submit  3 wait  4 run time  5 allocated procs  6 avg CPU
 *   7 memory  8 requested procs  9 requested time  10 requested memory
 *   11 status  12 user  13 group  14 executable  15 queue  16 partition
 *   17 preceding job  18 think time
 * Lines starting with ';' are header comments. A job's processors are the
 * allocated ones (field 5), else the requested ones (field 8); its requested
 * time is field 9, else its run time. Jobs without a positive run time or
 * processor count never ran and are skipped (counted in trace->skipped);
 * anything that is not 18 numbers is an error naming the line.
 */
#include "trace.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo_num.h"

#define SWF_FIELDS 18

static const char *const swf_field_name[SWF_FIELDS] = {
	"job number", "submit time", "wait time", "run time", "allocated processors",
	"average CPU time", "used memory", "requested processors", "requested time",
	"requested memory", "status", "user id", "group id", "executable", "queue",
	"partition", "preceding job", "think time"};

/* Split a data line into 18 numbers; on failure fill err and return -1. */
static int swf_fields(char *line, double *v, const char *source, int lineno, topo_error *err)
{
	char *save = NULL, *tok = strtok_r(line, " \t", &save);
	int n = 0;

	for (; tok; tok = strtok_r(NULL, " \t", &save)) {
		if (n == SWF_FIELDS) {
			topo_error_set(err, source, lineno,
				       "has more than %d fields; a Standard Workload Format job line has exactly %d",
				       SWF_FIELDS, SWF_FIELDS);
			return -1;
		}
		if (topo_parse_double(tok, -DBL_MAX, DBL_MAX, &v[n])) {
			topo_error_set(err, source, lineno, "field %d (%s) is \"%.40s\", not a number",
				       n + 1, swf_field_name[n], tok);
			return -1;
		}
		n++;
	}
	if (n != SWF_FIELDS) {
		topo_error_set(err, source, lineno,
			       "has %d fields; a Standard Workload Format job line has exactly %d", n,
			       SWF_FIELDS);
		return -1;
	}
	return 0;
}

/* Fields read into ints (job id, processors, user) must fit one: SWF uses
 * -1 for "unknown", and a larger number than INT_MAX is a broken line. */
static int swf_int_fields_in_range(const double *v, const char *source, int line,
				   topo_error *err)
{
	static const struct {
		int field; /* 0-based */
		const char *name;
	} ints[] = { { 0, "job number" }, { 4, "allocated processors" },
		     { 7, "requested processors" }, { 11, "user id" } };

	for (size_t k = 0; k < sizeof(ints) / sizeof(ints[0]); k++) {
		double x = v[ints[k].field];

		if (!(x >= -1 && x <= INT_MAX)) {
			topo_error_set(err, source, line, "field %d (%s) is %g, out of range",
				       ints[k].field + 1, ints[k].name, x);
			return -1;
		}
	}
	return 0;
}

int trace_load_swf(topo_trace *t, FILE *f, const char *source, topo_error *err)
{
	char *buf = NULL;
	size_t cap = 0;
	int lineno = 0, rc = 0;
	long len;

	while (rc == 0 && (len = trace_getline(&buf, &cap, f)) >= 0) {
		double v[SWF_FIELDS];
		trace_job j;
		char *p = buf;

		lineno++;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0' || *p == ';')
			continue;
		if (swf_fields(p, v, source, lineno, err)) {
			rc = -1;
			break;
		}
		if (swf_int_fields_in_range(v, source, lineno, err)) {
			rc = -1;
			break;
		}
		memset(&j, 0, sizeof(j));
		j.id = (long)v[0];
		j.submit = v[1];
		j.runtime = v[3];
		j.procs = v[4] > 0 ? (int)v[4] : (int)v[7];
		j.requested = v[8] > 0 ? v[8] : v[3];
		j.user = (int)v[11];
		j.group = v[12] >= 0 && v[12] <= INT_MAX ? (int)v[12] : -1;
		j.app = v[13] >= 0 && v[13] <= INT_MAX ? (int)v[13] : -1;
		j.log_wait = v[2] >= 0 ? v[2] : -1;
		j.limit_known = v[8] > 0;
		j.line = lineno;
		j.hosts = j.procs;
		j.source = TOPO_TRACE_SWF;
		snprintf(j.name, sizeof(j.name), "job%ld", j.id);
		if (j.submit < 0) {
			topo_error_set(err, source, lineno, "field 2 (submit time) is negative");
			rc = -1;
		} else if (j.runtime <= 0 || j.procs <= 0) {
			t->skipped++;
		} else if (trace_push(t, &j)) {
			topo_error_set(err, source, lineno, "out of memory");
			rc = -1;
		}
	}
	if (rc == 0 && len < 0)
		rc = trace_getline_end(f, source, lineno, err);
	free(buf);
	return rc;
}
