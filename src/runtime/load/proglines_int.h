/* proglines_int: what -d jit (jit.c) reads of a loaded program's source lines
 * (proglines.c); load/'s own. */
#ifndef GT_RT_PROGLINES_INT_H
#define GT_RT_PROGLINES_INT_H

#include <stdint.h>

struct btf;

/* A loaded program's source lines, by offset in its dumped JIT image. */
struct rt_src_line {
	uint32_t off;     /* of the first instruction the line produced */
	uint32_t idx;     /* the record's place in the kernel's list (order of the BPF code) */
	const char *file; /* as the compiler named it (in btf) */
	uint32_t line, col;
};
struct rt_prog_lines {
	struct rt_src_line *v; /* [n], by off */
	int n;
	struct btf *btf;
};
/* 0; -ENODATA when the kernel holds no line info for the program (no BTF, no JIT, an
 * older kernel, addresses hidden); or a negative errno. */
int rt_prog_lines__load(struct rt_prog_lines *pl, int prog_fd);
void rt_prog_lines__free(struct rt_prog_lines *pl);

#endif
