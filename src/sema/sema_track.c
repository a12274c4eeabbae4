/* sema_track: per-goroutine call stacks. Every function with a :return probe (and,
 * when `depth` is used, every traced function) pushes a frame at its entry and marks
 * it at its RETs; gotrace adds hidden programs where the script has no probe of its
 * own, and one on runtime.goexit1 that frees a goroutine's state when it exits. */
#include "sema/sema_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "binfo/binfo.h"

struct tracked {
	struct binfo *bi;
	const struct binfo_func *f;
};

static bool has_site(struct sema *s, int nuser, const struct tracked *t, enum go_point point)
{
	for (int i = 0; i < nuser; i++) {
		const struct sema_site_info *in = &s->site_info.v[i];
		if (in->f == t->f && in->bi == t->bi && in->point == point)
			return true;
	}
	return false;
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

/* Hidden programs for one target: push, mark returns, free on goroutine exit. */
static int add_hidden(struct sema *s, struct binfo *bi, struct tracked *r, int nr, int nuser)
{
	static const struct gt_loc noloc;
	int err = 0;
	s->group_site_begin = s->sites.n;
	for (int i = 0; i < nr && !err; i++)
		if (r[i].bi == bi && !has_site(s, nuser, &r[i], GO_ENTRY))
			err = sema_add_func_sites(s, bi, r[i].f, GO_ENTRY, 0, noloc, true);
	for (int i = s->group_site_begin; i < s->sites.n; i++)
		s->sites.v[i].cookie_flags |= GT_SITE_TRACK;
	if (s->sites.n > s->group_site_begin)
		sema_close_group(s, NULL, PLAN_PROG_UPROBE, bi, GO_ENTRY, HIDDEN_ENTER, "track_entry");

	s->group_site_begin = s->sites.n;
	for (int i = 0; i < nr && !err; i++)
		if (r[i].bi == bi && !has_site(s, nuser, &r[i], GO_RETURN))
			err = sema_add_func_sites(s, bi, r[i].f, GO_RETURN, 0, noloc, true);
	if (s->sites.n > s->group_site_begin)
		sema_close_group(s, NULL, PLAN_PROG_UPROBE, bi, GO_RETURN, HIDDEN_RETURN,
				 "track_return");

	const struct binfo_func *exit1 = binfo_find_func(bi, "runtime.goexit1");
	if (!exit1) {
		diag_fatal("%s: no runtime.goexit1: goroutine state cannot be freed at exit",
			   binfo_path(bi));
		return -ENOENT;
	}
	s->group_site_begin = s->sites.n;
	err = err ? err : sema_add_func_sites(s, bi, exit1, GO_ENTRY, 0, noloc, true);
	if (s->sites.n > s->group_site_begin)
		sema_close_group(s, NULL, PLAN_PROG_UPROBE, bi, GO_ENTRY, HIDDEN_GOEXIT,
				 "track_goexit");
	return err;
}

int sema_finish_tracking(struct sema *s)
{
	VEC(struct tracked) r = {0};
	int nuser = s->sites.n, err = 0;
	for (int i = 0; i < nuser; i++) {
		const struct sema_site_info *in = &s->site_info.v[i];
		if (!in->bi)
			continue;
		if (in->point != GO_RETURN && !(s->uses_depth && in->point == GO_ENTRY))
			continue;
		bool dup = false;
		for (int j = 0; j < r.n && !dup; j++)
			dup = r.v[j].f == in->f && r.v[j].bi == in->bi;
		if (!dup) {
			struct tracked t = {in->bi, in->f};
			vec_push(&r, t);
		}
	}
	for (int i = 0; i < nuser; i++) {
		const struct sema_site_info *in = &s->site_info.v[i];
		if (!in->bi || in->point != GO_ENTRY)
			continue;
		for (int j = 0; j < r.n; j++)
			if (r.v[j].f == in->f && r.v[j].bi == in->bi)
				s->sites.v[i].cookie_flags |= GT_SITE_TRACK;
	}
	/* one set of hidden programs per target that has tracked functions */
	for (int i = 0; i < r.n && !err; i++) {
		bool first = true;
		for (int j = 0; j < i; j++)
			first &= r.v[j].bi != r.v[i].bi;
		if (first)
			err = add_hidden(s, r.v[i].bi, r.v, r.n, nuser);
	}
	for (int i = 0; i < s->sprogs.n && !err; i++) {
		struct sema_prog *sp = &s->sprogs.v[i];
		if (sp->bi && (sp->needs_goruntime || sp->hidden || r.n))
			sp->needs_goruntime = true;
		if (sp->needs_goruntime)
			err = check_goruntime(sp->bi);
	}
	vec_free(&r);
	return err;
}
