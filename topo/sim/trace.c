/*
 * trace: the job list shared by the trace parsers, format detection, gzip
 * input and the processor->host mapping (see trace.h).
 *
 * Compressed logs (the Parallel Workloads Archive ships .swf.gz) are read
 * through a `gzip -dc -- FILE` child (topo_spawn_reader), so the
 * library needs no zlib and no shell ever sees the file name.
 */
#include "trace.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "topo_io.h"


void trace_init(topo_trace *t)
{
	memset(t, 0, sizeof(*t));
}

void trace_free(topo_trace *t)
{
	free(t->jobs);
	trace_init(t);
}

int trace_push(topo_trace *t, const trace_job *j)
{
	if (t->njobs == t->cap) {
		int cap = t->cap ? 2 * t->cap : 256;
		trace_job *n = realloc(t->jobs, (size_t)cap * sizeof(*n));

		if (!n)
			return -1;
		t->jobs = n;
		t->cap = cap;
	}
	t->jobs[t->njobs++] = *j;
	return 0;
}

long trace_getline(char **buf, size_t *cap, FILE *f)
{
	ssize_t n = getline(buf, cap, f);

	if (n < 0)
		return -1;
	while (n > 0 && ((*buf)[n - 1] == '\n' || (*buf)[n - 1] == '\r'))
		(*buf)[--n] = '\0';
	return (long)n;
}

int trace_getline_end(FILE *f, const char *source, int lineno, topo_error *err)
{
	if (feof(f))
		return 0;
	topo_error_set(err, source, lineno + 1, "cannot read the line: %s",
		       ferror(f) ? "read error" : "out of memory");
	return -1;
}

int trace_detect(const char *head, size_t len)
{
	size_t i = 0;

	while (i < len && (head[i] == ' ' || head[i] == '\t' || head[i] == '\n' || head[i] == '\r'))
		i++;
	if (i == len)
		return -1;
	if (head[i] == ';' || (head[i] >= '0' && head[i] <= '9') || head[i] == '-')
		return TOPO_TRACE_SWF;
	if (len - i >= 14 && strncmp(head + i, "name,cpu_milli", 14) == 0)
		return TOPO_TRACE_ALIBABA;
	return -1;
}

static int is_gzip(FILE *f)
{
	int a = fgetc(f), b = fgetc(f);

	rewind(f);
	return a == 0x1f && b == 0x8b;
}

/* Start `gzip -dc -- path`; returns its stdout as a stream or NULL. */
static FILE *gunzip_open(const char *path, pid_t *pid, topo_error *err)
{
	char *argv[] = {"gzip", "-dc", "--", (char *)path, NULL};
	const char *why;
	int fd = topo_spawn_reader(argv, pid, &why);
	FILE *f;

	if (fd < 0) {
		topo_error_set(err, path, 0, "is gzip-compressed and gzip %s: %s", why,
			       strerror(errno));
		return NULL;
	}
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		waitpid(*pid, NULL, 0);
		topo_error_set(err, path, 0, "cannot read gzip's output");
	}
	return f;
}

/* Parse f in whatever format its first bytes announce. */
static int read_detected(topo_trace *t, FILE *f, const char *source, topo_error *err)
{
	size_t len;
	char *buf = topo_read_stream(f, source, TOPO_IO_MAX_BYTES, &len, err); /* f may be a pipe */
	FILE *mem;
	int fmt, rc;

	if (!buf)
		return -1;
	fmt = trace_detect(buf, len);
	if (fmt < 0) {
		free(buf);
		topo_error_set(err, source, 1,
			       "is neither a Standard Workload Format log nor the Alibaba GPU CSV");
		return -1;
	}
	mem = fmemopen(buf, len, "r");
	if (!mem) {
		free(buf);
		topo_error_set(err, source, 0, "out of memory reading the trace");
		return -1;
	}
	rc = fmt == TOPO_TRACE_SWF ? trace_load_swf(t, mem, source, err)
				   : trace_load_alibaba(t, mem, source, err);
	fclose(mem);
	free(buf);
	return rc;
}

