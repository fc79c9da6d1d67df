/*
 * topo_uf: union-find over ints 0..n-1, the one copy the loaders share.
 *
 * The caller owns the parent array (parent[i] = i to start). Roots are the
 * smallest member of their set, so the result does not depend on the order
 * in which sets were joined: groups come out the same for the same graph.
 */
#ifndef TOPO_UF_H
#define TOPO_UF_H

/* The root of x's set (halving the path on the way). */
int topo_uf_find(int *parent, int x);

/* Join the sets of a and b; the smaller root becomes the root of both. */
void topo_uf_union(int *parent, int a, int b);

#endif
