/* klines: kernel addresses to source lines through a vmlinux with DWARF (klines.c). */
#ifndef GT_KLINES_H
#define GT_KLINES_H

#include <stdint.h>

struct klines;

struct klines *klines__new(void);
void klines__free(struct klines *k);
/* FILE and LINE of the running kernel's address PC: 0, or -ENOENT (no vmlinux with
 * DWARF for this kernel, or nothing known of PC). The vmlinux is opened on the first
 * call; a reason not to use it is printed once. */
int klines_lookup(struct klines *k, uint64_t pc, const char **file, int *line);

#endif
