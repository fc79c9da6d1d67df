/*
 * topo_hostdir: per-host input directories (see topo_hostdir.h).
 */
#include "topo_hostdir.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "topo_hostlist.h"

void topo_hostdir_free(topo_hostdir *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->host[i]);
		free(d->path[i]);
	}
	free(d->host);
	free(d->path);
	memset(d, 0, sizeof(*d));
}

static int push(topo_hostdir *d, size_t *cap, const char *dir, const char *name, size_t hlen)
{
	size_t plen = strlen(dir) + strlen(name) + 2;

	if (d->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		char **h = realloc(d->host, ncap * sizeof(*h)), **p;

		if (!h)
			return -1;
		d->host = h;
		if (!(p = realloc(d->path, ncap * sizeof(*p))))
			return -1;
		d->path = p;
		*cap = ncap;
	}
	d->host[d->n] = strndup(name, hlen);
	d->path[d->n] = malloc(plen);
	if (!d->host[d->n] || !d->path[d->n]) {
		free(d->host[d->n]);
		free(d->path[d->n]);
		return -1;
	}
	snprintf(d->path[d->n], plen, "%s/%s", dir, name);
	d->n++;
	return 0;
}

typedef struct entry {
	char *host, *path;
} entry;

static int cmp_entry(const void *a, const void *b)
{
	return topo_hostname_cmp(((const entry *)a)->host, ((const entry *)b)->host);
}

/* Sort hosts and paths together, by host name. */
static int sort_hosts(topo_hostdir *d)
{
	entry *e = malloc(d->n * sizeof(*e));

	if (!e)
		return -1;
	for (size_t i = 0; i < d->n; i++)
		e[i] = (entry){ d->host[i], d->path[i] };
	qsort(e, d->n, sizeof(*e), cmp_entry);
	for (size_t i = 0; i < d->n; i++) {
		d->host[i] = e[i].host;
		d->path[i] = e[i].path;
	}
	free(e);
	return 0;
}

int topo_hostdir_list(topo_hostdir *d, const char *dir, const char *ext, topo_error *err)
{
	size_t elen = strlen(ext), cap = 0;
	struct dirent *de;
	DIR *dp;

	memset(d, 0, sizeof(*d));
	if (!(dp = opendir(dir))) {
		topo_error_set(err, dir, 0, "cannot open the directory: %s", strerror(errno));
		return -1;
	}
	while ((de = readdir(dp))) {
		size_t l = strlen(de->d_name);
		struct stat st;
		char path[4096];

		if (de->d_name[0] == '.' || l <= elen + 1 || de->d_name[l - elen - 1] != '.' ||
		    strcmp(de->d_name + l - elen, ext) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (push(d, &cap, dir, de->d_name, l - elen - 1) < 0) {
			closedir(dp);
			topo_hostdir_free(d);
			topo_error_set(err, dir, 0, "out of memory");
			return -1;
		}
	}
	closedir(dp);
	if (d->n == 0) {
		topo_error_set(err, dir, 0, "the directory holds no HOST.%s file", ext);
		return -1;
	}
	if (sort_hosts(d) < 0) {
		topo_hostdir_free(d);
		topo_error_set(err, dir, 0, "out of memory");
		return -1;
	}
	return 0;
}

