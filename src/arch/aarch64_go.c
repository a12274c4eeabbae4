/* arch/aarch64_go: the shapes of Go's code on arm64 that binfo recognises by their words:
 * ABI wrappers, direct branches, the loads of g from thread-local storage. Sources:
 * docs/arm64.md §5. */
#include <string.h>

#include "arch/arch.h"
#include "arch/aarch64_insn.h"

/* g is in R28 under ABI0 and ABIInternal alike, and no register must be zeroed: an
 * ABI0 wrapper's first words are an ordinary frame set-up. The twin test decides
 * (arch_go_abi0_caller). */
bool arch_go_abi0_wrapper(const uint8_t *p, size_t n)
{
	(void)p;
	(void)n;
	return false;
}

/* An ABI0 wrapper of a Go function loads the arguments from its caller's stack into R0..
 * (`ldr xN, [sp, #off]`, `ldr wN`, `ldrsw`, `fldr`) before it calls its twin; an
 * ABIInternal wrapper of an assembly function stores them there (`str xN, [sp, #off]`).
 * Neither (no arguments): taken as ABI0, the wrapper that branches to a Go function. */
bool arch_go_abi0_caller(const uint8_t *p, size_t n)
{
	for (size_t k = 0; k + 4 <= n; k += 4) {
		uint32_t w = a64_word(p + k);
		/* STR/STRB/STRH/STUR (unsigned offset), base sp, a source R0-R15 / F0-F15 */
		bool to_sp = ((w & 0x3f4003e0) == 0x390003e0 || (w & 0x3f4003e0) == 0x3d0003e0) &&
			     (w & 0x1f) < 16;
		/* past the frame set-up's own `str x30` / `stur x29` and the stp of FP,LR */
		if (to_sp && (w & 0x1f) != 29 && (w & 0x1f) != 30)
			return false;
	}
	return true;
}

/* B or BL imm26 to TARGET */
int64_t arch_branch_to(const uint8_t *p, size_t n, uint64_t pc, uint64_t target)
{
	for (size_t k = 0; k + 4 <= n; k += 4) {
		uint32_t w = a64_word(p + k);
		if ((w & 0x7c000000) != 0x14000000)
			continue;
		int64_t rel = (int64_t)((uint64_t)(w & 0x03ffffff) << 38) >> 36; /* imm26 * 4 */
		if (pc + k + (uint64_t)rel == target)
			return (int64_t)k;
	}
	return -1;
}

/* The constant of `movz x27, #imm16{, lsl #16}` and `movk x27, #imm16` words ending
 * before the load at P[AT] (`ldr x28, [x0, x27]` or `str x28, [x0, x27]`): true with *V. */
static bool x27_const(const uint8_t *p, size_t at, int64_t *v)
{
	uint64_t c = 0;
	bool movz = false;
	for (size_t k = at >= 12 ? at - 12 : 0; k + 4 <= at; k += 4) {
		uint32_t w = a64_word(p + k);
		uint64_t imm = (w >> 5) & 0xffff, sh = ((w >> 21) & 3) * 16;
		if ((w & 0xff80001f) == 0xd280001b) { /* movz x27 */
			c = imm << sh;
			movz = true;
		} else if (movz && (w & 0xff80001f) == 0xf280001b) { /* movk x27 */
			c = (c & ~(0xffffull << sh)) | imm << sh;
		} else {
			movz = false;
		}
	}
	*v = (int64_t)c;
	return movz;
}

/* `mrs x0, tpidr_el0`, the slot into x27 as a constant (movz, or movz + movk in a PIE),
 * then `ldr x28, [x0, x27]` (load_g) or `str x28, [x0, x27]` (save_g); the first 16
 * must agree. (An external link's GOT form loads the slot from memory: not here.) */
bool arch_go_tls_g_slot(const uint8_t *p, size_t size, int64_t *off)
{
	int n = 0;
	for (size_t k = 4; k + 4 <= size && n < 16; k += 4) {
		uint32_t w = a64_word(p + k);
		int64_t v;
		if ((w != 0xf87b681c && w != 0xf83b681c) || !x27_const(p, k, &v))
			continue;
		if (n++ && *off != v)
			return false;
		*off = v;
	}
	return n > 0;
}

const char arch_go_tls_symbol[] = "runtime.tls_g";

const char arch_kernel_tp_member[] = "thread.uw.tp_value";

/* arm64 TLS is variant I: the thread pointer (TPIDR_EL0) points to a TCB of two pointers
 * (16 bytes), after which the executable's block starts, at the first address past it
 * congruent to the segment's vaddr modulo its alignment (glibc's
 * _dl_determine_tlsoffset, TLS_DTV_AT_TP; lld: alignTo(16, p_align) for an aligned
 * vaddr). A TLS symbol at offset SYM of the segment lives at tp + that + SYM. */
int64_t arch_tls_offset(uint64_t sym, uint64_t vaddr, uint64_t memsz, uint64_t align)
{
	(void)memsz;
	if (!align)
		align = 1;
	uint64_t first = (align - vaddr % align) % align; /* glibc's firstbyte */
	uint64_t off = (16 + align - 1) / align * align;
	if (off - 16 < first)
		off += align;
	return (int64_t)(off - first + sym);
}
