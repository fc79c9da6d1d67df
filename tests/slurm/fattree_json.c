/*
 * fattree_json: write a generated rail-optimized fat-tree as a topognn graph
 * file, for the real-cluster tests of topology/topognn (until
 * topognn-discover can emit generated fabrics itself).
 *
 * Usage: fattree_json SPEC > graph.json
 *   SPEC as topo_fattree_parse(), e.g. "groups=4,hosts=8,rails=2,prefix=n,digits=3"
 */
#include <stdio.h>

#include "topo_fattree.h"
#include "topo_graph.h"
#include "topo_json.h"

int main(int argc, char **argv)
{
	topo_fattree_spec spec;
	topo_error err;
	topo_graph *g;
	char buf[1024];
	int rc = 1;

	if (argc != 2) {
		fprintf(stderr, "usage: %s SPEC > graph.json\n", argv[0]);
		return 2;
	}
	topo_error_clear(&err);
	topo_fattree_spec_init(&spec);
	if (!(g = topo_graph_new()))
		return 1;
	if (topo_fattree_parse(argv[1], &spec, &err) == 0 &&
	    topo_fattree_build(g, &spec, &err) == 0 &&
	    topo_graph_canonicalize(g) == 0 &&
	    topo_write_json(g, stdout, &err) == 0)
		rc = 0;
	else
		fprintf(stderr, "fattree_json: %s\n", topo_error_format(&err, buf, sizeof(buf)));
	topo_graph_free(g);
	return rc;
}
