/* features: what this kernel lets gotrace do, found by trying it (never by version
 * numbers alone): probe types and the attach path of go: probes. The attach code and
 * --info (src/info.c) ask rt_features_get(). */
#include "runtime/rt_priv.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

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
	struct btf *vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux)
		return false;
	int id = btf__find_by_name_kind(vmlinux, "bpf_fentry_test1", BTF_KIND_FUNC);
	if (id < 0)
		id = btf__find_by_name_kind(vmlinux, "do_nanosleep", BTF_KIND_FUNC);
	btf__free(vmlinux);
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

const struct rt_features *rt_features_get(void)
{
	static struct rt_features f;
	static bool done;
	if (done)
		return &f;
	done = true;
	libbpf_print_fn_t old = libbpf_set_print(NULL); /* probes fail on purpose: be quiet */
	f.uprobe_multi = probe_uprobe_multi();
	f.uprobe_pmu = pmu_exists("uprobe");
	f.kprobe_pmu = pmu_exists("kprobe");
	f.perf_cpu_clock = probe_perf_cpu_clock();
	f.ringbuf = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) == 1;
	f.btf = access("/sys/kernel/btf/vmlinux", R_OK) == 0;
	f.fentry = probe_fentry();
	f.raw_tp = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_RAW_TRACEPOINT, NULL) == 1;
	f.tracepoint = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_TRACEPOINT, NULL) == 1;
	libbpf_set_print(old);
	return &f;
}
