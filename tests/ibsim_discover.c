/*
 * ibsim_discover: driver of the ibsim integration test (tests/ibsim/test_ibsim.sh).
 *
 *   ibsim_discover netlist SPEC OUT.net
 *       generate the fat-tree SPEC and write it as an ibsim netlist;
 *   ibsim_discover compare SPEC IBNETDISCOVER.txt
 *       (run under `ibsim-run`) discover the simulated fabric live through
 *       libibnetdisc, load the text that `ibnetdiscover` printed for it, and
 *       check both against each other and against the generated graph.
 *
 * Prints one "PASS: what" or "FAIL: what: why" line per check; exits 1 when
 * any check failed, 2 on bad usage or a setup error.
 */
#include <stdio.h>
#include <string.h>

#include "topo_fattree.h"
#include "topo_ibnd.h"
#include "topo_ibnetdiscover.h"
#include "topo_ibsim.h"

static int failures;

static void check(int ok, const char *what, const char *why)
{
	if (ok)
		printf("PASS: %s\n", what);
	else
		printf("FAIL: %s: %s\n", what, why);
	failures += !ok;
}

static topo_graph *generate(const char *text)
{
	topo_fattree_spec spec;
	topo_error err;
	char buf[1024];
	topo_graph *g = topo_graph_new();

	topo_fattree_spec_init(&spec);
	if (!g || topo_fattree_parse(text, &spec, &err) < 0 || topo_fattree_build(g, &spec, &err) < 0) {
		fprintf(stderr, "ibsim_discover: %s\n", topo_error_format(&err, buf, sizeof(buf)));
		topo_graph_free(g);
		return NULL;
	}
	return g;
}

static int cmd_netlist(const char *spec, const char *path)
{
	topo_graph *g = generate(spec);
	topo_error err;
	char buf[1024];
	FILE *f;
	int rc;

	if (!g)
		return 2;
	if (!(f = fopen(path, "w"))) {
		perror(path);
		topo_graph_free(g);
		return 2;
	}
	rc = topo_write_ibsim_netlist(g, f, &err);
	if (fclose(f) != 0)
		rc = -1;
	if (rc < 0)
		fprintf(stderr, "ibsim_discover: %s\n", topo_error_format(&err, buf, sizeof(buf)));
	topo_graph_free(g);
	return rc < 0 ? 2 : 0;
}

/* "hosts=8 hcas=16 switches=6 leaf=4 spine=2 core=0 groups=2 links=32 anomalies=0" */
static void summary(const topo_graph *g, char *buf, size_t len)
{
	snprintf(buf, len, "hosts=%zu hcas=%zu switches=%zu leaf=%zu spine=%zu core=%zu groups=%zu "
		 "links=%zu anomalies=%zu",
		 topo_graph_count(g, TOPO_V_HOST), topo_graph_count(g, TOPO_V_HCA),
		 topo_graph_count(g, TOPO_V_SWITCH), topo_graph_count_switches(g, TOPO_LEVEL_LEAF),
		 topo_graph_count_switches(g, TOPO_LEVEL_SPINE),
		 topo_graph_count_switches(g, TOPO_LEVEL_CORE), topo_graph_count(g, TOPO_V_GROUP),
		 topo_graph_count_edges(g, TOPO_E_FABRIC), topo_graph_nanomalies(g));
}

static int cmd_compare(const char *spec, const char *text_path)
{
	topo_graph *gen = generate(spec), *live = topo_graph_new(), *text = topo_graph_new();
	topo_error err;
	char buf[1024], why[512], s_gen[256], s_live[256], s_text[256];
	int live_ok, text_ok;

	if (!gen || !live || !text) {
		topo_graph_free(gen);
		topo_graph_free(live);
		topo_graph_free(text);
		return 2;
	}
	live_ok = topo_load_ibnd(live, NULL, 0, NULL, &err) == 0;
	check(live_ok, "live discovery through libibnetdisc", topo_error_format(&err, buf, sizeof(buf)));
	text_ok = topo_load_ibnetdiscover(text, text_path, NULL, &err) == 0;
	check(text_ok, "load of ibnetdiscover's output", topo_error_format(&err, buf, sizeof(buf)));
	if (live_ok && text_ok) {
		topo_graph_canonicalize(gen);
		topo_graph_canonicalize(live);
		topo_graph_canonicalize(text);
		summary(gen, s_gen, sizeof(s_gen));
		summary(live, s_live, sizeof(s_live));
		summary(text, s_text, sizeof(s_text));
		printf("# generated: %s\n# live:      %s\n# text:      %s\n", s_gen, s_live, s_text);
		why[0] = '\0';
		check(topo_graph_equal(live, text, why, sizeof(why)), "live graph equals text graph", why);
		check(strcmp(s_live, s_gen) == 0, "live counts equal generated counts", s_live);
		check(strcmp(s_text, s_gen) == 0, "text counts equal generated counts", s_text);
		why[0] = '\0';
		check(topo_graph_equal(live, gen, why, sizeof(why)), "live graph equals generated graph",
		      why);
	}
	topo_graph_free(gen);
	topo_graph_free(live);
	topo_graph_free(text);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "netlist") == 0)
		return cmd_netlist(argv[2], argv[3]);
	if (argc == 4 && strcmp(argv[1], "compare") == 0)
		return cmd_compare(argv[2], argv[3]);
	fprintf(stderr, "usage: ibsim_discover netlist SPEC OUT.net\n"
			"       ibsim_discover compare SPEC IBNETDISCOVER.txt   (under ibsim-run)\n");
	return 2;
}
