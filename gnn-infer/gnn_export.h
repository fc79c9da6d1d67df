/*
 * gnn_export: GNN_EXPORT marks a function of libgnn's public API.
 *
 * libgnn is built with -fvisibility=hidden, so a function is exported from
 * libgnn.so only when its declaration in an installed header carries
 * GNN_EXPORT; everything else (gnn_internal.h) stays inside the library.
 * tests/symbols/libgnn.txt lists what is exported, and make check fails when
 * the two differ (tests/test_exported_symbols.sh).
 */
#ifndef GNN_EXPORT_H
#define GNN_EXPORT_H

#if defined(__GNUC__) && __GNUC__ >= 4
#define GNN_EXPORT __attribute__((visibility("default")))
#else
#define GNN_EXPORT
#endif

#endif
