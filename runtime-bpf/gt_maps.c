/* Aggregations into the script's maps. Values of aggregation maps are per CPU, so
 * an update is a plain read-modify-write of this CPU's slot. */
#include "gt_runtime.h"

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define GT_EEXIST 17

/* Inserts INIT under KEY unless another update got there first; counts a full map. */
static __always_inline int insert(void *map, void *key, void *init, __u32 id)
{
	long err = bpf_map_update_elem(map, key, init, BPF_NOEXIST);
	if (!err)
		return 0;
	/* Read as an int: before Linux 6.4 ("bpf: Make bpf_map_ops return long") the
	 * verifier calls the map's int-returning update op directly, and the errno comes
	 * back zero-extended (0xffffffef, not -17): on 6.1 a lost race to insert a key was
	 * counted as a full map, and every full map's E2BIG as another error. */
	if ((int)err == -GT_EEXIST)
		return 1; /* look it up again */
	gt_map_failed(id, err);
	return -1;
}

void gt_agg_add(void *map, void *key, __s64 v, __u32 id)
{
	__s64 *p = bpf_map_lookup_elem(map, key);
	if (!p) {
		if (insert(map, key, &v, id) <= 0)
			return;
		p = bpf_map_lookup_elem(map, key);
		if (!p)
			return;
	}
	*p += v;
}

struct gt_avg {
	__s64 count;
	__s64 total;
};

void gt_agg_avg(void *map, void *key, __s64 v, __u32 id)
{
	struct gt_avg *p = bpf_map_lookup_elem(map, key);
	if (!p) {
		struct gt_avg init = {1, v};
		if (insert(map, key, &init, id) <= 0)
			return;
		p = bpf_map_lookup_elem(map, key);
		if (!p)
			return;
	}
	p->count++;
	p->total += v;
}

struct gt_minmax {
	__s64 value;
	__u64 set;
};

void gt_agg_minmax(void *map, void *key, __s64 v, int is_max, __u32 id)
{
	struct gt_minmax *p = bpf_map_lookup_elem(map, key);
	if (!p) {
		struct gt_minmax init = {v, 1};
		if (insert(map, key, &init, id) <= 0)
			return;
		p = bpf_map_lookup_elem(map, key);
		if (!p)
			return;
	}
	if (!p->set || (is_max ? v > p->value : v < p->value)) {
		p->value = v;
		p->set = 1;
	}
}

/* One value into a tseries(): bpftrace's order of steps. A new epoch in the bucket starts
 * the aggregation over; LAST simply overwrites. */
static __always_inline void tseries_apply(struct gt_tseries *p, __s64 v, __u64 now,
					  __u64 epoch, int agg, int is_signed)
{
	if (agg != GT_TS_LAST && p->epoch != epoch) {
		p->value = 0;
		p->meta = 0;
	}
	switch (agg) {
	case GT_TS_AVG:
		p->meta++;
		p->value += v;
		break;
	case GT_TS_SUM:
		p->value += v;
		break;
	case GT_TS_MAX:
	case GT_TS_MIN: {
		int take = p->meta != 1;
		if (!take && is_signed)
			take = agg == GT_TS_MAX ? v >= p->value : p->value >= v;
		else if (!take)
			take = agg == GT_TS_MAX ? (__u64)v >= (__u64)p->value
						: (__u64)p->value >= (__u64)v;
		if (take) {
			p->value = v;
			p->meta = 1;
		}
		break;
	}
	default:
		p->value = v;
		p->meta = now;
		break;
	}
	p->epoch = epoch;
}

/* tseries(v, interval, num): NOW's interval is epoch = now / interval, kept in bucket
 * epoch % num, the u64 at BUCKET (the last of KEY) */
