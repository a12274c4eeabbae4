/* trust: one rule for what root may load from a path (trust.h). */
#include "common/trust.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

char *trust_distrust(const struct stat *st, const char *path, uid_t owner, bool ancestor)
{
	if (st->st_uid != owner && !(ancestor && st->st_uid == 0)) {
		if (ancestor && owner != 0)
			return xasprintf("%s is owned by uid %u, not 0 or %u", path,
					 (unsigned)st->st_uid, (unsigned)owner);
		return xasprintf("%s is owned by uid %u, not %u", path, (unsigned)st->st_uid,
				 (unsigned)owner);
	}
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) && !(ancestor && (st->st_mode & S_ISVTX)))
		return xasprintf("%s is writable by group or others", path);
	return NULL;
}

char *trust_path_distrust(const char *path, uid_t owner, struct stat *file)
{
	char p[PATH_MAX];
	if (!realpath(path, p))
		return xasprintf("%s: %s", path, strerror(errno));
	for (bool top = true;; top = false) {
		struct stat st;
		if (stat(p, &st))
			return xasprintf("%s: %s", p, strerror(errno));
		if (top)
			*file = st;
		char *why = trust_distrust(&st, p, owner, !top);
		if (why)
			return why;
		char *slash = strrchr(p, '/');
		if (!slash)
			return NULL;
		if (slash == p) { /* then / itself */
			if (p[1] == 0)
				return NULL;
			p[1] = 0;
			continue;
		}
		*slash = 0;
	}
}
