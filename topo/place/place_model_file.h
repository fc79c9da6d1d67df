/*
 * place_model_file: where the shipped GNN model (and other data) is, so that the gnn policy
 * works when no model is named (topognn-sim without --model, topognn.conf
 * without ModelFile=). The file name is configure.ac's TOPOGNN_DEFAULT_MODEL
 * (one place; models/Makefile.am installs that file into $(pkgdatadir)).
 */
#ifndef PLACE_MODEL_FILE_H
#define PLACE_MODEL_FILE_H

#include <stddef.h>

/* The shipped model's file name, e.g. "default.json". */
const char *place_default_model_name(void);

/*
 * Path of a shipped data file or directory: TOPOGNN_ABS_SRCDIR/src_rel/name
 * when this code runs from the build tree, else $(pkgdatadir)/name. Returns
 * 0 when it is readable, -1 otherwise (buf still holds the path looked at).
 */
int place_data_path(const char *src_rel, const char *name, char *buf, size_t len);

/*
 * Write the shipped model's path into buf: the source tree's models/ when
 * this code runs from the build tree (uninstalled), else $(pkgdatadir).
 * Returns 0 when that file is readable, -1 otherwise (buf still holds the
 * path looked at, for the error message; errno says why).
 */
int place_default_model_path(char *buf, size_t len);

#endif
