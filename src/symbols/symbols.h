/* symbols: the runtime's symbolizer (struct rt_symbolizer) over the traced binaries:
 * Go functions with inlined calls expanded (binfo_lines_frames, .gopclntab), a PIE's
 * load bias from /proc/PID/maps, kernel symbols from /proc/kallsyms (lines: klines.h). */
#ifndef GT_SYMBOLS_H
#define GT_SYMBOLS_H

#include "runtime/rt.h"

struct binfo;
struct symbols;

/* Over BINS (borrowed: they outlive the symbolizer) and MAIN_PATH (the -c / -p / -b
 * binary, opened here when it is not among them; NULL: none). */
struct symbols *symbols__new(struct binfo **bins, int nbins, const char *main_path);
void symbols__free(struct symbols *s);
/* Kernel frames get their file:line too, from a vmlinux with DWARF when there is one
 * for the running kernel (klines.h): for -v. */
void symbols_kernel_lines(struct symbols *s);
/* The rt_symbolizer whose ctx is S. */
struct rt_symbolizer symbols_rt(struct symbols *s);

#endif
