/* runtime-bpf: BPF-side helpers linked into every generated module. Codegen calls these
 * by name; after linking they become internal and always_inline, and the per-target
 * constants they read (struct gt_target) are constant globals, so the offsets fold
 * away at O2. Keep signatures in sync with src/codegen (cg_runtime_call users). */
#ifndef GT_RUNTIME_BPF_H
#define GT_RUNTIME_BPF_H

#include <linux/types.h>

#include "common/bpf_abi.h"
#include "gt_arch.h"

/* Reads a Go string header (data pointer, length) at ADDR and copies at most size-1
 * bytes of its text to DST, NUL-terminated. DST is zeroed first so that a failed or
 * short read never exposes stale ring-buffer bytes. Returns the bytes copied or <0. */
long gt_read_gostr(char *dst, __u32 size, __u64 addr);
/* Copies exactly min(N, size-1) bytes at ADDR to DST, NUL-terminated (str(p, n)). */
long gt_read_bytes(char *dst, __u32 size, __u64 addr, __s64 n);
/* A Go string's text, N bytes at ADDR, as gt_read_bytes: N, or 0 when the text could not
 * be read (counted: GT_STAT_UNREAD_TEXT), so that no unread byte is printed as text. */
__s64 gt_read_gotext(char *dst, __u32 size, __u64 addr, __s64 n);
/* buf(addr, n): DST is a u64 length, then size - 8 bytes of which the first min(n,
 * size - 8) are read at ADDR (length 0 when the read fails). */
void gt_read_buf(char *dst, __u32 size, __u64 addr, __s64 n);
/* A char array in memory (user or kernel): size - 1 bytes at ADDR, NUL-terminated. */
void gt_read_chars(char *dst, __u32 size, __u64 addr, __u32 user);
/* N bytes at ADDR (user or kernel memory); DST is left as it was when the read fails. */
void gt_read_raw(char *dst, __u32 n, __u64 addr, __u32 user);
/* join(): the strings of the NULL-terminated pointer array ARGV (user memory) into
 * SLOTS slots of SLOT_SIZE bytes at DST, empty after the last. */
void gt_join(char *dst, __u32 slots, __u32 slot_size, __u64 argv);
/* Copies text at ADDR to DST (size bytes with the terminating NUL). */
long gt_read_cstr(char *dst, __u32 size, __u64 addr);
/* Reads an integer of SIZE bytes (1, 2, 4, 8) at ADDR; 0 on failure. */
__u64 gt_read_uint(__u64 addr, __u32 size);
/* The same in kernel memory. */
__u64 gt_read_kuint(__u64 addr, __u32 size);

/* A register of a uprobe's saved registers at byte offset OFF, a constant (GT_REG_*,
 * gt_arch.h). One load instruction from ctx in asm: a C load lets LLVM share the address
 * ctx+OFF between inlined copies and spill it, and the verifier refuses a load through a
 * modified ctx pointer ("dereference of modified ctx ptr"). */
