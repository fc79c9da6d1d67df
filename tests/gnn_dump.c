/*
 * gnn_dump: writes the raw bytes of embeddings and scores of fixed random
 * problems (sage and gin models, widths that hit every SIMD block path and
 * the pipelined 32-wide sage, an odd vertex count) to the file named by
 * argv[1]. It is built twice: against libgnn (whose hot loops are cloned per
 * instruction set and picked for this CPU) and from the library sources with
 * -DGNN_NO_CLONES (baseline instructions only); test_gnn_portable checks both
 * write the same bytes.
 */
#include <stdio.h>
#include <stdlib.h>

#include "gnn_infer.h"
#include "gnn_internal.h"

#define N 501
#define DEG 7
#define NF 5
#define NS 9

static int dump(FILE *f, enum gnn_conv conv, size_t hidden, uint64_t seed)
{
	const char *names[NF] = {"a", "b", "c", "d", "e"}, *set[] = {"s"};
	gnn_arch arch = {NF, names, NULL, NULL, 1, set, NULL, NULL, conv, 2, hidden, 40};
	static int32_t off[N + 1], nb[N * DEG], set_off[NS + 1], members[NS * 3];
	static float w[N * DEG], x[N * NF], emb[N * 64], sf[NS], scores[NS];
	gnn_model *m = gnn_model_build(&arch, seed, NULL);
	gnn_ctx *ctx = gnn_ctx_create(m, N, N * DEG, NS, NULL);
	gnn_graph g = {N, off, nb, w};
	gnn_sets sets = {NS, set_off, members, N};
	uint64_t rng = seed;
	size_t i;
	int rc;

	for (i = 0; i <= N; i++)
		off[i] = (int32_t)(i * DEG);
	for (i = 0; i < N * DEG; i++) {
		nb[i] = (int32_t)(gnn_rng_next(&rng) % N);
		w[i] = 0.5f + gnn_rng_uniform(&rng);
	}
	for (i = 0; i < N * NF; i++)
		x[i] = 2.0f * gnn_rng_uniform(&rng) - 1.0f;
	for (i = 0; i <= NS; i++)
		set_off[i] = (int32_t)(3 * i);
	for (i = 0; i < NS * 3; i++)
		members[i] = (int32_t)(gnn_rng_next(&rng) % N);
	for (i = 0; i < NS; i++)
		sf[i] = (float)i;
	rc = !m || !ctx || gnn_embed(ctx, &g, x, emb) || gnn_score_sets(ctx, emb, &sets, sf, scores);
	if (!rc) {
		fwrite(emb, sizeof(float), N * hidden, f);
		fwrite(scores, sizeof(float), NS, f);
	}
	gnn_ctx_free(ctx);
	gnn_model_free(m);
	return rc;
}

int main(int argc, char **argv)
{
	FILE *f = argc == 2 ? fopen(argv[1], "wb") : NULL;
	int rc;

	if (!f)
		return 2;
	rc = dump(f, GNN_CONV_SAGE, 45, 1) | dump(f, GNN_CONV_GIN, 64, 2) |
	     dump(f, GNN_CONV_SAGE, 3, 3) | dump(f, GNN_CONV_SAGE, 32, 4);
	return fclose(f) || rc;
}
