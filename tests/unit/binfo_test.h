/* binfo_test: what the files of the binfo unit test share (binfo_test.c has main). */
#ifndef GT_BINFO_TEST_H
#define GT_BINFO_TEST_H

#include <gelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CHECK_SHARED_FAILURES
#include "check.h"

struct binfo;

extern char src_dir[PATH_MAX], tmp_dir[PATH_MAX];
char *slurp(const char *path);
/* Writes the N bytes of IMG (a patched copy of a target) to PATH and frees IMG. */
void put_image(const char *path, uint8_t *img, size_t n);
struct binfo *open_ok(const char *path);

/* A target read independently of binfo (libelf only): the oracles' view. */
struct target {
	const char *path;
	Elf *elf;
	int fd;
	uint8_t *img;
	size_t size;
};
void target_open(struct target *t, const char *path);
void target_close(struct target *t);

/* binfo_goruntime_test.c */
void check_tp(void);
void check_goruntime_all(const char *plain, const char *pie, const char *cgo,
			 const char *gover);

#endif
