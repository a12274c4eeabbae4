/* arch/aarch64.h: the sizes of arm64 that arch.h's interface is written with (included
 * by arch.h only). Facts and their sources: docs/arm64.md. */
#ifndef GT_ARCH_AARCH64_H
#define GT_ARCH_AARCH64_H

/* Go's internal register ABI: R0-R15; F0-F15 */
#define ARCH_GO_INT_REGS 16
#define ARCH_GO_FLOAT_REGS 16
/* the C ABI's (AAPCS64) integer argument registers: X0-X7 */
#define ARCH_C_ARG_REGS 8
/* every instruction is one 32-bit word */
#define ARCH_INSN_MAX 4
/* how many bytes of a function's start arch_go_stack_check may look at: the huge
 * frame's check is 6 words, a constant of its own up to 4 more */
#define ARCH_GO_PROLOGUE_MAX (16 * ARCH_INSN_MAX)
/* where Go's own linker puts g, from the thread pointer (TPIDR_EL0: a TCB of two
 * pointers, then the executable's TLS block) */
#define ARCH_GO_TLS_G_INTERNAL 16
/* how many bytes of a function's start arch_go_abi0_wrapper looks at */
#define ARCH_GO_WRAPPER_PEEK 4

#endif
