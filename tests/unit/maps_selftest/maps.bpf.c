// maps.bpf.c: maps in the layout of plan.h, filled by raw_tp programs that
// maps_selftest runs with BPF_PROG_TEST_RUN: mt_fill (ctx[0] = phase 0 on CPU 0, phase 1
// on CPU 1) stores what oracle.bt stores, statement for statement; mt_check fills the
// maps of gotrace-only checks (values bpftrace 0.17 cannot represent).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "maps_selftest.h"

char LICENSE[] SEC("license") = "GPL";

#define MAP(name, t, K, V, n)                                                                    \
	struct {                                                                                 \
		__uint(type, t);                                                                 \
		__type(key, K);                                                                  \
		__type(value, V);                                                                \
		__uint(max_entries, n);                                                          \
	} name SEC(".maps")
#define H BPF_MAP_TYPE_HASH
#define P BPF_MAP_TYPE_PERCPU_HASH
#define N 4096

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u64[3]); /* as gotrace's: dropped as full, other failures, errno */
	__uint(max_entries, MT_MAPFULL_ENTRIES);
} gt_mapfull SEC(".maps");

/* --- the maps compared with bpftrace (maps_selftest.c: dump_maps[]) --- */
MAP(m_h, P, struct hk0, __u64, N);
MAP(m_l, H, struct hk0, __u64, N);
MAP(m_s, P, struct k0, struct v_avg, N);
MAP(m_a, P, struct k0, struct v_avg, N);
MAP(m_c, P, struct ksi, __s64, N);
MAP(m_m, H, struct k0, struct v_mm, N);
MAP(m_x, H, struct k0, struct v_mm, N);
MAP(m_y, H, struct k0, __s64, N);
MAP(m_z, H, struct k0, struct v_str, N);
MAP(m_n, P, struct k1, __s64, N);
MAP(m_yn, H, struct k0, __s64, N);
MAP(m_yu, H, struct k0, __u64, N);
MAP(m_ymin, H, struct k0, __s64, N);
MAP(m_sov, H, struct k0, __s64, N);
MAP(m_an, H, struct k0, struct v_avg, N);
MAP(m_sn, H, struct k0, struct v_avg, N);
MAP(m_ak, H, struct ks, struct v_avg, N);
MAP(m_mk, P, struct k1, struct v_mm, N);
MAP(m_xk, P, struct k1, struct v_mm, N);
MAP(m_ck, H, struct ks, __s64, N);
MAP(m_zs, H, struct ks, struct v_str, N);
MAP(m_zi, H, struct k1, struct v_str, N);
MAP(m_zm, H, struct kis, struct v_str, N);
MAP(m_esc, H, struct ks, struct v_str, N);
MAP(m_anon, H, struct k0, __s64, N);
MAP(m_B, H, struct k0, __s64, N);
MAP(m_ht, P, struct hk1, __u64, N);
MAP(m_hu, H, struct hk1, __u64, N);
MAP(m_hs, H, struct hks, __u64, N);
MAP(m_lk, H, struct hkis, __u64, N);
MAP(m_lo, H, struct hk0, __u64, N);
MAP(m_lM, H, struct hk0, __u64, N);
MAP(m_sk, P, struct k1, struct v_avg, N);
MAP(m_av, H, struct k1, struct v_avg, N);
MAP(m_never, H, struct k0, __s64, N);
MAP(m_nk, H, struct k1, __s64, N);
MAP(m_nh, H, struct hk0, __u64, N);
MAP(m_ns, H, struct k0, struct v_avg, N);
MAP(m_nz, H, struct k0, struct v_str, N);
MAP(m_zc, P, struct k1, __s64, N);
MAP(m_zh, H, struct hk0, __u64, N);
MAP(m_zhk, H, struct hk1, __u64, N);
MAP(m_zl, H, struct hk0, __u64, N);
MAP(m_zmin, P, struct k0, struct v_mm, N);
MAP(m_zmax, H, struct k1, struct v_mm, N);
MAP(m_zst, H, struct k0, struct v_avg, N);
MAP(m_zst2, H, struct k1, struct v_avg, N);
MAP(m_zstr, H, struct k0, struct v_str, N);
MAP(m_zsk, H, struct ks, struct v_str, N);
MAP(m_za, H, struct k0, struct v_avg, N);
MAP(m_zi2, H, struct k0, __s64, N);
MAP(m_zcnt, H, struct k0, __s64, N);
MAP(m_ca, H, struct k0, struct v_avg, N);
MAP(m_cc, P, struct k1, __s64, N);
MAP(m_ch, H, struct hk0, __u64, N);
MAP(m_chk, H, struct hk1, __u64, N);
MAP(m_cs, H, struct k0, struct v_avg, N);
MAP(m_cstr, H, struct k0, struct v_str, N);
MAP(m_cm, H, struct k0, struct v_mm, N);
MAP(m_cl, H, struct hk0, __u64, N);
MAP(m_ccnt, H, struct k0, __s64, N);

