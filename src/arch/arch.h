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

/* The processor's sizes (ARCH_GO_INT_REGS, ARCH_INSN_MAX ...): its own header, chosen by
 * the compiler's target, which is the host's. */
#if defined(__x86_64__) && !defined(GT_ARCH_CROSS_AARCH64)
#include "arch/x86_64.h"
#elif defined(__aarch64__) || defined(GT_ARCH_CROSS_AARCH64)
/* GT_ARCH_CROSS_AARCH64: tests/unit's reading of arm64 binaries on another host */
#include "arch/aarch64.h"
#else
#error "gotrace: no src/arch implementation for this processor"
#endif

extern const char arch_name[];      /* "x86_64", as uname -m says */
extern const char arch_title[];     /* "x86-64", in messages */
extern const uint16_t arch_elf_machine; /* EM_X86_64: the targets gotrace reads */
extern const uint32_t arch_reloc_relative; /* R_X86_64_RELATIVE: a PIE's base + addend */

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
/* Whether every Go function has g in ARCH_GO_G's register from its first instruction,
 * ABI0 and NOSPLIT code too (arm64: R28 always; a program without cgo never stores g in
 * thread-local storage), rather than only where it checks its stack (x86-64: ABI0 code
 * has other uses for R14, and the runtime keeps g in TLS). */
extern const bool arch_go_g_always_in_reg;

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
extern const char *const arch_go_int_regs[ARCH_GO_INT_REGS];
extern const char *const arch_go_int_names[ARCH_GO_INT_REGS];
extern const char *const arch_go_float_names[ARCH_GO_FLOAT_REGS];

/* The C ABI's integer argument registers of a plain uprobe's arg0.. (bpftrace names). */
extern const char *const arch_c_arg_regs[ARCH_C_ARG_REGS];

/* ---- instructions ---- */

/* What gotrace asks of an instruction. */
enum arch_insn_kind {
	ARCH_INSN_OTHER,
	ARCH_INSN_RET,   /* returns from the function */
	ARCH_INSN_JUMP,  /* jumps always: to TARGET when has_target (direct) */
	ARCH_INSN_FRAME, /* sets the frame pointer up: the function has a frame */
};
struct arch_insn {
	int len;
	enum arch_insn_kind kind;
	bool has_target;
	uint64_t target;
};

/* A decoder: a hand decoder for the common instructions, a disassembler (capstone,
 * opened on first need) for the others. */
struct arch_dis;
struct arch_dis *arch_dis_new(void);
void arch_dis_free(struct arch_dis *d);
/* The instruction at P (N bytes there, at address PC): 0, or -EILSEQ when it cannot be
 * decoded (or is cut by N), -ENOMEM when the disassembler cannot be opened. */
int arch_decode(struct arch_dis *d, const uint8_t *p, size_t n, uint64_t pc,
		struct arch_insn *in);

/* Go's stack check at a function's start P (N bytes there, at PC): true with *AFTER the
 * address after the conditional branch that ends it and *BRANCH that branch's target
 * (the block calling runtime.morestack, which the caller checks); false when the
 * function starts with none (NOSPLIT code, assembly). */
bool arch_go_stack_check(struct arch_dis *d, const uint8_t *p, size_t n, uint64_t pc,
			 uint64_t *after, uint64_t *branch);

/* Whether the instruction at P (N bytes) returns (a one-instruction check at an
 * address: a RET site's or an entry's) or pushes the frame pointer (a Go function's
 * first frame instruction, after which a uprobe's user stack holds its caller on
 * kernels that add it: Linux 6.11). */
bool arch_is_ret(const uint8_t *p, size_t n);
bool arch_is_frame_push(const uint8_t *p, size_t n);
/* That instruction as people read it ("push %rbp"), for --info. */
extern const char arch_frame_push_text[];

/* What the kernel's uprobes make of the instruction at P (N bytes there). */
enum arch_uprobe_verdict {
	ARCH_UPROBE_OK,
	ARCH_UPROBE_TRAP,    /* a breakpoint or trap: sema leaves it out with its own warning */
	ARCH_UPROBE_REFUSED, /* the kernel's decoder refuses it (ENOTSUPP) */
};
enum arch_uprobe_verdict arch_uprobe_verdict(const uint8_t *p, size_t n);

/* ---- Go's code, recognised by its bytes ---- */

/* Whether the function starting at P (N >= ARCH_GO_WRAPPER_PEEK bytes there) is the ABI0
 * wrapper of a Go function, told by its first bytes where the processor's ABIInternal
 * needs a set-up ABI0 code lacks (x86-64: a zero float register, g from thread-local
 * storage); false where nothing tells (arm64: g is in R28 under both ABIs). */
bool arch_go_abi0_wrapper(const uint8_t *p, size_t n);
/* Whether the N bytes before a wrapper's call of its twin set that up (ABI0 calling
 * ABIInternal), rather than the twin's being an assembly function. */
bool arch_go_abi0_caller(const uint8_t *p, size_t n);
/* The offset in P (N bytes of code at PC) of a direct call or jump to TARGET, or -1. */
int64_t arch_branch_to(const uint8_t *p, size_t n, uint64_t pc, uint64_t target);
/* The thread-local offset Go's code (SIZE bytes of .text at P) loads g from, when its
 * loads agree. */
/* The TLS symbol of g that an external link leaves in .symtab ("runtime.tlsg"). */
extern const char arch_go_tls_symbol[];
bool arch_go_tls_g_slot(const uint8_t *p, size_t size, int64_t *off);

/* ---- thread-local storage ---- */

/* The member of the kernel's task_struct holding user space's thread pointer
 * ("thread.fsbase"), for BTF. */
extern const char arch_kernel_tp_member[];
/* The offset from the thread pointer of the executable's TLS symbol at offset SYM of a
 * PT_TLS segment of VADDR, MEMSZ, ALIGN (the processor's TLS variant). */
int64_t arch_tls_offset(uint64_t sym, uint64_t vaddr, uint64_t memsz, uint64_t align);

/* ---- code in gotrace that gotrace probes (arch/NAME_self.c) ---- */

/* Calibration targets of the guard: a function whose first instruction uprobes emulate
 * (a push of the frame pointer: one trap a hit), and one whose first they single-step
 * out of line (a second trap). */
void arch_trap_push(void);
void arch_trap_step(void);
/* arch_frame_outer sets up a frame and calls arch_frame_leaf, which starts with the
 * frame push a go: entry probe sits on; the call returns to arch_frame_ret. */
void arch_frame_outer(void);
extern const char arch_frame_leaf[], arch_frame_ret[];

/* capstone's names for the host's instruction set (-d jit shows the BPF JIT's code). */
void arch_capstone(int *cs_arch, int *cs_mode);

#endif
