/* profile: maps keyed by stacks written as profiles, -f folded / -f pprof. profout.c
 * turns the maps (output/) into samples, its stacks named by the run's symbolizer
 * (rt_profile_*); the writer (prof_*: profile.c, with pb.c's wire format) only encodes:
 * self-contained, it keeps no state between calls and prints nothing (errors are
 * returned). Above output/; run/ and cli/ use it. */
#ifndef GT_RT_PROFILE_H
#define GT_RT_PROFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct gt_plan;
struct rt_maps;

/* ---- maps keyed by stacks as profiles (profout.c) ---- */

/* Whether some map of PLAN has a ustack / kstack key; whether map MAP_ID does. */
bool rt_profile_has_stacks(const struct gt_plan *plan);
bool rt_profile_map(const struct gt_plan *plan, int map_id);
/* Every map keyed by a stack as one profile into OUT: gzipped profile.proto (PPROF) or
 * folded stacks. 0 or a negative errno. */
int rt_profile_write(struct rt_maps *ms, const struct gt_plan *plan, bool pprof, FILE *out,
		     int64_t duration_ns);

/* ---- the writer (profile.c): stack-keyed counts (@[ustack] = count()) as a pprof
 * profile or as folded stacks for flame graphs ---- */

/* One frame of a sample's stack, leaf first. Inlined frames are expanded: consecutive
 * frames with the same addr and inlined=true before the frame they were inlined into
 * (pprof: one Location with several Lines, the last Line the caller). */
struct prof_frame {
	uint64_t addr;    /* the PC (as the process saw it; 0 when unknown) */
	const char *func; /* "main.add" (NULL: unknown, printed as 0xADDR) */
	const char *file; /* full source path, or NULL */
	int line;         /* 0 when unknown */
	bool inlined;     /* this frame was inlined into the next one (same addr) */
	int mapping;      /* index into the mappings passed, -1: none (kernel, unknown) */
};

struct prof_label {
	const char *key;
	const char *str;
	int64_t num;
	bool is_num;
};

struct prof_sample {
	const struct prof_frame *frames;
	int nframes;   /* leaf first */
	int64_t value; /* the count */
	const struct prof_label *labels;
	int nlabels; /* e.g. {"goid", NULL, 18, true}, {"comm", "app", 0, false} */
};

struct prof_mapping {
	uint64_t start, limit, offset;
	const char *file;
	const char *build_id;
};

struct prof_meta {
	const char *sample_type, *sample_unit; /* "samples", "count" */
	const char *period_type, *period_unit; /* "cpu", "nanoseconds"; NULL: none */
	int64_t period;                        /* e.g. 1e9/99 for profile:hz:99; 0: none */
	int64_t time_nanos, duration_nanos;    /* 0: none */
};

/* The gzipped profile.proto that `go tool pprof` reads. 0 or a negative errno (-EINVAL:
 * a mapping index out of range, a label without key or value, ...; -ENOMEM; a write
 * error's). proto3 cannot tell a zero from an absent field: a numeric label of 0 is
 * dropped by pprof. The caller's strings are referenced, not copied, during the call. */
int prof_write_pprof(FILE *f, const struct prof_meta *m, const struct prof_sample *s, int n,
		     const struct prof_mapping *maps, int nmaps);

/* Brendan Gregg's folded stacks: "root;...;leaf count\n" per sample (frames joined
 * root first; inlined frames are frames; a frame with no func is 0xADDR; labels, if any,
 * become the root-most frames as "key=value" so that flame graphs split by them).
 * Samples with the same folded text are merged (counts summed), output sorted by text.
 * Characters ';' and '\n' in names are replaced (by ':' and ' '). A sample with neither
 * frames nor labels is "[unknown]". 0 or a negative errno. */
int prof_write_folded(FILE *f, const struct prof_sample *s, int n);

#endif