/* --- gotrace-only checks (maps_selftest.c: check_maps[]) --- */
MAP(m_full, H, struct k1, __s64, MT_FULL_ENTRIES);
MAP(m_big, H, struct hk0, __u64, N);
MAP(m_mn, H, struct k0, struct v_mm, N);
MAP(m_mx, H, struct k0, struct v_mm, N);
MAP(m_mnp, P, struct k1, struct v_mm, N);
MAP(m_mxp, P, struct k1, struct v_mm, N);
MAP(m_utf, H, struct k0, struct v_str, N);
MAP(m_site, H, struct ksite, __s64, N);
MAP(m_ct, H, struct k1, __s64, N);
MAP(m_lneg, H, struct hk0, __u64, N);

/* --- what codegen does for each kind --- */

static __always_inline void map_full(__u32 id, long err)
{
	__u64 *v = bpf_map_lookup_elem(&gt_mapfull, &id);
	if (!v)
		return;
	if ((int)err == -7 /* E2BIG, zero-extended before 6.4: gt_maps.c */) {
		__sync_fetch_and_add(&v[0], 1);
	} else {
		__sync_fetch_and_add(&v[1], 1);
		v[2] = (__u64)-err;
	}
}

static __always_inline void add(void *map, void *key, __s64 d, __u32 id)
{
	__s64 *v = bpf_map_lookup_elem(map, key);
	if (v) {
		*v += d;
		return;
	}
	long err = bpf_map_update_elem(map, key, &d, BPF_NOEXIST);
	if (err)
		map_full(id, err);
}

static __always_inline void set(void *map, void *key, __s64 x)
{
	bpf_map_update_elem(map, key, &x, BPF_ANY);
}

static __always_inline void set_str(void *map, void *key, const char *s, int n)
{
	struct v_str v = {};
	for (int i = 0; i < n && i < MT_VSTR; i++)
		v.s[i] = s[i];
	bpf_map_update_elem(map, key, &v, BPF_ANY);
}

static __always_inline void avg(void *map, void *key, __s64 x)
{
	struct v_avg *v = bpf_map_lookup_elem(map, key);
	if (v) {
		v->count++;
		v->total += x;
		return;
	}
	struct v_avg n = {1, x};
	bpf_map_update_elem(map, key, &n, BPF_NOEXIST);
}

static __always_inline void minmax(void *map, void *key, __s64 x, int is_max)
{
	struct v_mm *v = bpf_map_lookup_elem(map, key);
	if (v) {
		if (!v->set || (is_max ? x > v->value : x < v->value)) {
			v->value = x;
			v->set = 1;
		}
		return;
	}
	struct v_mm n = {x, 1};
	bpf_map_update_elem(map, key, &n, BPF_NOEXIST);
}
#define min(m, k, x) minmax(m, k, x, 0)
#define max(m, k, x) minmax(m, k, x, 1)

