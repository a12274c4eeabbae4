/* cache: compiled BPF objects by a key of everything that changes them (cache.c). */
#ifndef GT_CACHE_H
#define GT_CACHE_H

#include <stddef.h>

#include "common/util.h"

struct cache_key {
	struct strbuf text; /* "name=value" lines */
};

/* One line of the key; a file's identity (path, size, mtime, inode). */
void cache_key_add(struct cache_key *k, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void cache_key_file(struct cache_key *k, const char *name, const char *path);
void cache_key_free(struct cache_key *k);

struct cache;

/* The cache directory, when it is the effective user's own (cache.c, cachedir.c); NULL
 * and *why (malloc'd) saying why it is not to be used. */
struct cache *cache_open(char **why);
void cache_close(struct cache *c);

/* The object stored under K (malloc'd): 0, -ENOENT on a miss (none, another key, or an
 * entry that is truncated or damaged), or -EPERM and *why (malloc'd) when the entry is
 * not to be trusted: then the cache is not to be used for this run at all. */
int cache_lookup(struct cache *c, const struct cache_key *k, void **obj, size_t *size,
		 char **why);
/* Stores OBJ under K, whole or not at all: 0 or a negative errno. */
int cache_store(struct cache *c, const struct cache_key *k, const void *obj, size_t size);

struct binfo_store;
/* binfo's indexes kept in C (store.c): *OUT for binfo_set_store, while C is open. */
void cache_binfo_store(struct cache *c, struct binfo_store *out);

#endif
