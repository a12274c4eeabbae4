/* bpf_abi: what the BPF side (runtime-bpf, built with clang -target bpf) and user space
 * (src) must agree on. Only <linux/types.h> types: both compilers read this file. */
#ifndef GT_BPF_ABI_H
#define GT_BPF_ABI_H

#include <linux/types.h>

/* Per-target constants: where g, goid and the goroutine's stack are. Codegen emits
 * one as a constant global, so the offsets fold away at O2. */
struct gt_target {
	__s64 tls_g_off; /* g = *(tp + tls_g_off), tp user space's thread pointer */
	__u32 tp_off;    /* its offset in task_struct in this kernel (thread.fsbase) */
	__u32 g_stack_hi;
	__u32 g_m;
	__u32 g_goid;
	__u32 m_curg;
	__u32 pad;
};

/* How print() walks a Go map (runtime-bpf/gt_gomap.c), laid out by sema from the
 * target's DWARF (the linker's hash<K,V> / map<K,V> types): Go's hmap before 1.24
 * (8-slot buckets, tophash bytes, overflow chains, old buckets while growing), swiss
 * tables from 1.24 (a directory of tables of 8-slot groups under a control word, or
 * a single group for a small map). Slot J of a bucket or group at G has its key at
 * G + key_off + J * key_stride and its value at G + val_off + J * val_stride. */
#define GT_GOMAP_MAX 8    /* entries a print() copies: more are shown as " ..." */
/* m[KEY] (gt_go_map_find): the slot whose key is an integer of the key's size, or a
 * string of at most GT_GOMAP_KEYMAX bytes, found by the same bounded walk */
#define GT_GOMAP_FIND_INT 1
#define GT_GOMAP_FIND_STR 2
#define GT_GOMAP_KEYMAX 64
#define GT_GOMAP_STEPS 32 /* buckets, groups and tables visited looking for them */
struct gt_gomap {
	__u32 swiss;
	__u32 max;       /* entries wanted, <= GT_GOMAP_MAX */
	__u32 count_off; /* hmap.count / Map.used */
	__u32 hdr_b, hdr_flags, hdr_old; /* hmap: B, flags, oldbuckets */
	__u32 hdr_dir;   /* hmap.buckets / Map.dirPtr */
	__u32 hdr_dirlen; /* Map.dirLen */
	__u32 tab_data, tab_mask; /* table.groups.data, table.groups.lengthMask */
	__u32 grp_size;  /* a bucket's / a group's size */
	__u32 grp_ctrl;  /* tophash[8] / ctrl */
	__u32 grp_next;  /* hmap: bucket.overflow */
	__u32 key_off, key_stride, val_off, val_stride;
};

/* Uprobe cookie: the low 32 bits are the site id (user space names it), the high 32
 * bits GT_SITE_* flags. */
#define GT_COOKIE_SITE_MASK 0xffffffffull
#define GT_COOKIE_FLAGS_SHIFT 32
#define GT_SITE_G_IN_REG 0x1u /* ABIInternal code: g is in its register (arch.h) at this site */
#define GT_SITE_TRACK 0x2u    /* keep the goroutine's call stack at this entry */
#define GT_SITE_RET_AT_ENTRY 0x4u /* the function is one RET: its calls push no frame */
/* the return address is on top of the stack (an entry, a RET, anywhere in a function
 * without a frame): the frame-pointer walk skips the caller, user space puts it back */
#define GT_SITE_CALLER_AT_SP 0x8u
/* ... and the kernel's walk already holds it (`push %rbp` on 6.11+, sema_stack.c): nothing
 * to put back, although `caller` still reads it there */
#define GT_SITE_KERNEL_ADDS_CALLER 0x10u
/* the start of an inlined copy: a point in its caller's code, with no frame or return of
 * its own (--funcgraph prints it as a leaf; only user space reads this flag) */
#define GT_SITE_INLINED 0x20u
/* a :return program's slot among the programs at its RET (sema numbers them 0, 1, ...):
 * each pairs a frame once, so a second program in the same trap pairs however long after
 * the first it runs (preempted between them), and a return whose entry was not seen does
 * not pass for an earlier call's at the same stack level. Slot GT_RET_SLOT_ANY (the 32nd
 * program at one RET and later) pairs any returned frame at its level. */
#define GT_SITE_RET_SLOT_SHIFT 8
#define GT_SITE_RET_SLOT_MASK 0x1fu
#define GT_RET_SLOT_ANY 31u
#define GT_COOKIE_KERNEL_ADDS_CALLER ((__u64)GT_SITE_KERNEL_ADDS_CALLER << GT_COOKIE_FLAGS_SHIFT)
#define GT_COOKIE_CALLER_AT_SP ((__u64)GT_SITE_CALLER_AT_SP << GT_COOKIE_FLAGS_SHIFT)
#define GT_COOKIE_G_IN_REG ((__u64)GT_SITE_G_IN_REG << GT_COOKIE_FLAGS_SHIFT)
#define GT_COOKIE_TRACK ((__u64)GT_SITE_TRACK << GT_COOKIE_FLAGS_SHIFT)

