/*
 * topo_ibnetdiscover: loads the text that `ibnetdiscover` prints (its
 * default topology format) into a topo_graph through the topo_fabric
 * builder, so a saved dump gives the same graph as live discovery.
 *
 * Understood: comments, vendid=/devid=/sysimgguid=/switchguid=/caguid=/rtguid=
 * lines, "Switch", "Ca" and "Rt" headers and their port lines, with the
 * optional "[ext N]" and "(guid)" parts. Errors carry the file, the 1-based
 * line and one sentence: a port line outside any node or cut off, a port
 * beyond the node's port count, a port cabled twice, a node name or GUID
 * declared twice, a cable to a node the file never declares, a malformed
 * GUID, width or speed, an unknown node type.
 */
#ifndef TOPO_IBNETDISCOVER_H
#define TOPO_IBNETDISCOVER_H

#include "topognn_export.h"

#include <stddef.h>

#include "topo_error.h"
#include "topo_fabric.h"
#include "topo_graph.h"

/* Load the ibnetdiscover dump at `path` into `g` (normally empty). opts may
 * be NULL for the defaults. Returns 0, or -1 with err filled; on error g may
 * hold a partial graph, which the caller frees. */
TOPOGNN_EXPORT int topo_load_ibnetdiscover(topo_graph *g, const char *path,
					   const topo_fabric_opts *opts, topo_error *err);

/* The same from memory: `len` bytes of `text` (need not be NUL-terminated);
 * `source` names it in errors. */
TOPOGNN_EXPORT int topo_load_ibnetdiscover_mem(topo_graph *g, const char *text, size_t len,
					       const char *source, const topo_fabric_opts *opts,
					       topo_error *err);

#endif
