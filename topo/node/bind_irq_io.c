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
 * Read a whole kernel file (/proc, /sys) through the common input helper
 * (topo_read_input: no blocking on a FIFO, a regular file, at most
 * MAX_PROC_FILE bytes; proc files report size 0, so it reads until EOF) into
 * a NUL-terminated buffer. Returns NULL with `err` naming the file when it is
 * missing, not a regular file, unreadable or too large; *missing is set (if
 * not NULL) when it does not exist.
 */
char *bind_irq_read_all(const char *path, size_t *len_out, int *missing, topo_error *err)
{
	char *text;

	if (missing)
		*missing = 0;
	text = topo_read_input(path, 0, MAX_PROC_FILE, len_out, err);
	if (!text && missing && errno == ENOENT)
		*missing = 1;
	return text;
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
	FILE *f;
	char *text;

	if (fd < 0)
		return NULL;
	if (trusted_fd(fd, path, err) < 0) {
		close(fd);
		return NULL;
	}
	if (!(f = fdopen(fd, "r"))) {
		topo_error_set(err, path, 0, "cannot open: %s", strerror(errno));
		close(fd);
		return NULL;
	}
	text = topo_read_stream(f, path, MAX_PROC_FILE, NULL, err);
	fclose(f);
	return text;
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
