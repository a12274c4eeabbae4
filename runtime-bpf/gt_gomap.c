/* Go maps for print(): the addresses of up to m->max entries of a map, found by a
 * bounded walk of its buckets (hmap, Go < 1.24) or tables and groups (swiss, 1.24+).
 * Only addresses are collected here; codegen copies each key and value after. A step
 * of the walk (one bucket, group or table) is a bpf_loop callback, and the walk's state
 * is in a per-CPU map, not on the stack: the verifier tracks neither its counters nor
 * the slots found, so it checks a step a few times, not once per step and per slot. */
#include "gt_runtime.h"

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define HMAP_MIN_TOPHASH 5 /* below: empty or evacuated slots */
#define HMAP_SAME_SIZE_GROW 8
#define SWISS_CTRL_EMPTY 0x80 /* the high bit: empty or deleted */

struct gt_gomap_walk {
	__u64 out[2 * GT_GOMAP_MAX];
	__u64 dir, dirlen, cur, bi, nb, nold, old, d, prev, data, ngroups, gi;
	__u32 n;
	/* gt_go_map_find: only the slot whose key is this one (GT_GOMAP_FIND_*; 0: all) */
	__u32 find, klen;
	__u64 kint, kmask;
	__u8 key[GT_GOMAP_KEYMAX], got[GT_GOMAP_KEYMAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gt_gomap_walk);
} gt_gomap_scratch SEC(".maps");

/* on the stack: pointers in a map value would be plain numbers to the verifier */
struct walk_ctx {
	struct gt_gomap_walk *w;
	const struct gt_gomap *m;
};

static __always_inline __u64 rd(__u64 addr)
{
	__u64 v = 0;
	if (addr)
		bpf_probe_read_user(&v, sizeof(v), (const void *)addr);
	return v;
}

/* Is the key at K the one W looks for: an integer of the key's size, or a string of
 * W->klen bytes equal to W->key. */
static __always_inline int is_key(struct gt_gomap_walk *w, __u64 k)
{
	if (w->find == GT_GOMAP_FIND_INT)
		return (rd(k) & w->kmask) == w->kint;
	__u32 len = w->klen;
	if (rd(k + 8) != len)
		return 0;
	__builtin_memset(w->got, 0, sizeof(w->got));
	__u64 src = rd(k);
	/* bounded here, next to its use: a bound checked before a helper call is lost on
	 * 6.1's verifier when the compiler spills the length across the call (arm64 build) */
	asm volatile("" : "+r"(len));
	if (len > GT_GOMAP_KEYMAX)
		return 0;
	if (len && bpf_probe_read_user(w->got, len, (const void *)src))
		return 0;
	__u64 diff = 0;
	for (int i = 0; i < GT_GOMAP_KEYMAX / 8; i++)
		diff |= ((__u64 *)w->got)[i] ^ ((__u64 *)w->key)[i];
	return !diff;
}

/* The live slots of the bucket or group at G into W->out (the one with W's key only,
 * when it looks for one). */
static __always_inline void take(const struct gt_gomap *m, struct gt_gomap_walk *w, __u64 g)
{
	__u64 ctrl = rd(g + m->grp_ctrl);
	for (__u32 j = 0; j < 8; j++) {
		__u32 b = (ctrl >> (8 * j)) & 0xff;
		int live = m->swiss ? !(b & SWISS_CTRL_EMPTY) : b >= HMAP_MIN_TOPHASH;
		__u32 n = w->n;
		if (!live || n >= m->max || n >= GT_GOMAP_MAX)
			continue;
		if (w->find && !is_key(w, g + m->key_off + j * m->key_stride))
			continue;
		/* the bound again, which the compiler would drop as known: 6.1's verifier
		 * loses the one above when n is spilled across is_key's helper calls */
		asm volatile("" : "+r"(n));
		n &= GT_GOMAP_MAX - 1;
		w->out[2 * n] = g + m->key_off + j * m->key_stride;
		w->out[2 * n + 1] = g + m->val_off + j * m->val_stride;
		w->n = n + 1;
	}
}

/* hmap: bucket BI of the new array, then of the old one while growing (entries not
 * yet moved are still there; the moved ones are marked below HMAP_MIN_TOPHASH), each
 * followed by its overflow chain. */
