/* arch/aarch64_insn: arm64 instructions, one aligned 32-bit little-endian word each, so
 * decoded by their bits without a disassembler (capstone 4 calls Go's UNDEF, the zero
 * word padding functions, invalid). Then Go's stack-check prologue and the kernel's
 * uprobe rules. Encodings and what each release of Go emits: docs/arm64.md §3, §6;
 * tests/unit/arm64_test.c checks them against `go tool objdump` of arm64 builds. */
#include <capstone/capstone.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/aarch64_insn.h"

/* BITS bits of W from bit LO, sign-extended */
static int64_t sfield(uint32_t w, int lo, int bits)
{
	uint64_t v = (w >> lo) & ((1u << bits) - 1);
	return (int64_t)(v << (64 - bits)) >> (64 - bits);
}

/* RET {Xn} (the kernel's mask); RETAA/RETAB too, which Go never emits */
static bool is_ret(uint32_t w)
{
	return (w & 0xfffffc1f) == 0xd65f0000 || w == 0xd65f0bff || w == 0xd65f0fff;
}

/* ---- the kernel's uprobe rules (arch/arm64/kernel/probes/decode-insn.c) ---- */

/* A hint the kernel single-steps: NOP, and the PAC and BTI hints it counts as NOPs;
 * the others (YIELD, WFE, WFI, SEV ...) it refuses. */
static bool steppable_hint(uint32_t w)
{
	uint32_t op = (w >> 5) & 0x7f; /* CRm:op2 */
	return op == 0 ||                            /* NOP */
	       op == 0x08 || op == 0x0a ||           /* PACIA1716, PACIB1716 */
	       op == 0x18 || op == 0x19 ||           /* PACIAZ, PACIASP */
	       op == 0x1a || op == 0x1b ||           /* PACIBZ, PACIBSP */
	       op == 0x20 || op == 0x22 || op == 0x24 || op == 0x26; /* BTI {c, j, jc} */
}

/* What the kernel's uprobes make of the word at P: -EINVAL for what arm_probe_decode_insn
 * rejects (neither single-stepped nor simulated). A BRK is a trap. Only what is certain
 * is here: a literal load was simulated before Linux 6.12's fix and is refused after, so
 * the kernel decides. */
enum arch_uprobe_verdict arch_uprobe_verdict(const uint8_t *p, size_t n)
{
	if (n < 4)
		return ARCH_UPROBE_OK;
	uint32_t w = a64_word(p);
	if ((w & 0xffe0001f) == 0xd4200000)
		return ARCH_UPROBE_TRAP; /* BRK */
	if ((w & 0xff000000) == 0xd4000000)
		return ARCH_UPROBE_REFUSED; /* SVC, HVC, SMC, HLT, DCPS */
	if ((w & 0xfff8f01f) == 0xd500401f || (w & 0xfff00000) == 0xd5100000)
		return ARCH_UPROBE_REFUSED; /* MSR (immediate), MSR (register) */
	if ((w & 0xffffffe0) == 0xd53b4220)
		return ARCH_UPROBE_REFUSED; /* MRS of DAIF: wrong while single-stepped */
	if (w == 0xd69f03e0 || (w & 0xfffffbff) == 0xd69f0bff)
		return ARCH_UPROBE_REFUSED; /* ERET, ERETAA/ERETAB */
	if ((w & 0xfffff01f) == 0xd503201f && !steppable_hint(w))
		return ARCH_UPROBE_REFUSED; /* YIELD, WFE, WFI, SEV, SEVL ... */
	if ((w & 0x3f800000) == 0x08000000)
		return ARCH_UPROBE_REFUSED; /* load/store exclusive: LDXR, STXR, LDAXR ... */
	if ((w & 0xfefff800) == 0xd61f0800 || (w & 0xfefff800) == 0xd63f0800)
		return ARCH_UPROBE_REFUSED; /* BRAA/BRAB, BLRAA/BLRAB: not simulated */
	return ARCH_UPROBE_OK;
}

/* ---- arch.h's decoder ---- */

/* Nothing to open: every word is decoded by its bits. */
struct arch_dis {
	int unused;
};

