/* runtime-bpf: BPF-side helpers linked into every generated module. Codegen calls these
 * by name; after linking they become internal and always_inline, so nothing here costs
 * a BPF-to-BPF call. Keep signatures in sync with src/codegen/cg_runtime.c. */
#ifndef GT_RUNTIME_BPF_H
#define GT_RUNTIME_BPF_H

#include <linux/types.h>

/* Reads a Go string header (data pointer, length) at ADDR and copies at most size-1
 * bytes of its text to DST, NUL-terminated. DST is zeroed first so that a failed or
 * short read never exposes stale ring-buffer bytes. Returns the bytes copied or <0. */
long gt_read_gostr(char *dst, __u32 size, __u64 addr);

/* Copies text at ADDR to DST (size bytes with the terminating NUL). */
long gt_read_cstr(char *dst, __u32 size, __u64 addr);

/* Reads an integer of SIZE bytes (1, 2, 4, 8) at ADDR; 0 on failure. */
__u64 gt_read_uint(__u64 addr, __u32 size);

#endif
