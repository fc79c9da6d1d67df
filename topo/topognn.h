/*
 * topognn/topognn.h: the public API of libtopo and libgnn, in one include.
 *
 *   #include <topognn/topognn.h>      cc prog.c $(pkg-config --cflags --libs topognn)
 *
 * What a program can do with it:
 *   - build a cluster graph: from an ibnetdiscover dump (topo_ibnetdiscover.h),
 *     a Slurm topology.conf (topo_topology_conf.h), our JSON (topo_json.h), or
 *     by hand (topo_graph.h, topo_fabric.h); host lists (topo_hostlist.h);
 *   - place jobs on it with the placement engine (place.h);
 *   - load a GNN model, score vertex sets, train one (gnn_*.h).
 * Every failure is reported through topo_error / gnn_error (file, line, text).
 * Only the functions these headers declare are exported; the rest of the
 * source tree is private and may change without notice.
 */
#ifndef TOPOGNN_TOPOGNN_H
#define TOPOGNN_TOPOGNN_H

#include "topognn_export.h"
#include "topo_error.h"
#include "topo_graph.h"
#include "topo_hostlist.h"
#include "topo_json.h"
#include "topo_fabric.h"
#include "topo_ibnetdiscover.h"
#include "topo_topology_conf.h"
#include "place.h"

#include "gnn_export.h"
#include "gnn_error.h"
#include "gnn_model.h"
#include "gnn_infer.h"
#include "gnn_train.h"

#endif
