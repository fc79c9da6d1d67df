/*
 * topo_error: the one error report every topo loader and writer fills in.
 *
 * Like jansson's json_error_t: where (file and line, when there is one) and a
 * sentence a person can act on, e.g.
 *   "fabric.txt:120: switch port 70 is beyond the switch's 65 ports".
 * A function that fails returns -1 (or NULL) and fills the error; it never
 * prints or aborts.
 */
#ifndef TOPO_ERROR_H
#define TOPO_ERROR_H

#include "topognn_export.h"

#include <stdarg.h>
#include <stddef.h>

#define TOPO_ERROR_TEXT_LEN 512
#define TOPO_ERROR_SOURCE_LEN 256

typedef struct topo_error {
	char source[TOPO_ERROR_SOURCE_LEN]; /* file name, or "<live>", "" if none */
	int line;                           /* 1-based line; 0 when it does not apply */
	int column;                         /* 1-based column in the line; 0 when unknown */
	char text[TOPO_ERROR_TEXT_LEN];     /* one sentence, no trailing newline */
} topo_error;

/* Clear an error report (no error). `err` may be NULL. */
TOPOGNN_EXPORT void topo_error_clear(topo_error *err);

/* Fill `err` (if not NULL) with source, line and a printf-style sentence. */
TOPOGNN_EXPORT void topo_error_set(topo_error *err, const char *source, int line, const char *fmt,
				   ...)
	__attribute__((format(printf, 4, 5)));

/* The same with a column (0: unknown), for parsers that know where in the
 * line the problem is. */
TOPOGNN_EXPORT void topo_error_set_at(topo_error *err, const char *source, int line, int column,
		       const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* The va_list form, for loaders that wrap topo_error_set in their own
 * printf-like helper (their context supplies source and line). */
TOPOGNN_EXPORT void topo_error_vset(topo_error *err, const char *source, int line, int column,
		     const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));

/* Format as "source:line:column: text", "source:line: text" (column 0) or
 * "source: text" (line 0) into buf. */
TOPOGNN_EXPORT const char *topo_error_format(const topo_error *err, char *buf, size_t len);

#endif
