/* providers: the table (bpftrace 0.17's PROBE_LIST, plus go:). */
#include "sema/providers.h"

#include <linux/perf_event.h>
#include <string.h>

#include "common/util.h"

static const struct provider providers[] = {
	{"BEGIN", {"begin"}, PV_BEGIN},
	{"END", {"end"}, PV_END},
	{"go", {NULL}, PV_GO},
	{"uprobe", {"u"}, PV_UPROBE},
	{"uretprobe", {"ur"}, PV_URETPROBE},
	{"interval", {"i"}, PV_INTERVAL},
	{"profile", {"p"}, PV_PROFILE},
	{"tracepoint", {"t"}, PV_TRACEPOINT},
	{"kprobe", {"k"}, PV_KPROBE},
	{"kretprobe", {"kr"}, PV_KRETPROBE},
	{"kfunc", {"f", "fentry"}, PV_KFUNC},
	{"kretfunc", {"fr", "fexit"}, PV_KRETFUNC},
	{"usdt", {"U"}, PV_LATER},
	{"software", {"s"}, PV_SOFTWARE},
	{"hardware", {"h"}, PV_HARDWARE},
	{"watchpoint", {"w"}, PV_LATER},
	{"asyncwatchpoint", {"aw"}, PV_LATER},
	{"rawtracepoint", {"rt"}, PV_LATER},
	{"iter", {"it"}, PV_LATER},
};

const struct provider *provider_find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(providers); i++) {
		const struct provider *p = &providers[i];
		if (!strcmp(p->name, name) || (p->alias[0] && !strcmp(p->alias[0], name)) ||
		    (p->alias[1] && !strcmp(p->alias[1], name)))
			return p;
	}
	return NULL;
}

static const struct perf_event_name software[] = {
	{"cpu-clock", "cpu", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 1000000},
	{"task-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 1000000},
	{"page-faults", "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 100},
	{"context-switches", "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, 1000},
	{"cpu-migrations", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, 1},
	{"minor-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, 100},
	{"major-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, 1},
	{"alignment-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS, 1},
	{"emulation-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS, 1},
	{"dummy", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, 1},
	{"bpf-output", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT, 1},
	{NULL, NULL, 0, 0, 0},
};

static const struct perf_event_name hardware[] = {
	{"cpu-cycles", "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 1000000},
	{"instructions", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 1000000},
	{"cache-references", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, 1000000},
	{"cache-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, 1000000},
	{"branch-instructions", "branches", PERF_TYPE_HARDWARE,
	 PERF_COUNT_HW_BRANCH_INSTRUCTIONS, 100000},
	{"branch-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, 100000},
	{"bus-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES, 100000},
	{"frontend-stalls", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND,
	 1000000},
	{"backend-stalls", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND,
	 1000000},
	{"ref-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, 1000000},
	{NULL, NULL, 0, 0, 0},
};

const struct perf_event_name *provider_perf_events(enum provider_id pv)
{
	return pv == PV_HARDWARE ? hardware : software;
}

const struct perf_event_name *provider_perf_event(enum provider_id pv, const char *name)
{
	for (const struct perf_event_name *e = provider_perf_events(pv); e->name; e++)
		if (!strcmp(e->name, name) || (e->alias && !strcmp(e->alias, name)))
			return e;
	return NULL;
}
