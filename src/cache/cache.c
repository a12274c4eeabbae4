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
 * CACHE_MAX_BYTES by removing the least recently used entries.
 *
 * An object from here goes into the kernel as is: the directory is used only when
 * cachedir.c finds it the effective user's own, and every entry is opened from its fd
 * without following a symbolic link and read only when it is a regular file of that
 * user's, writable by no one else, with one link. Anything else: no cache for the run,
 * nothing read or written, and the reason for -v. */
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

#include "cache/cachedir.h"
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
	/* /proc/PID/exe (a -p process, a program a -c command ran): the file, not the pid */
	if (!strncmp(path, "/proc/", 6))
		path = "/proc/PID/exe";
	cache_key_add(k, name, "%s:%lld:%lld.%09ld:%llu:%llu", path, (long long)st.st_size,
		      (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec, (unsigned long long)st.st_ino,
		      (unsigned long long)st.st_dev);
}

void cache_key_free(struct cache_key *k)
{
	strbuf_free(&k->text);
}

struct cache {
	int dirfd; /* the checked directory (cachedir.c): every entry is opened from it */
	char *path;
};

struct cache *cache_open(char **why)
{
	char *path;
	*why = NULL;
	int fd = cachedir_open(&path, why);
	if (fd < 0)
		return NULL;
	struct cache *c = xcalloc(1, sizeof(*c));
	c->dirfd = fd;
	c->path = path;
	return c;
}

void cache_close(struct cache *c)
{
	if (!c)
		return;
	close(c->dirfd);
	free(c->path);
	free(c);
}

#define NAME_MAX_LEN 32

static void entry_name(const struct cache_key *k, char name[NAME_MAX_LEN])
{
	uint64_t h = fnv64(FNV_BASIS, k->text.buf ? k->text.buf : "", k->text.len);
	snprintf(name, NAME_MAX_LEN, "%016llx.gto", (unsigned long long)h);
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static uint8_t *read_all(int fd, size_t *size)
{
	uint8_t *buf = NULL;
	size_t n = 0, cap = 0;
	for (;;) {
		if (n == cap)
			buf = xrealloc(buf, cap = cap ? 2 * cap : 65536);
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(buf);
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*size = n;
	return buf;
}

int cache_lookup(struct cache *c, const struct cache_key *k, void **obj, size_t *obj_size,
		 char **why)
{
	char name[NAME_MAX_LEN];
	size_t n = 0, klen = k->text.len;
	uint8_t *b = NULL;
	struct stat st;
	int ret = -ENOENT;
	*obj = NULL;
	entry_name(k, name);
	/* O_NONBLOCK: a fifo is refused below rather than waited on */
	int fd = openat(c->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ELOOP)
			return -ENOENT;
		*why = xasprintf("%s/%s is a symbolic link", c->path, name);
		return -EPERM;
	}
	if (fstat(fd, &st))
		goto out;
	char *path = xasprintf("%s/%s", c->path, name);
	*why = cachedir_distrust_entry(&st, path);
	free(path);
	if (*why) {
		ret = -EPERM;
		goto out;
	}
	b = read_all(fd, &n);
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
	futimens(fd, NULL); /* recently used */
	ret = 0;
out:
	free(b);
	close(fd);
	return ret;
}

struct entry {
	char *name;
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
static void trim(struct cache *c)
{
	int fd = openat(c->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	VEC(struct entry) v = {0};
	unsigned long long total = 0;
	for (struct dirent *e; (e = readdir(d));) {
		size_t len = strlen(e->d_name);
		struct stat st;
		if (len < 5 || strcmp(e->d_name + len - 4, ".gto") ||
		    fstatat(c->dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		struct entry en = {xstrdup(e->d_name), st.st_size, st.st_mtime};
		vec_push(&v, en);
		total += (unsigned long long)st.st_size;
	}
	closedir(d);
	if (total > CACHE_MAX_BYTES)
		qsort(v.v, (size_t)v.n, sizeof(*v.v), by_mtime);
	for (int i = 0; i < v.n; i++) {
		if (total > CACHE_MAX_BYTES && !unlinkat(c->dirfd, v.v[i].name, 0))
			total -= (unsigned long long)v.v[i].size;
		free(v.v[i].name);
	}
	vec_free(&v);
}

static int write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;
	while (n) {
		ssize_t w = write(fd, b, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -EIO;
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

int cache_store(struct cache *c, const struct cache_key *k, const void *obj, size_t size)
{
	char name[NAME_MAX_LEN], tmp[NAME_MAX_LEN + 24];
	entry_name(k, name);
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", name, (int)getpid());
	uint32_t kl = (uint32_t)k->text.len;
	uint64_t osz = size;
	const char *kt = k->text.buf ? k->text.buf : "";
	uint64_t h = fnv64(FNV_BASIS, CACHE_MAGIC, 4);
	h = fnv64(h, &kl, 4);
	h = fnv64(h, kt, kl);
	h = fnv64(h, &osz, 8);
	h = fnv64(h, obj, size);
	/* a new file of our own, in the checked directory; one left by a killed run with
	 * our pid is ours too (no one else can write here) and is replaced */
	int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
	int fd = openat(c->dirfd, tmp, flags, 0600);
	if (fd < 0 && errno == EEXIST && !unlinkat(c->dirfd, tmp, 0))
		fd = openat(c->dirfd, tmp, flags, 0600);
	if (fd < 0)
		return -errno;
	int ret = 0;
	if (write_all(fd, CACHE_MAGIC, 4) || write_all(fd, &kl, 4) || write_all(fd, kt, kl) ||
	    write_all(fd, &osz, 8) || write_all(fd, obj, size) || write_all(fd, &h, 8))
		ret = -EIO;
	if (close(fd))
		ret = -EIO;
	if (!ret && renameat(c->dirfd, tmp, c->dirfd, name))
		ret = -errno;
	if (ret)
		unlinkat(c->dirfd, tmp, 0);
	else
		trim(c);
	return ret;
}
