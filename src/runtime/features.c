/* features: what this kernel lets gotrace do, found by trying it (never by version
 * numbers alone): BPF helpers, map types, probe types, and the attach path of go:
 * probes. --info prints the report; the attach code asks rt_features_get(). */
#include "runtime/rt_priv.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <capstone/capstone.h>
#include <errno.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "binfo/binfo.h"
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
	f.fsbase_off = binfo_kernel_fsbase_offset();
	f.fentry = probe_fentry();
	f.raw_tp = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_RAW_TRACEPOINT, NULL) == 1;
	f.tracepoint = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_TRACEPOINT, NULL) == 1;
	libbpf_set_print(old);
	return &f;
}

static const char *yes(bool b)
{
	return b ? "yes" : "no";
}

void rt_features_report(FILE *out, const char *version)
{
	const struct rt_features *f = rt_features_get();
	struct utsname u;
	uname(&u);
	fprintf(out, "System\n  OS: %s %s %s\n  Arch: %s\n\n", u.sysname, u.release, u.version,
		u.machine);
	int cmaj, cmin;
	cs_version(&cmaj, &cmin);
	fprintf(out, "Build\n  version: %s\n  LLVM: %d\n  libbpf: %u.%u\n  capstone: %d.%d\n\n",
		version, RT_LLVM_MAJOR, libbpf_major_version(), libbpf_minor_version(), cmaj,
		cmin);

	static const struct {
		const char *name;
		enum bpf_func_id id;
	} helpers[] = {
		{"probe_read_user", BPF_FUNC_probe_read_user},
		{"probe_read_user_str", BPF_FUNC_probe_read_user_str},
		{"probe_read_kernel", BPF_FUNC_probe_read_kernel},
		{"probe_read_kernel_str", BPF_FUNC_probe_read_kernel_str},
		{"get_current_task", BPF_FUNC_get_current_task},
		{"get_current_cgroup_id", BPF_FUNC_get_current_cgroup_id},
		{"get_stackid", BPF_FUNC_get_stackid},
		{"get_attach_cookie", BPF_FUNC_get_attach_cookie},
		{"ringbuf_reserve", BPF_FUNC_ringbuf_reserve},
		{"send_signal", BPF_FUNC_send_signal},
	};
	fputs("Kernel helpers\n", out);
	for (size_t i = 0; i < ARRAY_SIZE(helpers); i++)
		fprintf(out, "  %s: %s\n", helpers[i].name,
			yes(libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, helpers[i].id, NULL) == 1));

	fprintf(out, "\nKernel features\n  btf: %s\n  task_struct.thread.fsbase: ", yes(f->btf));
	if (f->fsbase_off > 0)
		fprintf(out, "offset %d\n", f->fsbase_off);
	else
		fputs("unknown (goroutine ids from TLS need it)\n", out);

	static const struct {
		const char *name;
		enum bpf_map_type type;
	} maps[] = {
		{"hash", BPF_MAP_TYPE_HASH},
		{"percpu hash", BPF_MAP_TYPE_PERCPU_HASH},
		{"array", BPF_MAP_TYPE_ARRAY},
		{"percpu array", BPF_MAP_TYPE_PERCPU_ARRAY},
		{"stack_trace", BPF_MAP_TYPE_STACK_TRACE},
		{"perf_event_array", BPF_MAP_TYPE_PERF_EVENT_ARRAY},
		{"ringbuf", BPF_MAP_TYPE_RINGBUF},
	};
	fputs("\nMap types\n", out);
	for (size_t i = 0; i < ARRAY_SIZE(maps); i++)
		fprintf(out, "  %s: %s\n", maps[i].name,
			yes(libbpf_probe_bpf_map_type(maps[i].type, NULL) == 1));

	fprintf(out,
		"\nProbe types\n  uprobe: %s\n  uprobe_multi: %s\n  tracepoint: %s\n"
		"  perf_event (profile, interval): %s\n  raw_tracepoint: %s\n  kprobe: %s\n"
		"  kfunc: %s\n\n",
		yes(f->uprobe_pmu), yes(f->uprobe_multi), yes(f->tracepoint), yes(f->perf_cpu_clock),
		yes(f->raw_tp), yes(f->kprobe_pmu), yes(f->fentry));
	fprintf(out, "Attach path of go: probes\n  %s\n",
		f->uprobe_multi ? "uprobe_multi: one link per program, all its sites at once"
		: f->uprobe_pmu ? "uprobe_multi missing: gotrace cannot attach go: probes here yet"
				: "no uprobes in this kernel");
}
