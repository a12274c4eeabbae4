/* features: what this kernel lets gotrace do, found by trying it (never by version
 * numbers alone): probe types and the attach path of go: probes. The attach code and
 * --info (src/cli/info.c) ask rt_features_get(); a run probes only what it needs
 * (rt_features_probe). */
#include "runtime/attach/attach.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "arch/arch.h"
#include "common/diag.h"
#include "common/kbtf.h"
#include "common/util.h"

/* Loads `r0 = 0; exit` as TYPE with EXPECTED attach type: its fd or -errno. */
static int load_trivial(enum bpf_prog_type type, enum bpf_attach_type expected)
{
	struct bpf_insn insns[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = expected);
	int fd = bpf_prog_load(type, "gt_probe", "GPL", insns, ARRAY_SIZE(insns), &o);
	return fd < 0 ? -errno : fd;
}

/* uprobe_multi: a link on "/" fails with EBADF (not a regular file) where the kernel
 * knows the attach type, with EINVAL where it does not (libbpf probes it the same way). */
static bool probe_uprobe_multi(void)
{
	int prog = load_trivial(BPF_PROG_TYPE_KPROBE, (enum bpf_attach_type)RT_ATTACH_UPROBE_MULTI);
	if (prog < 0)
		return false;
	uint64_t off = 0, cookie = 0;
	int fd = rt_uprobe_multi_link_create(prog, "/", &off, &cookie, 1, 0, false);
	if (fd >= 0)
		close(fd);
	close(prog);
	return fd == -EBADF;
}

/* fentry (kfunc:) on a kernel function from vmlinux BTF: some kernels refuse it even
 * with the config for it (EPERM on this machine kind). */
static bool probe_fentry(void)
{
	const struct btf *vmlinux = kbtf_vmlinux();
	if (!vmlinux)
		return false;
	int id = btf__find_by_name_kind(vmlinux, "bpf_fentry_test1", BTF_KIND_FUNC);
	if (id < 0)
		id = btf__find_by_name_kind(vmlinux, "do_nanosleep", BTF_KIND_FUNC);
	if (id < 0)
		return false;
	struct bpf_insn insns[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = BPF_TRACE_FENTRY,
		    .attach_btf_id = (__u32)id);
	int fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "gt_probe", "GPL", insns, ARRAY_SIZE(insns),
			       &o);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* kprobe_multi (5.18, with fprobe): a link on a name no kernel has fails with ESRCH or
 * ENOENT where the kernel looks names up; EINVAL where it does not know the attach type,
 * EOPNOTSUPP where it was built without fprobe. */
static bool probe_kprobe_multi(void)
{
	int prog = load_trivial(BPF_PROG_TYPE_KPROBE, BPF_TRACE_KPROBE_MULTI);
	if (prog < 0)
		return false;
	const char *syms[] = {"gt_no_such_kernel_function"};
	__u64 cookie = 0;
	LIBBPF_OPTS(bpf_link_create_opts, o, .kprobe_multi.syms = syms, .kprobe_multi.cnt = 1,
		    .kprobe_multi.cookies = &cookie);
	int fd = bpf_link_create(prog, 0, BPF_TRACE_KPROBE_MULTI, &o);
	int err = fd < 0 ? -errno : 0;
	if (fd >= 0)
		close(fd);
	close(prog);
	return err == -ESRCH || err == -ENOENT;
}

static bool pmu_exists(const char *name)
{
	char path[128];
	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", name);
	return access(path, R_OK) == 0;
}

