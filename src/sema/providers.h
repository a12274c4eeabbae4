/* providers: probe types by name, with bpftrace's short forms (i:, t:, p: ...) and
 * the spellings of current bpftrace (begin, end, fentry, fexit). */
#ifndef GT_PROVIDERS_H
#define GT_PROVIDERS_H

enum provider_id {
	PV_BEGIN,
	PV_END,
	PV_GO,
	PV_UPROBE,
	PV_KPROBE,
	PV_KRETPROBE,
	PV_KFUNC,
	PV_KRETFUNC,
	PV_URETPROBE,
	PV_INTERVAL,
	PV_PROFILE,
	PV_TRACEPOINT,
	PV_SOFTWARE,
	PV_HARDWARE,
	PV_LATER, /* a bpftrace probe type gotrace does not support yet */
};

struct provider {
	const char *name; /* canonical: what `probe` prints */
	const char *alias[2];
	enum provider_id id;
};

/* The provider NAME spells, or NULL. */
const struct provider *provider_find(const char *name);

/* software: and hardware: events (bpftrace's names and aliases): perf type and config. */
struct perf_event_name {
	const char *name, *alias;
	unsigned type;
	unsigned long long config;
	unsigned long long default_count;
};
const struct perf_event_name *provider_perf_event(enum provider_id pv, const char *name);
/* The events of PV, for -l: a NULL-terminated table. */
const struct perf_event_name *provider_perf_events(enum provider_id pv);

#endif
