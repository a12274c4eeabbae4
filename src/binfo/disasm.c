/* binfo/disasm: a function's code read through the processor's decoder (arch.h): the
 * post-prologue entry point, instruction boundaries, RET instructions, whether it has a
 * frame, what the kernel's uprobes make of an instruction. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "arch/arch.h"
#include "binfo/binfo_int.h"
#include "common/diag.h"
#include "common/util.h"

/* The morestack block spills the register arguments (at most 9 + 15 floats), calls
 * runtime.morestack*, reloads them and jumps back. */
#define MORESTACK_MAX_INSNS 64

static struct arch_dis *dis(struct binfo *bi)
{
	if (!bi->dis)
		bi->dis = arch_dis_new();
	return bi->dis;
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

/* Sanity check: the stack-check branch goes to a block inside F whose first
 * unconditional jump returns to F's first instruction (after runtime.morestack). */
static bool morestack_returns(struct binfo *bi, const struct binfo_func *f, uint64_t target)
{
	if (target <= f->addr || target - f->addr >= f->size)
		return false;
	size_t left = (size_t)(f->size - (target - f->addr));
	const uint8_t *p = binfo__bytes_at(bi, target, left);
	uint64_t pc = target;
	struct arch_insn in;
	for (int i = 0; p && i < MORESTACK_MAX_INSNS && left; i++) {
		if (arch_decode(dis(bi), p, left, pc, &in) < 0 || in.kind == ARCH_INSN_RET)
			return false;
		if (in.kind == ARCH_INSN_JUMP)
			return in.has_target && in.target == f->addr;
		pc += (uint64_t)in.len;
		p += in.len;
		left -= (size_t)in.len;
	}
	return false;
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

uint64_t binfo__morestack_block(struct binfo *bi, const struct binfo_func *f)
{
	size_t len;
	uint64_t after, branch;
	const uint8_t *code = func_bytes(bi, f, ARCH_GO_PROLOGUE_MAX, &len);
	return code && dis(bi) && arch_go_stack_check(bi->dis, code, len, f->addr, &after, &branch) &&
			       morestack_returns(bi, f, branch)
		       ? branch
		       : 0;
}

static int entry_addr(struct binfo *bi, const struct binfo_func *f, uint64_t *addr)
{
	size_t len;
	uint64_t after, branch;

	*addr = f->addr;
	const uint8_t *code = func_bytes(bi, f, ARCH_GO_PROLOGUE_MAX, &len);
	if (!code)
		return f->size ? -ENOENT : 0; /* size 0 (some asm symbols): no prologue to skip */
	if (!dis(bi))
		return -ENOMEM;
	if (arch_go_stack_check(bi->dis, code, len, f->addr, &after, &branch) &&
	    morestack_returns(bi, f, branch))
		*addr = after;
	return 0;
}

/* Linear sweep of F up to ADDR (F's end when 0): Go puts no data in .text. RETs go to
 * RETS when given. True when the sweep decoded every instruction on the way (and landed
 * on ADDR). */
static bool sweep(struct binfo *bi, const struct binfo_func *f, uint64_t addr, void *rets)
{
	VEC(uint64_t) *v = rets;
	size_t len;
	const uint8_t *code = func_bytes(bi, f, f->size, &len), *p = code;
	if (!code || !dis(bi))
		return false;
	uint64_t end = addr ? addr : f->addr + len, pc = f->addr;
	struct arch_insn in;
	while (pc < end && arch_decode(bi->dis, p, len - (size_t)(p - code), pc, &in) == 0) {
		if (in.kind == ARCH_INSN_RET && v)
			vec_push(v, pc);
		pc += (uint64_t)in.len;
		p += in.len;
	}
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
	struct arch_insn in;
	while (code && dis(bi) && off < len &&
	       arch_decode(bi->dis, p, len - off, f->addr + off, &in) == 0) {
		bits[off / 8] |= (uint8_t)(1u << (off % 8));
		off += (uint64_t)in.len;
		p += in.len;
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
	if (!code || !dis(bi))
		return false;
	struct arch_insn in;
	while ((size_t)(p - code) < len) {
		if (arch_decode(bi->dis, p, len - (size_t)(p - code), f->addr + (uint64_t)(p - code),
				&in) < 0)
			return false;
		if (in.kind == ARCH_INSN_FRAME)
			return false;
		p += in.len;
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

/* The bytes of the instruction at ADDR: ARCH_INSN_MAX of them, fewer at the end of the
 * file's bytes (*N). */
static const uint8_t *insn_at(const struct binfo *bi, uint64_t addr, size_t *n)
{
	for (size_t want = ARCH_INSN_MAX; want; want = want > 1 ? 1 : 0) {
		const uint8_t *p = binfo__bytes_at(bi, addr, want);
		if (p) {
			*n = want;
			return p;
		}
	}
	return NULL;
}

bool binfo_is_ret(const struct binfo *bi, uint64_t addr)
{
	size_t n;
	const uint8_t *p = insn_at(bi, addr, &n);
	return p && arch_is_ret(p, n);
}

bool binfo_is_push_rbp(const struct binfo *bi, uint64_t addr)
{
	size_t n;
	const uint8_t *p = insn_at(bi, addr, &n);
	return p && arch_is_frame_push(p, n);
}

/* The verdict on the instruction at VADDR (its first byte alone at the end of the
 * file's bytes); -1 when not even that is in the file. */
static int verdict_at(const struct binfo *bi, uint64_t vaddr)
{
	size_t n;
	const uint8_t *p = insn_at(bi, vaddr, &n);
	return p ? (int)arch_uprobe_verdict(p, n) : -1;
}

bool binfo_can_probe(const struct binfo *bi, uint64_t addr)
{
	int v = verdict_at(bi, addr);
	return v >= 0 && v != ARCH_UPROBE_TRAP;
}

bool binfo_uprobe_refuses(const struct binfo *bi, uint64_t vaddr)
{
	return verdict_at(bi, vaddr) > ARCH_UPROBE_OK;
}
