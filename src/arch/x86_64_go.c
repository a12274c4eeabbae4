/* arch/x86_64_go: the shapes of Go's code on amd64 that binfo recognises by their bytes:
 * ABI wrappers, direct calls, the loads of g from thread-local storage. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif
#include <string.h>

#include "arch/arch.h"

/* `xorps %xmm15,%xmm15`: ABIInternal code expects X15 zero */
static const uint8_t xorps_x15[4] = {0x45, 0x0f, 0x57, 0xff};

/* The ABI0 wrapper of a Go function starts by setting up what ABIInternal code expects:
 * X15 zeroed and g into R14 from TLS (`mov %fs:disp32,%r14`, or in a PIE
 * `mov $imm32,%r14; mov %fs:(%r14),%r14`). */
bool arch_go_abi0_wrapper(const uint8_t *p, size_t n)
{
	if (n < 17 || memcmp(p, xorps_x15, 4) != 0)
		return false;
	return !memcmp(p + 4, "\x64\x4c\x8b\x34\x25", 5) ||
	       (!memcmp(p + 4, "\x49\xc7\xc6", 3) && !memcmp(p + 11, "\x64\x4d\x8b\x36", 4));
}

bool arch_go_abi0_caller(const uint8_t *p, size_t n)
{
	return n >= 4 && memmem(p, n, xorps_x15, 4);
}

/* rel32 CALL or JMP */
int64_t arch_branch_to(const uint8_t *p, size_t n, uint64_t pc, uint64_t target)
{
	for (size_t k = 0; k + 5 <= n; k++) {
		int32_t rel;
		memcpy(&rel, p + k + 1, 4);
		if ((p[k] == 0xe8 || p[k] == 0xe9) && pc + k + 5 + (uint64_t)(int64_t)rel == target)
			return (int64_t)k;
	}
	return -1;
}

/* `mov %fs:disp32,%r14` (64 4c 8b 34 25 disp32) or, in PIE,
 * `mov $imm32,%r14; mov %fs:(%r14),%r14` (49 c7 c6 imm32 64 4d 8b 36); the first 16
 * such loads must agree. */
bool arch_go_tls_g_slot(const uint8_t *p, size_t size, int64_t *off)
{
	const uint8_t *end = p + size;
	int n = 0;
	for (const uint8_t *q = p; q + 11 <= end && n < 16; q++) {
		int32_t v;
		if (q[0] == 0x64 && q[1] == 0x4c && q[2] == 0x8b && q[3] == 0x34 && q[4] == 0x25)
			memcpy(&v, q + 5, 4);
		else if (q[0] == 0x49 && q[1] == 0xc7 && q[2] == 0xc6 && q[7] == 0x64 &&
			 q[8] == 0x4d && q[9] == 0x8b && q[10] == 0x36)
			memcpy(&v, q + 3, 4);
		else
			continue;
		if (n++ && *off != v)
			return false;
		*off = v;
	}
	return n > 0;
}

const char arch_go_tls_symbol[] = "runtime.tlsg";

const char arch_kernel_tp_member[] = "thread.fsbase";

/* x86-64 TLS is variant II: the thread pointer (fsbase) points just past the static
 * TLS blocks, and the executable's block comes first, ending at the thread pointer.
 * The block starts at tp - S, S the smallest size >= memsz with tp - S congruent to
 * vaddr modulo align (glibc's _dl_determine_tlsoffset; the static linker's TPOFF for
 * the executable agrees), so a TLS symbol at offset SYM of the segment lives at
 * tp - S + SYM. */
int64_t arch_tls_offset(uint64_t sym, uint64_t vaddr, uint64_t memsz, uint64_t align)
{
	uint64_t size;
	if (!align)
		align = 1;
	if ((align & (align - 1)) == 0)
		size = memsz + ((0 - vaddr - memsz) & (align - 1));
	else /* not valid ELF; round the same way without the mask trick */
		size = memsz + (align - (vaddr + memsz) % align) % align;
	return (int64_t)sym - (int64_t)size;
}
