/* arch/aarch64: the arm64 processor (linux/arm64). Facts and their sources: docs/arm64.md. */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"

#if defined(__aarch64__)
#include <asm/ptrace.h> /* struct user_pt_regs: what BPF reads as the saved registers */
#include <stddef.h>
_Static_assert(offsetof(struct user_pt_regs, sp) == 248 &&
		       offsetof(struct user_pt_regs, pc) == 256 &&
		       offsetof(struct user_pt_regs, pstate) == 264,
	       "arm64 saved registers: regs[31], sp, pc, pstate");
#endif

#ifndef EM_AARCH64
#define EM_AARCH64 183
#endif
#ifndef R_AARCH64_RELATIVE
#define R_AARCH64_RELATIVE 1027
#endif

/* struct user_pt_regs (the UAPI prefix of the kernel's pt_regs): regs[31], sp, pc, pstate */
#define X(n) ((n) * 8)
#define SP_OFF 248
#define PC_OFF 256
#define PSTATE_OFF 264

const char arch_name[] = "aarch64";
const char arch_title[] = "arm64";
const uint16_t arch_elf_machine = EM_AARCH64;
const uint32_t arch_reloc_relative = R_AARCH64_RELATIVE;

/* bpftrace's names: r0..r30, sp, pc (reg("pc")); the kernel's x0..x30 and the AAPCS64
 * fp (x29) and lr (x30) are taken too, and ip for pc (gotrace's own generated scripts,
 * bpftrace's x86-64 name) */
int arch_reg_offset(const char *name)
{
	if (!name)
		return -1;
	if (!strcmp(name, "sp"))
		return SP_OFF;
	if (!strcmp(name, "pc") || !strcmp(name, "ip"))
		return PC_OFF;
	if (!strcmp(name, "fp"))
		return X(29);
	if (!strcmp(name, "lr"))
		return X(30);
	if ((name[0] == 'r' || name[0] == 'x') && name[1] >= '0' && name[1] <= '9') {
		char *end;
		long n = strtol(name + 1, &end, 10);
		/* no leading zeros ("r01"): one spelling a register */
		if (!*end && n >= 0 && n <= 30 && (name[1] != '0' || !name[2]))
			return X((int)n);
	}
	return -1;
}

const char arch_reg_names_help[] = "r0..r30 sp (also written x0..x30, fp, lr)";

const char arch_reg_all_help[] = "r0..r30 sp pc";

const char *arch_reg_canonical(const char *name)
{
	static const char *const names[] = {
		"r0",  "r1",  "r2",  "r3",  "r4",  "r5",  "r6",  "r7",  "r8",  "r9",  "r10",
		"r11", "r12", "r13", "r14", "r15", "r16", "r17", "r18", "r19", "r20", "r21",
		"r22", "r23", "r24", "r25", "r26", "r27", "r28", "r29", "r30"};
	int off = arch_reg_offset(name);
	if (off == SP_OFF)
		return "sp";
	if (off < 0 || off >= SP_OFF)
		return NULL; /* pc: reg() only, not a fetch rule's %REG */
	return names[off / 8];
}

const int arch_role_off[ARCH_NROLES] = {
	[ARCH_IP] = PC_OFF, [ARCH_SP] = SP_OFF, [ARCH_FP] = X(29),
	[ARCH_RET0] = X(0), [ARCH_GO_G] = X(28),
};

const bool arch_go_g_always_in_reg = true;

/* BL wrote it to the link register; nothing is pushed */
const struct arch_ret_addr arch_entry_ret_addr = {.in_reg = true, .reg_off = X(30)};

/* PSTATE.M[3:0]: 0 is EL0 with SP_EL0, user mode */
const struct arch_user_mode arch_user_mode = {.off = PSTATE_OFF, .mask = 0xf, .value = 0};

/* ABIInternal on arm64 (Go's src/cmd/compile/abi-internal.md) */
const char *const arch_go_int_regs[ARCH_GO_INT_REGS] = {
	"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
};
const char *const arch_go_int_names[ARCH_GO_INT_REGS] = {
	"R0", "R1", "R2", "R3", "R4", "R5", "R6", "R7",
	"R8", "R9", "R10", "R11", "R12", "R13", "R14", "R15",
};
const char *const arch_go_float_names[ARCH_GO_FLOAT_REGS] = {
	"F0", "F1", "F2", "F3", "F4", "F5", "F6", "F7",
	"F8", "F9", "F10", "F11", "F12", "F13", "F14", "F15",
};

/* AAPCS64 */
const char *const arch_c_arg_regs[ARCH_C_ARG_REGS] = {"r0", "r1", "r2", "r3",
						      "r4", "r5", "r6", "r7"};