#define reg_at(ctx, off) reg_at_(ctx, off) /* OFF expanded before it is made a string */
#define reg_at_(ctx, off)                                                               \
	({                                                                              \
		__u64 reg_v_;                                                           \
		asm("%0 = *(u64 *)(%1 + " #off ")" : "=r"(reg_v_) : "r"(ctx));          \
		reg_v_;                                                                 \
	})

/* The current g (0 when it cannot be read). */
/* The uprobe site's cookie: the link's, or gt_sites' by address (GT_LINK_BY_IP). */
__u64 gt_site_cookie(void *ctx);
__u64 gt_current_g(void *ctx, const struct gt_target *t, __u64 cookie);
/* The current goroutine's id; on g0/gsignal the id of m.curg; -1 when unknown. */
__s64 gt_goid(void *ctx, const struct gt_target *t, __u64 cookie);

/* Per-goroutine call stack. A frame's key is g.stack.hi - SP at the call: the same at
 * the entry probe (after the prologue) and at the RET, and unchanged when Go copies the
 * stack to grow it. Returns the depth of the frame (1 = outermost traced call), or 0
 * when no state could be kept; with GT_DEPTH_SKIP inside a root call entered while
 * OVER (call-graph mode: the ring buffer over half full), which is dropped whole. */
__u64 gt_call_enter(void *ctx, const struct gt_target *t, __u64 cookie, __u64 now,
		    __u64 over, __u64 oncpu);
/* At a RET: finds the frame of this call (dropping deeper frames abandoned by panics),
 * marks it returned and stores its entry time and depth (GT_DEPTH_SKIP as at its
 * entry). Returns 0, or -1 when the
 * entry was never seen (counted), or 1 at a function that is one RET (its entry is this
 * instruction: no frame, no duration). Several programs at one RET get the same answer. */
long gt_call_return(void *ctx, const struct gt_target *t, __u64 cookie, __u64 now,
		    __u64 *entry_ns, __u64 *depth, __u64 *oncpu_out, __u64 oncpu);
/* The current goroutine's traced-call depth (0 when it has none). */
__u64 gt_call_depth(void *ctx, const struct gt_target *t, __u64 cookie);
/* The goroutine is exiting (runtime.goexit1): free its state. */
void gt_goroutine_exit(void *ctx, const struct gt_target *t, __u64 cookie, __u64 oncpu);

/* On-CPU time (gt_oncpu.c), with `oncpu`; ONCPU above (se.sum_exec_runtime's offset in
 * task_struct, 0: unused) says the script uses it, and then
 * frames keep the goroutine's on-CPU ns at their entry and a return stores the
 * difference in *ONCPU_OUT. Hidden programs: runtime.execute (the thread now runs gp),
 * runtime.schedule (it runs none) and the sched_switch raw tracepoint (a thread leaves
 * or takes a CPU: PID_OFF and RT_OFF are the offsets of pid and se.sum_exec_runtime in
 * struct task_struct). */
/* Counts one event of enum gt_stat (gt_goroutine.c's map gt_stats, -v). */
void gt_stat_inc(__u32 which);
void gt_oncpu_execute(void *ctx, const struct gt_target *t, __u32 rt_off);
void gt_oncpu_schedule(__u32 rt_off);
void gt_oncpu_switch(void *ctx, __u32 pid_off, __u32 rt_off, __u64 now);
/* GOID's on-CPU ns so far, up to now (it runs on this thread); starts its count. */
__u64 gt_oncpu_now(__s64 goid, __u32 rt_off);
void gt_oncpu_forget(__s64 goid);

/* ustack of a perf-event sample of process PID unwound with the SP-delta table TAB of
 * NTAB rows (gt_unwind.c): its id | GT_UNWIND_ID in STACKS (DEPTH u64 a value), or -1
 * (not the process, map full, the user regs of a sample in the kernel unreadable): then
 * the kernel's walk. T: where to restart
 * when the PC is not in Go code. */
__s64 gt_unwind(void *ctx, void *tab, __u32 ntab, void *scratch, void *stacks, __u32 depth,
		__u64 pid, const struct gt_uwtarget *t);

/* Counts a failed update ERR (0: none) of map ID in the gt_mapfull array (per map:
 * updates dropped as full, other failures, the last one's errno). Codegen defines it as a
 * global BPF function: the verifier checks it once, not on every path through an update
 * (a while loop of 1,000 updates otherwise forks past the verifier's 1M-insn limit). */
int gt_map_failed(__u32 id, long err);
/* Aggregations (gt_maps.c); ID is the map's index. */
void gt_agg_add(void *map, void *key, __s64 v, __u32 id);
void gt_agg_avg(void *map, void *key, __s64 v, __u32 id);
void gt_agg_minmax(void *map, void *key, __s64 v, int is_max, __u32 id);
/* AGG: enum gt_tseries_agg; BUCKET: the bucket index slot at the end of KEY */
void gt_agg_tseries(void *map, void *key, __u64 *bucket, __s64 v, __u64 now, __u64 interval,
		    __u64 num, int agg, int is_signed, __u32 id);
__u64 gt_hist_bucket(__s64 v);
__u64 gt_hist_bucket_k(__s64 v, __u64 k);
__u64 gt_lhist_bucket(__s64 v, __s64 min, __s64 max, __s64 step);
__u64 gt_map_len(void *map);
/* how: GT_AGG_READ_*; ncpus: possible CPUs (gt_config) */
__s64 gt_agg_read(void *map, void *key, __u32 how, __u32 ncpus);
__u64 gt_streq(const char *a, const char *b, __u32 n);
__u64 gt_strcontains(const char *hay, __u32 hsz, const char *needle, __u32 nsz);
__s64 gt_strstr(const char *hay, __u32 hsz, const char *needle, __u32 nsz);
__u64 gt_strlen(const char *s, __u32 n);
__u64 gt_memeq(const char *a, const char *b, __u32 n);
__u64 gt_bufeq(const char *a, const char *b, __u32 asz, __u32 bsz);

/* A Go map's entries for print(): the key and value addresses of up to m->max of them
 * into OUT (2 * GT_GOMAP_MAX words, key then value, 0 past those found); returns how
 * many were found. */
__u32 gt_go_map_walk(const struct gt_gomap *m, __u64 map, __u64 *out);
__u64 gt_go_map_find(const struct gt_gomap *m, __u64 map, __u32 find, __u64 kint, __u32 ksize,
		     const __u8 *key, __u32 klen, __u32 indirect);

#endif
