/* topo_error: filling and formatting the shared error report (see topo_error.h). */
#include "topo_error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void topo_error_clear(topo_error *err)
{
	if (!err)
		return;
	err->source[0] = '\0';
	err->line = 0;
	err->column = 0;
	err->text[0] = '\0';
}

void topo_error_vset(topo_error *err, const char *source, int line, int column,
		     const char *fmt, va_list ap)
{
	if (!err)
		return;
	snprintf(err->source, sizeof(err->source), "%s", source ? source : "");
	err->line = line;
	err->column = column;
	vsnprintf(err->text, sizeof(err->text), fmt, ap);
}

void topo_error_set(topo_error *err, const char *source, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	topo_error_vset(err, source, line, 0, fmt, ap);
	va_end(ap);
}

void topo_error_set_at(topo_error *err, const char *source, int line, int column,
		       const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	topo_error_vset(err, source, line, column, fmt, ap);
	va_end(ap);
}

const char *topo_error_format(const topo_error *err, char *buf, size_t len)
{
	if (err->line > 0 && err->column > 0)
		snprintf(buf, len, "%s:%d:%d: %s", err->source, err->line, err->column, err->text);
	else if (err->line > 0)
		snprintf(buf, len, "%s:%d: %s", err->source, err->line, err->text);
	else if (err->source[0])
		snprintf(buf, len, "%s: %s", err->source, err->text);
	else
		snprintf(buf, len, "%s", err->text);
	return buf;
}