/* A software cpu-clock perf event, as profile: and interval: probes open. */
static bool probe_perf_cpu_clock(void)
{
	struct perf_event_attr a = {.type = PERF_TYPE_SOFTWARE, .size = sizeof(a),
				    .config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = 1000000,
				    .disabled = 1};
	int fd = (int)syscall(__NR_perf_event_open, &a, -1, 0, -1, 0);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* The uprobe or kprobe PMU (NAME): its perf type (-1: none) and the config bit that makes
 * a return probe. */
static void read_probe_pmu(const char *name, int *type, int *ret_bit)
{
	char path[128];
	*type = -1;
	*ret_bit = 0;
	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", name);
	FILE *fp = fopen(path, "r");
	if (!fp)
		return;
	if (fscanf(fp, "%d", type) != 1)
		*type = -1;
	fclose(fp);
	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/format/retprobe", name);
	fp = fopen(path, "r");
	if (fp) {
		if (fscanf(fp, "config:%d", ret_bit) != 1)
			*ret_bit = 0; /* every kernel so far says config:0 */
		fclose(fp);
	}
}

/* BPF cookies on perf-event uprobes (kernel 5.15): asked of the verifier, whether a
 * kprobe-type program may call bpf_get_attach_cookie, which came in the same release as
 * BPF_PERF_EVENT links and their cookie. Making a real uprobe perf event and linking it
 * told the same for ~0.1 s: its destruction waits for grace periods, and every run off
 * the uprobe_multi path paid it. */
static bool probe_perf_uprobe_cookie(const struct rt_features *f)
{
	if (f->uprobe_type < 0 && !f->tracefs)
		return false;
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_get_attach_cookie, NULL) == 1;
}

/* The code the stack-caller probe below puts a uprobe on: arch_frame_leaf (arch.h). */

/* The file offset of ADDR in the mapping of /proc/self/maps that holds it, or -1. */
static long long self_file_offset(uintptr_t addr)
{
	FILE *fp = fopen("/proc/self/maps", "r");
	if (!fp)
		return -1;
	char line[512];
	long long off = -1;
	while (off < 0 && fgets(line, sizeof(line), fp)) {
		unsigned long lo, hi, pgoff;
		if (sscanf(line, "%lx-%lx %*s %lx", &lo, &hi, &pgoff) == 3 && addr >= lo && addr < hi)
			off = (long long)(addr - lo + pgoff);
	}
	fclose(fp);
	return off;
}

/* Whether a user stack taken by a uprobe on `push %rbp` holds the probed function's
 * caller (the return address on top of the stack) as its second frame: Linux 6.11's
 * "perf,x86: avoid missing caller address in stack traces captured in uprobe", which
 * distributions backport (Debian's 6.1.192 has it). Tried for real: a uprobe on
 * arch_frame_leaf in this process, a program that keeps bpf_get_stack's first frames. */
static bool probe_uprobe_stack_caller(bool try_anyway)
{
	struct utsname u;
	int major = 0, minor = 0;
	if (!try_anyway && !uname(&u) && sscanf(u.release, "%d.%d", &major, &minor) == 2 &&
	    (major > 6 || (major == 6 && minor >= 11)))
		return true; /* upstream since 6.11: skip the ~0.1 s of a uprobe's teardown */
	const struct rt_features *f = rt_features_probe(RT_FEAT_PERF);
	long long off = self_file_offset((uintptr_t)arch_frame_leaf);
	if (f->uprobe_type < 0 || off < 0)
		return false;
	int map = bpf_map_create(BPF_MAP_TYPE_ARRAY, "gt_probe", 4, 32, 1, NULL);
	if (map < 0)
		return false;
	/* r6 = ctx; bpf_get_stack(ctx, fp-32, 32, BPF_F_USER_STACK);
	 * *(u32 *)(fp-36) = 0; bpf_map_update_elem(map, fp-36, fp-32, 0); return 0 */
	struct bpf_insn insns[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_6, .src_reg = BPF_REG_1},
		{.code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_2, .src_reg = BPF_REG_10},
		{.code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_2, .imm = -32},
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_3, .imm = 32},
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_4, .imm = BPF_F_USER_STACK},
		{.code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_get_stack},
		{.code = BPF_ST | BPF_MEM | BPF_W, .dst_reg = BPF_REG_10, .off = -36, .imm = 0},
		{.code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = BPF_REG_1,
		 .src_reg = BPF_PSEUDO_MAP_FD, .imm = map},
		{0},
		{.code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_2, .src_reg = BPF_REG_10},
		{.code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_2, .imm = -36},
		{.code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_3, .src_reg = BPF_REG_10},
		{.code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_3, .imm = -32},
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_4, .imm = 0},
		{.code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_map_update_elem},
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	bool yes = false;
	int prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "gt_probe", "GPL", insns, ARRAY_SIZE(insns),
				 NULL);
	int pfd = prog < 0 ? -1 : rt_perf_uprobe_open(f, "/proc/self/exe", (uint64_t)off, getpid(), false);
	if (pfd >= 0 && !ioctl(pfd, PERF_EVENT_IOC_SET_BPF, prog) &&
	    !ioctl(pfd, PERF_EVENT_IOC_ENABLE, 0)) {
		arch_frame_outer();
		uint64_t frames[4] = {0};
		uint32_t key = 0;
		yes = !bpf_map_lookup_elem(map, &key, frames) &&
		      frames[0] == (uintptr_t)arch_frame_leaf && frames[1] == (uintptr_t)arch_frame_ret;
	}
	if (pfd >= 0)
		close(pfd);
	if (prog >= 0)
		close(prog);
	close(map);
	return yes;
}

