/* topo_io: whole-file reading with a size limit (see topo_io.h). */
#include "topo_io.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

char *topo_read_stream(FILE *f, const char *source, size_t max, size_t *len, topo_error *err)
{
	size_t cap = 0, n = 0;
	char *buf = NULL;

	for (;;) {
		size_t got;

		if (n + 1 >= cap) {
			size_t want = cap ? cap * 2 : 65536;
			char *bigger;

			if (cap > max) {
				topo_error_set(err, source, 0, "file is larger than %zu bytes", max);
				goto fail;
			}
			if (want > max + 2)
				want = max + 2; /* room for one byte over the limit, and the NUL */
			if (!(bigger = realloc(buf, want))) {
				topo_error_set(err, source, 0, "out of memory reading the file");
				goto fail;
			}
			buf = bigger;
			cap = want;
		}
		got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		topo_error_set(err, source, 0, "read error: %s", strerror(errno ? errno : EIO));
		goto fail;
	}
	if (n > max) {
		topo_error_set(err, source, 0, "file is larger than %zu bytes", max);
		goto fail;
	}
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
fail:
	free(buf);
	return NULL;
}

char *topo_read_file(const char *path, size_t max, size_t *len, topo_error *err)
{
	FILE *f = fopen(path, "rb");
	char *buf;

	if (!f) {
		topo_error_set(err, path, 0, "cannot open: %s", strerror(errno));
		return NULL;
	}
	buf = topo_read_stream(f, path, max, len, err);
	fclose(f);
	return buf;
}
