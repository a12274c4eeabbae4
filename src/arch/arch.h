/* arch: what differs between the processors gotrace runs on and traces, behind one
 * interface. gotrace traces programs of the processor it runs on, so one implementation
 * is built in: the host's (arch/x86_64.c). A new processor is a new arch/NAME.c, its
 * runtime-bpf/arch_NAME.h and its tests; nothing outside these names its registers,
 * opcodes or prologue bytes.
 *
 * Registers are named as bpftrace names them on that processor (reg("ax") on x86-64)
 * and found at their offset in the probe's saved registers (the kernel's struct
 * pt_regs, the context of a uprobe, a kprobe and a perf-event sample). */
#ifndef GT_ARCH_H
#define GT_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

extern const char arch_name[];      /* "x86_64", as uname -m says */
extern const uint16_t arch_elf_machine; /* EM_X86_64: the targets gotrace reads */

/* ---- registers ---- */

/* The canonical name of the general register spelled NAME ("rax", "eax" -> "ax"), NULL
 * when there is no such register (a fetch rule's %REG). */
const char *arch_reg_canonical(const char *name);
/* The register names for a message ("ax bx cx ... r15 (also written rax, eax ...)"). */
extern const char arch_reg_names_help[];
/* Every register reg() reads, for its message ("ax bx ... ip r8..r15"). */
extern const char arch_reg_all_help[];
/* The offset of the register NAME (canonical or not; the general ones and the
 * instruction pointer: reg("ip")) in the saved registers, or -1. */
int arch_reg_offset(const char *name);

/* Registers with a role, by their offset in the saved registers. */
enum arch_role {
	ARCH_IP,   /* the instruction pointer: the probed instruction at a uprobe */
	ARCH_SP,   /* the stack pointer */
	ARCH_FP,   /* the frame pointer */
	ARCH_RET0, /* a C function's (and Go's first integer) result */
	ARCH_GO_G, /* Go's g, in its internal register ABI (Go 1.17+) */
	ARCH_NROLES
};
extern const int arch_role_off[ARCH_NROLES];

/* Where a function's return address is at its first instruction: in the word at the
 * stack pointer (x86-64: the call pushed it) or in a register (a link register). */
struct arch_ret_addr {
	bool in_reg; /* false: the 8 bytes at ARCH_SP */
	int reg_off; /* in_reg: the register's offset */
};
extern const struct arch_ret_addr arch_entry_ret_addr;

/* Whether a perf-event sample interrupted user code: (word at OFF & MASK) == VALUE. */
struct arch_user_mode {
	int off;
	uint64_t mask, value;
};
extern const struct arch_user_mode arch_user_mode;

/* ---- calling conventions ---- */

/* Go's internal register ABI: integer arguments and results in these registers, in this
 * order (bpftrace names, and the names Go's own tools print: "RAX"), floats in the
 * float registers (names only: a probe cannot read them). */
#define ARCH_GO_INT_REGS 9
#define ARCH_GO_FLOAT_REGS 15
extern const char *const arch_go_int_regs[ARCH_GO_INT_REGS];
extern const char *const arch_go_int_names[ARCH_GO_INT_REGS];
extern const char *const arch_go_float_names[ARCH_GO_FLOAT_REGS];

/* The C ABI's integer argument registers of a plain uprobe's arg0.. (bpftrace names). */
#define ARCH_C_ARG_REGS 6
extern const char *const arch_c_arg_regs[ARCH_C_ARG_REGS];

#endif
