/* kbtf: the running kernel's BTF (/sys/kernel/btf/vmlinux), parsed once per process
 * (~9 ms here), and where a member of one of its structs is. */
#ifndef GT_KBTF_H
#define GT_KBTF_H

/* The byte offset of PATH ("thread.fsbase": a member of a member) in the kernel's
 * struct STRUCT_NAME, looking through anonymous members (randomized task_struct and
 * mm_struct wrap their fields in them): >= 0, or -ENOENT (no BTF, no such member, not
 * on a byte). */
long kbtf_offsetof(const char *struct_name, const char *path);

#endif
