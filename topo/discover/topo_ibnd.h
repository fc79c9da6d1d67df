/*
 * topo_ibnd: live InfiniBand fabric discovery through libibnetdisc.
 *
 * Walks the fabric that ibnd_discover_fabric() finds from a local HCA port
 * (directed-route SMPs, like `ibnetdiscover`) and feeds its nodes and cables
 * to the topo_fabric builder, so the graph equals the one loaded from
 * `ibnetdiscover` text output of the same fabric. Built only when configure
 * found libibnetdisc (HAVE_IBNETDISC). Under ibsim, run the program with
 * `ibsim-run PROGRAM` (LD_PRELOAD of libumad2sim.so).
 */
#ifndef TOPO_IBND_H
#define TOPO_IBND_H

#include "topo_error.h"
#include "topo_fabric.h"
#include "topo_graph.h"

/* Discover the fabric through `ca_name` (NULL: the first HCA) port
 * `ca_port` (0: the first active port) and build it into `g`. Errors name
 * the source "<ibnd>". Returns 0 or -1. */
int topo_load_ibnd(topo_graph *g, const char *ca_name, int ca_port, const topo_fabric_opts *opts,
		   topo_error *err);

#endif
