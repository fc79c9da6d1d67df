/*
 * bind_irq_state: the state journal. What enforce changed is saved byte for
 * byte in <state_dir>/job-<id>.state before any write, and put back by
 * bind_irq_restore (job end) and bind_irq_recover (next start, for jobs that
 * are gone). Root reads only trusted state files (bind_irq.h: owner, mode,
 * O_NOFOLLOW, a trusted directory), writes them through mkostemp + rename,
 * and writes back only IRQs of the adapter a saved line names.
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

void bind_irq_saved_free(saved_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].path);
		free(l->v[i].orig);
	}
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

saved_file *bind_irq_saved_add(saved_list *l)
{
	saved_file *bigger = realloc(l->v, (l->n + 1) * sizeof(*bigger));

	if (!bigger)
		return NULL;
	l->v = bigger;
	memset(&l->v[l->n], 0, sizeof(l->v[l->n]));
	return &l->v[l->n++];
}

int bind_name_ok(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (n == 0 || n > 64 || name[0] == '.')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr("._-", name[i]))
			return 0;
	return strstr(name, "..") == NULL;
}

static int valid_job_id(const char *id)
{
	return bind_name_ok(id);
}

/* The state directory must be ours (trusted_stat), else anyone could plant
 * or swap state. */
int bind_irq_state_dir_ok(const char *dir, topo_error *err)
{
	struct stat st;

	if (stat(dir, &st) < 0) {
		topo_error_set(err, dir, 0, "state directory: %s", strerror(errno));
		return -1;
	}
	return bind_irq_trusted_stat(&st, 1, dir, err);
}

int bind_irq_state_path(char *buf, size_t len, const char *dir, const char *job_id, topo_error *err)
{
	if (!valid_job_id(job_id)) {
		topo_error_set(err, "", 0,
			       "job id \"%s\" is not 1-64 characters of letters, digits, '.', '_', '-'",
			       job_id ? job_id : "(null)");
		return -1;
	}
	return bind_irq_path_fmt(buf, len, err, "%s/job-%s.state", dir, job_id);
}

/* The only file enforce writes and restore may write back. */
int bind_irq_file_path(char *buf, size_t len, const bind_roots *roots, int irq, topo_error *err)
{
	return bind_irq_path_fmt(buf, len, err, "%s/irq/%d/smp_affinity_list", bind_irq_proc_root(roots), irq);
}

