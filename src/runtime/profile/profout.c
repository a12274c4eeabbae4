/* profout: maps keyed by a stack (@[ustack] = count(), @[kstack, ustack, goid] = ...)
 * written as a profile: -f folded (flame graphs) or -f pprof (go tool pprof). Each key is
 * a sample: its stacks' frames (kernel above user, Go's inlined calls expanded), its
 * other key fields as labels, the map's value as the count. */
#include "runtime/profile/profile.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/util.h"
#include "runtime/output/output.h"

#define FRAMES_MAX 512
#define INLINE_MAX 16

struct collect {
	const struct gt_plan *plan;
	const struct plan_map *pm;
	VEC(struct prof_sample) samples;
	VEC(struct prof_mapping) maps;
	VEC(char *) strs; /* freed at the end: label texts */
};

static int mapping_of(struct collect *c, const char *path, uint64_t addr)
{
	if (!path)
		return -1;
	for (int i = 0; i < c->maps.n; i++) {
		struct prof_mapping *m = &c->maps.v[i];
		if (!strcmp(m->file, path)) {
			if (addr < m->start)
				m->start = addr & ~0xfffULL;
			if (addr >= m->limit)
				m->limit = (addr + 0x1000) & ~0xfffULL;
			return i;
		}
	}
	struct prof_mapping m = {addr & ~0xfffULL, (addr + 0x1000) & ~0xfffULL, 0, path, NULL};
	vec_push(&c->maps, m);
	return c->maps.n - 1;
}

/* The frames of the stack field F of KEY, appended to FR. */
static int stack_frames(struct collect *c, const struct plan_arg *f, const uint8_t *key,
			struct prof_frame *fr, int n)
{
	uint64_t addrs[128];
	int na = rt_stack_addrs(f, key + f->offset, addrs, 128);
	for (int i = 0; i < na && n < FRAMES_MAX; i++) {
		struct rt_frame rf[INLINE_MAX];
		int k = rt_stack_frames(f, key + f->offset, addrs[i], i, rf, INLINE_MAX);
		if (k <= 0) {
			fr[n++] = (struct prof_frame){.addr = addrs[i], .mapping = -1};
			continue;
		}
		for (int j = 0; j < k && n < FRAMES_MAX; j++)
			fr[n++] = (struct prof_frame){
				.addr = addrs[i],
				.func = rf[j].func,
				.file = rf[j].file,
				.line = rf[j].line,
				.inlined = rf[j].inlined,
				.mapping = mapping_of(c, rf[j].path, addrs[i]),
			};
	}
	return n;
}

static void add_sample(void *ctx, const uint8_t *key, int64_t value)
{
	struct collect *c = ctx;
	const struct plan_map *pm = c->pm;
	struct prof_frame *fr = xcalloc(FRAMES_MAX, sizeof(*fr));
	struct prof_label *lb = xcalloc((size_t)pm->nkeys + 1, sizeof(*lb));
	int n = 0, nl = 0;
	/* kernel stacks first: their frames are the leaf end of the sample */
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < pm->nkeys; i++) {
			const struct plan_arg *f = &pm->keys[i];
			if (f->kind == PLAN_ARG_STACK &&
			    c->plan->stackmaps[f->stack_map].kernel == (pass == 0))
				n = stack_frames(c, f, key, fr, n);
		}
	for (int i = 0; i < pm->nkeys; i++) {
		const struct plan_arg *f = &pm->keys[i];
		struct prof_label *l = &lb[nl];
		if (f->kind == PLAN_ARG_STACK)
			continue;
		l->key = f->name ? f->name : "key";
		if (f->kind == PLAN_ARG_INT) {
			uint64_t v;
			memcpy(&v, key + f->offset, sizeof(v));
			l->num = (int64_t)v;
			l->is_num = true;
		} else {
			struct strbuf t = {0};
			rt_value_format(&t, c->plan, f, key, false);
			l->str = t.buf ? t.buf : xstrdup("");
			vec_push(&c->strs, (char *)l->str);
		}
		nl++;
	}
	struct prof_sample s = {fr, n, value, lb, nl};
	vec_push(&c->samples, s);
}

static bool keyed_by_stack(const struct plan_map *pm)
{
	for (int i = 0; i < pm->nkeys; i++)
		if (pm->keys[i].kind == PLAN_ARG_STACK)
			return true;
	return false;
}

bool rt_profile_has_stacks(const struct gt_plan *plan)
{
	for (int i = 0; i < plan->nmaps; i++)
		if (keyed_by_stack(&plan->maps[i]))
			return true;
	return false;
}

bool rt_profile_map(const struct gt_plan *plan, int map_id)
{
	return keyed_by_stack(&plan->maps[map_id]);
}

/* profile:hz:N: samples are N per second per CPU, each worth 1e9 / N ns of CPU. */
static int64_t sample_period(const struct gt_plan *plan)
{
	for (int i = 0; i < plan->nprogs; i++)
		if (plan->progs[i].kind == PLAN_PROG_PERF && plan->progs[i].perf_all_cpus)
			return plan->progs[i].perf_freq ? 1000000000 / (int64_t)plan->progs[i].perf_freq
							: (int64_t)plan->progs[i].perf_period_ns;
	return 0;
}

int rt_profile_write(struct rt_maps *ms, const struct gt_plan *plan, bool pprof, FILE *out,
		     int64_t duration_ns)
{
	struct collect c = {.plan = plan};
	int err = 0;
	for (int i = 0; i < plan->nmaps && !err; i++) {
		if (!keyed_by_stack(&plan->maps[i]))
			continue;
		c.pm = &plan->maps[i];
		err = rt_maps__each(ms, i, add_sample, &c);
	}
	if (!err && pprof) {
		int64_t period = sample_period(plan);
		struct prof_meta meta = {
			.sample_type = "samples",
			.sample_unit = "count",
			.period_type = period ? "cpu" : NULL,
			.period_unit = period ? "nanoseconds" : NULL,
			.period = period,
			.time_nanos = (int64_t)time(NULL) * 1000000000,
			.duration_nanos = duration_ns,
		};
		err = prof_write_pprof(out, &meta, c.samples.v, c.samples.n, c.maps.v, c.maps.n);
	} else if (!err) {
		err = prof_write_folded(out, c.samples.v, c.samples.n);
	}
	for (int i = 0; i < c.samples.n; i++) {
		free((void *)c.samples.v[i].frames);
		free((void *)c.samples.v[i].labels);
	}
	for (int i = 0; i < c.strs.n; i++)
		free(c.strs.v[i]);
	vec_free(&c.samples);
	vec_free(&c.maps);
	vec_free(&c.strs);
	return err;
}
