/* store: binfo's derived indexes (binfo_store) kept in the compiled-program cache's
 * directory, each under a key of what it is, the binary's identity and gotrace's own
 * (an index another gotrace made is not read). */
#include "cache/cache.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "binfo/binfo.h"

static void key_of(struct cache_key *k, const char *what)
{
	char exe[PATH_MAX];
	cache_key_add(k, "binfo", "%s", what);
	if (realpath("/proc/self/exe", exe))
		cache_key_file(k, "exe", exe);
}

/* an entry not to be trusted was met: as for the compiled objects (main.c), nothing
 * more is written this run (cache_lookup's -EPERM) */
static bool distrusted;

static int load(void *ctx, const char *what, void **buf, size_t *len)
{
	struct cache_key k = {0};
	char *why = NULL;
	key_of(&k, what);
	int err = cache_lookup(ctx, &k, buf, len, &why);
	distrusted |= err == -EPERM;
	cache_key_free(&k);
	free(why);
	return err;
}

static void save(void *ctx, const char *what, const void *buf, size_t len)
{
	if (distrusted)
		return;
	struct cache_key k = {0};
	key_of(&k, what);
	(void)cache_store(ctx, &k, buf, len);
	cache_key_free(&k);
}

void cache_binfo_store(struct cache *c, struct binfo_store *out)
{
	*out = (struct binfo_store){.load = load, .save = save, .ctx = c};
}
