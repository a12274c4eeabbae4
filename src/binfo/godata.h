/* binfo/godata: Go parameters and types of the runtime and the standard library,
 * shipped per Go release (data/gotypes/go1.N.P.txt) for targets without DWARF. */
#ifndef GT_BINFO_GODATA_H
#define GT_BINFO_GODATA_H

#include <stddef.h>
#include <stdio.h>

#include "binfo/gotypes.h"

struct binfo_godata;

/* Writes FS (read from DWARF by goparams) and every type they reach as RELEASE's data. */
int binfo_godata_write(FILE *out, const char *release, const struct binfo_gofunc *const *fs,
		       int n);

/* Reads a data file: 0, -errno, or -EINVAL when it is not one. */
int binfo_godata__load(const char *path, struct binfo_godata **out);
void binfo_godata__free(struct binfo_godata *d);
const char *binfo_godata_release(const struct binfo_godata *d);
/* The function NAME as the data has it, valid until free: 0, or -ENOENT. */
int binfo_godata_func(const struct binfo_godata *d, const char *name,
		      const struct binfo_gofunc **out);

/* The data file for a binary of Go VERSION (its build info's "go1.26.8"): GT_GOTYPES_DIR,
 * else gotypes/ beside the executable (a build directory), else
 * ../share/gotrace/gotypes (an install). -ENOENT when VERSION is not a release the data
 * covers (the exact release: patch releases change types). */
int binfo_godata_path(const char *version, char *out, size_t len);

#endif
