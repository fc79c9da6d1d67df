/*
 * bind_roce: the RoCE v2 GID index of a port from sysfs (see bind_roce.h).
 */
#include "bind_roce.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo_io.h"
#include "topo_num.h"


/* Read the first line of a small sysfs file into buf (newline dropped)
 * through the common input helper (a regular file, at most 4 KiB: sysfs
 * attributes are one page); 0 or -1. */
static int read_line(const char *path, char *buf, size_t len)
{
	size_t n;
	char *text = topo_read_input(path, 0, 4096, &n, NULL);

	if (!text)
		return -1;
	text[strcspn(text, "\n")] = '\0';
	snprintf(buf, len, "%s", text);
	free(text);
	return 0;
}

/* 3: IPv4-mapped, 2: other routable, 1: link-local, 0: zero or unreadable. */
static int gid_rank(const char *gid)
{
	if (strlen(gid) != 39 || strcmp(gid, "0000:0000:0000:0000:0000:0000:0000:0000") == 0)
		return 0;
	if (strncmp(gid, "0000:0000:0000:0000:0000:ffff:", 30) == 0)
		return 3;
	if (strncmp(gid, "fe80:", 5) == 0)
		return 1;
	return 2;
}

int bind_roce_gid_index(const char *sysfs_root, const char *dev, int port)
{
	char dir[4096], path[4200], buf[64];
	int best = -1, best_rank = 0;
	struct dirent *de;
	DIR *d;

	if ((size_t)snprintf(dir, sizeof(dir), "%s/class/infiniband/%s/ports/%d", sysfs_root, dev,
			     port) >= sizeof(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/gid_attrs/types", dir);
	if (!(d = opendir(path)))
		return -1;
	while ((de = readdir(d))) {
		long idx;
		int rank;

		if (topo_parse_long(de->d_name, 0, 65535, &idx) < 0)
			continue;
		snprintf(path, sizeof(path), "%s/gid_attrs/types/%ld", dir, idx);
		if (read_line(path, buf, sizeof(buf)) < 0 || strcmp(buf, "RoCE v2") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/gids/%ld", dir, idx);
		if (read_line(path, buf, sizeof(buf)) < 0 || !(rank = gid_rank(buf)))
			continue;
		if (rank > best_rank || (rank == best_rank && idx < best)) {
			best = (int)idx;
			best_rank = rank;
		}
	}
	closedir(d);
	return best;
}
