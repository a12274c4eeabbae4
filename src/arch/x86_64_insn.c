/* arch/x86_64_insn: x86-64 instructions. The length of an instruction, for the linear
 * sweeps that find a function's RETs and instruction boundaries: capstone formats every
 * instruction's text as it decodes (85% of the time of a 70,000-site wildcard); a length
 * needs only the prefixes, the opcode maps and ModRM. What the hand decoder does not know
 * for sure (3DNow!, XOP, 16-bit branches, invalid opcodes) it answers 0, and capstone
 * decides. tests/unit/binfo_test.c checks it against capstone on every function of real
 * Go binaries. Then Go's stack-check prologue, and the kernel's uprobe rules. */
#include <capstone/capstone.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/x86_64_insn.h"

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

int x86_insn_len(const uint8_t *p, size_t n, bool *is_ret)
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
enum arch_uprobe_verdict arch_uprobe_verdict(const uint8_t *p, size_t n)
{
	if (n && (p[0] == 0xcc || p[0] == 0xcd))
		return ARCH_UPROBE_TRAP;
	size_t i = 0;
	for (; i < n; i++) {
		switch (p[i]) {
		case 0xf0: case 0x26: case 0x2e: case 0x36: case 0x3e:
			return ARCH_UPROBE_REFUSED;
		case 0xf2: case 0xf3: case 0x64: case 0x65: case 0x66: case 0x67:
			continue;
		}
		break;
	}
	if (i < n && (p[i] & 0xf0) == 0x40)
		i++; /* REX */
	if ((i < n && (p[i] == 0x17 || p[i] == 0xf4 || p[i] == 0xcc)) ||
	    (i + 1 < n && p[i] == 0x8e && ((p[i + 1] >> 3) & 7) == 2))
		return ARCH_UPROBE_REFUSED;
	return ARCH_UPROBE_OK;
}


/* ---- arch.h's decoder ---- */

struct arch_dis {
	csh cs; /* with details: a jump's operand, the prologue's registers */
	bool ok;
};

struct arch_dis *arch_dis_new(void)
{
	return calloc(1, sizeof(struct arch_dis));
}

void arch_dis_free(struct arch_dis *d)
{
	if (d && d->ok)
		cs_close(&d->cs);
	free(d);
}

static int dis_open(struct arch_dis *d)
{
	if (d->ok)
		return 0;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &d->cs) != CS_ERR_OK)
		return -ENOMEM;
	cs_option(d->cs, CS_OPT_DETAIL, CS_OPT_ON);
	d->ok = true;
	return 0;
}

void arch_capstone(int *cs_arch, int *cs_mode)
{
	*cs_arch = CS_ARCH_X86;
	*cs_mode = CS_MODE_64;
}

/* What the instruction of LEN bytes at P does, from its bytes: a direct or indirect
 * JMP, a frame set up (push %rbp; mov %rsp,%rbp; lea D(%rsp),%rbp: Go's frames, the last
 * after sub $N,%rsp; mov %rbp,N-8(%rsp)). */
static void classify(const uint8_t *p, int len, uint64_t pc, struct arch_insn *in)
{
	if ((p[0] == 0xe9 && len == 5) || (p[0] == 0xeb && len == 2)) {
		int32_t rel = 0;
		if (len == 5)
			memcpy(&rel, p + 1, 4);
		else
			rel = (int8_t)p[1];
		in->kind = ARCH_INSN_JUMP;
		in->has_target = true;
		in->target = pc + (uint64_t)len + (uint64_t)(int64_t)rel;
		return;
	}
	int i = (p[0] & 0xf0) == 0x40 && len > 1 ? 1 : 0; /* REX */
	if (p[i] == 0xff && len > i + 1 && (((p[i + 1] >> 3) & 7) == 4 || ((p[i + 1] >> 3) & 7) == 5)) {
		in->kind = ARCH_INSN_JUMP; /* jmp *r/m, jmp far: no target known */
		return;
	}
	if ((len == 1 && p[0] == 0x55) || (len == 3 && !memcmp(p, "\x48\x89\xe5", 3)) ||
	    (len >= 5 && p[0] == 0x48 && p[1] == 0x8d && (p[2] == 0x6c || p[2] == 0xac) &&
	     p[3] == 0x24))
		in->kind = ARCH_INSN_FRAME;
}

int arch_decode(struct arch_dis *d, const uint8_t *p, size_t n, uint64_t pc,
		struct arch_insn *in)
{
	bool ret;
	*in = (struct arch_insn){0};
	int len = x86_insn_len(p, n, &ret);
	if (len <= 0) {
		/* the hand decoder is not sure: capstone decides */
		int err = dis_open(d);
		if (err)
			return err;
		const uint8_t *q = p;
		size_t left = n;
		uint64_t a = pc;
		cs_insn *ci = cs_malloc(d->cs);
		bool got = cs_disasm_iter(d->cs, &q, &left, &a, ci);
		len = got ? ci->size : 0;
		ret = got && ci->id == X86_INS_RET;
		cs_free(ci, 1);
		if (!got)
			return -EILSEQ;
	}
	in->len = len;
	if (ret)
		in->kind = ARCH_INSN_RET;
	else
		classify(p, len, pc, in);
	return 0;
}

bool arch_is_ret(const uint8_t *p, size_t n)
{
	return n && p[0] == 0xc3;
}

const char arch_frame_push_text[] = "push %rbp";

bool arch_is_frame_push(const uint8_t *p, size_t n)
{
	return n && p[0] == 0x55;
}

/* ---- Go's stack check ---- */

