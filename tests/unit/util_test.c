/* util: sort_runs against qsort on arrays of 0 to 5,000 elements made of 1 to 300
 * sorted runs (and random ones), with duplicate keys: the same order, stably. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "common/util.h"

struct el {
	int key, seq; /* seq: the position before sorting, for stability */
};

static int by_key(const void *a, const void *b)
{
	const struct el *x = a, *y = b;
	return (x->key > y->key) - (x->key < y->key);
}

static int by_key_seq(const void *a, const void *b)
{
	const struct el *x = a, *y = b;
	int c = by_key(a, b);
	return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

int main(void)
{
	srand(42);
	int bad = 0, cases = 0;
	for (int round = 0; round < 400; round++) {
		int n = round < 4 ? round : rand() % 5000;
		int runs = 1 + rand() % 300;
		struct el *a = malloc(sizeof(*a) * (size_t)(n + 1)), *b = malloc(sizeof(*b) * (size_t)(n + 1));
		int len = n / runs + 1, v = 0;
		for (int i = 0; i < n; i++) {
			if (round % 5 == 4) /* random, duplicates */
				v = rand() % 100;
			else if (i % len == 0) /* a new run: from anywhere */
				v = rand() % 1000;
			else
				v += rand() % 3; /* ascending, with equal neighbours */
			a[i] = (struct el){v, i};
		}
		memcpy(b, a, sizeof(*a) * (size_t)n);
		sort_runs(a, (size_t)n, sizeof(*a), by_key);
		if (n)
			qsort(b, (size_t)n, sizeof(*b), by_key_seq);
		bad += n && memcmp(a, b, sizeof(*a) * (size_t)n) != 0;
		cases++;
		free(a);
		free(b);
	}
	CHECK(bad == 0, "sort_runs: the order of qsort by (key, position), %d of %d arrays differ",
	      bad, cases);
	if (!failures)
		printf("PASS sort_runs: %d arrays in qsort's order\n", cases);
	printf("%s\n", failures ? "FAILED" : "PASSED");
	return failures ? 1 : 0;
}
