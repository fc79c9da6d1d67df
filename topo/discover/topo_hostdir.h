/*
 * topo_hostdir: the per-host input directories that several discovery
 * sources share (DIR/HOST.txt from nvidia-smi, DIR/HOST.json from lldpcli):
 * list the files with one extension, in host-name order, with the host name
 * each stands for, and read one whole.
 */
#ifndef TOPO_HOSTDIR_H
#define TOPO_HOSTDIR_H

#include <stddef.h>

#include "topo_error.h"
#include "topo_io.h"

typedef struct topo_hostdir {
	size_t n;
	char **host; /* host names ("dgx-01"), sorted by topo_hostname_cmp */
	char **path; /* "DIR/dgx-01.txt" */
} topo_hostdir;

/* List DIR's regular files named HOST.EXT (ext without the dot; hidden files
 * skipped). Returns 0, or -1 with err filled when the directory cannot be
 * read or holds no such file. */
int topo_hostdir_list(topo_hostdir *d, const char *dir, const char *ext, topo_error *err);
void topo_hostdir_free(topo_hostdir *d);

/* Read a whole file (at most max bytes) into a NUL-terminated buffer the
 * caller frees; *len gets its length. NULL with err filled on failure. */

#endif