void gt_agg_tseries(void *map, void *key, __u64 *bucket, __s64 v, __u64 now, __u64 interval,
		    __u64 num, int agg, int is_signed, __u32 id)
{
	__u64 epoch = now / interval;
	*bucket = epoch % num;
	struct gt_tseries *p = bpf_map_lookup_elem(map, key);
	if (!p) {
		struct gt_tseries init = {0, 0, epoch};
		tseries_apply(&init, v, now, epoch, agg, is_signed);
		if (insert(map, key, &init, id) <= 0)
			return;
		p = bpf_map_lookup_elem(map, key);
		if (!p)
			return;
	}
	tseries_apply(p, v, now, epoch, agg, is_signed);
}

/* hist: 0 for v < 0, 1 for 0, 2 + floor(log2(v)) for v >= 1 */
__u64 gt_hist_bucket(__s64 v)
{
	if (v < 0)
		return 0;
	if (v == 0)
		return 1;
	__u64 n = (__u64)v, r = 0;
	if (n >> 32) { n >>= 32; r += 32; }
	if (n >> 16) { n >>= 16; r += 16; }
	if (n >> 8) { n >>= 8; r += 8; }
	if (n >> 4) { n >>= 4; r += 4; }
	if (n >> 2) { n >>= 2; r += 2; }
	if (n >> 1) { r += 1; }
	return r + 2;
}

/* hist(x, k), bpftrace's buckets: 0 for v < 0, v + 1 for v < 2^k, then 2^k buckets a
 * power of 2: ((log2(v) - k + 1) << k) + the k bits after v's leading 1, + 1 */
__u64 gt_hist_bucket_k(__s64 v, __u64 k)
{
	if (v < 0)
		return 0;
	__u64 n = (__u64)v, mask = (1ull << (k & 7)) - 1, l = 63;
	if (n <= mask)
		return n + 1;
	/* the leading 1 moved to bit 63 by constant shifts: the k bits after it are then
	 * one shift by a constant (k is), which keeps a loop of hist() calls within the
	 * verifier's budget where a shift by log2(v) did not */
	if (!(n >> 32)) { n <<= 32; l -= 32; }
	if (!(n >> 48)) { n <<= 16; l -= 16; }
	if (!(n >> 56)) { n <<= 8; l -= 8; }
	if (!(n >> 60)) { n <<= 4; l -= 4; }
	if (!(n >> 62)) { n <<= 2; l -= 2; }
	if (!(n >> 63)) { n <<= 1; l -= 1; }
	return ((l - k + 1) << (k & 7)) + ((n >> ((63 - k) & 63)) & mask) + 1;
}

__u64 gt_lhist_bucket(__s64 v, __s64 min, __s64 max, __s64 step)
{
	if (v < min)
		return 0;
	if (v >= max)
		return 1 + (__u64)(max - min) / (__u64)step;
	return 1 + (__u64)(v - min) / (__u64)step;
}

static long count_elem(void *map, void *key, void *value, void *ctx)
{
	(void)map;
	(void)key;
	(void)value;
	(*(__u64 *)ctx)++;
	return 0;
}

struct agg_read {
	void *map, *key;
	__u32 how;
	int set;
	__s64 acc, count;
};

static long agg_read_cpu(__u64 cpu, void *ctx)
{
	struct agg_read *r = ctx;
	__s64 *p = bpf_map_lookup_percpu_elem(r->map, r->key, (__u32)cpu);
	if (!p)
		return 0;
	if (r->how == GT_AGG_READ_SUM) {
		r->acc += p[0];
	} else if (r->how == GT_AGG_READ_AVG) {
		r->count += p[0];
		r->acc += p[1];
	} else if (p[1] && (!r->set || (r->how == GT_AGG_READ_MAX ? p[0] > r->acc : p[0] < r->acc))) {
		r->acc = p[0];
		r->set = 1;
	}
	return 0;
}

/* An aggregation's value under KEY over every CPU, for a for loop over the map: count
 * and sum add up, min and max compare the CPUs that saw a value, avg divides. bpf_loop
 * keeps the verifier's work the same for any number of CPUs. */