bool rt_uprobe_stack_has_caller(bool try_anyway)
{
	static int known; /* 1 yes, -1 no */
	if (!known || try_anyway) {
		libbpf_print_fn_t old = libbpf_set_print(NULL);
		known = probe_uprobe_stack_caller(try_anyway) ? 1 : -1;
		libbpf_set_print(old);
	}
	return known > 0;
}

/* GT_HIDE_FEATURES: a comma-separated list of features to report absent. */
static void hide_features(struct rt_features *f)
{
	const char *env = getenv("GT_HIDE_FEATURES");
	if (!env || !*env)
		return;
	static const struct {
		const char *name;
		size_t off;
	} names[] = {
		{"uprobe_multi", offsetof(struct rt_features, uprobe_multi)},
		{"perf_uprobe_cookie", offsetof(struct rt_features, perf_uprobe_cookie)},
		{"tracefs", offsetof(struct rt_features, tracefs)},
		{"ringbuf", offsetof(struct rt_features, ringbuf)},
		{"kprobe_multi", offsetof(struct rt_features, kprobe_multi)},
	};
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		size_t n = strlen(names[i].name);
		for (const char *p = env; (p = strstr(p, names[i].name)); p += n)
			if ((p == env || p[-1] == ',') && (p[n] == 0 || p[n] == ','))
				*(bool *)((char *)f + names[i].off) = false;
	}
}

enum rt_attach_path rt_attach_path(const char **why)
{
	const struct rt_features *f = rt_features_probe(RT_FEAT_MULTI);
	bool forced = env_flag("GT_NO_UPROBE_MULTI");
	enum rt_attach_path path = RT_ATTACH_MULTI;
	const char *w = "uprobe_multi: one link per program, all its sites at once";
	if (!f->uprobe_multi || forced) {
		/* only now: what the other paths need */
		f = rt_features_probe(RT_FEAT_PERF);
		path = f->tracefs ? RT_ATTACH_TRACEFS : RT_ATTACH_PERF;
		if (!f->perf_uprobe_cookie || (!f->tracefs && f->uprobe_type < 0))
			path = RT_ATTACH_NONE;
		if (path == RT_ATTACH_TRACEFS)
			w = forced ? "tracefs uprobe events: one per program, all its sites "
				     "(GT_NO_UPROBE_MULTI=1)"
				   : "tracefs uprobe events: one per program, all its sites (no "
				     "uprobe_multi: kernel before 6.6)";
		else if (path == RT_ATTACH_PERF)
			w = forced ? "perf-event uprobes: one per site (GT_NO_UPROBE_MULTI=1, "
				     "no tracefs)"
				   : "perf-event uprobes: one per site (no uprobe_multi: kernel "
				     "before 6.6; no tracefs)";
		else
			w = f->uprobe_type < 0
				    ? "none: this kernel has no uprobes (CONFIG_UPROBE_EVENTS)"
				    : "none: no BPF cookies on perf-event uprobes (kernel before 5.15) "
				      "and no uprobe_multi (6.6)";
	}
	if (why)
		*why = w;
	return path;
}

