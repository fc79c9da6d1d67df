/*
 * topo_io: read a whole file (or stream) into memory, with a size limit.
 *
 * Every loader that parses from memory (ibnetdiscover dumps, topology.conf,
 * hwloc XML, decision logs, class rules, traces) reads its file the same
 * way: all of it, NUL-terminated so text parsers may use string functions,
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

#include "topo_error.h"

/* The limit when the caller has no better one: 1 GiB. */
#define TOPO_IO_MAX_BYTES ((size_t)1 << 30)

/* Read all of `path` into a new NUL-terminated buffer (free() it). Returns
 * the buffer and its length (without the NUL) in *len, or NULL with err
 * naming the file: cannot open, read error, larger than max bytes, out of
 * memory. */
char *topo_read_file(const char *path, size_t max, size_t *len, topo_error *err);

/* The same from an open stream (a pipe is fine: nothing is rewound);
 * `source` names it in errors. The stream is not closed. */
char *topo_read_stream(FILE *f, const char *source, size_t max, size_t *len, topo_error *err);

/* Start argv[0], looked up in PATH, with its stdout on a pipe and its
 * stderr on /dev/null (a library does not print: the caller turns the exit
 * status into its own error). Returns the pipe's read end (close it, then
 * waitpid(*pid)) with the child's pid in *pid; or -1 with errno set and
 * *why saying which step failed ("cannot get a pipe", "cannot be started"). */
int topo_spawn_reader(char *const argv[], pid_t *pid, const char **why);

#endif