int bind_irq_fsync_dir(const char *dir, topo_error *err)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 || fsync(fd) < 0) {
		topo_error_set(err, dir, 0, "cannot sync the state directory: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/* Append `s` (len bytes) to a growing buffer; -1 when out of memory. */
static int buf_put(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
	if (*len + n + 1 > *cap) {
		size_t cap2 = *cap ? *cap : 256;
		char *bigger;

		while (*len + n + 1 > cap2)
			cap2 *= 2;
		bigger = realloc(*buf, cap2);
		if (!bigger)
			return -1;
		*buf = bigger;
		*cap = cap2;
	}
	memcpy(*buf + *len, s, n);
	*len += n;
	(*buf)[*len] = '\0';
	return 0;
}

static char *state_text(const char *job_id, const saved_list *l)
{
	char *buf = NULL, line[PATH_MAX + 128];
	size_t len = 0, cap = 0;
	int ok;

	snprintf(line, sizeof(line),
		 "# topognn: IRQ affinities before job %s changed them; restored at job end\n"
		 STATE_MAGIC "\njob %s\n", job_id, job_id);
	ok = buf_put(&buf, &len, &cap, line, strlen(line)) == 0;
	for (size_t i = 0; ok && i < l->n; i++) {
		const saved_file *f = &l->v[i];

		snprintf(line, sizeof(line), "save %d %s ", f->irq, f->hca);
		ok = buf_put(&buf, &len, &cap, line, strlen(line)) == 0;
		for (size_t b = 0; ok && b < f->origlen; b++) {
			snprintf(line, sizeof(line), "%02x", (unsigned char)f->orig[b]);
			ok = buf_put(&buf, &len, &cap, line, 2) == 0;
		}
		if (ok && f->origlen == 0)
			ok = buf_put(&buf, &len, &cap, "-", 1) == 0;
		snprintf(line, sizeof(line), " %s\n", f->path);
		ok = ok && buf_put(&buf, &len, &cap, line, strlen(line)) == 0;
	}
	snprintf(line, sizeof(line), "end %zu\n", l->n);
	ok = ok && buf_put(&buf, &len, &cap, line, strlen(line)) == 0;
	if (!ok) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Write the state file durably: a new temp file (mkostemp), fsync, rename
 * (which replaces a name, never follows it), fsync of the directory. */
int bind_irq_state_write(const char *dir, const char *path, const char *job_id, const saved_list *l,
		       topo_error *err)
{
	char tmp[PATH_MAX];
	char *text = state_text(job_id, l);
	size_t len, off = 0;
	int fd;

	if (!text) {
		topo_error_set(err, path, 0, "out of memory");
		return -1;
	}
	len = strlen(text);
	if (bind_irq_path_fmt(tmp, sizeof(tmp), err, "%s.tmp.XXXXXX", path)) {
		free(text);
		return -1;
	}
	/* mkstemp: a new name, O_CREAT|O_EXCL (never a planted file or symlink), mode 0600 */
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		topo_error_set(err, tmp, 0, "cannot create the state file: %s", strerror(errno));
		free(text);
		return -1;
	}
	while (off < len) {
		ssize_t put = write(fd, text + off, len - off);

		if (put < 0 && errno == EINTR)
			continue;
		if (put <= 0)
			break;
		off += (size_t)put;
	}
	free(text);
	if (off < len || fsync(fd) < 0) {
		topo_error_set(err, tmp, 0, "cannot write the state file: %s", strerror(errno));
		close(fd);
		unlink(tmp);
		return -1;
	}
	if (close(fd) < 0 || rename(tmp, path) < 0) {
		topo_error_set(err, path, 0, "cannot put the state file in place: %s", strerror(errno));
		unlink(tmp);
		return -1;
	}
	return bind_irq_fsync_dir(dir, err);
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* One "save <irq> <hca> <hex> <path>" line. */
static int state_parse_save(saved_list *l, char *p, const char *src, int line, topo_error *err)
{
	char *irq_s = strtok_r(p, " ", &p), *hca = strtok_r(NULL, " ", &p);
	char *hex = strtok_r(NULL, " ", &p);
	saved_file *f;
	size_t hexlen;

	if (!irq_s || !hca || !hex || !p || !*p || bind_irq_parse_uint(irq_s, strlen(irq_s)) < 0 ||
	    strlen(hca) >= sizeof(f->hca)) {
		topo_error_set(err, src, line, "expected \"save IRQ ADAPTER HEXBYTES PATH\"");
		return -1;
	}
	hexlen = strcmp(hex, "-") == 0 ? 0 : strlen(hex);
	if (hexlen % 2) {
		topo_error_set(err, src, line, "saved bytes \"%.32s\" are not hex pairs", hex);
		return -1;
	}
	f = bind_irq_saved_add(l);
	if (!f || !(f->path = strdup(p)) || !(f->orig = malloc(hexlen / 2 + 1))) {
		topo_error_set(err, src, line, "out of memory");
		return -1;
	}
	f->irq = bind_irq_parse_uint(irq_s, strlen(irq_s));
	snprintf(f->hca, sizeof(f->hca), "%s", hca);
	for (size_t i = 0; i < hexlen; i += 2) {
		int hi = hexval(hex[i]), lo = hexval(hex[i + 1]);

		if (hi < 0 || lo < 0) {
			topo_error_set(err, src, line, "saved bytes \"%.32s\" are not hex pairs", hex);
			return -1;
		}
		f->orig[i / 2] = (char)(hi * 16 + lo);
	}
	f->origlen = hexlen / 2;
	f->orig[f->origlen] = '\0';
	return 0;
}

/* Read a state file; `job_id` (if not NULL) must match its "job" line. */
int bind_irq_state_load(const char *path, const char *job_id, char *job_out, size_t job_len,
		      saved_list *l, topo_error *err)
{
	char *text = bind_irq_read_owned(path, err), *p, *next;
	int line = 0, have_magic = 0, have_job = 0, ended = 0;

	if (!text)
		return -1;
	for (p = text; p && *p; p = next) {
		next = strchr(p, '\n');
		if (next)
			*next++ = '\0';
		line++;
		if (ended) {
			if (*p) {
				topo_error_set(err, path, line, "text after the \"end\" line");
				goto fail;
			}
		} else if (p[0] == '#' || p[0] == '\0') {
			continue;
		} else if (!have_magic) {
			if (strcmp(p, STATE_MAGIC) != 0) {
				topo_error_set(err, path, line, "expected \"" STATE_MAGIC "\"");
				goto fail;
			}
			have_magic = 1;
		} else if (!have_job) {
			if (strncmp(p, "job ", 4) != 0 || !valid_job_id(p + 4) ||
			    (job_id && strcmp(p + 4, job_id) != 0)) {
				topo_error_set(err, path, line, "expected \"job %s\"",
					       job_id ? job_id : "ID");
				goto fail;
			}
			snprintf(job_out, job_len, "%s", p + 4);
			have_job = 1;
		} else if (strncmp(p, "save ", 5) == 0) {
			if (state_parse_save(l, p + 5, path, line, err) < 0)
				goto fail;
		} else if (strncmp(p, "end ", 4) == 0) {
			if (bind_irq_parse_uint(p + 4, strlen(p + 4)) != (int)l->n) {
				topo_error_set(err, path, line, "\"%s\" but %zu files are saved", p,
					       l->n);
				goto fail;
			}
			ended = 1;
		} else {
			topo_error_set(err, path, line, "expected \"save ...\" or \"end N\"");
			goto fail;
		}
	}
	if (!ended) {
		topo_error_set(err, path, line, "state file is incomplete (no \"end\" line)");
		goto fail;
	}
	free(text);
	return 0;
fail:
	free(text);
	bind_irq_saved_free(l);
	return -1;
}

int bind_irq_check_root(const bind_roots *roots, const char *what, topo_error *err)
{
	if ((!roots || !roots->fake_tree) && geteuid() != 0) {
		topo_error_set(err, "", 0, "%s changes /proc/irq and needs root (euid 0)", what);
		return -1;
	}
	return 0;
}

/* Current content of an IRQ file as one trimmed line, for log messages. */
static void current_text(const char *path, char *out, size_t len)
{
	char *text = bind_irq_read_all(path, NULL, NULL, NULL);

	snprintf(out, len, "?");
	if (text)
		bind_irq_first_line(text, out, len);
	free(text);
}

/* Is `irq` one of adapter `hca`'s IRQs on this node, as bind_irq_load reads them? */
static int irq_of_adapter(const bind_roots *roots, const char *hca, int irq)
{
	bind_nic_req req = { hca, NULL };
	topo_error e;
	bind_irq_set *set = bind_irq_load(roots, &req, 1, &e);
	int found = 0;

	for (size_t i = 0; set && i < set->nirqs; i++)
		found |= set->irqs[i].irq == irq;
	bind_irq_set_free(set);
	return found;
}

/* Write every saved file of a state file back; keep going past failures.
 * Only the smp_affinity_list of an IRQ of the adapter the line names is
 * ever written: a state file cannot reach any other IRQ or file. */
static int state_apply(const bind_roots *roots, const char *path, const saved_list *l,
		       const bind_log *log, topo_error *err)
{
	int failed = 0;

	for (size_t i = 0; i < l->n; i++) {
		const saved_file *f = &l->v[i];
		char want[PATH_MAX], now[64], before[64];
		topo_error e;

		if (bind_irq_file_path(want, sizeof(want), roots, f->irq, &e) < 0 ||
		    strcmp(want, f->path) != 0) {
			if (!failed++)
				topo_error_set(err, path, 0,
					       "saved path %s is not %s; it was not written",
					       f->path, want);
			continue;
		}
		if (!irq_of_adapter(roots, f->hca, f->irq)) {
			if (!failed++)
				topo_error_set(err, path, 0,
					       "irq %d is not an IRQ of adapter %s on this node; it was not written",
					       f->irq, f->hca);
			continue;
		}
		current_text(f->path, now, sizeof(now));
		if (bind_irq_write_all(f->path, f->orig, f->origlen, &e) < 0) {
			if (!failed++)
				*err = e;
			continue;
		}
		bind_irq_first_line(f->orig, before, sizeof(before));
		bind_irq_say(log, "irq %d (%s) smp_affinity_list %s -> %s, restored from %s", f->irq, f->hca,
		    now, before, path);
	}
	return failed ? -1 : 0;
}

/* Restore one state file and remove it. Returns files restored or -1. */
static int state_restore(const bind_roots *roots, const char *dir, const char *path,
			 const char *job_id, const bind_log *log, topo_error *err)
{
	saved_list l = { 0 };
	char job[80];
	int n;

	if (bind_irq_state_load(path, job_id, job, sizeof(job), &l, err) < 0)
		return -1;
	if (state_apply(roots, path, &l, log, err) < 0) {
		bind_irq_saved_free(&l);
		return -1;
	}
	n = (int)l.n;
	bind_irq_saved_free(&l);
	if (unlink(path) < 0) {
		topo_error_set(err, path, 0, "restored, but cannot remove the state file: %s",
			       strerror(errno));
		return -1;
	}
	if (bind_irq_fsync_dir(dir, err) < 0)
		return -1;
	bind_irq_say(log, "job %s: %d IRQ affinit%s restored, %s removed", job, n, n == 1 ? "y" : "ies",
	    path);
	return n;
}

int bind_irq_restore(const bind_roots *roots, const char *state_dir, const char *job_id,
		     const bind_log *log, topo_error *err)
{
	char path[PATH_MAX];

	topo_error_clear(err);
	if (bind_irq_state_path(path, sizeof(path), state_dir, job_id, err) < 0)
		return -1;
	if (access(path, F_OK) < 0 && errno == ENOENT)
		return 0;
	if (bind_irq_check_root(roots, "IRQ restore", err) < 0 || bind_irq_state_dir_ok(state_dir, err) < 0)
		return -1;
	return state_restore(roots, state_dir, path, job_id, log, err);
}

/* The job id of a "job-<id>.state" name, or NULL. */
const char *bind_irq_state_name_job(const char *name, char *job, size_t len)
{
	size_t n = strlen(name);

	if (n <= 10 || strncmp(name, "job-", 4) != 0 || strcmp(name + n - 6, ".state") != 0)
		return NULL;
	snprintf(job, len, "%.*s", (int)(n - 10), name + 4);
	return valid_job_id(job) ? job : NULL;
}

int bind_irq_recover(const bind_roots *roots, const char *state_dir, bind_job_running_fn running,
		     void *ctx, const bind_log *log, topo_error *err)
{
	struct dirent **ents = NULL;
	int n, restored = 0, failed = 0;

	topo_error_clear(err);
	if (access(state_dir, F_OK) < 0 && errno == ENOENT)
		return 0;
	if (bind_irq_state_dir_ok(state_dir, err) < 0)
		return -1;
	n = scandir(state_dir, &ents, NULL, alphasort);
	if (n < 0) {
		topo_error_set(err, state_dir, 0, "cannot list saved IRQ state: %s", strerror(errno));
		return -1;
	}
	for (int i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;
		char path[PATH_MAX], job[80];
		size_t len = strlen(name);
		topo_error e;

		topo_error_clear(&e);
		if (bind_irq_path_fmt(path, sizeof(path), &e, "%s/%s", state_dir, name) < 0) {
			if (!failed++)
				*err = e;
		} else if (len > 14 && strncmp(name, "job-", 4) == 0 &&
			   (strcmp(name + len - 10, ".state.tmp") == 0 ||
			    strstr(name, ".state.tmp."))) {
			/* a save that never completed: nothing was changed after it */
			if (unlink(path) == 0)
				bind_irq_say(log, "removed incomplete saved state %s", path);
		} else if (bind_irq_state_name_job(name, job, sizeof(job)) &&
			   !(running && running(ctx, job))) {
			int got = bind_irq_check_root(roots, "IRQ recover", &e) < 0
					  ? -1
					  : state_restore(roots, state_dir, path, job, log, &e);

			if (got < 0) {
				if (!failed++)
					*err = e;
			} else {
				bind_irq_say(log, "job %s is not running: its saved IRQ state was restored",
				    job);
				restored++;
			}
		}
		free(ents[i]);
	}
	free(ents);
	return failed ? -1 : restored;
}
