/* runtime-bpf/arch_aarch64: the arm64 processor on the BPF side (src/arch/aarch64.c is the
 * tool's side). The saved registers are struct user_pt_regs (the UAPI prefix of the
 * kernel's pt_regs, what bpf_user_pt_regs_t is on arm64): regs[31], sp, pc, pstate.
 * Offsets are literals, for reg_at()'s one load instruction, checked against the header. */
#ifndef GT_ARCH_AARCH64_H
#define GT_ARCH_AARCH64_H

#include <asm/ptrace.h>

#define GT_REG_IP 256   /* pc: the probed instruction at a uprobe */
#define GT_REG_SP 248   /* sp */
#define GT_REG_FP 232   /* x29 */
#define GT_REG_RET0 0   /* x0: Go's first integer argument and result */
#define GT_REG_GO_G 224 /* x28: Go's g (both ABIs) */
_Static_assert(GT_REG_IP == __builtin_offsetof(struct user_pt_regs, pc), "pc");
_Static_assert(GT_REG_SP == __builtin_offsetof(struct user_pt_regs, sp), "sp");
_Static_assert(GT_REG_FP == __builtin_offsetof(struct user_pt_regs, regs[29]), "x29");
_Static_assert(GT_REG_RET0 == __builtin_offsetof(struct user_pt_regs, regs[0]), "x0");
_Static_assert(GT_REG_GO_G == __builtin_offsetof(struct user_pt_regs, regs[28]), "x28");

/* The saved registers, as a type (a sample's, the task's), and their fields. */
typedef struct user_pt_regs gt_regs;
#define GT_REGS_IP(r) ((r)->pc)
#define GT_REGS_SP(r) ((r)->sp)
#define GT_REGS_FP(r) ((r)->regs[29])
/* In user mode: PSTATE.M[3:0] is 0 (EL0t). */
#define GT_REGS_USER(r) (((r)->pstate & 0xf) == 0)
/* x30: the return address, until a prologue stores it */
#define GT_HAS_LR 1
#define GT_REGS_LR(r) ((r)->regs[30])

/* A Go frame at a PC whose .gopclntab SP delta is D (gt_unwind.c): the prologue stores
 * the link register at the new SP (MOVD.W R30, -D(RSP)) and the caller's FP just below
 * it (MOVD R29, -8(RSP), where FP then points); the caller's SP is SP + D. With D = 0
 * (a leaf without a frame, or before its prologue) the return address is still in x30. */
#define GT_GOFRAME_RA(sp, d) (sp)
#define GT_GOFRAME_HAS_FP(d) ((d) > 0)
#define GT_GOFRAME_FP(sp, d) ((sp)-8)
#define GT_GOFRAME_CALLER_SP(sp, d) ((sp) + (d))

#endif
