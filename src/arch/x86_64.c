/* arch/x86_64: the x86-64 processor (linux/amd64). */
#include <asm/ptrace.h> /* struct pt_regs: the kernel's saved registers, as BPF reads them */
#include <elf.h>
#include <string.h>

#include "arch/arch.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define OFF(f) ((int)offsetof(struct pt_regs, f))

const char arch_name[] = "x86_64";
const char arch_title[] = "x86-64";
const uint16_t arch_elf_machine = EM_X86_64;
const uint32_t arch_reloc_relative = R_X86_64_RELATIVE;

/* bpftrace's names: the 64-bit registers without their r (ax), and r8..r15; the general
 * registers (a fetch rule's %REG) first, then ip (reg("ip") only) */
static const struct {
	const char *name;
	int off;
} regs[] = {
	{"ax", OFF(rax)},   {"bx", OFF(rbx)},	{"cx", OFF(rcx)},   {"dx", OFF(rdx)},
	{"si", OFF(rsi)},   {"di", OFF(rdi)},	{"bp", OFF(rbp)},   {"sp", OFF(rsp)},
	{"r8", OFF(r8)},    {"r9", OFF(r9)},	{"r10", OFF(r10)},  {"r11", OFF(r11)},
	{"r12", OFF(r12)},  {"r13", OFF(r13)},	{"r14", OFF(r14)},  {"r15", OFF(r15)},
	{"ip", OFF(rip)},
};
#define NGENERAL 16

/* NAME's entry among the first N of regs, -1 when none */
static int find(const char *name, size_t n)
{
	for (size_t i = 0; name && i < n; i++) {
		if (!strcmp(name, regs[i].name))
			return (int)i;
		/* the 64-bit (r) and 32-bit (e) spellings of the first eight, and of ip */
		if ((i < 8 || i >= NGENERAL) && (name[0] == 'r' || name[0] == 'e') &&
		    !strcmp(name + 1, regs[i].name))
			return (int)i;
	}
	return -1;
}

const char arch_reg_names_help[] = "ax bx cx dx si di bp sp r8..r15 (also written rax, eax ...)";

const char arch_reg_all_help[] = "ax bx cx dx si di bp sp ip r8..r15";

const char *arch_reg_canonical(const char *name)
{
	int i = find(name, NGENERAL);
	return i < 0 ? NULL : regs[i].name;
}

int arch_reg_offset(const char *name)
{
	int i = find(name, ARRAY_LEN(regs));
	return i < 0 ? -1 : regs[i].off;
}

const int arch_role_off[ARCH_NROLES] = {
	[ARCH_IP] = OFF(rip), [ARCH_SP] = OFF(rsp),   [ARCH_FP] = OFF(rbp),
	[ARCH_RET0] = OFF(rax), [ARCH_GO_G] = OFF(r14),
};

const bool arch_go_g_always_in_reg = false;

/* CALL pushed it */
const struct arch_ret_addr arch_entry_ret_addr = {.in_reg = false};

/* CS's low two bits: the privilege level, 3 in user mode */
const struct arch_user_mode arch_user_mode = {.off = OFF(cs), .mask = 3, .value = 3};

/* ABIInternal on amd64 (Go's src/cmd/compile/abi-internal.md) */
const char *const arch_go_int_regs[ARCH_GO_INT_REGS] = {"ax", "bx", "cx",  "di", "si",
							"r8", "r9", "r10", "r11"};
const char *const arch_go_int_names[ARCH_GO_INT_REGS] = {"RAX", "RBX", "RCX", "RDI", "RSI",
							 "R8",  "R9",  "R10", "R11"};
const char *const arch_go_float_names[ARCH_GO_FLOAT_REGS] = {
	"X0", "X1", "X2", "X3", "X4", "X5", "X6", "X7", "X8", "X9", "X10", "X11", "X12", "X13", "X14",
};

/* System V */
const char *const arch_c_arg_regs[ARCH_C_ARG_REGS] = {"di", "si", "dx", "cx", "r8", "r9"};
