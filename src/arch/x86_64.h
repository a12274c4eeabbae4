/* arch/x86_64.h: the sizes of x86-64 that arch.h's interface is written with (included
 * by arch.h only). */
#ifndef GT_ARCH_X86_64_H
#define GT_ARCH_X86_64_H

/* Go's internal register ABI: RAX RBX RCX RDI RSI R8 R9 R10 R11; X0-X14 */
#define ARCH_GO_INT_REGS 9
#define ARCH_GO_FLOAT_REGS 15
/* the C ABI's integer argument registers: RDI RSI RDX RCX R8 R9 */
#define ARCH_C_ARG_REGS 6
/* the longest instruction, in bytes */
#define ARCH_INSN_MAX 15
/* how many bytes of a function's start arch_go_stack_check may look at */
#define ARCH_GO_PROLOGUE_MAX (12 * ARCH_INSN_MAX)
/* where Go's own linker puts g, from the thread pointer (an internal link) */
#define ARCH_GO_TLS_G_INTERNAL (-8)
/* how many bytes of a function's start arch_go_abi0_wrapper looks at */
#define ARCH_GO_WRAPPER_PEEK 17

#endif
