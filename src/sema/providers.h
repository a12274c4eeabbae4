/* providers: probe types by name, with bpftrace's short forms (i:, t:, p: ...) and
 * the spellings of current bpftrace (begin, end, fentry, fexit). */
#ifndef GT_PROVIDERS_H
#define GT_PROVIDERS_H

enum provider_id {
	PV_BEGIN,
	PV_END,
	PV_GO,
	PV_UPROBE,
	PV_URETPROBE,
	PV_INTERVAL,
	PV_PROFILE,
	PV_TRACEPOINT,
	PV_LATER, /* a bpftrace probe type gotrace does not support yet */
};

struct provider {
	const char *name; /* canonical: what `probe` prints */
	const char *alias[2];
	enum provider_id id;
};

/* The provider NAME spells, or NULL. */
const struct provider *provider_find(const char *name);

#endif
