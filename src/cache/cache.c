/* cache: compiled BPF objects, so that the same script on the same binary does not run
 * LLVM again. An entry is $XDG_CACHE_HOME/gotrace/HASH.gto (else ~/.cache/gotrace):
 *
 *   "GTC1" u32 key length, key text, u64 object size, object bytes, u64 FNV-1a of all before
 *
 * The key text (gotrace's identity, the kernel's, every option that changes the result,
 * the targets' identity, the script) is stored whole and compared on a hit: a hash
 * collision is a miss, never the wrong object. A short, corrupt or foreign file is a
 * miss and is replaced. Entries are written to a temporary file and renamed into place,
 * so a concurrent run sees a whole entry or none; the directory is kept under
 * CACHE_MAX_BYTES by removing the least recently used entries. */
#include "cache/cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"

#define CACHE_MAX_BYTES (64u << 20)
#define CACHE_MAGIC "GTC1"

static uint64_t fnv64(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

#define FNV_BASIS 0xcbf29ce484222325ULL

void cache_key_add(struct cache_key *k, const char *name, const char *fmt, ...)
{
	va_list ap;
	strbuf_printf(&k->text, "%s=", name);
	va_start(ap, fmt);
	strbuf_vprintf(&k->text, fmt, ap);
	va_end(ap);
	strbuf_putc(&k->text, '\n');
}

void cache_key_file(struct cache_key *k, const char *name, const char *path)
{
	struct stat st;
	if (stat(path, &st)) {
		cache_key_add(k, name, "%s:missing", path);
		return;
	}
	cache_key_add(k, name, "%s:%lld:%lld.%09ld:%llu", path, (long long)st.st_size,
		      (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec, (unsigned long long)st.st_ino);
}

void cache_key_free(struct cache_key *k)
{
	strbuf_free(&k->text);
}

/* The cache directory, created if needed; NULL when there is none to use. */
static char *cache_dir(void)
{
	const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char *dir;
	if (x && x[0] == '/')
		dir = xasprintf("%s/gotrace", x);
	else if (home && home[0])
		dir = xasprintf("%s/.cache/gotrace", home);
	else
		return NULL;
	char *slash = strrchr(dir, '/');
	*slash = 0;
	mkdir(dir, 0755); /* ~/.cache, when new */
	*slash = '/';
	if (mkdir(dir, 0700) && errno != EEXIST) {
		free(dir);
		return NULL;
	}
	return dir;
}

static char *entry_path(const char *dir, const struct cache_key *k)
{
	uint64_t h = fnv64(FNV_BASIS, k->text.buf ? k->text.buf : "", k->text.len);
	return xasprintf("%s/%016llx.gto", dir, (unsigned long long)h);
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static uint8_t *read_all(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	uint8_t *buf = NULL;
	size_t n = 0, cap = 0;
	for (;;) {
		if (n == cap)
			buf = xrealloc(buf, cap = cap ? 2 * cap : 65536);
		size_t r = fread(buf + n, 1, cap - n, f);
		n += r;
		if (r == 0)
			break;
	}
	bool bad = ferror(f);
	fclose(f);
	if (bad) {
		free(buf);
		return NULL;
	}
	*size = n;
	return buf;
}

int cache_lookup(const struct cache_key *k, void **obj, size_t *obj_size)
{
	char *dir = cache_dir(), *path;
	size_t n = 0, klen = k->text.len;
	int ret = -ENOENT;
	*obj = NULL;
	if (!dir)
		return -ENOENT;
	path = entry_path(dir, k);
	uint8_t *b = read_all(path, &n);
	/* magic, key length, key, object size, object, checksum: each checked */
	if (!b || n < 8 + klen + 16 || memcmp(b, CACHE_MAGIC, 4))
		goto out;
	uint32_t kl;
	memcpy(&kl, b + 4, 4);
	if (kl != klen || memcmp(b + 8, k->text.buf, klen))
		goto out; /* another key with the same hash */
	uint64_t osz = rd64(b + 8 + klen);
	if (osz > n || n != 8 + klen + 8 + osz + 8 ||
	    rd64(b + n - 8) != fnv64(FNV_BASIS, b, n - 8))
		goto out; /* truncated or damaged: rebuilt and replaced by the caller */
	*obj = xmalloc(osz ? osz : 1);
	memcpy(*obj, b + 8 + klen + 8, osz);
	*obj_size = osz;
	utimensat(AT_FDCWD, path, NULL, 0); /* recently used */
	ret = 0;
out:
	free(b);
	free(path);
	free(dir);
	return ret;
}

struct entry {
	char *path;
	off_t size;
	time_t mtime;
};

static int by_mtime(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	return x->mtime < y->mtime ? -1 : x->mtime > y->mtime;
}

/* Removes the least recently used entries while the directory holds more than the
 * bound. */
static void trim(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	VEC(struct entry) v = {0};
	unsigned long long total = 0;
	for (struct dirent *e; (e = readdir(d));) {
		size_t len = strlen(e->d_name);
		struct stat st;
		if (len < 5 || strcmp(e->d_name + len - 4, ".gto"))
			continue;
		char *p = xasprintf("%s/%s", dir, e->d_name);
		if (stat(p, &st)) {
			free(p);
			continue;
		}
		struct entry en = {p, st.st_size, st.st_mtime};
		vec_push(&v, en);
		total += (unsigned long long)st.st_size;
	}
	closedir(d);
	if (total > CACHE_MAX_BYTES)
		qsort(v.v, (size_t)v.n, sizeof(*v.v), by_mtime);
	for (int i = 0; i < v.n; i++) {
		if (total > CACHE_MAX_BYTES && !unlink(v.v[i].path))
			total -= (unsigned long long)v.v[i].size;
		free(v.v[i].path);
	}
	vec_free(&v);
}

int cache_store(const struct cache_key *k, const void *obj, size_t size)
{
	char *dir = cache_dir();
	if (!dir)
		return -ENOENT;
	char *path = entry_path(dir, k);
	char *tmp = xasprintf("%s.%d.tmp", path, (int)getpid());
	int ret = 0;
	uint32_t kl = (uint32_t)k->text.len;
	uint64_t osz = size;
	uint64_t h = fnv64(FNV_BASIS, CACHE_MAGIC, 4);
	h = fnv64(h, &kl, 4);
	h = fnv64(h, k->text.buf ? k->text.buf : "", kl);
	h = fnv64(h, &osz, 8);
	h = fnv64(h, obj, size);
	FILE *f = fopen(tmp, "wb");
	if (!f || fwrite(CACHE_MAGIC, 1, 4, f) != 4 || fwrite(&kl, 4, 1, f) != 1 ||
	    fwrite(k->text.buf ? k->text.buf : "", 1, kl, f) != kl || fwrite(&osz, 8, 1, f) != 1 ||
	    fwrite(obj, 1, size, f) != size || fwrite(&h, 8, 1, f) != 1)
		ret = -EIO;
	if (f && fclose(f))
		ret = -EIO;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		unlink(tmp);
	else
		trim(dir);
	free(tmp);
	free(path);
	free(dir);
	return ret;
}