/* The link cookie of a tracefs uprobe event that holds many sites (runtime/attach/attach_tracefs.c,
 * kernels without uprobe_multi): GT_LINK_BY_IP, the program's slot in bits 0-15,
 * offsetof(task_struct, mm) in bits 16-31 and offsetof(mm_struct, start_code) in bits
 * 32-47. The program then finds its site's cookie in map gt_sites by the probed address
 * relative to the process's first code address (the key's rel: vaddr - lowest executable
 * PT_LOAD vaddr, which is ip - mm->start_code in any process running the binary). Site
 * cookies never have bit 63 set. */
#define GT_LINK_BY_IP (1ull << 63)
#define GT_LINK_SLOT(c) ((c) & 0xffffull)
#define GT_LINK_MM_OFF(c) (((c) >> 16) & 0xffffull)
#define GT_LINK_START_CODE_OFF(c) (((c) >> 32) & 0xffffull)
#define GT_MAP_SITES "gt_sites"
struct gt_site_key {
	__u64 rel;
	__u64 slot;
};
/* the site id of an event whose address gt_sites does not hold */
#define GT_SITE_UNKNOWN GT_COOKIE_SITE_MASK

/* ustack of a sample unwound by runtime-bpf/gt_unwind.c: its id has GT_UNWIND_ID set and
 * is the u64 key of the addresses in the stack map's "_uw" hash map (kernel ids are
 * below 2^32);
 * GT_UNWIND_DEPTH u64 of scratch per CPU in GT_MAP_UNWIND_SCRATCH; the rows (u64 pc, s64
 * SP delta) in GT_MAP_UNWIND_TAB, filled by user space after load. */
#define GT_UNWIND_ID (1ull << 62)
#define GT_UNWIND_DEPTH 127
#define GT_MAP_UNWIND_TAB "gt_unwind_tab"
#define GT_MAP_UNWIND_SCRATCH "gt_unwind_scr"
/* per-CPU rows, one per program: byte buffers too long for the stack (cg_scratch.c) */
#define GT_MAP_SCRATCH "gt_scratch"
#define GT_UNWIND_SUFFIX "_uw"
/* Where gt_unwind.c restarts when the sampled PC is not in Go code: the Go frame the
 * runtime left for the vDSO (m.vdsoSP/vdsoPC) or for a cgo call (curg.syscallsp/pc), as
 * Go's own profiler does; else the stack is the one frame external_pc (runtime.
 * _ExternalCode, Go's own marker). Offsets 0: unknown. All u64: codegen emits an array. */
struct gt_uwtarget {
	__s64 tls_g_off; /* g = *(tp + tls_g_off) */
	__u64 tp_off;    /* the thread pointer's offset in task_struct; 0: unknown */
	__u64 g_m, m_curg;
	__u64 m_vdso_sp, m_vdso_pc;
	__u64 g_syscall_sp, g_syscall_pc;
	__u64 external_pc; /* runtime._ExternalCode + 1; 0: none (the kernel's walk) */
	__u64 task_regs;   /* the kernel has bpf_task_pt_regs (5.15): samples in it too */
};
#define GT_UWTARGET_WORDS 10

/* Counters in map gt_stats (user space reports them with -v). */
#define GT_MAP_STATS "gt_stats"
enum gt_stat {
	GT_STAT_UNPAIRED_RETURN, /* a return whose entry was never seen */
	GT_STAT_ABANDONED,       /* frames left by panic/Goexit, resynced by an outer frame */
	GT_STAT_STATE_FULL,      /* goroutine state or frame map full */
	GT_STAT_NO_G,            /* g could not be read */
	GT_STAT_GOEXIT,          /* goroutines whose state was freed at exit */
	GT_STAT_NO_SITE,         /* events at an address gt_sites does not hold */
	GT_STAT_FG_DROPPED,      /* call-graph mode: root calls dropped whole (ring full) */
	GT_STAT_ONCPU_UNSEEN,    /* oncpu: a thread found running whose switch in was not seen */
	GT_STAT_UNREAD_TEXT,     /* a Go string's text unreadable (its page not present) */
	GT_STAT_COUNT,
};

/* gt_call_enter's and gt_call_return's depth with this bit: the call is inside a root
 * call that call-graph mode drops whole (the ring buffer was over half full at its
 * entry), so nothing of it is recorded. */
#define GT_DEPTH_SKIP (1ull << 62)

/* gt_agg_read(): how an aggregation's per-CPU values make one */
enum gt_agg_read {
	GT_AGG_READ_SUM, /* count(), sum() */
	GT_AGG_READ_MIN,
	GT_AGG_READ_MAX,
	GT_AGG_READ_AVG,
};

/* tseries(): how the values of one interval make its point (bpftrace's agg argument;
 * LAST, the default, keeps the latest value) */
enum gt_tseries_agg {
	GT_TS_LAST,
	GT_TS_AVG,
	GT_TS_MAX,
	GT_TS_MIN,
	GT_TS_SUM,
};

/* One interval of a tseries() map, per CPU, under the key's bucket epoch % intervals.
 * EPOCH is now / interval_ns (0: never written). META: LAST the time of the value
 * (the latest CPU's wins), AVG the count, MIN/MAX 1 once set. */
struct gt_tseries {
	__s64 value;
	__u64 meta;
	__u64 epoch;
};

#endif
