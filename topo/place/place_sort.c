/*
 * place_sort: in-place heap sorts for the decision hot path. qsort() may
 * allocate a merge buffer (glibc does for arrays over a few KB), and
 * place_decide() must not allocate, so the engine sorts with these.
 */
#include "place_internal.h"

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
