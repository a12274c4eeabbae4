/* kbtf: the running kernel's BTF (/sys/kernel/btf/vmlinux), parsed once per process,
 * and where a member of one of its structs is. */
#ifndef GT_KBTF_H
#define GT_KBTF_H

#include <stddef.h>

struct btf;

/* The kernel's BTF, loaded on first use and kept (never free it); NULL without one. */
const struct btf *kbtf_vmlinux(void);

/* The kernel modules with BTF (/sys/kernel/btf/NAME but vmlinux): their names, sorted,
 * read once and kept. 0. */
int kbtf_modules(const char *const **names, size_t *n);

/* Module NAME's BTF, split on the kernel's (its type ids continue vmlinux's), loaded on
 * first use and kept; NULL when NAME is not a module with BTF. */
const struct btf *kbtf_module(const char *name);

/* OBJ's BTF: the kernel's ("vmlinux") or a module's, and in *FIRST_ID the first type id
 * that is its own (a module's split BTF holds vmlinux's first); NULL without one. */
const struct btf *kbtf_object(const char *obj, unsigned *first_id);

/* The byte offset of PATH ("thread.fsbase": a member of a member) in the kernel's
 * struct STRUCT_NAME, looking through anonymous members (randomized task_struct and
 * mm_struct wrap their fields in them): >= 0, or -ENOENT (no BTF, no such member, not
 * on a byte). */
long kbtf_offsetof(const char *struct_name, const char *path);

#endif
