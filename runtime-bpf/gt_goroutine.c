/* Goroutine identity and per-goroutine call stacks; the site an event is at. */
#include "gt_runtime.h"

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define GT_MAX_DEPTH_SCAN 32 /* frames examined per event; deeper leftovers wait */
#define GT_RETURNED 0x80000000u

struct gt_gstate {
	__u64 depth;
	__u64 fg_skip; /* GT_DEPTH_SKIP while the current root call is dropped, else 0 */
};

struct gt_frame_key {
	__s64 goid;
	__u64 depth;
};

/* 24 bytes, on the BPF stack of every entry program: a word more took a probe past the
 * verifier's 512. */
struct gt_frame {
	__u32 sp_key;   /* g.stack.hi - SP (a Go stack is at most 1 GB) */
	__u32 returned; /* 0: not yet; else GT_RETURNED | a bit per :return program that
			 * paired it (GT_SITE_RET_SLOT_*); dropped by the next push */
	__u64 entry_ns;
	__u64 oncpu_entry; /* the goroutine's on-CPU ns at the entry (with `oncpu`) */
};
_Static_assert(sizeof(struct gt_frame) == 24, "struct gt_frame grew");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC); /* pay per goroutine seen, not up front */
	__type(key, __s64);
	__type(value, struct gt_gstate);
} gt_gstate SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 262144);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct gt_frame_key);
	__type(value, struct gt_frame);
} gt_frames SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, GT_STAT_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} gt_stats SEC(".maps");

static __always_inline void stat_inc(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&gt_stats, &which);
	if (v)
		__sync_fetch_and_add(v, 1);
}

void gt_stat_inc(__u32 which)
{
	stat_inc(which);
}

static __always_inline __u64 read_u64(__u64 addr)
{
	__u64 v = 0;
	bpf_probe_read_user(&v, sizeof(v), (const void *)addr);
	return v;
}

/* The sites of tracefs uprobe events (GT_LINK_BY_IP): user space sets max_entries to the
 * number of sites before loading when it attaches that way. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct gt_site_key);
	__type(value, __u64);
} gt_sites SEC(".maps");

__u64 gt_site_cookie(void *ctx)
{
	__u64 c = bpf_get_attach_cookie(ctx);
	if (!(c & GT_LINK_BY_IP))
		return c; /* uprobe_multi, or a perf-event uprobe of one site */
	__u64 task = bpf_get_current_task(), mm = 0, start = 0;
	bpf_probe_read_kernel(&mm, sizeof(mm), (const void *)(task + GT_LINK_MM_OFF(c)));
	bpf_probe_read_kernel(&start, sizeof(start), (const void *)(mm + GT_LINK_START_CODE_OFF(c)));
	/* the instruction pointer: the probed instruction's address at a uprobe */
	struct gt_site_key k = {reg_at(ctx, GT_REG_IP) - start, GT_LINK_SLOT(c)};
	__u64 *v = bpf_map_lookup_elem(&gt_sites, &k);
	if (v)
		return *v;
	stat_inc(GT_STAT_NO_SITE);
	return GT_SITE_UNKNOWN;
}

__u64 gt_current_g(void *ctx, const struct gt_target *t, __u64 cookie)
{
	if (cookie & GT_COOKIE_G_IN_REG)
		return reg_at(ctx, GT_REG_GO_G);
	__u64 task = bpf_get_current_task();
	__u64 tp = 0;
	if (bpf_probe_read_kernel(&tp, sizeof(tp), (const void *)(task + t->tp_off)))
		return 0;
	if (!tp)
		return 0;
	return read_u64(tp + t->tls_g_off);
}

static __always_inline __s64 goid_of(__u64 g, const struct gt_target *t)
{
	__s64 goid = (__s64)read_u64(g + t->g_goid);
	if (goid == 0) {
		/* g0 (or gsignal) runs on behalf of m.curg */
		__u64 m = read_u64(g + t->g_m);
		__u64 curg = m ? read_u64(m + t->m_curg) : 0;
		if (curg)
			goid = (__s64)read_u64(curg + t->g_goid);
	}
	return goid;
}

__s64 gt_goid(void *ctx, const struct gt_target *t, __u64 cookie)
{
	__u64 g = gt_current_g(ctx, t, cookie);
	if (!g)
		return -1;
	return goid_of(g, t);
}

/* The goroutine's state and its frame key at this probe; 0 when unavailable. */
static __always_inline struct gt_gstate *state_of(void *ctx, const struct gt_target *t,
						  __u64 cookie, __s64 *goid, __u64 *key, int create)
{
	__u64 g = gt_current_g(ctx, t, cookie);
	if (!g) {
		stat_inc(GT_STAT_NO_G);
		return 0;
	}
	*goid = goid_of(g, t);
	*key = (__u32)(read_u64(g + t->g_stack_hi) - reg_at(ctx, GT_REG_SP));
	struct gt_gstate *st = bpf_map_lookup_elem(&gt_gstate, goid);
	if (!st && create) {
		struct gt_gstate zero = {};
		if (bpf_map_update_elem(&gt_gstate, goid, &zero, BPF_NOEXIST) &&
		    !bpf_map_lookup_elem(&gt_gstate, goid)) {
			stat_inc(GT_STAT_STATE_FULL);
			return 0;
		}
		st = bpf_map_lookup_elem(&gt_gstate, goid);
	}
	return st;
}

