/* binfo/disasm: capstone over a function's file bytes: the post-prologue entry point,
 * instruction boundaries, RET instructions. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "binfo/binfo_int.h"
#include "common/diag.h"
#include "common/util.h"

/* Go's stack check is at most 5 instructions (huge frames); look a bit further. */
#define PROLOGUE_MAX_INSNS 12
#define PROLOGUE_MAX_BYTES (PROLOGUE_MAX_INSNS * 15)
/* The morestack block spills the register arguments (at most 9 + 15 floats), calls
 * runtime.morestack*, reloads them and jumps back. */
#define MORESTACK_MAX_INSNS 64

static int open_cs(csh *h, bool *ok, bool detail)
{
	if (*ok)
		return 0;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, h) != CS_ERR_OK) {
		diag_fatal("cannot initialise the capstone x86-64 disassembler");
		return -ENOMEM;
	}
	if (detail)
		cs_option(*h, CS_OPT_DETAIL, CS_OPT_ON);
	*ok = true;
	return 0;
}

/* File bytes of F, clamped to what the file holds of its segment. */
static const uint8_t *func_bytes(const struct binfo *bi, const struct binfo_func *f, uint64_t max,
                                 size_t *len)
{
	uint64_t n = f->size < max ? f->size : max;
	const uint8_t *p = binfo__bytes_at(bi, f->addr, n);
	*len = p ? (size_t)n : 0;
	return p;
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

/* Sanity check: the stack-check branch goes to a block inside F whose first
 * unconditional jump returns to F's first instruction (after runtime.morestack). */
static bool morestack_returns(struct binfo *bi, const struct binfo_func *f, uint64_t target)
{
	if (target <= f->addr || target - f->addr >= f->size)
		return false;
	uint64_t left = f->size - (target - f->addr);
	const uint8_t *code = binfo__bytes_at(bi, target, left);
	if (!code)
		return false;
	size_t len = (size_t)left;
	uint64_t pc = target, dest;
	bool ok = false;
	cs_insn *in = cs_malloc(bi->cs);
	for (int i = 0; i < MORESTACK_MAX_INSNS && cs_disasm_iter(bi->cs, &code, &len, &pc, in);
	     i++) {
		if (in->id == X86_INS_JMP) {
			ok = jump_target(in, &dest) && dest == f->addr;
			break;
		}
		if (cs_insn_group(bi->cs, in, CS_GRP_RET))
			break;
	}
	cs_free(in, 1);
	return ok;
}

static int entry_addr(struct binfo *bi, const struct binfo_func *f, uint64_t *addr);

/* F's index in bi->funcs, where answers about it are kept; -1 for a function of no
 * table (made by a caller). */
static long func_index(const struct binfo *bi, const struct binfo_func *f)
{
	uintptr_t k = ((uintptr_t)f - (uintptr_t)bi->funcs) / sizeof(*f);
	bool ours = (uintptr_t)f >= (uintptr_t)bi->funcs && k < (uintptr_t)bi->nfuncs;
	return ours ? (long)k : -1;
}

/* Asked several times a function (its :entry site, each site's flags, the hidden
 * tracking programs): the answer is kept by function. */
int binfo_entry_addr(struct binfo *bi, const struct binfo_func *f, uint64_t *addr)
{
	long k = func_index(bi, f);
	bool ours = k >= 0;
	if (ours && bi->entry_memo && bi->entry_memo[k]) {
		*addr = f->addr + bi->entry_memo[k] - 1;
		return 0;
	}
	int err = entry_addr(bi, f, addr);
	if (!err && ours && *addr - f->addr < UINT32_MAX) {
		if (!bi->entry_memo)
			bi->entry_memo = xcalloc((size_t)bi->nfuncs, sizeof(*bi->entry_memo));
		bi->entry_memo[k] = (uint32_t)(*addr - f->addr + 1);
	}
	return err;
}

/* morestack_returns without capstone: the hand decoder's walk to the block's first
 * unconditional jump (e9 rel32, eb rel8), back to F's start. False when unsure. */
static bool morestack_returns_fast(struct binfo *bi, const struct binfo_func *f,
				   uint64_t target)
{
	if (target <= f->addr || target - f->addr >= f->size)
		return false;
	size_t left = (size_t)(f->size - (target - f->addr));
	const uint8_t *p = binfo__bytes_at(bi, target, left);
	uint64_t pc = target;
	for (int i = 0; p && i < MORESTACK_MAX_INSNS && left; i++) {
		bool ret;
		int n = binfo_x86_insn_len(p, left, &ret);
		if (n <= 0 || ret)
			return false;
		if ((p[0] == 0xe9 && n == 5) || (p[0] == 0xeb && n == 2)) {
			int32_t rel = 0;
			if (n == 5)
				memcpy(&rel, p + 1, 4);
			else
				rel = (int8_t)p[1];
			return pc + (uint64_t)n + (uint64_t)(int64_t)rel == f->addr;
		}
		pc += (uint64_t)n;
		p += n;
		left -= (size_t)n;
	}
	return false;
}

/* The stack check of Go 1.17 and later as most functions have it, matched by its bytes
 * (capstone's decoding, with details and its text, cost 3,500 instructions an
 * instruction: 2.3 G for a web server's 183k functions): `cmp 0x10(%r14),%rsp`, or
 * `lea D(%rsp),%r12; cmp 0x10(%r14),%r12`, then `jbe` to a block that calls morestack
 * and jumps back. *ADDR after the jbe; false for any other shape (capstone's turn). */
static bool entry_fast(struct binfo *bi, const struct binfo_func *f, uint64_t *addr)
{
	size_t len;
	const uint8_t *c = func_bytes(bi, f, PROLOGUE_MAX_BYTES, &len);
	size_t o = 0;
	if (!c)
		return false;
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
	uint64_t next = f->addr + o + jlen;
	if (!morestack_returns_fast(bi, f, next + (uint64_t)(int64_t)rel))
		return false;
	*addr = next;
	return true;
}

static int entry_addr(struct binfo *bi, const struct binfo_func *f, uint64_t *addr)
{
	const uint8_t *code;
	size_t len;
	int err;

	*addr = f->addr;
	if (entry_fast(bi, f, addr))
		return 0;
	if ((err = open_cs(&bi->cs, &bi->cs_ok, true)) < 0)
		return err;
	code = func_bytes(bi, f, PROLOGUE_MAX_BYTES, &len);
	if (!code)
		return f->size ? -ENOENT : 0; /* size 0 (some asm symbols): no prologue to skip */

	cs_insn *in = cs_malloc(bi->cs);
	cs_insn *prev = cs_malloc(bi->cs);
	uint64_t pc = f->addr;
	x86_reg g_reg = X86_REG_INVALID;
	bool have_prev = false, cmp_seen = false;
	for (int i = 0; i < PROLOGUE_MAX_INSNS && cs_disasm_iter(bi->cs, &code, &len, &pc, in);
	     i++) {
		bool is_jump = cs_insn_group(bi->cs, in, CS_GRP_JUMP);
		if (cmp_seen) {
			uint64_t target;
			/* The check is `cmp; jbe` (or jb); what follows is the body. */
			if ((in->id == X86_INS_JBE || in->id == X86_INS_JB) &&
			    jump_target(in, &target) && morestack_returns(bi, f, target))
				*addr = in->address + in->size;
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
		} else if (cs_insn_group(bi->cs, in, CS_GRP_CALL) ||
		           cs_insn_group(bi->cs, in, CS_GRP_RET) ||
		           cs_insn_group(bi->cs, in, CS_GRP_INT)) {
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
	return 0;
}

/* Linear sweep of F up to ADDR (F's end when 0): Go puts no data in .text. The hand
 * decoder first; capstone for a function it is not sure of. RETs go to RETS when given.
 * True when the sweep decoded every instruction on the way (and landed on ADDR). */
static bool sweep(struct binfo *bi, const struct binfo_func *f, uint64_t addr, void *rets)
{
	VEC(uint64_t) *v = rets;
	size_t len;
	const uint8_t *code = func_bytes(bi, f, f->size, &len), *p = code;
	if (!code)
		return false;
	uint64_t end = addr ? addr : f->addr + len, pc = f->addr;
	int nret = v ? v->n : 0;
	while (pc < end) {
		bool ret;
		int n = binfo_x86_insn_len(p, len - (size_t)(p - code), &ret);
		if (n <= 0)
			break;
		if (ret && v)
			vec_push(v, pc);
		pc += (uint64_t)n;
		p += n;
	}
	if (pc >= end)
		return pc == end;
	if (v)
		v->n = nret; /* start over with capstone */
	if (open_cs(&bi->cs_fast, &bi->cs_fast_ok, false) < 0)
		return false;
	p = code;
	size_t left = len;
	pc = f->addr;
	cs_insn *in = cs_malloc(bi->cs_fast);
	while (pc < end && cs_disasm_iter(bi->cs_fast, &p, &left, &pc, in))
		if (in->id == X86_INS_RET && v)
			vec_push(v, in->address);
	cs_free(in, 1);
	return pc == end;
}

/* F's instruction starts as a bitmap of its bytes (a linear sweep, as sweep()'s): one
 * sweep a function, where every inlined copy and line site in it asked for its own
 * sweep from the function's start (a web server's 120k copies: 4.3 G instructions). */
static uint8_t *boundaries(struct binfo *bi, const struct binfo_func *f)
{
	size_t len;
	const uint8_t *code = func_bytes(bi, f, f->size, &len), *p = code;
	uint8_t *bits = xcalloc(len / 8 + 1, 1);
	uint64_t off = 0;
	while (code && off < len) {
		bits[off / 8] |= (uint8_t)(1u << (off % 8));
		bool ret;
		int n = binfo_x86_insn_len(p, len - off, &ret);
		if (n <= 0)
			break;
		off += (uint64_t)n;
		p += n;
	}
	if (code && off < len && open_cs(&bi->cs_fast, &bi->cs_fast_ok, false) == 0) {
		/* bytes the fast decoder does not know, at OFF: past them, capstone's sweep
		 * from the start decides (as sweep() does for an address past them) */
		uint64_t fail = off;
		p = code;
		size_t left = len;
		uint64_t pc = f->addr;
		cs_insn *in = cs_malloc(bi->cs_fast);
		while (cs_disasm_iter(bi->cs_fast, &p, &left, &pc, in) && pc < f->addr + len)
			if (pc - f->addr > fail)
				bits[(pc - f->addr) / 8] |= (uint8_t)(1u << ((pc - f->addr) % 8));
		cs_free(in, 1);
	}
	return bits;
}

bool binfo_is_insn_boundary(struct binfo *bi, const struct binfo_func *f, uint64_t addr)
{
	if (addr == f->addr)
		return true;
	if (addr < f->addr || addr - f->addr >= f->size)
		return false;
	long k = func_index(bi, f);
	if (k < 0)
		return sweep(bi, f, addr, NULL);
	if (!bi->insn_memo)
		bi->insn_memo = xcalloc((size_t)bi->nfuncs, sizeof(*bi->insn_memo));
	if (!bi->insn_memo[k])
		bi->insn_memo[k] = boundaries(bi, f);
	size_t len;
	uint64_t off = addr - f->addr;
	/* bytes past what the file holds: not code (func_bytes's length) */
	if (!func_bytes(bi, f, f->size, &len) || off >= len)
		return false;
	return bi->insn_memo[k][off / 8] >> (off % 8) & 1;
}

static bool frameless(struct binfo *bi, const struct binfo_func *f);

/* Asked at every inlined copy and line site of a function: kept by function. */
bool binfo_frameless(struct binfo *bi, const struct binfo_func *f)
{
	long k = func_index(bi, f);
	if (k < 0)
		return frameless(bi, f);
	if (!bi->frameless_memo)
		bi->frameless_memo = xcalloc((size_t)bi->nfuncs, 1);
	if (!bi->frameless_memo[k])
		bi->frameless_memo[k] = frameless(bi, f) ? 2 : 1;
	return bi->frameless_memo[k] == 2;
}

static bool frameless(struct binfo *bi, const struct binfo_func *f)
{
	size_t len;
	const uint8_t *code = func_bytes(bi, f, f->size, &len), *p = code;
	if (!code)
		return false;
	while ((size_t)(p - code) < len) {
		bool ret;
		int n = binfo_x86_insn_len(p, len - (size_t)(p - code), &ret);
		if (n <= 0)
			return false;
		/* push %rbp; mov %rsp,%rbp; lea D(%rsp),%rbp (Go's frames: the last after
		 * sub $N,%rsp; mov %rbp,N-8(%rsp)) */
		if ((n == 1 && p[0] == 0x55) || (n == 3 && !memcmp(p, "\x48\x89\xe5", 3)) ||
		    (n >= 5 && p[0] == 0x48 && p[1] == 0x8d && (p[2] == 0x6c || p[2] == 0xac) &&
		     p[3] == 0x24))
			return false;
		p += n;
	}
	return true;
}

int binfo_ret_addrs(struct binfo *bi, const struct binfo_func *f, uint64_t **out)
{
	VEC(uint64_t) v = {0};

	*out = NULL;
	if (f->size == 0)
		return 0;
	if (!binfo__bytes_at(bi, f->addr, f->size))
		return -ENOENT;
	if (!sweep(bi, f, 0, &v)) {
		/* An undecodable instruction: RETs after it would be missed silently. */
		vec_free(&v);
		return -EILSEQ;
	}
	*out = v.v;
	return v.n;
}

bool binfo_is_ret(const struct binfo *bi, uint64_t addr)
{
	const uint8_t *p = binfo__bytes_at(bi, addr, 1);
	return p && *p == 0xc3;
}

bool binfo_is_push_rbp(const struct binfo *bi, uint64_t addr)
{
	const uint8_t *p = binfo__bytes_at(bi, addr, 1);
	return p && *p == 0x55;
}
