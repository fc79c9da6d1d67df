/* topo_io: whole-file reading with a size limit (see topo_io.h). */
#include "topo_io.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

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

int topo_spawn_reader(char *const argv[], pid_t *pid, const char **why)
{
	posix_spawn_file_actions_t fa;
	int fd[2], rc;

	if (pipe(fd) != 0) {
		*why = "cannot get a pipe";
		return -1;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd[1], STDOUT_FILENO);
	posix_spawn_file_actions_addclose(&fa, fd[0]);
	posix_spawn_file_actions_addclose(&fa, fd[1]);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	rc = posix_spawnp(pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fd[1]);
	if (rc != 0) {
		close(fd[0]);
		errno = rc;
		*why = "cannot be started";
		return -1;
	}
	return fd[0];
}
