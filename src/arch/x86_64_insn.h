/* arch/x86_64_insn: the hand decoder of x86-64 instruction lengths, for its test
 * against capstone (tests/unit/binfo_test.c); everything else uses arch.h. */
#ifndef GT_ARCH_X86_64_INSN_H
#define GT_ARCH_X86_64_INSN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The length of the instruction at P (N bytes there), and whether it is a RET (c3 or
 * c2 iw); 0 when this decoder is not sure. */
int x86_insn_len(const uint8_t *p, size_t n, bool *is_ret);

#endif
