/* gnn_error: filling and formatting the gnn error report (see gnn_error.h). */
#include "gnn_error.h"

#include <stdarg.h>
#include <stdio.h>

void gnn_error_clear(gnn_error *err)
{
	if (!err)
		return;
	err->file[0] = '\0';
	err->path[0] = '\0';
	err->text[0] = '\0';
}

void gnn_error_set(gnn_error *err, const char *file, const char *path, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	snprintf(err->file, sizeof(err->file), "%s", file ? file : "");
	snprintf(err->path, sizeof(err->path), "%s", path ? path : "");
	va_start(ap, fmt);
	vsnprintf(err->text, sizeof(err->text), fmt, ap);
	va_end(ap);
}

const char *gnn_error_format(const gnn_error *err, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s%s", err->file, err->file[0] ? ": " : "",
		 err->path, err->path[0] ? ": " : "", err->text);
	return buf;
}
