/*
 * bind_irq_io: the file helpers the bind_irq_*.c files share
 * (bind_irq_internal.h): whole-file reads to EOF, single-write()s for proc
 * files, and the trust check for our own files (owner, mode, O_NOFOLLOW).
 */
#define _GNU_SOURCE
#include "bind_irq_internal.h"

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

#include "topo_io.h"

const char *bind_irq_proc_root(const bind_roots *r)
{
	return r && r->proc ? r->proc : "/proc";
}

const char *bind_irq_sys_root(const bind_roots *r)
{
	return r && r->sys ? r->sys : "/sys";
}

void bind_irq_say(const bind_log *log, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void bind_irq_say(const bind_log *log, const char *fmt, ...)
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

int bind_irq_path_fmt(char *buf, size_t len, topo_error *err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int bind_irq_path_fmt(char *buf, size_t len, topo_error *err, const char *fmt, ...)
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

char *bind_irq_read_all(const char *path, size_t *len_out, int *missing, topo_error *err)
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
int bind_irq_trusted_stat(const struct stat *st, int dir, const char *path, topo_error *err)
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
	return bind_irq_trusted_stat(&st, 0, path, err);
}

/* Read one of our own files (state): never through a symlink, and only when
 * trusted_fd() accepts it. */
char *bind_irq_read_owned(const char *path, topo_error *err)
{
	int fd = topo_open_input(path, TOPO_OPEN_NOFOLLOW, MAX_PROC_FILE, err);

	if (fd < 0)
		return NULL;
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
int bind_irq_write_all(const char *path, const char *data, size_t len, topo_error *err)
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

/* Parse a non-negative decimal int filling the whole string; -1 if it is not one. */
int bind_irq_parse_uint(const char *s, size_t len)
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
void bind_irq_first_line(const char *s, char *out, size_t len)
{
	size_t n = strcspn(s, "\n");

	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	if (n >= len)
		n = len - 1;
	memcpy(out, s, n);
	out[n] = '\0';
}
