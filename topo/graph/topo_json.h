/*
 * topo_json: topognn's own graph file (JSON, read and written with jansson).
 *
 * Lossless: saving a graph and loading it back gives a graph that
 * topo_graph_equal() finds identical, so any discovery can be saved and
 * replayed. The schema is documented in docs/graph-format.md.
 */
#ifndef TOPO_JSON_H
#define TOPO_JSON_H

#include "topognn_export.h"

#include <stdio.h>

#include "topo_error.h"
#include "topo_graph.h"

#define TOPO_JSON_FORMAT "topognn-graph"
#define TOPO_JSON_VERSION 1

/* Load a graph file into an empty graph `g`. Returns 0, or -1 with err
 * naming the file, the line (JSON syntax errors) or the JSON path
 * ("vertices[3].kind") and the problem. */
TOPOGNN_EXPORT int topo_load_json(topo_graph *g, const char *path, topo_error *err);

/* The same from a buffer; `source` names it in errors. */
TOPOGNN_EXPORT int topo_load_json_mem(topo_graph *g, const char *text, size_t len,
				      const char *source, topo_error *err);

/* Write `g` as a graph file. Vertices and edges are written in id order:
 * canonicalize first for a deterministic file. Returns 0 or -1. */
TOPOGNN_EXPORT int topo_write_json(const topo_graph *g, FILE *out, topo_error *err);

#endif
