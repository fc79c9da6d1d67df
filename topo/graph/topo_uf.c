/*
 * topo_uf: union-find with path halving (see topo_uf.h).
 */
#include "topo_uf.h"

int topo_uf_find(int *parent, int x)
{
	while (parent[x] != x) {
		parent[x] = parent[parent[x]];
		x = parent[x];
	}
	return x;
}

void topo_uf_union(int *parent, int a, int b)
{
	a = topo_uf_find(parent, a);
	b = topo_uf_find(parent, b);
	if (a != b)
		parent[a < b ? b : a] = a < b ? a : b;
}
