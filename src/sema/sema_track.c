/* sema_track: per-goroutine call stacks. Every function with a :return probe (and,
 * when `depth` is used, every traced function) pushes a frame at its entry and marks
 * it at its RETs; gotrace adds hidden programs where the script has no probe of its
 * own, and one on runtime.goexit1 that frees a goroutine's state when it exits. With
 * `oncpu`, three more follow which goroutine each thread runs and when the thread is
 * on a CPU: runtime.execute, runtime.schedule and the sched_switch tracepoint. */
#include "sema/sema_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "binfo/binfo.h"
#include "common/kbtf.h"

struct tracked {
	struct binfo *bi;
	const struct binfo_func *f;
};

/* A function is one binfo_func wherever it is named, so (f, point) identifies a probe
 * point across targets. */
static uint64_t key_of(const struct binfo_func *f)
{
	return (uint64_t)(uintptr_t)f;
}

static int check_goruntime(struct binfo *bi)
{
	struct binfo_goruntime rt;
	if (binfo_goruntime(bi, &rt) == 0)
		return 0;
	const char *v = binfo_go_version(bi);
	int minor = binfo_go_minor(bi);
	if (minor >= 0 && minor < 17)
		diag_fatal("%s: built with %s: goid, durations and call depth need Go 1.17 or "
			   "later (the register ABI)", binfo_path(bi), v);
	else
		diag_fatal("%s: cannot find goroutines: no DWARF for runtime.g, and Go version %s "
			   "is not in gotrace's table (Go 1.17 to 1.27)",
			   binfo_path(bi), v ? v : "(unknown)");
	return -ENOENT;
}

/* A hidden program at the entry of runtime function NAME of BI, attached at RANK. */
static int add_runtime_hook(struct sema *s, struct binfo *bi, const char *name,
			    enum sema_hidden hidden, enum plan_attach_rank rank, const char *prog,
			    const char *why)
{
	static const struct gt_loc noloc;
	const struct binfo_func *f = binfo_find_func(bi, name);
	if (!f) {
		diag_fatal("%s: no %s: %s", binfo_path(bi), name, why);
		return -ENOENT;
	}
	sema_open_group(s);
	int err = sema_add_func_sites(s, bi, f, GO_ENTRY, 0, noloc, true);
	if (!err && s->sites.n > s->group_site_begin) {
		sema_close_group(s, NULL, PLAN_PROG_UPROBE, bi, GO_ENTRY, hidden, prog);
		s->progs.v[s->progs.n - 1].attach_rank = rank;
	}
	return err;
}

/* oncpu's sched_switch program: one for all targets (its tasks say which threads). A
 * raw tracepoint: the tasks themselves, whose CPU time the kernel has just counted.
 * *PID_OFF, *RT_OFF: the offsets of pid and se.sum_exec_runtime in task_struct. */
static int add_sched_switch(struct sema *s, int *pid_off, int *rt_off)
{
	long pid = kbtf_offsetof("task_struct", "pid");
	long rt = kbtf_offsetof("task_struct", "se.sum_exec_runtime");
	if (pid <= 0 || rt <= 0) {
		diag_fatal("oncpu needs the kernel's BTF (/sys/kernel/btf/vmlinux) for "
			   "task_struct's pid and se.sum_exec_runtime");
		return -ENOENT;
	}
	*pid_off = (int)pid;
	*rt_off = (int)rt;
	struct plan_prog *pp = sema_pseudo_site(s, NULL, PLAN_PROG_TRACEPOINT,
						"rawtracepoint:sched_switch",
						HIDDEN_SCHED_SWITCH, "oncpu_switch");
	pp->attach_rank = PLAN_ATTACH_BOOKKEEPING;
	pp->tp_category = "sched";
	pp->tp_name = "sched_switch";
	pp->tp_raw = true;
	return 0;
}

