/*
 * topo_ibsim: writes a graph's fabric as an ibsim netlist.
 *
 * ibsim (Debian ibsim-utils) simulates an InfiniBand fabric from a netlist
 * in the ibnetdiscover-like format; libibumad programs run under it through
 * libumad2sim.so (`ibsim-run PROGRAM`). Writing the netlist from a graph lets
 * the integration tests discover a fabric the project generated, live through
 * libibnetdisc and through the real `ibnetdiscover`, and check that both give
 * back the same graph.
 *
 * What is kept: node types, GUIDs (switch node GUIDs; CA node GUID = port GUID
 * minus port number), node descriptions (so the fabric builder finds the same
 * hosts and switch names), LIDs, port numbers, link widths and speeds (SDR to
 * NDR; ibsim does not know XDR).
 */
#ifndef TOPO_IBSIM_H
#define TOPO_IBSIM_H

#include <stdio.h>

#include "topo_error.h"
#include "topo_graph.h"

/* Longest node description ibsim keeps (its NodeDescription is 64 bytes). */
#define TOPO_IBSIM_MAX_DESC 63
/* Most ports one ibsim node may have. */
#define TOPO_IBSIM_MAX_PORTS 254

/* Write the switches, HCAs and fabric cables of `g` to `out` as an ibsim
 * netlist (start it with `ibsim -s FILE`). Nodes come out in a fixed order:
 * switches by name, then CAs by node GUID, so the first node (ibsim's attach
 * point) is a switch. Returns 0, or -1 when the graph cannot be expressed
 * (a description too long or with a quote, too many ports, a write error). */
int topo_write_ibsim_netlist(const topo_graph *g, FILE *out, topo_error *err);

#endif