int trace_load(topo_trace *t, const char *path, topo_error *err)
{
	int use_stdin = strcmp(path, "-") == 0, rc, status = 0;
	pid_t pid = -1;
	FILE *f;

	topo_error_clear(err);
	f = use_stdin ? stdin : topo_fopen_input(path, 0, 0, err);
	if (!f)
		return -1;
	if (!use_stdin && is_gzip(f)) {
		fclose(f);
		f = gunzip_open(path, &pid, err);
		if (!f)
			return -1;
	}
	rc = read_detected(t, f, use_stdin ? "<stdin>" : path, err);
	if (!use_stdin)
		fclose(f);
	if (pid > 0 && waitpid(pid, &status, 0) == pid && rc == 0 &&
	    (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
		topo_error_set(err, path, 0, "gzip could not decompress it (exit status %d)",
			       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		rc = -1;
	}
	if (rc != 0)
		trace_free(t);
	else
		trace_normalize(t);
	return rc;
}

static int cmp_submit(const void *pa, const void *pb)
{
	const trace_job *a = pa, *b = pb;

	if (a->submit != b->submit)
		return a->submit < b->submit ? -1 : 1;
	if (a->source != b->source)
		return (int)a->source - (int)b->source;
	return (a->line > b->line) - (a->line < b->line);
}

void trace_normalize(topo_trace *t)
{
	double t0;

	if (t->njobs == 0)
		return;
	qsort(t->jobs, (size_t)t->njobs, sizeof(*t->jobs), cmp_submit);
	t0 = t->jobs[0].submit;
	for (int i = 0; i < t->njobs; i++)
		t->jobs[i].submit -= t0;
}

void trace_truncate(topo_trace *t, int n)
{
	if (n > 0 && n < t->njobs)
		t->njobs = n;
}

int trace_map_hosts(topo_trace *t, int procs_per_host, int scale, int max_hosts,
			 int drop_oversize)
{
	int kept = 0, dropped = 0;

	if (procs_per_host < 1)
		procs_per_host = 1;
	if (scale < 1)
		scale = 1;
	for (int i = 0; i < t->njobs; i++) {
		trace_job j = t->jobs[i];

		if (j.source == TOPO_TRACE_SWF)
			j.hosts = (j.procs + procs_per_host - 1) / procs_per_host * scale;
		if (max_hosts > 0 && j.hosts > max_hosts) {
			if (drop_oversize) {
				dropped++;
				continue;
			}
			j.hosts = max_hosts;
		}
		t->jobs[kept++] = j;
	}
	t->njobs = kept;
	return dropped;
}

int trace_merge(topo_trace *a, const topo_trace *b, double until)
{
	for (int i = 0; i < b->njobs; i++) {
		if (until > 0 && b->jobs[i].submit >= until)
			continue;
		if (trace_push(a, &b->jobs[i]))
			return -1;
	}
	if (a->njobs)
		qsort(a->jobs, (size_t)a->njobs, sizeof(*a->jobs), cmp_submit);
	return 0;
}

int trace_fit_window(topo_trace *t, double span, double max_runtime)
{
	double own = t->njobs ? t->jobs[t->njobs - 1].submit - t->jobs[0].submit : 0;
	double f = own > 0 && span > 0 ? span / own : 1.0, t0 = t->njobs ? t->jobs[0].submit : 0;
	int kept = 0;

	for (int i = 0; i < t->njobs; i++) {
		trace_job j = t->jobs[i];

		if (max_runtime > 0 && j.runtime > max_runtime)
			continue;
		j.submit = (j.submit - t0) * f;
		t->jobs[kept++] = j;
	}
	{
		int dropped = t->njobs - kept;

		t->njobs = kept;
		return dropped;
	}
}
