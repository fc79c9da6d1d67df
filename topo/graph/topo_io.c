/* topo_io: whole-file reading with a size limit (see topo_io.h). */
#include "topo_io.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

static const char *file_kind(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket"
	       : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device"
	       : "not a regular file";
}

/* Why fd (of path) may not be read under flags and max, or NULL. */
static const char *refuse(int fd, unsigned flags, size_t max, char *why, size_t len)
{
	struct stat st;

	if (fstat(fd, &st) != 0)
		snprintf(why, len, "cannot stat: %s", strerror(errno));
	else if (!S_ISREG(st.st_mode))
		snprintf(why, len, "is %s, not a regular file", file_kind(st.st_mode));
	else if (max && (uintmax_t)st.st_size > (uintmax_t)max)
		snprintf(why, len, "file is larger than %zu bytes (it has %jd)", max,
			 (intmax_t)st.st_size);
	else if ((flags & TOPO_OPEN_TRUSTED) && st.st_uid != 0 && st.st_uid != geteuid())
		snprintf(why, len, "is owned by uid %u, neither root nor us", (unsigned)st.st_uid);
	else if ((flags & TOPO_OPEN_TRUSTED) && (st.st_mode & (S_IWGRP | S_IWOTH)))
		snprintf(why, len, "is writable by group or others (mode %04o)",
			 (unsigned)(st.st_mode & 07777));
	else if ((flags & TOPO_OPEN_TRUSTED) && st.st_nlink != 1)
		snprintf(why, len, "has %ju hard links (a link to another file?)",
			 (uintmax_t)st.st_nlink);
	else
		return NULL;
	return why;
}

int topo_open_input(const char *path, unsigned flags, size_t max, topo_error *err)
{
	int oflags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
	char why[160];
	int fd, fl;

	if (flags & TOPO_OPEN_NOFOLLOW)
		oflags |= O_NOFOLLOW;
	fd = open(path, oflags);
	if (fd < 0) {
		int e = errno;

		if (e == ELOOP && (flags & TOPO_OPEN_NOFOLLOW))
			topo_error_set(err, path, 0, "is a symbolic link (not followed)");
		else
			topo_error_set(err, path, 0, "cannot open: %s", strerror(e));
		errno = e; /* callers tell a missing file (ENOENT) from others */
		return -1;
	}
	if (refuse(fd, flags, max, why, sizeof(why))) {
		topo_error_set(err, path, 0, "%s", why);
		close(fd);
		return -1;
	}
	if ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		topo_error_set(err, path, 0, "cannot clear O_NONBLOCK: %s", strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

FILE *topo_fopen_input(const char *path, unsigned flags, size_t max, topo_error *err)
{
	int fd = topo_open_input(path, flags, max, err);
	FILE *f;

	if (fd < 0)
		return NULL;
	if (!(f = fdopen(fd, "r"))) {
		topo_error_set(err, path, 0, "cannot open: %s", strerror(errno));
		close(fd);
	}
	return f;
}

char *topo_read_input(const char *path, unsigned flags, size_t max, size_t *len,
		      topo_error *err)
{
	FILE *f = topo_fopen_input(path, flags, max, err);
	char *buf;

	if (!f)
		return NULL;
	buf = topo_read_stream(f, path, max, len, err);
	fclose(f);
	return buf;
}

char *topo_read_file(const char *path, size_t max, size_t *len, topo_error *err)
{
	return topo_read_input(path, 0, max, len, err);
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