__s64 gt_agg_read(void *map, void *key, __u32 how, __u32 ncpus)
{
	struct agg_read r = {map, key, how, 0, 0, 0};
	bpf_loop(ncpus, agg_read_cpu, &r, 0);
	if (how != GT_AGG_READ_AVG)
		return r.acc;
	if (r.count <= 0)
		return 0;
	/* BPF before cpu v4 divides unsigned only: the magnitude, then the sign */
	__u64 q = (__u64)(r.acc < 0 ? -r.acc : r.acc) / (__u64)r.count;
	return r.acc < 0 ? -(__s64)q : (__s64)q;
}

/* len()'s count leaves through this map: a branch on the count then reads a number the
 * verifier does not know, instead of making it follow the callback's counter precisely
 * (one state for every count: "program is too large") */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} gt_len_scratch SEC(".maps");

/* len(@m): the number of keys, counted with bpf_for_each_map_elem. */
__u64 gt_map_len(void *map)
{
	__u64 n = 0;
	__u32 k = 0;
	bpf_for_each_map_elem(map, count_elem, &n, 0);
	__u64 *p = bpf_map_lookup_elem(&gt_len_scratch, &k);
	if (!p)
		return 0; /* never: an array's key 0 is always there */
	*p = n;
	return *(volatile __u64 *)p;
}

/* bpftrace compares strings up to the first difference or NUL, within n bytes. */
__u64 gt_streq(const char *a, const char *b, __u32 n)
{
	for (__u32 i = 0; i < n && i < 1024; i++) {
		if (a[i] != b[i])
			return 0;
		if (!a[i])
			return 1;
	}
	return 1;
}

/* p[i] with i hidden from the optimiser: on an 8-byte aligned stack buffer LLVM would
 * otherwise write p + i (i < 8) as p | i, and the verifier refuses bit operations on
 * pointers. */
static __always_inline char byte_at(const char *p, __u64 i)
{
	__asm__ volatile("" : "+r"(i));
	return p[i];
}

/* Whether NEEDLE (nsz bytes, NUL-terminated or full) occurs in HAY (hsz bytes). */
/* strstr(): where needle first starts in hay, -1 when nowhere (0 for "") */
__s64 gt_strstr(const char *hay, __u32 hsz, const char *needle, __u32 nsz)
{
	if (!nsz || !needle[0])
		return 0;
	for (__u32 i = 0; i < hsz && i < 1024; i++) {
		if (!byte_at(hay, i))
			return -1;
		__u32 j = 0;
		for (; j < nsz && i + j < hsz && j < 1024; j++) {
			char c = byte_at(needle, j);
			if (!c || byte_at(hay, i + j) != c)
				break;
		}
		if (j == nsz || !byte_at(needle, j < nsz ? j : 0))
			return i;
	}
	return -1;
}

__u64 gt_strcontains(const char *hay, __u32 hsz, const char *needle, __u32 nsz)
{
	return gt_strstr(hay, hsz, needle, nsz) >= 0;
}

/* strlen(): the bytes before the first NUL, within n */
__u64 gt_strlen(const char *s, __u32 n)
{
	__u32 i = 0;
	while (i < n && i < 1024 && byte_at(s, i))
		i++;
	return i;
}

/* n bytes alike (tuples laid out alike, their padding zeroed) */
__u64 gt_memeq(const char *a, const char *b, __u32 n)
{
	for (__u32 i = 0; i < n && i < 4096; i++)
		if (byte_at(a, i) != byte_at(b, i))
			return 0;
	return 1;
}

/* buf() values (u64 length, then bytes) with the same length and bytes. */
__u64 gt_bufeq(const char *a, const char *b, __u32 asz, __u32 bsz)
{
	__u64 la = *(const __u64 *)a, lb = *(const __u64 *)b;
	if (la != lb)
		return 0;
	for (__u32 i = 8; i < asz && i < bsz && i < 1024; i++) {
		if (i - 8 >= la)
			return 1;
		if (byte_at(a, i) != byte_at(b, i))
			return 0;
	}
	return 1;
}