static __always_inline __u64 log2u(__u64 v)
{
	__u64 r = 0;
	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1) { r += 1; }
	return r;
}

/* plan.h: 0 for v < 0, 1 for v == 0, 2 + floor(log2(v)) */
static __always_inline __u64 hist_idx(__s64 v)
{
	if (v < 0)
		return 0;
	if (v == 0)
		return 1;
	return 2 + log2u((__u64)v);
}

static __always_inline __u64 hist_idx_u(__u64 v)
{
	return v == 0 ? 1 : 2 + log2u(v);
}

static __always_inline __u64 lhist_idx(__s64 v, __s64 min, __s64 max, __s64 step)
{
	if (v < min)
		return 0;
	if (v >= max)
		return 1 + (__u64)(max - min) / (__u64)step;
	return 1 + (__u64)(v - min) / (__u64)step;
}

/* key builders */
#define K0() ((struct k0){0})
#define K1(x) ((struct k1){x})
static __always_inline struct ks KS(const char *s)
{
	struct ks k = {};
	for (int i = 0; i < MT_SLEN - 1 && s[i]; i++)
		k.s[i] = s[i];
	return k;
}

static __always_inline void hist0(void *map, __s64 v)
{
	struct hk0 k = {0, hist_idx(v)};
	add(map, &k, 1, 0);
}

static __always_inline void hist1(void *map, __s64 key, __s64 v)
{
	struct hk1 k = {key, hist_idx(v)};
	add(map, &k, 1, 0);
}

static __always_inline void hists(void *map, const char *key, __s64 v)
{
	struct hks k = {};
	struct ks s = KS(key);
	__builtin_memcpy(k.s, s.s, MT_SLEN);
	k.bucket = hist_idx(v);
	add(map, &k, 1, 0);
}

static __always_inline void lhist0(void *map, __s64 v, __s64 min, __s64 max, __s64 step)
{
	struct hk0 k = {0, lhist_idx(v, min, max, step)};
	add(map, &k, 1, 0);
}

static __always_inline void lhistis(void *map, __s64 n, const char *s, __s64 v, __s64 min,
				    __s64 max, __s64 step)
{
	struct hkis k = {};
	struct ks t = KS(s);
	k.n = n;
	__builtin_memcpy(k.s, t.s, MT_SLEN);
	k.bucket = lhist_idx(v, min, max, step);
	add(map, &k, 1, 0);
}

static __always_inline void strkey_str(void *map, const char *key, const char *val, int n)
{
	struct ks k = KS(key);
	set_str(map, &k, val, n);
}

static __always_inline void kis_str(void *map, __s64 a, const char *s, const char *val)
{
	struct kis k = {};
	struct ks t = KS(s);
	k.n = a;
	__builtin_memcpy(k.s, t.s, MT_SLEN);
	set_str(map, &k, val, 2);
}

#define INT64_MIN_ (-9223372036854775807LL - 1)