int rt_features_check(const struct gt_plan *plan, bool attach)
{
	const struct rt_features *f = rt_features_probe(RT_FEAT_RINGBUF);
	bool uprobes = false;
	for (int i = 0; i < plan->nprogs; i++)
		uprobes |= plan->progs[i].kind == PLAN_PROG_UPROBE && plan->progs[i].site_count > 0;
	struct strbuf miss = {0};
	int min_minor = 0; /* 5.x */
	if (!f->ringbuf) {
		strbuf_puts(&miss, "BPF ring buffers");
		min_minor = 8;
	}
	if (attach && uprobes && rt_attach_path(NULL) == RT_ATTACH_NONE) {
		if (f->uprobe_type < 0) {
			strbuf_printf(&miss, "%suprobes (CONFIG_UPROBE_EVENTS)", miss.len ? " and " : "");
		} else {
			strbuf_printf(&miss, "%sBPF cookies on perf-event uprobes", miss.len ? " and " : "");
			min_minor = 15;
		}
	}
	/* first: no kernel gives what the hardware lacks */
	if (rt_lbr_wanted(plan) && rt_lbr_check())
		return -ENOTSUP;
	bool fentry = false;
	for (int i = 0; i < plan->nprogs; i++)
		fentry |= plan->progs[i].kind == PLAN_PROG_FENTRY && !plan->progs[i].bpf_prog_id;
	if (fentry && !rt_features_probe(RT_FEAT_REST)->fentry) {
		diag_fatal("this kernel refuses fentry programs on its functions: kfunc: and "
			   "kretfunc: probes cannot attach (kprobe: and kretprobe: may)");
		return -ENOTSUP;
	}
	if (!miss.len)
		return 0;
	struct utsname u;
	uname(&u);
	if (min_minor)
		diag_fatal("this kernel (%s) has no %s: gotrace needs Linux 5.%d or later", u.release,
			   miss.buf, min_minor);
	else
		diag_fatal("this kernel (%s) has no %s: go: and uprobe: probes cannot attach", u.release,
			   miss.buf);
	strbuf_free(&miss);
	return -ENOTSUP;
}

const struct rt_features *rt_features_probe(unsigned what)
{
	static struct rt_features f;
	static unsigned probed;
	what &= ~probed;
	if (!what)
		return &f;
	libbpf_print_fn_t old = libbpf_set_print(NULL); /* probes fail on purpose: be quiet */
	if (what & RT_FEAT_MULTI)
		f.uprobe_multi = probe_uprobe_multi();
	if (what & RT_FEAT_PERF) {
		f.uprobe_pmu = pmu_exists("uprobe");
		read_probe_pmu("uprobe", &f.uprobe_type, &f.uprobe_ret_bit);
		f.tracefs = rt_tracefs_usable();
		f.perf_uprobe_cookie = probe_perf_uprobe_cookie(&f);
	}
	if (what & RT_FEAT_RINGBUF)
		f.ringbuf = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) == 1;
	if (what & RT_FEAT_REST) {
		f.kprobe_pmu = pmu_exists("kprobe");
		read_probe_pmu("kprobe", &f.kprobe_type, &f.kprobe_ret_bit);
		f.kprobe_multi = probe_kprobe_multi();
		f.perf_cpu_clock = probe_perf_cpu_clock();
		f.btf = access("/sys/kernel/btf/vmlinux", R_OK) == 0;
		f.fentry = probe_fentry();
		f.raw_tp = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_RAW_TRACEPOINT, NULL) == 1;
		f.tracepoint = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_TRACEPOINT, NULL) == 1;
	}
	hide_features(&f);
	libbpf_set_print(old);
	probed |= what;
	return &f;
}

const struct rt_features *rt_features_get(void)
{
	return rt_features_probe(RT_FEAT_ALL);
}

bool rt_can_read_task_regs(void)
{
	static int known; /* 1 yes, -1 no */
	if (!known)
		known = libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_task_pt_regs, NULL) == 1 &&
				libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT,
							BPF_FUNC_get_current_task_btf, NULL) == 1
			    ? 1
			    : -1;
	return known > 0;
}
