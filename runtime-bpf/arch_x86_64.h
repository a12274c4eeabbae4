/* runtime-bpf/arch_x86_64: the x86-64 processor on the BPF side (src/arch/x86_64.c is
 * the tool's side). Offsets in struct pt_regs are literals, for reg_at()'s one load
 * instruction, and checked against the kernel's header. */
#ifndef GT_ARCH_X86_64_H
#define GT_ARCH_X86_64_H

#include <asm/ptrace.h>

#define GT_REG_IP 128   /* rip: the probed instruction at a uprobe */
#define GT_REG_SP 152   /* rsp */
#define GT_REG_FP 32    /* rbp */
#define GT_REG_RET0 80  /* rax: Go's first integer argument and result */
#define GT_REG_GO_G 8   /* r14: Go's g (ABIInternal) */
_Static_assert(GT_REG_IP == __builtin_offsetof(struct pt_regs, rip), "rip");
_Static_assert(GT_REG_SP == __builtin_offsetof(struct pt_regs, rsp), "rsp");
_Static_assert(GT_REG_FP == __builtin_offsetof(struct pt_regs, rbp), "rbp");
_Static_assert(GT_REG_RET0 == __builtin_offsetof(struct pt_regs, rax), "rax");
_Static_assert(GT_REG_GO_G == __builtin_offsetof(struct pt_regs, r14), "r14");

/* The saved registers, as a type (a sample's, the task's), and their fields. */
typedef struct pt_regs gt_regs;
#define GT_REGS_IP(r) ((r)->rip)
#define GT_REGS_SP(r) ((r)->rsp)
#define GT_REGS_FP(r) ((r)->rbp)
/* In user mode: CS's privilege level is 3. */
#define GT_REGS_USER(r) (((r)->cs & 3) == 3)
/* No link register: a return address is always in memory. */
#define GT_HAS_LR 0
#define GT_REGS_LR(r) 0

/* A Go frame at a PC whose .gopclntab SP delta is D (gt_unwind.c): CALL pushed the
 * return address just above it, the prologue saved the caller's BP just below that
 * (where BP then points), and the caller's SP is above the return address. */
#define GT_GOFRAME_RA(sp, d) ((sp) + (d))
#define GT_GOFRAME_HAS_FP(d) ((d) >= 8)
#define GT_GOFRAME_FP(sp, d) ((sp) + (d)-8)
#define GT_GOFRAME_CALLER_SP(sp, d) ((sp) + (d) + 8)

#endif