SEC("raw_tp")
int mt_fill(__u64 *ctx)
{
	__u64 phase = ctx[0];
	struct k0 z = K0();
	struct k1 k;
	struct ks s;

	if (phase == 0) {
		hist0(&m_h, 0); hist0(&m_h, 1); hist0(&m_h, 2); hist0(&m_h, 3);
	} else {
		hist0(&m_h, -1); hist0(&m_h, 1024); hist0(&m_h, 5000000);
	}
	if (phase == 0) {
		lhist0(&m_l, 5, 0, 10, 2); lhist0(&m_l, -3, 0, 10, 2);
		lhist0(&m_l, 12, 0, 10, 2); lhist0(&m_l, 9, 0, 10, 2);
	}
	avg(&m_s, &z, phase == 0 ? 5 : 7);
	avg(&m_a, &z, phase == 0 ? 3 : 4);
	if (phase == 0) {
		struct ksi c = {};
		struct ks t = KS("bpftrace");
		__builtin_memcpy(c.s, t.s, MT_SLEN);
		c.n = 1;
		add(&m_c, &c, 1, 0);
		min(&m_m, &z, -5);
		max(&m_x, &z, 9);
		set(&m_y, &z, 7);
		set_str(&m_z, &z, "str", 3);
		k = K1(3); add(&m_n, &k, 4, 0);
		k = K1(1); add(&m_n, &k, 4, 0);
	} else {
		k = K1(1); add(&m_n, &k, 6, 0);
		k = K1(2); add(&m_n, &k, 1, 0);
	}

	if (phase == 1)
		goto percpu;

	set(&m_yn, &z, -1);
	set(&m_yu, &z, (__s64)18446744073709551615ULL);
	set(&m_ymin, &z, INT64_MIN_);
	add(&m_sov, &z, INT64_MIN_, 0); add(&m_sov, &z, -1, 0);
	avg(&m_an, &z, -7); avg(&m_an, &z, 2);
	avg(&m_sn, &z, -3); avg(&m_sn, &z, -4);

	s = KS("r"); avg(&m_ak, &s, -5);
	s = KS("q"); avg(&m_ak, &s, 5);
	s = KS("p"); avg(&m_ak, &s, 0);
	s = KS("x"); add(&m_ck, &s, 1, 0);
	s = KS("y"); add(&m_ck, &s, 1, 0); add(&m_ck, &s, 1, 0);

	strkey_str(&m_zs, "b", "x", 1); strkey_str(&m_zs, "a", "y", 1);
	strkey_str(&m_zs, "c", "a", 1); strkey_str(&m_zs, "", "e", 1);
	k = K1(-1); set_str(&m_zi, &k, "n", 1);
	k = K1(5); set_str(&m_zi, &k, "p", 1);
	k = K1(0); set_str(&m_zi, &k, "z", 1);
	kis_str(&m_zm, 2, "b", "1"); kis_str(&m_zm, 1, "z", "2"); kis_str(&m_zm, 2, "a", "3");
	strkey_str(&m_esc, "k\"\\\n\t\x01", "v\"\\\t\r\x1f\x7f", 7);
	set(&m_anon, &z, 5);
	set(&m_B, &z, 4);

	for (int i = 0; i < 40; i++) {
		hist1(&m_hu, i, 1);
		if (i % 3 == 0)
			hist1(&m_hu, i, 1000);
	}
	hists(&m_hs, "b", 3); hists(&m_hs, "a", 100); hists(&m_hs, "ab", 7);
	lhistis(&m_lk, 1, "x", 3000, 0, 4096, 1024); lhistis(&m_lk, 1, "x", 5000, 0, 4096, 1024);
	lhistis(&m_lk, 0, "y", -1, 0, 4096, 1024); lhistis(&m_lk, 0, "y", 0, 0, 4096, 1024);
	lhistis(&m_lk, 0, "y", 1024, 0, 4096, 1024);
	lhist0(&m_lo, 3, 0, 10, 3); lhist0(&m_lo, 100, 0, 10, 3); lhist0(&m_lo, 9, 0, 10, 3);
	lhist0(&m_lM, 1048576, 0, 3145728, 1048576); lhist0(&m_lM, 0, 0, 3145728, 1048576);
	for (int i = 0; i < 20; i++) {
		k = K1(i);
		avg(&m_av, &k, (i * 7) % 5);
	}

	/* @never, @nk, @nh, @ns, @nz: never stored */

	hist0(&m_zh, 5);
	hist1(&m_zhk, 1, 3); hist1(&m_zhk, 2, 100);
	lhist0(&m_zl, 3, 0, 10, 1);
	k = K1(1); max(&m_zmax, &k, 5);
	avg(&m_zst, &z, 4);
	k = K1(1); avg(&m_zst2, &k, 4);
	set_str(&m_zstr, &z, "abc", 3);
	strkey_str(&m_zsk, "a", "q", 1);
	avg(&m_za, &z, 3);
	set(&m_zi2, &z, 5);
	add(&m_zcnt, &z, 1, 0);
	avg(&m_ca, &z, 3);
	hist0(&m_ch, 5);
	hist1(&m_chk, 1, 5);
	avg(&m_cs, &z, 4);
	set_str(&m_cstr, &z, "abc", 3);
	min(&m_cm, &z, 1);
	lhist0(&m_cl, 1, 0, 10, 1);
	add(&m_ccnt, &z, 1, 0);

percpu:
	/* per-CPU maps: phase 0 runs on CPU 0, phase 1 on CPU 1 */
	if (phase == 0) {
		k = K1(1); min(&m_mk, &k, 3);
		k = K1(2); min(&m_mk, &k, -5);
		k = K1(1); max(&m_xk, &k, 5);
		k = K1(3); max(&m_xk, &k, 50);
		k = K1(1); add(&m_zc, &k, 1, 0);
		min(&m_zmin, &z, 4);
		k = K1(1); add(&m_cc, &k, 1, 0);
	} else {
		k = K1(1); min(&m_mk, &k, 7);
		k = K1(3); min(&m_mk, &k, 100);
		k = K1(2); max(&m_xk, &k, 0);
		k = K1(3); max(&m_xk, &k, 20);
		k = K1(1); add(&m_zc, &k, 1, 0);
		k = K1(2); add(&m_cc, &k, 1, 0);
	}
	for (int i = 0; i < 40; i++)
		if ((i < 20) == (phase == 0))
			hist1(&m_ht, i, 1);
	for (int i = 0; i < 20; i++) {
		if ((i % 2 == 0) == (phase == 0)) {
			k = K1(i);
			avg(&m_sk, &k, i % 4);
		}
	}
	return 0;
}

