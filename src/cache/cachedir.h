/* cachedir: the cache's directory, opened only when no one but the effective user can
 * change what is in it (cachedir.c). */
#ifndef GT_CACHEDIR_H
#define GT_CACHEDIR_H

#include <sys/stat.h>

/* Opens $XDG_CACHE_HOME/gotrace, else $HOME/.cache/gotrace (under sudo, when those are
 * another user's: the passwd home's), creating what is missing, each directory on the
 * way checked: its fd (O_RDONLY) and *path (malloc'd), or a negative errno and *why
 * (malloc'd) saying why the cache is not to be used. */
int cachedir_open(char **path, char **why);

/* Why an entry, opened without following a symlink and with ST from fstat of its fd,
 * is not to be read (malloc'd), or NULL when it is the user's own. */
char *cachedir_distrust_entry(const struct stat *st, const char *path);

#endif
