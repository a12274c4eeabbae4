/* trust: whether a file or directory gotrace, running as root, may load from is one no
 * one else could have written or swapped (the compile cache, a vmlinux's DWARF). */
#ifndef GT_TRUST_H
#define GT_TRUST_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Why the entry with ST at PATH is not to be trusted (malloc'd), or NULL. It must be
 * OWNER's and writable by no group or others. An ANCESTOR (a directory above the
 * entry) may also be root's, and writable by others when sticky (as /tmp): there no one
 * but an entry's owner may rename or remove it. */
char *trust_distrust(const struct stat *st, const char *path, uid_t owner, bool ancestor);
/* The same for PATH with every directory above it, links resolved (realpath) first;
 * FILE: PATH's stat (when trusted). */
char *trust_path_distrust(const char *path, uid_t owner, struct stat *file);

#endif