SEC("raw_tp")
int mt_check(__u64 *ctx)
{
	__u64 phase = ctx[0];
	struct k0 z = K0();
	struct k1 k;

	if (phase == 0) {
		for (int i = 1; i <= 6; i++) {
			k = K1(i);
			add(&m_full, &k, 1, MT_FULL_ID);
		}
		__u64 big[] = {1, 1ULL << 31, 1ULL << 40, 1ULL << 62, 0x7fffffffffffffffULL,
			       1ULL << 63};
		for (int i = 0; i < 6; i++) {
			struct hk0 h = {0, hist_idx_u(big[i])};
			add(&m_big, &h, 1, 0);
		}
		min(&m_mn, &z, 0x7fffffffffffffffLL);
		max(&m_mx, &z, -1);
		set_str(&m_utf, &z, "\xc3\xa9\xff\x80" "a\xe2\x82", 7);
		struct ksite st = {0 | (3ULL << 32), 0};
		add(&m_site, &st, 1, 0);
		add(&m_site, &st, 1, 0);
		st = (struct ksite){1, 1};
		add(&m_site, &st, 1, 0);
		k = K1(3); add(&m_ct, &k, 1, 0);
		k = K1(1); add(&m_ct, &k, 1, 0);
		k = K1(-1); add(&m_ct, &k, 1, 0);
		k = K1(7); add(&m_ct, &k, 2, 0);
		lhist0(&m_lneg, -11, -10, 10, 5); lhist0(&m_lneg, -10, -10, 10, 5);
		lhist0(&m_lneg, 7, -10, 10, 5); lhist0(&m_lneg, 10, -10, 10, 5);
		k = K1(1); min(&m_mnp, &k, 10);
		k = K1(2); min(&m_mnp, &k, -8);
		k = K1(1); max(&m_mxp, &k, -7);
		k = K1(2); max(&m_mxp, &k, -1);
	} else {
		k = K1(1); min(&m_mnp, &k, -3);
		k = K1(3); min(&m_mnp, &k, 6);
		k = K1(2); max(&m_mxp, &k, -9);
	}
	return 0;
}
