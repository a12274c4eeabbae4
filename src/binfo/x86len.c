/* binfo/x86len: the length of an x86-64 instruction, for the linear sweeps that find a
 * function's RETs and instruction boundaries. Capstone formats every instruction's text
 * as it decodes (85% of the time of a 70,000-site wildcard); a length needs only the
 * prefixes, the opcode maps and ModRM. What this does not know for sure (3DNow!, XOP,
 * 16-bit branches, invalid opcodes) it answers 0, and the caller asks capstone.
 * tests/unit/x86len_test.c checks it against capstone on every function of real Go
 * binaries. */
#include "binfo/binfo_int.h"

/* One-byte map: what follows the opcode. */
enum {
	N = 0,  /* nothing */
	M = 1,  /* ModRM */
	I8 = 2, /* imm8 */
	IZ = 4, /* imm16 or imm32 (operand size) */
	X = 8,  /* not known here: capstone decides */
	PFX = 16, /* a legacy prefix */
	MI8 = M | I8,
	MIZ = M | IZ,
};

static const uint8_t map1[256] = {
	/* 00 */ M, M, M, M, I8, IZ, X, X, M, M, M, M, I8, IZ, X, X,
	/* 10 */ M, M, M, M, I8, IZ, X, X, M, M, M, M, I8, IZ, X, X,
	/* 20 */ M, M, M, M, I8, IZ, PFX, X, M, M, M, M, I8, IZ, PFX, X,
	/* 30 */ M, M, M, M, I8, IZ, PFX, X, M, M, M, M, I8, IZ, PFX, X,
	/* 40: REX, handled before the table */
	X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X,
	/* 50 */ N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N,
	/* 60 */ X, X, X, M, PFX, PFX, PFX, PFX, IZ, MIZ, I8, MI8, N, N, N, N,
	/* 70 */ I8, I8, I8, I8, I8, I8, I8, I8, I8, I8, I8, I8, I8, I8, I8, I8,
	/* 80 */ MI8, MIZ, X, MI8, M, M, M, M, M, M, M, M, M, M, M, M,
	/* 90 */ N, N, N, N, N, N, N, N, N, N, X, N, N, N, N, N,
	/* a0: moffs, handled below */
	X, X, X, X, N, N, N, N, I8, IZ, N, N, N, N, N, N,
	/* b0 */ I8, I8, I8, I8, I8, I8, I8, I8, IZ, IZ, IZ, IZ, IZ, IZ, IZ, IZ,
	/* c0 */ MI8, MI8, X, N, X, X, MI8, MIZ, X, N, X, N, N, I8, X, N,
	/* d0 */ M, M, M, M, X, X, X, N, M, M, M, M, M, M, M, M,
	/* e0 */ I8, I8, I8, I8, I8, I8, I8, I8, X, X, X, I8, N, N, N, N,
	/* f0 */ PFX, N, PFX, PFX, N, N, X, X, N, N, N, N, N, N, M, M,
};

