/* cachedir: the cache's directory, trusted only when no one but the effective user can
 * put or swap a file in it. A compiled object from the cache goes into the kernel as
 * is, so a directory another user can write is one they can plant programs in (issue 23).
 *
 * Which directory: $XDG_CACHE_HOME/gotrace when XDG_CACHE_HOME is absolute, else
 * $HOME/.cache/gotrace. Under sudo (SUDO_UID or SUDO_USER set), when the directory so
 * named exists and belongs to someone other than the effective user (sudo -E keeps the
 * invoking user's HOME), it is getpwuid(geteuid())'s home instead: root's own cache.
 * Anywhere else a directory of another user means no cache.
 *
 * The rule, checked on each directory's opened fd, walking from / with
 * openat(O_DIRECTORY|O_NOFOLLOW) so that nothing is swapped between check and use:
 *   - "own" directories, the one XDG_CACHE_HOME or the home names and every one below it
 *     (.cache, gotrace; created 0700 when missing): owned by the effective user, not
 *     writable by group or others, not a symbolic link;
 *   - their ancestors (/, /home, /tmp ...): owned by root or the effective user, and
 *     writable by group or others only when sticky, as /tmp is: there no one but the
 *     owner of an entry may rename or remove it, so the own directory below cannot be
 *     replaced. Symbolic links up to and including the named directory are resolved
 *     first (realpath) and the resolved path is what is walked and checked: a link, even
 *     one another user made, can only lead to a directory that passes the rule itself. */
#include "cache/cachedir.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/trust.h"
#include "common/util.h"

/* Why the directory with ST is not to be trusted (malloc'd), or NULL. */
static char *dir_distrust(const struct stat *st, const char *path, bool ancestor)
{
	return trust_distrust(st, path, geteuid(), ancestor);
}

char *cachedir_distrust_entry(const struct stat *st, const char *path)
{
	if (!S_ISREG(st->st_mode))
		return xasprintf("%s is not a regular file", path);
	char *why = trust_distrust(st, path, geteuid(), false);
	if (why)
		return why;
	/* a second name elsewhere is a way to change it without this directory */
	if (st->st_nlink != 1)
		return xasprintf("%s has %lu hard links", path, (unsigned long)st->st_nlink);
	return NULL;
}

/* The directory named by the environment (malloc'd), the path below it, and whether the
 * named one may be created (XDG_CACHE_HOME may be; a home must exist). */
static char *cache_base(const char **sub, bool *may_create, char **why)
{
	const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME"), *base = NULL;
	struct stat st;
	if (x && x[0] == '/') {
		base = x;
		*sub = "gotrace";
		*may_create = true;
	} else if (home && home[0] == '/') {
		base = home;
		*sub = ".cache/gotrace";
		*may_create = false;
	}
	bool sudo = getenv("SUDO_UID") || getenv("SUDO_USER");
	if (sudo && (!base || (!stat(base, &st) && st.st_uid != geteuid()))) {
		struct passwd *pw = getpwuid(geteuid());
		if (!pw || !pw->pw_dir || pw->pw_dir[0] != '/') {
			*why = xasprintf("uid %u has no home directory", (unsigned)geteuid());
			return NULL;
		}
		*sub = ".cache/gotrace";
		*may_create = false;
		return xstrdup(pw->pw_dir);
	}
	if (!base)
		*why = xstrdup("neither XDG_CACHE_HOME nor HOME is set");
	return base ? xstrdup(base) : NULL;
}

/* BASE without symbolic links; when it is missing and MAY_CREATE, its parent's resolved
 * path and its last name. */
static char *resolve(const char *base, bool may_create, char **why)
{
	char *r = realpath(base, NULL);
	if (r || errno != ENOENT || !may_create) {
		if (!r)
			*why = xasprintf("%s: %s", base, strerror(errno));
		return r;
	}
	char *dup = xstrdup(base);
	size_t n = strlen(dup);
	while (n > 1 && dup[n - 1] == '/')
		dup[--n] = 0;
	char *slash = strrchr(dup, '/'), *last = slash + 1;
	*slash = 0;
	char *parent = realpath(dup[0] ? dup : "/", NULL);
	if (!parent || !strcmp(last, ".") || !strcmp(last, ".."))
		*why = xasprintf("%s: %s", base, strerror(parent ? EINVAL : errno));
	else
		r = xasprintf("%s/%s", strcmp(parent, "/") ? parent : "", last);
	free(parent);
	free(dup);
	return r;
}

/* Opens NAME under the checked directory DIRFD (PATH is its full name, for messages),
 * creating it when missing and CREATE, and checks the opened fd. */
static int open_checked(int dirfd, const char *name, const char *path, bool ancestor, bool create,
			bool last, char **why)
{
	int flags = (last ? O_RDONLY : O_PATH) | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	int fd = openat(dirfd, name, flags);
	if (fd < 0 && errno == ENOENT && create) {
		if (mkdirat(dirfd, name, 0700) && errno != EEXIST) {
			int err = errno;
			*why = xasprintf("cannot create %s: %s", path, strerror(err));
			return -err;
		}
		fd = openat(dirfd, name, flags); /* then checked as any other */
	}
	struct stat st;
	if (fd < 0) {
		int err = errno;
		if (!fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISLNK(st.st_mode))
			*why = xasprintf("%s is a symbolic link", path);
		else
			*why = xasprintf("%s: %s", path, strerror(err));
		return -err;
	}
	if (fstat(fd, &st)) {
		int err = errno;
		*why = xasprintf("%s: %s", path, strerror(err));
		close(fd);
		return -err;
	}
	if ((*why = dir_distrust(&st, path, ancestor))) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

int cachedir_open(char **path, char **why)
{
	const char *sub = NULL;
	bool may_create = false;
	char *base = cache_base(&sub, &may_create, why), *canon = NULL, *full = NULL;
	int fd = -ENOENT;
	*path = NULL;
	if (!base)
		return -ENOENT;
	canon = resolve(base, may_create, why);
	if (!canon)
		goto out;
	full = xasprintf("%s/%s", strcmp(canon, "/") ? canon : "", sub);
	/* components of the resolved base first: the last of them is the first own one */
	int nbase = 0;
	for (const char *p = canon; *p; p++)
		nbase += p[0] == '/' && p[1] && p[1] != '/';
	fd = open_checked(AT_FDCWD, "/", "/", nbase > 0, false, false, why);
	struct strbuf cur = {0};
	char *save = NULL, *work = xstrdup(full);
	int i = 0;
	for (char *c = strtok_r(work, "/", &save); c && fd >= 0; c = strtok_r(NULL, "/", &save), i++) {
		bool ancestor = i < nbase - 1, last = !save || !*save;
		strbuf_printf(&cur, "/%s", c);
		/* missing: the named base when it may be, and what gotrace adds below it */
		bool create = i >= nbase || (i == nbase - 1 && may_create);
		int next = open_checked(fd, c, cur.buf, ancestor, create, last, why);
		close(fd);
		fd = next;
	}
	free(work);
	strbuf_free(&cur);
	if (fd >= 0)
		*path = xstrdup(full);
out:
	free(full);
	free(canon);
	free(base);
	return fd;
}
