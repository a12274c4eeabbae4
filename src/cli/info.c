/* info: --info, what gotrace finds on this machine: the kernel, the build, BPF helpers,
 * map and probe types (each tried, see runtime/attach/features.c) and how go: probes attach. */
#include "info.h"

#include <bpf/libbpf.h>
#include <capstone/capstone.h>
#include <linux/bpf.h>
#include <sys/utsname.h>

#include "arch/arch.h"
#include "binfo/binfo.h"
#include "common/util.h"
#include "runtime/rt.h"

static const char *yes(bool b)
{
	return b ? "yes" : "no";
}

void info_report(FILE *out, const char *version)
{
	const struct rt_features *f = rt_features_get();
	struct utsname u;
	uname(&u);
	fprintf(out, "System\n  OS: %s %s %s\n  Arch: %s\n\n", u.sysname, u.release, u.version,
		u.machine);
	int cmaj, cmin;
	cs_version(&cmaj, &cmin);
	fprintf(out, "Build\n  version: %s\n  LLVM: %d\n  libbpf: %u.%u\n  capstone: %d.%d\n\n",
		version, GT_LLVM_MAJOR, libbpf_major_version(), libbpf_minor_version(), cmaj,
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

	int tp = binfo_kernel_tp_offset();
	fprintf(out, "\nKernel features\n  btf: %s\n  task_struct.%s: ", yes(f->btf),
		arch_kernel_tp_member);
	if (tp > 0)
		fprintf(out, "offset %d\n", tp);
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
		"\nProbe types\n  uprobe: %s\n  uprobe_multi: %s\n  perf_uprobe_cookie: %s\n"
		"  tracefs uprobe_events: %s\n"
		"  tracepoint: %s\n  perf_event (profile, interval): %s\n  raw_tracepoint: %s\n"
		"  kprobe: %s\n  kprobe_multi: %s\n  kfunc: %s\n\n",
		yes(f->uprobe_pmu), yes(f->uprobe_multi), yes(f->perf_uprobe_cookie), yes(f->tracefs),
		yes(f->tracepoint), yes(f->perf_cpu_clock), yes(f->raw_tp), yes(f->kprobe_pmu),
		yes(f->kprobe_multi), yes(f->fentry));
	fprintf(out, "Stacks\n  uprobe at %s keeps the caller: %s\n", arch_frame_push_text,
		yes(rt_uprobe_stack_has_caller(true)));
	const char *lbr;
	if (rt_lbr_probe(&lbr))
		fprintf(out, "  lbr() (last branch records): no, %s\n\n", lbr);
	else
		fputs("  lbr() (last branch records): yes\n\n", out);
	const char *why;
	rt_attach_path(&why);
	fprintf(out, "Attach path of go: probes\n  %s\n", why);
}