/* Two-byte map (0F xx). */
static const uint8_t map2[256] = {
	/* 00 */ M, M, M, M, X, N, N, N, N, N, X, N, X, M, X, X,
	/* 10 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* 20 */ M, M, M, M, X, X, X, X, M, M, M, M, M, M, M, M,
	/* 30 */ N, N, N, N, N, N, X, N, X, X, X, X, X, X, X, X,
	/* 40 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* 50 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* 60 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* 70 */ MI8, MI8, MI8, MI8, M, M, M, N, M, M, X, X, M, M, M, M,
	/* 80: jcc rel32, handled below */
	X, X, X, X, X, X, X, X, X, X, X, X, X, X, X, X,
	/* 90 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* a0 */ N, N, N, M, MI8, M, X, X, N, N, N, M, MI8, M, M, M,
	/* b0 */ M, M, M, M, M, M, M, M, M, M, MI8, M, M, M, M, M,
	/* c0 */ M, M, MI8, M, MI8, MI8, MI8, M, N, N, N, N, N, N, N, N,
	/* d0 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* e0 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* f0 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
};

/* Bytes of ModRM, SIB and displacement at P (AVAIL bytes there); 0 when short. */
static int modrm_len(const uint8_t *p, size_t avail)
{
	if (avail < 1)
		return 0;
	uint8_t m = p[0], mod = m >> 6, rm = m & 7;
	int len = 1;
	if (mod == 3)
		return 1;
	if (rm == 4) { /* SIB */
		if (avail < 2)
			return 0;
		len++;
		if (mod == 0 && (p[1] & 7) == 5)
			len += 4;
	} else if (mod == 0 && rm == 5) {
		len += 4; /* RIP-relative */
	}
	len += mod == 1 ? 1 : mod == 2 ? 4 : 0;
	return (size_t)len <= avail ? len : 0;
}

/* Immediate bytes after an opcode of the 0F map (VEX/EVEX map 1 too). */
static int map2_imm(uint8_t op)
{
	return map2[op] & I8 ? 1 : 0;
}

/* VEX (C4, C5) and EVEX (62): prefix bytes, then opcode, ModRM and an imm8 for map 3. */
static int vex_len(const uint8_t *p, size_t n, int at)
{
	int map, plen;
	if (p[at] == 0xc5) {
		map = 1;
		plen = 2;
	} else if (p[at] == 0xc4) {
		if ((size_t)at + 2 > n)
			return 0;
		map = p[at + 1] & 0x1f;
		plen = 3;
	} else { /* 62: EVEX */
		if ((size_t)at + 2 > n)
			return 0;
		map = p[at + 1] & 0x7;
		plen = 4;
	}
	int i = at + plen;
	if ((size_t)i + 1 > n || map < 1 || map > 3)
		return 0;
	uint8_t op = p[i++];
	if (map == 1 && op == 0x77 && plen < 4)
		return i; /* vzeroupper, vzeroall: no ModRM */
	if (map == 1 && map2[op] & X)
		return 0;
	int m = modrm_len(p + i, n - (size_t)i);
	if (!m)
		return 0;
	i += m + (map == 3 ? 1 : map == 1 ? map2_imm(op) : 0);
	return (size_t)i <= n ? i : 0;
}

int binfo_x86_insn_len(const uint8_t *p, size_t n, bool *is_ret)
{
	bool opsize = false, addrsize = false, rexw = false;
	int i = 0, imm = 0, m;

	*is_ret = false;
	for (; (size_t)i < n && i < 14 && map1[p[i]] & PFX; i++) {
		opsize |= p[i] == 0x66;
		addrsize |= p[i] == 0x67;
	}
	if ((size_t)i < n && (p[i] & 0xf0) == 0x40) {
		rexw = p[i] & 8;
		i++;
	}
	if ((size_t)i >= n)
		return 0;
	uint8_t op = p[i++];
	int iz = opsize && !rexw ? 2 : 4; /* REX.W wins over 66 */
	if (op == 0xc4 || op == 0xc5 || op == 0x62)
		return i == 1 ? vex_len(p, n, 0) : 0; /* a prefix before VEX is invalid */
	if (op == 0x0f) {
		if ((size_t)i >= n)
			return 0;
		uint8_t op2 = p[i++];
		if (op2 == 0x38 || op2 == 0x3a) { /* three-byte maps: ModRM, imm8 for 3A */
			if ((size_t)i >= n)
				return 0;
			i++;
			if (!(m = modrm_len(p + i, n - (size_t)i)))
				return 0;
			i += m + (op2 == 0x3a);
			return (size_t)i <= n ? i : 0;
		}
		if (op2 >= 0x80 && op2 <= 0x8f) {
			if (opsize)
				return 0;
			imm = 4;
		} else {
			uint8_t f = map2[op2];
			if (f & X)
				return 0;
			if (f & M) {
				if (!(m = modrm_len(p + i, n - (size_t)i)))
					return 0;
				i += m;
			}
			imm = f & I8 ? 1 : 0;
		}
		i += imm;
		return (size_t)i <= n ? i : 0;
	}
	if (op >= 0xa0 && op <= 0xa3) {
		imm = addrsize ? 4 : 8; /* moffs */
	} else if (op >= 0xb8 && op <= 0xbf) {
		imm = rexw ? 8 : iz;
	} else if (op == 0xc2 || op == 0xca) {
		imm = 2;
		*is_ret = op == 0xc2;
	} else if (op == 0xc8) {
		imm = 3;
	} else if (op == 0xe8 || op == 0xe9) {
		if (opsize)
			return 0;
		imm = 4;
	} else if (op == 0xf6 || op == 0xf7) {
		if ((size_t)i >= n)
			return 0;
		uint8_t reg = (p[i] >> 3) & 7;
		if (!(m = modrm_len(p + i, n - (size_t)i)))
			return 0;
		i += m;
		imm = reg < 2 ? (op == 0xf6 ? 1 : iz) : 0;
	} else if (op == 0x8f && (size_t)i < n && ((p[i] >> 3) & 7) != 0) {
		return 0; /* XOP */
	} else {
		uint8_t f = map1[op];
		if (f & (X | PFX))
			return 0;
		if (f & M) {
			if (!(m = modrm_len(p + i, n - (size_t)i)))
				return 0;
			i += m;
		}
		imm = f & I8 ? 1 : f & IZ ? iz : 0;
		*is_ret = op == 0xc3;
	}
	i += imm;
	return (size_t)i <= n ? i : 0;
}

/* What the kernel's uprobes make of the instruction at P. They refuse a trap (INT3 or
 * INT N first). Their decoder (arch/x86/kernel/uprobes.c, uprobe_init_insn) refuses an
 * instruction with a LOCK or an ES/CS/SS/DS prefix, MOV to SS / POP SS (they mask
 * exceptions for the next instruction) and opcodes outside its table, HLT among them:
 * ENOTSUPP. Only what is certain is here (the rest of the table is the kernel's to
 * apply). Knowing it spares the attach paths their bisection for these sites (Go's
 * atomics start with LOCK, cgo's __stack_chk_fail with HLT). */
enum binfo_uprobe_verdict binfo_x86_uprobe_verdict(const uint8_t *p, size_t n)
{
	if (n && (p[0] == 0xcc || p[0] == 0xcd))
		return BINFO_UPROBE_TRAP;
	size_t i = 0;
	for (; i < n; i++) {
		switch (p[i]) {
		case 0xf0: case 0x26: case 0x2e: case 0x36: case 0x3e:
			return BINFO_UPROBE_REFUSED;
		case 0xf2: case 0xf3: case 0x64: case 0x65: case 0x66: case 0x67:
			continue;
		}
		break;
	}
	if (i < n && (p[i] & 0xf0) == 0x40)
		i++; /* REX */
	if ((i < n && (p[i] == 0x17 || p[i] == 0xf4 || p[i] == 0xcc)) ||
	    (i + 1 < n && p[i] == 0x8e && ((p[i + 1] >> 3) & 7) == 2))
		return BINFO_UPROBE_REFUSED;
	return BINFO_UPROBE_OK;
}

/* The verdict on the instruction at VADDR (its first byte alone at the end of the
 * file's bytes); -1 when not even that is in the file. */
static int verdict_at(const struct binfo *bi, uint64_t vaddr)
{
	const uint8_t *p = binfo__bytes_at(bi, vaddr, 15);
	if (p)
		return (int)binfo_x86_uprobe_verdict(p, 15);
	p = binfo__bytes_at(bi, vaddr, 1);
	return p ? (int)binfo_x86_uprobe_verdict(p, 1) : -1;
}

bool binfo_can_probe(const struct binfo *bi, uint64_t addr)
{
	int v = verdict_at(bi, addr);
	return v >= 0 && v != BINFO_UPROBE_TRAP;
}

bool binfo_uprobe_refuses(const struct binfo *bi, uint64_t vaddr)
{
	return verdict_at(bi, vaddr) > BINFO_UPROBE_OK;
}
