/* lbr: the hardware events that keep each CPU's Last Branch Record running while a
 * script calls lbr(). bpf_get_branch_snapshot() (Linux 5.16) only copies what the CPU
 * records while a perf event with a branch stack is scheduled on it; without such an
 * event, or without the hardware (no PMU, as in a virtual machine; a PMU without LBR),
 * it returns -ENOENT. So the events are opened before the probes attach, and a machine
 * that cannot open them is refused up front, with what is missing. */
#include "runtime/attach/attach.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/diag.h"
#include "common/util.h"

struct rt_lbr {
	int *fds;
	int n;
};

/* A cycles counter that records kernel branches of every kind on CPU: the fd or -errno.
 * Counting only: the branch stack is what is wanted, not samples. */
static int lbr_open_cpu(int cpu)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_HARDWARE,
		.size = sizeof(a),
		.config = PERF_COUNT_HW_CPU_CYCLES,
		.sample_type = PERF_SAMPLE_BRANCH_STACK,
		.branch_sample_type = PERF_SAMPLE_BRANCH_KERNEL | PERF_SAMPLE_BRANCH_ANY,
	};
	int fd = (int)syscall(__NR_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

bool rt_lbr_wanted(const struct gt_plan *plan)
{
	for (int i = 0; i < plan->nevents; i++)
		if (plan->events[i].kind == PLAN_EV_LBR)
			return true;
	return false;
}

int rt_lbr_probe(const char **why)
{
	static int known = 1; /* 1: not probed yet */
	static const char *what;
	if (known == 1) {
		libbpf_print_fn_t old = libbpf_set_print(NULL);
		bool helper = libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE,
						      BPF_FUNC_get_branch_snapshot, NULL) == 1;
		libbpf_set_print(old);
		int fd = helper ? lbr_open_cpu(0) : -ENOSYS;
		known = fd < 0 ? fd : 0;
		if (fd >= 0)
			close(fd);
		if (!helper)
			what = "no bpf_get_branch_snapshot() (Linux 5.16)";
		else if (fd == -ENOENT || fd == -ENODEV)
			what = "no hardware PMU (a cycles event cannot be opened; a virtual machine "
			       "usually has none)";
		else if (fd == -EOPNOTSUPP || fd == -EINVAL)
			what = "no branch stacks on this CPU's PMU (no Intel LBR)";
		else if (fd < 0)
			what = "no cycles event with a branch stack";
		else
			what = "yes";
	}
	if (why)
		*why = what;
	return known;
}

/* GT_LBR_WITHOUT_PMU=1: run lbr() where nothing records branches (each call then prints
 * why it has none): how the tests load and run it on machines without an LBR. */
static bool lbr_forced(void)
{
	return env_flag("GT_LBR_WITHOUT_PMU");
}

int rt_lbr_check(void)
{
	const char *why;
	int err = rt_lbr_probe(&why);
	if (!err || lbr_forced())
		return 0;
	if (err == -ENOSYS)
		diag_fatal("lbr() needs bpf_get_branch_snapshot(), which this kernel lacks: Linux "
			   "5.16 or later");
	else
		diag_fatal("lbr() needs the CPU's last branch records, and this machine has %s "
			   "(perf_event_open: %s)", why, strerror(-err));
	return -ENOTSUP;
}

int rt_lbr__open(struct rt_lbr **out)
{
	int ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0)
		return ncpus ? ncpus : -ENODEV;
	struct rt_lbr *l = xcalloc(1, sizeof(*l));
	l->fds = xmalloc((size_t)ncpus * sizeof(*l->fds));
	int err = 0, opened = 0;
	for (int cpu = 0; cpu < ncpus; cpu++) {
		int fd = lbr_open_cpu(cpu);
		l->fds[l->n++] = fd;
		if (fd >= 0)
			opened++;
		else if (fd != -ENODEV && !err) /* ENODEV: a possible CPU that is offline */
			err = fd;
	}
	if ((err || !opened) && !lbr_forced()) {
		diag_fatal("lbr(): cannot record branches on every CPU: %s",
			   strerror(err ? -err : ENODEV));
		rt_lbr__close(l);
		return err ? err : -ENODEV;
	}
	*out = l;
	return 0;
}

void rt_lbr__close(struct rt_lbr *l)
{
	if (!l)
		return;
	for (int i = 0; i < l->n; i++)
		if (l->fds[i] >= 0)
			close(l->fds[i]);
	free(l->fds);
	free(l);
}
