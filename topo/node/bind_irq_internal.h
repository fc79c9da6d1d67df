/*
 * bind_irq_internal: what the bind_irq_*.c files share and nobody else sees:
 * the set's layout, the state journal's record of a changed file, and the
 * file helpers. Not installed.
 */
#ifndef BIND_IRQ_INTERNAL_H
#define BIND_IRQ_INTERNAL_H

#include <stddef.h>

#include "bind_irq.h"

#define MAX_PROC_FILE (16u << 20) /* /proc/interrupts of a 1k-CPU host is a few MB */

struct bind_irq_set {
	bind_nic_info *nics;
	size_t nnics;
	bind_irq_info *irqs;
	size_t nirqs, capirqs;
};

#define STATE_MAGIC "topognn-irq-state 1"

/* One file enforce changed: where, whose, and its bytes before. */
typedef struct saved_file {
	int irq;
	char hca[64];
	char *path;
	char *orig;
	size_t origlen;
	int cpu; /* enforce: the new core */
} saved_file;

typedef struct saved_list {
	saved_file *v;
	size_t n;
} saved_list;

/* ---- file helpers (bind_irq_io.c) ---- */

struct stat;

/* A regular file (a directory when `dir`) owned by the euid and not writable
 * by group or others: 0; else -1 with err saying what it is. */
int bind_irq_trusted_stat(const struct stat *st, int dir, const char *path, topo_error *err);

/* "/proc" and "/sys" unless the roots name fake trees. */
const char *bind_irq_proc_root(const bind_roots *r);
const char *bind_irq_sys_root(const bind_roots *r);

/* One sentence to the caller's log callback (none: nothing). */
void bind_irq_say(const bind_log *log, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* snprintf into a path buffer; -1 with err filled when it does not fit. */
int bind_irq_path_fmt(char *buf, size_t len, topo_error *err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* A whole file (to EOF; proc files report size 0), NUL-terminated; NULL with
 * err naming it, *missing set when it does not exist. */
char *bind_irq_read_all(const char *path, size_t *len_out, int *missing, topo_error *err);

/* One of our own files: opened O_NOFOLLOW, a regular file owned by the euid,
 * not writable by group or others; else NULL with err saying why. */
char *bind_irq_read_owned(const char *path, topo_error *err);

/* Write len bytes to an existing file in one write() (proc files want that). */
int bind_irq_write_all(const char *path, const char *data, size_t len, topo_error *err);

/* A non-negative decimal int filling s[0..len); -1 if it is not one. */
int bind_irq_parse_uint(const char *s, size_t len);

/* The first line of s without trailing white space, for messages. */
void bind_irq_first_line(const char *s, char *out, size_t len);

/* ---- the state journal (bind_irq_state.c), as enforce uses it ---- */

void bind_irq_saved_free(saved_list *l);
saved_file *bind_irq_saved_add(saved_list *l);
int bind_irq_state_path(char *buf, size_t len, const char *dir, const char *job_id, topo_error *err);
int bind_irq_file_path(char *buf, size_t len, const bind_roots *roots, int irq, topo_error *err);
int bind_irq_state_dir_ok(const char *dir, topo_error *err);
int bind_irq_check_root(const bind_roots *roots, const char *what, topo_error *err);
int bind_irq_fsync_dir(const char *dir, topo_error *err);
int bind_irq_state_write(const char *dir, const char *path, const char *job_id, const saved_list *l,
			 topo_error *err);
int bind_irq_state_load(const char *path, const char *job_id, char *job_out, size_t job_len,
			saved_list *l, topo_error *err);
const char *bind_irq_state_name_job(const char *name, char *job, size_t len);

#endif
