/*
 * topo_io: read a whole file (or stream) into memory, with a size limit.
 *
 * Every loader opens its input the same way (topo_open_input: never blocks
 * on a FIFO, only regular files, a size limit), and those that parse from
 * memory (ibnetdiscover dumps, topology.conf, hwloc XML, decision logs,
 * class rules, graph JSON, node reports) read it the same way: all of it, NUL-terminated so text parsers may use string functions,
 * refused beyond a limit the caller names (a config file has no business
 * being 10 GB, and slurmctld must not be made to swallow one), with the
 * file name and the reason in the error. Loaders that read a program's
 * output (lldpcli, gzip) start it the same way too (topo_spawn_reader).
 */
#ifndef TOPO_IO_H
#define TOPO_IO_H

#include <stdio.h>
#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

#include "topo_error.h"

/* The limit when the caller has no better one: 1 GiB. */
#define TOPO_IO_MAX_BYTES ((size_t)1 << 30)

/* topo_open_input flags. */
#define TOPO_OPEN_NOFOLLOW 1u /* refuse a symbolic link as the last component */
#define TOPO_OPEN_TRUSTED 2u  /* owned by root or by us, not group/other-writable,
			       * one hard link: for directories others may write to */

/*
 * Open an input file for reading, the one way every loader does (graph,
 * topognn.conf, models, hwloc XML, telemetry maps, node reports, traces...):
 * open(O_RDONLY|O_NONBLOCK|O_CLOEXEC, plus O_NOFOLLOW with
 * TOPO_OPEN_NOFOLLOW), so a FIFO or a device never blocks the caller
 * (slurmctld must not hang on a FIFO given as GraphFile); fstat: it must be a
 * regular file of at most max bytes (0: no limit); then O_NONBLOCK is
 * cleared. Returns the descriptor, or -1 with err naming the file and the
 * problem ("is a FIFO, not a regular file", "is a symbolic link (not
 * followed)", "is owned by uid 1000, neither root nor us", ...); when open()
 * itself failed, errno is still its errno (ENOENT: no such file).
 * Kernel files (/proc, /sys) are regular files that report a size of 0 (or
 * 4096): the size check passes and the reader stops at EOF or at max.
 */
int topo_open_input(const char *path, unsigned flags, size_t max, topo_error *err);

/* The same as a stdio stream ("r"); NULL with err. */
FILE *topo_fopen_input(const char *path, unsigned flags, size_t max, topo_error *err);

/* Read all of `path` (opened by topo_open_input with flags 0) into a new
 * NUL-terminated buffer (free() it). Returns the buffer and its length
 * (without the NUL) in *len, or NULL with err naming the file: cannot open,
 * not a regular file, read error, larger than max bytes, out of memory. */
char *topo_read_file(const char *path, size_t max, size_t *len, topo_error *err);

/* The same with topo_open_input flags. */
char *topo_read_input(const char *path, unsigned flags, size_t max, size_t *len,
		      topo_error *err);

/* The same from an open stream (a pipe is fine: nothing is rewound);
 * `source` names it in errors. The stream is not closed. */
char *topo_read_stream(FILE *f, const char *source, size_t max, size_t *len, topo_error *err);

/* Start argv[0], looked up in PATH, with its stdout on a pipe and its
 * stderr on /dev/null (a library does not print: the caller turns the exit
 * status into its own error). Returns the pipe's read end (close it, then
 * waitpid(*pid)) with the child's pid in *pid; or -1 with errno set and
 * *why saying which step failed ("cannot get a pipe", "cannot be started"). */
int topo_spawn_reader(char *const argv[], pid_t *pid, const char **why);

/* json_load_file() for every JSON input (graph, models, NetQ, telemetry
 * maps, node reports, samples): the file is opened by topo_open_input with
 * open_flags (never blocks on a FIFO; a regular file of at most
 * TOPO_IO_MAX_BYTES), so a file that cannot be read that way fails like a
 * file that cannot be opened: NULL, line -1 and the reason in jerr->text. */
json_t *topo_json_load_input(const char *path, unsigned open_flags, size_t json_flags,
			     json_error_t *jerr);

#endif
