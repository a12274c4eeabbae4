/* common/pairset: see pairset.h. */
#include "common/pairset.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"

static uint32_t pair_hash(uint64_t a, uint64_t b)
{
	uint64_t h = (a ^ (b * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
	return (uint32_t)(h ^ (h >> 29));
}

static uint32_t slot_of(const struct pairset *ps, uint64_t a, uint64_t b)
{
	uint32_t i = pair_hash(a, b) & (ps->cap - 1);
	while (ps->used[i] && (ps->keys[2 * i] != a || ps->keys[2 * i + 1] != b))
		i = (i + 1) & (ps->cap - 1);
	return i;
}

static void grow(struct pairset *ps)
{
	struct pairset old = *ps;
	ps->cap = old.cap ? old.cap * 2 : 64;
	ps->keys = xcalloc(2 * (size_t)ps->cap, sizeof(*ps->keys));
	ps->vals = xcalloc(ps->cap, sizeof(*ps->vals));
	ps->used = xcalloc(ps->cap, 1);
	for (uint32_t i = 0; i < old.cap; i++) {
		if (!old.used[i])
			continue;
		uint32_t j = slot_of(ps, old.keys[2 * i], old.keys[2 * i + 1]);
		ps->used[j] = 1;
		ps->keys[2 * j] = old.keys[2 * i];
		ps->keys[2 * j + 1] = old.keys[2 * i + 1];
		ps->vals[j] = old.vals[i];
	}
	free(old.keys);
	free(old.vals);
	free(old.used);
}

/* The slot of (A, B), added (value 0) when it was not there; *ADDED says which. */
static uint32_t add_slot(struct pairset *ps, uint64_t a, uint64_t b, bool *added)
{
	if (2 * (ps->n + 1) > ps->cap) /* at most half full */
		grow(ps);
	uint32_t i = slot_of(ps, a, b);
	*added = !ps->used[i];
	if (*added) {
		ps->used[i] = 1;
		ps->keys[2 * i] = a;
		ps->keys[2 * i + 1] = b;
		ps->vals[i] = 0;
		ps->n++;
	}
	return i;
}

bool pairset__add(struct pairset *ps, uint64_t a, uint64_t b)
{
	bool added;
	add_slot(ps, a, b, &added);
	return added;
}

void pairset__put(struct pairset *ps, uint64_t a, uint64_t b, uint64_t v)
{
	bool added;
	uint32_t i = add_slot(ps, a, b, &added); /* may grow ps->vals */
	ps->vals[i] = v;
}

bool pairset__get(const struct pairset *ps, uint64_t a, uint64_t b, uint64_t *v)
{
	if (!ps->cap)
		return false;
	uint32_t i = slot_of(ps, a, b);
	if (ps->used[i])
		*v = ps->vals[i];
	return ps->used[i];
}

bool pairset__has(const struct pairset *ps, uint64_t a, uint64_t b)
{
	return ps->cap && ps->used[slot_of(ps, a, b)];
}

void pairset__clear(struct pairset *ps)
{
	if (ps->cap)
		memset(ps->used, 0, ps->cap);
	ps->n = 0;
}

void pairset__free(struct pairset *ps)
{
	free(ps->keys);
	free(ps->vals);
	free(ps->used);
	*ps = (struct pairset){0};
}
