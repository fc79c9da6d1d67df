/*
 * topo_check: structural checks of a fabric that no loader can rule out by
 * syntax alone, recorded as graph anomalies (topo_graph_add_anomaly) so the
 * summary, the JSON and the admin see them instead of "anomalies: 0":
 *
 *   self-loop       a cable from a switch (or HCA) to itself
 *   duplicate-edge  the same cable twice (same ends, same ports)
 *   switch-cycle    switches cabled in an odd loop (A-B-C-A): a fat tree's
 *                   switch graph alternates levels, so every loop in it has
 *                   an even length; an odd one is a miscabled or made-up
 *                   fabric, and hop counts over it mean nothing
 *
 * Run on graphs read from files people write (our JSON); discovery builds
 * graphs that cannot have these by construction.
 */
#ifndef TOPO_CHECK_H
#define TOPO_CHECK_H

#include "topo_graph.h"

/* Add an anomaly for each problem found (one per self-loop, one per
 * duplicated cable, one per odd loop found). Returns how many were added, or
 * -1 when memory runs out. An anomaly already recorded (same kind and
 * subject, e.g. loaded from a file) is not added twice. */
int topo_check_fabric(topo_graph *g);

#endif
