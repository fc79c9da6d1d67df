/*
 * place_sort: sorts for the decision hot path. qsort() may allocate a merge
 * buffer (glibc does for arrays over a few KB), and place_decide() must not
 * allocate, so the engine sorts with these: in-place heap sorts, and a
 * radix sort with the caller's scratch for the one large sort (every host
 * by the time it frees).
 */
#include "place_internal.h"

#include <string.h>

static int before(int a, int b, const int *key)
{
	if (key && key[a] != key[b])
		return key[a] < key[b];
	return a < b;
}

static void sift(int *v, int root, int n, const int *key)
{
	for (;;) {
		int child = 2 * root + 1, t;

		if (child >= n)
			return;
		if (child + 1 < n && before(v[child], v[child + 1], key))
			child++;
		if (!before(v[root], v[child], key))
			return;
		t = v[root];
		v[root] = v[child];
		v[child] = t;
		root = child;
	}
}

void place_sort_by_key(int *v, int n, const int *key)
{
	for (int i = n / 2 - 1; i >= 0; i--)
		sift(v, i, n, key);
	for (int end = n - 1; end > 0; end--) {
		int t = v[0];

		v[0] = v[end];
		v[end] = t;
		sift(v, 0, end, key);
	}
}

void place_sort_ints(int *v, int n)
{
	place_sort_by_key(v, n, NULL);
}

/* Least significant byte first, over the bytes the largest key uses: the
 * locality hold sorts every host of the cluster by the time it frees at
 * each decision that weighs one, where the heap sort's n log n random
 * reads of key[] were a millisecond at 16,384 hosts (bench/place_latency). */
void place_sort_radix(int *v, int n, const int *key, int *tmp)
{
	int max = 0;

	for (int i = 0; i < n; i++)
		if (key[v[i]] > max)
			max = key[v[i]];
	for (int shift = 0; shift < 32 && (max >> shift) > 0; shift += 8) {
		int at[257] = {0};

		for (int i = 0; i < n; i++)
			at[((key[v[i]] >> shift) & 255) + 1]++;
		for (int b = 0; b < 256; b++)
			at[b + 1] += at[b];
		for (int i = 0; i < n; i++)
			tmp[at[(key[v[i]] >> shift) & 255]++] = v[i];
		memcpy(v, tmp, (size_t)n * sizeof(int));
	}
}