__u64 gt_call_enter(void *ctx, const struct gt_target *t, __u64 cookie, __u64 now,
		    __u64 over, __u64 oncpu)
{
	__s64 goid;
	__u64 key;
	struct gt_gstate *st = state_of(ctx, t, cookie, &goid, &key, 1);
	if (!st)
		return 0;
	__u64 depth = st->depth;
	if ((cookie >> GT_COOKIE_FLAGS_SHIFT) & GT_SITE_RET_AT_ENTRY) {
		/* returns at this very instruction: nothing to pair */
		if (!depth && over) {
			stat_inc(GT_STAT_FG_DROPPED);
			return 1 | GT_DEPTH_SKIP;
		}
		return (depth + 1) | (depth ? st->fg_skip : 0);
	}
	struct gt_frame_key fk = {.goid = goid};
	/* Drop frames that cannot be our callers: returned ones, and those at or below
	 * our stack level (left by a panic or Goexit). */
	for (int i = 0; i < GT_MAX_DEPTH_SCAN && depth > 0; i++) {
		fk.depth = depth;
		struct gt_frame *top = bpf_map_lookup_elem(&gt_frames, &fk);
		if (!top)
			break;
		if (top->sp_key == key && !top->returned)
			return depth | st->fg_skip; /* the same call: another program at this entry */
		if (!top->returned && top->sp_key < key)
			break; /* a caller */
		if (!top->returned)
			stat_inc(GT_STAT_ABANDONED);
		bpf_map_delete_elem(&gt_frames, &fk);
		depth--;
	}
	struct gt_frame f = {.sp_key = key, .entry_ns = now};
	if (oncpu)
		f.oncpu_entry = gt_oncpu_now(goid, (__u32)oncpu);
	fk.depth = depth + 1;
	if (bpf_map_update_elem(&gt_frames, &fk, &f, BPF_ANY)) {
		stat_inc(GT_STAT_STATE_FULL);
		st->depth = depth;
		return 0;
	}
	st->depth = depth + 1;
	if (!depth) { /* a root call: kept, or dropped whole when the ring is filling up */
		st->fg_skip = over ? GT_DEPTH_SKIP : 0;
		if (over)
			stat_inc(GT_STAT_FG_DROPPED);
	}
	return (depth + 1) | st->fg_skip;
}

long gt_call_return(void *ctx, const struct gt_target *t, __u64 cookie, __u64 now,
		    __u64 *entry_ns, __u64 *depth_out, __u64 *oncpu_out, __u64 oncpu)
{
	__s64 goid;
	__u64 key;
	*entry_ns = 0;
	*depth_out = 0;
	*oncpu_out = 0;
	/* not a time window: the programs of one trap may run far apart when the thread is
	 * preempted between them (CI saw it under emulation) */
	__u32 slot = (cookie >> (GT_COOKIE_FLAGS_SHIFT + GT_SITE_RET_SLOT_SHIFT)) &
		     GT_SITE_RET_SLOT_MASK;
	__u32 mine = slot == GT_RET_SLOT_ANY ? 0 : 1u << slot;
	struct gt_gstate *st = state_of(ctx, t, cookie, &goid, &key, 0);
	if ((cookie >> GT_COOKIE_FLAGS_SHIFT) & GT_SITE_RET_AT_ENTRY) {
		/* a call of no length, at any order; dropped with its root (a root of its own
		 * is recorded: its entry's decision is not kept) */
		*depth_out = ((st ? st->depth : 0) + 1) | (st && st->depth ? st->fg_skip : 0);
		return 1;
	}
	if (!st) {
		stat_inc(GT_STAT_UNPAIRED_RETURN);
		return -1;
	}
	__u64 depth = st->depth;
	struct gt_frame_key fk = {.goid = goid};
	for (int i = 0; i < GT_MAX_DEPTH_SCAN && depth > 0; i++) {
		fk.depth = depth;
		struct gt_frame *top = bpf_map_lookup_elem(&gt_frames, &fk);
		if (!top)
			break;
		if (top->sp_key == key && (!top->returned || !(top->returned & mine))) {
			top->returned |= GT_RETURNED | mine;
			*entry_ns = top->entry_ns;
			if (oncpu) {
				__u64 c = gt_oncpu_now(goid, (__u32)oncpu);
				*oncpu_out = c > top->oncpu_entry ? c - top->oncpu_entry : 0;
				/* part of the duration (the kernel's count and the clock may
				 * differ by a little) */
				if (*oncpu_out > now - top->entry_ns)
					*oncpu_out = now - top->entry_ns;
			}
			*depth_out = depth | st->fg_skip;
			st->depth = depth;
			return 0;
		}
		if (top->sp_key < key)
			break; /* our entry was not seen: the top is a caller */
		/* deeper than us: returned already, or abandoned by a panic */
		if (!top->returned)
			stat_inc(GT_STAT_ABANDONED);
		bpf_map_delete_elem(&gt_frames, &fk);
		depth--;
	}
	st->depth = depth;
	stat_inc(GT_STAT_UNPAIRED_RETURN);
	return -1;
}

__u64 gt_call_depth(void *ctx, const struct gt_target *t, __u64 cookie)
{
	__s64 goid;
	__u64 key;
	struct gt_gstate *st = state_of(ctx, t, cookie, &goid, &key, 0);
	return st ? st->depth : 0;
}

void gt_goroutine_exit(void *ctx, const struct gt_target *t, __u64 cookie, __u64 oncpu)
{
	__s64 goid;
	__u64 key;
	struct gt_gstate *st = state_of(ctx, t, cookie, &goid, &key, 0);
	if (!st)
		return;
	__u64 depth = st->depth;
	struct gt_frame_key fk = {.goid = goid};
	for (int i = 0; i < GT_MAX_DEPTH_SCAN && depth > 0; i++) {
		fk.depth = depth--;
		bpf_map_delete_elem(&gt_frames, &fk);
	}
	bpf_map_delete_elem(&gt_gstate, &goid);
	if (oncpu)
		gt_oncpu_forget(goid);
	stat_inc(GT_STAT_GOEXIT);
}