/* Hidden programs for one target: push, mark returns, free on goroutine exit. */
static int add_hidden(struct sema *s, struct binfo *bi, struct tracked *r, int nr,
		      const struct pairset *user)
{
	static const struct gt_loc noloc;
	int err = 0;
	sema_open_group(s);
	for (int i = 0; i < nr && !err; i++)
		if (r[i].bi == bi && !pairset__has(user, key_of(r[i].f), GO_ENTRY))
			err = sema_add_func_sites(s, bi, r[i].f, GO_ENTRY, 0, noloc, true);
	for (int i = s->group_site_begin; i < s->sites.n; i++)
		s->sites.v[i].cookie_flags |= GT_SITE_TRACK;
	if (s->sites.n > s->group_site_begin)
		sema_close_group(s, NULL, PLAN_PROG_UPROBE, bi, GO_ENTRY, HIDDEN_ENTER, "track_entry");

	sema_open_group(s);
	for (int i = 0; i < nr && !err; i++)
		if (r[i].bi == bi && !pairset__has(user, key_of(r[i].f), GO_RETURN))
			err = sema_add_func_sites(s, bi, r[i].f, GO_RETURN, 0, noloc, true);
	if (s->sites.n > s->group_site_begin)
		sema_close_group(s, NULL, PLAN_PROG_UPROBE, bi, GO_RETURN, HIDDEN_RETURN,
				 "track_return");

	err = err ? err : add_runtime_hook(s, bi, "runtime.goexit1", HIDDEN_GOEXIT,
					   PLAN_ATTACH_OTHER, "track_goexit",
					   "goroutine state cannot be freed at exit");
	if (s->uses_oncpu) {
		static const char why[] = "oncpu cannot tell which goroutine a thread runs";
		err = err ? err : add_runtime_hook(s, bi, "runtime.execute", HIDDEN_EXECUTE,
						   PLAN_ATTACH_BOOKKEEPING, "oncpu_execute", why);
		err = err ? err : add_runtime_hook(s, bi, "runtime.schedule", HIDDEN_SCHEDULE,
						   PLAN_ATTACH_BOOKKEEPING, "oncpu_schedule", why);
	}
	return err;
}

/* Each :return program at a RET gets its own slot there (GT_SITE_RET_SLOT_*), the
 * order of its site among that RET's: the frame it pairs remembers who paired it. */
static void number_return_slots(struct sema *s)
{
	struct pairset seen = {0};
	for (int i = 0; i < s->sites.n; i++) {
		const struct sema_site_info *in = &s->site_info.v[i];
		if (!in->bi || in->point != GO_RETURN)
			continue;
		uint64_t slot = 0;
		(void)pairset__get(&seen, (uint64_t)(uintptr_t)in->bi, s->sites.v[i].vaddr, &slot);
		pairset__put(&seen, (uint64_t)(uintptr_t)in->bi, s->sites.v[i].vaddr, slot + 1);
		if (slot > GT_RET_SLOT_ANY)
			slot = GT_RET_SLOT_ANY;
		s->sites.v[i].cookie_flags |= (uint32_t)slot << GT_SITE_RET_SLOT_SHIFT;
	}
	pairset__free(&seen);
}

int sema_finish_tracking(struct sema *s)
{
	VEC(struct tracked) r = {0};
	struct pairset user = {0}, seen = {0}, targets = {0};
	int nuser = s->sites.n, err = 0;
	for (int i = 0; i < nuser; i++) {
		const struct sema_site_info *in = &s->site_info.v[i];
		if (!in->bi)
			continue;
		pairset__add(&user, key_of(in->f), in->point);
		if (in->point != GO_RETURN && !(s->uses_depth && in->point == GO_ENTRY))
			continue;
		if (pairset__add(&seen, key_of(in->f), 0)) {
			struct tracked t = {in->bi, in->f};
			vec_push(&r, t);
		}
	}
	for (int i = 0; i < nuser; i++) {
		const struct sema_site_info *in = &s->site_info.v[i];
		if (in->bi && in->point == GO_ENTRY && pairset__has(&seen, key_of(in->f), 0))
			s->sites.v[i].cookie_flags |= GT_SITE_TRACK;
	}
	/* one set of hidden programs per target that has tracked functions */
	for (int i = 0; i < r.n && !err; i++)
		if (pairset__add(&targets, (uint64_t)(uintptr_t)r.v[i].bi, 0))
			err = add_hidden(s, r.v[i].bi, r.v, r.n, &user);
	pairset__free(&user);
	pairset__free(&seen);
	pairset__free(&targets);
	number_return_slots(s);
	int pid_off = 0, rt_off = 0;
	if (s->uses_oncpu && !err)
		err = add_sched_switch(s, &pid_off, &rt_off);
	for (int i = 0; i < s->sprogs.n && !err; i++) {
		struct sema_prog *sp = &s->sprogs.v[i];
		sp->task_pid_off = pid_off;
		sp->task_runtime_off = rt_off;
		if (sp->bi && (sp->needs_goruntime || sp->hidden || r.n))
			sp->needs_goruntime = true;
		if (sp->needs_goruntime)
			err = check_goruntime(sp->bi);
	}
	vec_free(&r);
	return err;
}
