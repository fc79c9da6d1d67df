/*
 * sim_comm_profile: reading astra-sim text workloads into place_comm (see
 * sim_comm_profile.h for the format and the mapping).
 */
#include "sim_comm_profile.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"
#include "topo_io.h"
#include "topo_num.h"

#define ASTRA_FIELDS 12
#define ASTRA_CLOCK_HZ 1e9

static int is_collective(const char *s)
{
	return strcmp(s, "NONE") != 0;
}

/* Parse one layer line into p's totals. */
static int layer(sim_comm_profile *p, char *line, const char *path, int lineno, topo_error *err)
{
	char *f[ASTRA_FIELDS], *save = NULL, *tok;
	int n = 0;
	static const int num[] = {2, 4, 5, 7, 8, 10};

	for (tok = strtok_r(line, "\t ", &save); tok; tok = strtok_r(NULL, "\t ", &save)) {
		if (n == ASTRA_FIELDS) {
			topo_error_set(err, path, lineno, "has more than %d fields for a layer",
				       ASTRA_FIELDS);
			return -1;
		}
		f[n++] = tok;
	}
	if (n != ASTRA_FIELDS) {
		topo_error_set(err, path, lineno, "has %d fields; a layer line has %d", n,
			       ASTRA_FIELDS);
		return -1;
	}
	double v[ASTRA_FIELDS] = {0};
	for (size_t i = 0; i < sizeof(num) / sizeof(num[0]); i++) {
		if (topo_parse_double(f[num[i]], 0, DBL_MAX, &v[num[i]])) {
			topo_error_set(err, path, lineno, "field %d is \"%.40s\", not a count",
				       num[i] + 1, f[num[i]]);
			return -1;
		}
	}
	p->compute_cycles += v[2] + v[5] + v[8];
	if (is_collective(f[3]))
		p->local_bytes += v[4];
	if (is_collective(f[6]))
		p->local_bytes += v[7];
	if (is_collective(f[9]))
		p->fabric_bytes += v[10];
	return 0;
}

int sim_comm_profile_load(sim_comm_profile *p, const char *path, topo_error *err)
{
	FILE *f;
	char *buf = NULL;
	const char *base = strrchr(path, '/');
	size_t cap = 0;
	int lineno = 0, rc = 0;
	long expect = -1, len = 0;

	memset(p, 0, sizeof(*p));
	topo_error_clear(err);
	if (!(f = topo_fopen_input(path, 0, TOPO_IO_MAX_BYTES, err)))
		return -1;
	base = base ? base + 1 : path;
	if (strncmp(base, "astra-sim_", 10) == 0)
		base += 10;
	snprintf(p->name, sizeof(p->name), "%.*s", (int)strcspn(base, "."), base);
	while (rc == 0 && (len = trace_getline(&buf, &cap, f)) >= 0) {
		lineno++;
		if (lineno == 1) {
			snprintf(p->parallelism, sizeof(p->parallelism), "%.*s",
				 (int)strcspn(buf, "\t "), buf);
			if (!p->parallelism[0]) {
				topo_error_set(err, path, 1, "does not name the parallelism");
				rc = -1;
			}
		} else if (lineno == 2) {
			size_t n = strcspn(buf, "\t ");

			if (topo_parse_long_n(buf, n, 1, LONG_MAX, &expect) < 0 ||
			    strspn(buf + n, "\t ") != strlen(buf + n)) {
				topo_error_set(err, path, 2, "should hold the layer count");
				rc = -1;
			}
		} else if (buf[strspn(buf, "\t ")] != '\0') {
			rc = layer(p, buf, path, lineno, err);
			p->layers += rc == 0;
		}
	}
	if (rc == 0 && len < 0)
		rc = trace_getline_end(f, path, lineno, err);
	fclose(f);
	free(buf);
	if (rc == 0 && p->layers != expect) {
		topo_error_set(err, path, lineno, "has %d layers; line 2 announces %ld", p->layers,
			       expect);
		rc = -1;
	}
	if (rc == 0 && p->fabric_bytes <= 0) {
		topo_error_set(err, path, 0, "has no weight-gradient collective");
		rc = -1;
	}
	p->comm.cls = PLACE_COMM_HEAVY;
	p->comm.pattern = PLACE_PATTERN_RING;
	p->comm.bytes_per_iter = p->fabric_bytes;
	p->comm.compute_s_per_iter = p->compute_cycles / ASTRA_CLOCK_HZ;
	return rc;
}

/* splitmix64: a well-mixed hash of (seed, job). */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

int sim_comm_profile_draw(int n, uint64_t seed, uint64_t job_id)
{
	if (n <= 1)
		return 0;
	return (int)(mix(mix(seed) ^ job_id) % (uint64_t)n);
}