static long hmap_step(__u32 i, void *ctx)
{
	struct gt_gomap_walk *w = ((struct walk_ctx *)ctx)->w;
	const struct gt_gomap *m = ((struct walk_ctx *)ctx)->m;
	(void)i;
	if (w->n >= m->max)
		return 1;
	if (!w->cur) {
		if (w->bi >= w->nb + w->nold)
			return 1;
		w->cur = w->bi < w->nb ? w->dir + w->bi * m->grp_size
				       : w->old + (w->bi - w->nb) * m->grp_size;
		w->bi++;
		if (!w->cur)
			return 0;
	}
	take(m, w, w->cur);
	w->cur = rd(w->cur + m->grp_next);
	return 0;
}

/* swiss: group GI of the current table, else the next table of the directory (which
 * names a table once per slot of it, side by side). */
static long swiss_step(__u32 i, void *ctx)
{
	struct gt_gomap_walk *w = ((struct walk_ctx *)ctx)->w;
	const struct gt_gomap *m = ((struct walk_ctx *)ctx)->m;
	(void)i;
	if (w->n >= m->max)
		return 1;
	if (w->gi >= w->ngroups) {
		if (w->d >= w->dirlen)
			return 1;
		__u64 t = rd(w->dir + 8 * w->d);
		w->d++;
		if (!t || t == w->prev)
			return 0;
		w->prev = t;
		w->data = rd(t + m->tab_data);
		w->ngroups = w->data ? rd(t + m->tab_mask) + 1 : 0;
		w->gi = 0;
		return 0;
	}
	take(m, w, w->data + w->gi * m->grp_size);
	w->gi++;
	return 0;
}

static __always_inline __u32 walk(const struct gt_gomap *m, __u64 map, struct gt_gomap_walk *w)
{
	struct walk_ctx cx = {w, m};
	if (!map)
		return 0;
	w->dir = rd(map + m->hdr_dir);
	if (m->swiss) {
		w->dirlen = rd(map + m->hdr_dirlen);
		if (!w->dirlen) { /* a small map: one group, or none yet */
			if (w->dir)
				take(m, w, w->dir);
			return w->n;
		}
		bpf_loop(GT_GOMAP_STEPS, swiss_step, &cx, 0);
		return w->n;
	}
	__u32 B = (__u32)rd(map + m->hdr_b) & 0xff;
	w->nb = B < 32 ? 1ull << B : 0;
	w->old = rd(map + m->hdr_old);
	if (w->old)
		w->nold = rd(map + m->hdr_flags) & HMAP_SAME_SIZE_GROW ? w->nb : w->nb >> 1;
	bpf_loop(GT_GOMAP_STEPS, hmap_step, &cx, 0);
	return w->n;
}

__u32 gt_go_map_walk(const struct gt_gomap *m, __u64 map, __u64 *out)
{
	__u32 zero = 0, n;
	struct gt_gomap_walk *w = bpf_map_lookup_elem(&gt_gomap_scratch, &zero);
	__builtin_memset(out, 0, 16 * GT_GOMAP_MAX);
	if (!w)
		return 0;
	__builtin_memset(w, 0, sizeof(*w));
	n = walk(m, map, w);
	__builtin_memcpy(out, w->out, sizeof(w->out));
	return n > GT_GOMAP_MAX ? GT_GOMAP_MAX : n;
}

/* The address of the value of KEY in MAP, 0 when the walk does not find it (a map of
 * more than GT_GOMAP_STEPS buckets or groups is not searched whole). FIND: GT_GOMAP_FIND_INT
 * (KINT, the key's low KSIZE bytes) or _STR (the KLEN bytes at KEY, zero-padded to
 * GT_GOMAP_KEYMAX); INDIRECT: the slot holds a pointer to the value. */
__u64 gt_go_map_find(const struct gt_gomap *m, __u64 map, __u32 find, __u64 kint, __u32 ksize,
		     const __u8 *key, __u32 klen, __u32 indirect)
{
	__u32 zero = 0;
	struct gt_gomap_walk *w = bpf_map_lookup_elem(&gt_gomap_scratch, &zero);
	if (!w)
		return 0;
	__builtin_memset(w, 0, sizeof(*w));
	w->find = find;
	w->kmask = ksize >= 8 ? ~0ull : (1ull << (8 * (ksize & 7))) - 1;
	w->kint = kint & w->kmask;
	w->klen = klen;
	if (key)
		__builtin_memcpy(w->key, key, GT_GOMAP_KEYMAX);
	if (!walk(m, map, w))
		return 0;
	return indirect ? rd(w->out[1]) : w->out[1];
}
