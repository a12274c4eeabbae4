/* providers: the table (bpftrace 0.17's PROBE_LIST, plus go:). */
#include "sema/providers.h"

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
	{"kprobe", {"k"}, PV_LATER},
	{"kretprobe", {"kr"}, PV_LATER},
	{"kfunc", {"f", "fentry"}, PV_LATER},
	{"kretfunc", {"fr", "fexit"}, PV_LATER},
	{"usdt", {"U"}, PV_LATER},
	{"software", {"s"}, PV_LATER},
	{"hardware", {"h"}, PV_LATER},
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