/* The stack check of Go 1.17 and later as most functions have it, matched by its bytes
 * (capstone's decoding, with details and its text, cost 3,500 instructions an
 * instruction: 2.3 G for a web server's 183k functions): `cmp 0x10(%r14),%rsp`, or
 * `lea D(%rsp),%r12; cmp 0x10(%r14),%r12`, then `jbe`. */
static bool stack_check_fast(const uint8_t *c, size_t len, uint64_t pc, uint64_t *after,
			     uint64_t *branch)
{
	size_t o = 0;
	if (len >= 5 && !memcmp(c, "\x4c\x8d\x64\x24", 4))
		o = 5; /* lea disp8(%rsp),%r12 */
	else if (len >= 8 && !memcmp(c, "\x4c\x8d\xa4\x24", 4))
		o = 8; /* lea disp32(%rsp),%r12 */
	static const uint8_t cmp_rsp[4] = {0x49, 0x3b, 0x66, 0x10}, cmp_r12[4] = {0x4d, 0x3b, 0x66, 0x10};
	if (len < o + 6 || memcmp(c + o, o ? cmp_r12 : cmp_rsp, 4))
		return false;
	o += 4;
	int32_t rel;
	size_t jlen;
	if (c[o] == 0x76) { /* jbe rel8 */
		rel = (int8_t)c[o + 1];
		jlen = 2;
	} else if (c[o] == 0x0f && len >= o + 6 && c[o + 1] == 0x86) { /* jbe rel32 */
		memcpy(&rel, c + o + 2, 4);
		jlen = 6;
	} else {
		return false;
	}
	*after = pc + o + jlen;
	*branch = *after + (uint64_t)(int64_t)rel;
	return true;
}

static bool is_reg_op(const cs_x86_op *op, x86_reg r)
{
	return op->type == X86_OP_REG && op->reg == r;
}

/* `cmp 0x10(%r14),%rsp|%r12` (Go >= 1.17, g in R14; 0x18 = stackguard1 also accepted),
 * or the same against the register that an earlier `mov %fs:-8,REG` loaded g into
 * (Go < 1.17, g in TLS). */
static bool is_stack_check(const cs_insn *in, x86_reg g_reg)
{
	if (in->id != X86_INS_CMP)
		return false;
	const cs_x86 *x = &in->detail->x86;
	for (int i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];
		if (op->type == X86_OP_MEM && op->mem.segment == X86_REG_INVALID &&
		    op->mem.index == X86_REG_INVALID &&
		    (op->mem.base == X86_REG_R14 || (g_reg && op->mem.base == g_reg)))
			return true;
	}
	return false;
}

/* `mov %fs:OFF,REG`: REG now holds g (Go < 1.17). Returns REG or 0. */
static x86_reg tls_g_load(const cs_insn *in)
{
	if (in->id != X86_INS_MOV)
		return X86_REG_INVALID;
	const cs_x86 *x = &in->detail->x86;
	if (x->op_count == 2 && x->operands[0].type == X86_OP_REG &&
	    x->operands[1].type == X86_OP_MEM && x->operands[1].mem.segment == X86_REG_FS)
		return x->operands[0].reg;
	return X86_REG_INVALID;
}

static bool jump_target(const cs_insn *in, uint64_t *target)
{
	const cs_x86 *x = &in->detail->x86;
	if (x->op_count != 1 || x->operands[0].type != X86_OP_IMM)
		return false;
	*target = (uint64_t)x->operands[0].imm;
	return true;
}

bool arch_go_stack_check(struct arch_dis *d, const uint8_t *code, size_t len, uint64_t pc,
			 uint64_t *after, uint64_t *branch)
{
	if (stack_check_fast(code, len, pc, after, branch))
		return true;
	if (dis_open(d) < 0)
		return false;
	cs_insn *in = cs_malloc(d->cs);
	cs_insn *prev = cs_malloc(d->cs);
	x86_reg g_reg = X86_REG_INVALID;
	bool have_prev = false, cmp_seen = false, found = false;
	for (int i = 0; i < ARCH_GO_PROLOGUE_MAX / ARCH_INSN_MAX &&
			cs_disasm_iter(d->cs, &code, &len, &pc, in);
	     i++) {
		bool is_jump = cs_insn_group(d->cs, in, CS_GRP_JUMP);
		if (cmp_seen) {
			/* The check is `cmp; jbe` (or jb); what follows is the body. */
			if ((in->id == X86_INS_JBE || in->id == X86_INS_JB) &&
			    jump_target(in, branch)) {
				*after = in->address + in->size;
				found = true;
			}
			break;
		}
		if (is_stack_check(in, g_reg)) {
			cmp_seen = true;
		} else if (is_jump) {
			/* Huge frames: mov %rsp,%r12; sub $N,%r12; jb MORESTACK; then cmp. */
			bool huge_jb = in->id == X86_INS_JB && have_prev &&
			               prev->id == X86_INS_SUB && prev->detail->x86.op_count == 2 &&
			               is_reg_op(&prev->detail->x86.operands[0], X86_REG_R12);
			if (!huge_jb)
				break;
		} else if (cs_insn_group(d->cs, in, CS_GRP_CALL) ||
		           cs_insn_group(d->cs, in, CS_GRP_RET) ||
		           cs_insn_group(d->cs, in, CS_GRP_INT)) {
			break; /* past any prologue: a leaf/NOSPLIT function */
		} else {
			x86_reg r = tls_g_load(in);
			if (r != X86_REG_INVALID)
				g_reg = r;
		}
		/* Keep the previous instruction (details included) for the huge-frame test. */
		cs_insn *t = prev;
		prev = in;
		in = t;
		have_prev = true;
	}
	cs_free(in, 1);
	cs_free(prev, 1);
	return found;
}
