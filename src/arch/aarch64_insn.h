/* arch/aarch64_insn.h: what arch/aarch64*.c share: an instruction word from its bytes. */
#ifndef GT_ARCH_AARCH64_INSN_H
#define GT_ARCH_AARCH64_INSN_H

#include <stdint.h>

/* The 32-bit little-endian word at P (any alignment). */
static inline uint32_t a64_word(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

#endif