struct arch_dis *arch_dis_new(void)
{
	return calloc(1, sizeof(struct arch_dis));
}

void arch_dis_free(struct arch_dis *d)
{
	free(d);
}

void arch_capstone(int *cs_arch, int *cs_mode)
{
	*cs_arch = CS_ARCH_ARM64;
	*cs_mode = CS_MODE_ARM;
}

/* A frame set up: Go's ends with `sub x29, sp, #8` (every release, every frame size);
 * C's (cgo) with `mov x29, sp`. */
static bool sets_frame(uint32_t w)
{
	return w == 0xd10023fd || w == 0x910003fd;
}

int arch_decode(struct arch_dis *d, const uint8_t *p, size_t n, uint64_t pc,
		struct arch_insn *in)
{
	(void)d;
	*in = (struct arch_insn){0};
	if (n < 4 || (pc & 3))
		return -EILSEQ;
	uint32_t w = a64_word(p);
	in->len = 4;
	if (is_ret(w)) {
		in->kind = ARCH_INSN_RET;
	} else if ((w & 0xfc000000) == 0x14000000) { /* B imm26 */
		in->kind = ARCH_INSN_JUMP;
		in->has_target = true;
		in->target = pc + (uint64_t)(sfield(w, 0, 26) * 4);
	} else if ((w & 0xfffffc1f) == 0xd61f0000) { /* BR Xn: a jump table's */
		in->kind = ARCH_INSN_JUMP;
	} else if (sets_frame(w)) {
		in->kind = ARCH_INSN_FRAME;
	}
	return 0;
}

bool arch_is_ret(const uint8_t *p, size_t n)
{
	return n >= 4 && is_ret(a64_word(p));
}

const char arch_frame_push_text[] = "str x30, [sp, #-N]!";

/* `str x30, [sp, #-N]!`: the first word of a Go frame of up to 0xf0 bytes */
bool arch_is_frame_push(const uint8_t *p, size_t n)
{
	return n >= 4 && (a64_word(p) & 0xffe00fff) == 0xf8000ffe;
}

/* ---- Go's stack check (cmd/internal/obj/arm64/obj7.go stacksplit, 1.19 to 1.27) ---- */

/* `ldr x16, [x28, #16]` (g.stackguard0; #24, stackguard1, in a C-called function), then
 * a frame-size dependent compare of sp (or sp less a constant, into x17) with x16 in at
 * most 7 words that touch only x16, x17, x27 and the flags, then `b.ls` to the block that
 * calls morestack (a huge frame's `b.lo` before it goes to the same block). */
bool arch_go_stack_check(struct arch_dis *d, const uint8_t *code, size_t len, uint64_t pc,
			 uint64_t *after, uint64_t *branch)
{
	(void)d;
	if (len < 8 || (pc & 3))
		return false;
	uint32_t w = a64_word(code);
	if (w != 0xf9400b90 && w != 0xf9400f90)
		return false;
	bool cmp = false;
	for (size_t o = 4; o + 4 <= len && o <= 8 * 4; o += 4) {
		w = a64_word(code + o);
		if (w == 0xeb3063ff || w == 0xeb10023f) { /* cmp sp, x16 / cmp x17, x16 */
			cmp = true;
			continue;
		}
		if (cmp && (w & 0xff00001f) == 0x54000009) { /* b.ls */
			*after = pc + o + 4;
			*branch = pc + o + (uint64_t)(sfield(w, 5, 19) * 4);
			return true;
		}
		if (cmp)
			return false;
		/* before the compare: sub/subs x17, sp, ...; movz/movk x27; b.lo */
		if ((w & 0xff8003ff) == 0xd10003f1 || (w & 0xff8003ff) == 0xf10003f1 ||
		    w == 0xeb3b63f1 || (w & 0xff80001f) == 0xd280001b ||
		    (w & 0xff80001f) == 0xf280001b || (w & 0xff80001f) == 0x9280001b ||
		    (w & 0xff00001f) == 0x54000003)
			continue;
		return false;
	}
	return false;
}
