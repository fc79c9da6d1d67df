/*
 * place_model_file: the shipped GNN model's path (see place_model_file.h).
 *
 * "Uninstalled" means the code object that holds this function (the tool's
 * executable or the Slurm plugin's .so, found with dladdr) lies under the
 * build tree configure ran in; then models/ of the source tree is used, so
 * a fresh build runs the model it ships without `make install`.
 */
#define _GNU_SOURCE
#include "place_model_file.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef TOPOGNN_DEFAULT_MODEL
#error "TOPOGNN_DEFAULT_MODEL must be defined (configure.ac)"
#endif

const char *place_default_model_name(void)
{
	return TOPOGNN_DEFAULT_MODEL;
}

/* Real path of the executable or shared object this function is in. */
static int own_object(char *out)
{
	Dl_info info;

	if (dladdr((void *)place_default_model_path, &info) && info.dli_fname &&
	    strchr(info.dli_fname, '/') && realpath(info.dli_fname, out))
		return 0;
	return realpath("/proc/self/exe", out) ? 0 : -1;
}

/* Whether this code runs from the build tree configure ran in. */
static int uninstalled(void)
{
	char self[PATH_MAX], build[PATH_MAX];
	size_t n;

	if (own_object(self) || !realpath(TOPOGNN_ABS_BUILDDIR, build))
		return 0;
	n = strlen(build);
	return strncmp(self, build, n) == 0 && self[n] == '/';
}

int place_data_path(const char *src_rel, const char *name, char *buf, size_t len)
{
	char src[PATH_MAX];
	int n;

	if (uninstalled())
		n = snprintf(buf, len, "%s/%s/%s",
			     realpath(TOPOGNN_ABS_SRCDIR, src) ? src : TOPOGNN_ABS_SRCDIR, src_rel,
			     name);
	else
		n = snprintf(buf, len, "%s/%s", TOPOGNN_PKGDATADIR, name);

	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return access(buf, R_OK) == 0 ? 0 : -1;
}

int place_default_model_path(char *buf, size_t len)
{
	return place_data_path("models", TOPOGNN_DEFAULT_MODEL, buf, len);
}
