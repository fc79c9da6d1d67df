/*
 * gnn_error: the one error report every gnn function fills in.
 *
 * Like jansson's json_error_t, it says where (the file, and the path of the
 * offending value inside the JSON, e.g. "layers[2].weight[3][1]") and gives a
 * sentence a person can act on. A gnn function that fails returns -1 or NULL
 * and fills the report; the library never prints and never aborts.
 */
#ifndef GNN_ERROR_H
#define GNN_ERROR_H

#include "gnn_export.h"

#include <stddef.h>

#define GNN_ERROR_FILE_LEN 256
#define GNN_ERROR_PATH_LEN 128
#define GNN_ERROR_TEXT_LEN 384

typedef struct gnn_error {
	char file[GNN_ERROR_FILE_LEN]; /* file name, "" when none (e.g. an in-memory string) */
	char path[GNN_ERROR_PATH_LEN]; /* JSON path of the bad value, "" when it does not apply */
	char text[GNN_ERROR_TEXT_LEN]; /* one sentence, no trailing newline */
} gnn_error;

/* Clear a report (no error). `err` may be NULL. */
GNN_EXPORT void gnn_error_clear(gnn_error *err);

/* Fill `err` (if not NULL) with file, JSON path and a printf-style sentence. */
GNN_EXPORT void gnn_error_set(gnn_error *err, const char *file, const char *path, const char *fmt,
			      ...)
	__attribute__((format(printf, 4, 5)));

/* Format as "file: path: text", leaving out the empty parts, into buf. */
GNN_EXPORT const char *gnn_error_format(const gnn_error *err, char *buf, size_t len);

#endif
