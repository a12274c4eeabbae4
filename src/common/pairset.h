/* common/pairset: a set of (a, b) pairs of 64-bit keys, open addressing, each with a
 * 64-bit value. Dedups and lookups in sema that would otherwise compare every site with
 * every other (70,000 sites of a wildcard: 2.5 s of pair loops). */
#ifndef GT_PAIRSET_H
#define GT_PAIRSET_H

#include <stdbool.h>
#include <stdint.h>

struct pairset {
	uint64_t *keys; /* 2 per slot; a slot is used when used[i] */
	uint64_t *vals;
	uint8_t *used;
	uint32_t cap, n;
};

/* Adds (A, B); true when it was not there yet. */
bool pairset__add(struct pairset *ps, uint64_t a, uint64_t b);
bool pairset__has(const struct pairset *ps, uint64_t a, uint64_t b);
/* Sets (A, B)'s value, adding the pair; *V := it, false when (A, B) is not there. */
void pairset__put(struct pairset *ps, uint64_t a, uint64_t b, uint64_t v);
bool pairset__get(const struct pairset *ps, uint64_t a, uint64_t b, uint64_t *v);
void pairset__clear(struct pairset *ps);
void pairset__free(struct pairset *ps);

#endif
