/*
 * install_user.c: a program outside the tree, written only against the
 * installed public API (<topognn/topognn.h>, pkg-config topognn); built and
 * run by tests/test_install.sh. Loads an ibnetdiscover dump, places a
 * 4-host job with the tree policy, and loads a GNN model.
 * Usage: install_user FABRIC MODEL; prints "hosts=N chosen=N params=N".
 */
#include <topognn/topognn.h>

#include <stdio.h>

int main(int argc, char **argv)
{
	topo_error err;
	char buf[512];
	if (argc != 3)
		return 2;
	topo_graph *g = topo_graph_new();
	if (!g || topo_load_ibnetdiscover(g, argv[1], NULL, &err) != 0) {
		fprintf(stderr, "%s\n", topo_error_format(&err, buf, sizeof buf));
		return 1;
	}
	place_cluster *c = place_cluster_new(g, &err);
	place_state *s = c ? place_state_new(c) : NULL;
	place_config cfg;
	place_config_init(&cfg);
	place_engine *e = s ? place_engine_new(c, &cfg, &err) : NULL;
	if (!e) {
		fprintf(stderr, "%s\n", topo_error_format(&err, buf, sizeof buf));
		return 1;
	}
	for (int h = 0; h < place_cluster_nhosts(c); h++)
		place_state_set_host(s, h, 8, 8, 112, 112, 0);
	place_request r = {.job_id = 1, .min_hosts = 4, .exclusive = 1};
	place_decision d;
	int policy = place_policy_parse("tree");
	if (policy < 0 || place_decide(e, s, &r, policy, policy, &d) != 0) {
		fprintf(stderr, "no placement: %s\n", policy < 0 ? "no tree policy" : d.reason);
		return 1;
	}
	gnn_error gerr;
	gnn_model *m = gnn_model_load(argv[2], &gerr);
	if (!m) {
		fprintf(stderr, "%s\n", gnn_error_format(&gerr, buf, sizeof buf));
		return 1;
	}
	printf("hosts=%d chosen=%d params=%zu\n", place_cluster_nhosts(c), d.chosen.nhosts,
	       gnn_model_n_params(m));
	gnn_model_free(m);
	place_engine_free(e);
	place_state_free(s);
	place_cluster_free(c);
	topo_graph_free(g);
	return 0;
}
