/*
 * topognn_export: TOPOGNN_EXPORT marks a function of libtopo's public API.
 *
 * Every topo area is compiled with -fvisibility=hidden, so a function is
 * exported from libtopo.so only when its declaration in an installed header
 * (the ones topognn/topognn.h includes) carries TOPOGNN_EXPORT. A helper
 * that the tools or tests need stays hidden: they link libtopo_private.la.
 * tests/symbols/libtopo.txt lists the exports; tests/test_exported_symbols.sh
 * fails when the library and the list differ.
 */
#ifndef TOPOGNN_EXPORT_H
#define TOPOGNN_EXPORT_H

#if defined(__GNUC__) && __GNUC__ >= 4
#define TOPOGNN_EXPORT __attribute__((visibility("default")))
#else
#define TOPOGNN_EXPORT
#endif

#endif
