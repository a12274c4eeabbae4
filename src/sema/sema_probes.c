/* sema_probes: expand each clause's probe list into programs and sites. */
#include "sema/sema_int.h"

#include <errno.h>
#include <fnmatch.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "binfo/binfo.h"
#include "common/util.h"
#include "sema/providers.h"
#include "sema/tracepoint.h"

/* Opened targets, shared by all clauses; closed by sema_result_free through the plan. */
struct binfo *sema_target(struct sema *s, const char *path, struct gt_loc loc)
{
	return sema_target_elf(s, path, loc, true);
}

/* NEED_GO: go: probes need a Go binary; uprobe: takes any ELF with symbols. */
struct binfo *sema_target_elf(struct sema *s, const char *path, struct gt_loc loc, bool need_go)
{
	for (int i = 0; i < s->ntargets; i++) {
		if (strcmp(s->target_paths[i], path))
			continue;
		if (need_go && !binfo_is_go(s->targets[i])) {
			diag_fatal("%s: not a Go binary (no .gopclntab or Go build info)", path);
			return NULL;
		}
		return s->targets[i];
	}
	if (s->opts->default_bi && !strcmp(path, s->opts->default_target))
		return s->opts->default_bi;
	for (int i = 0; i < s->bad_targets.n; i++)
		if (!strcmp(s->bad_targets.v[i], path))
			return NULL; /* binfo said why, at the first probe */
	struct binfo *bi = NULL;
	int err = need_go ? binfo__open(path, &bi) : binfo__open_elf(path, &bi);
	if (err < 0) {
		(void)loc;
		vec_push(&s->bad_targets, arena_strdup(s->arena, path));
		return NULL;
	}
	s->targets = xrealloc(s->targets, (size_t)(s->ntargets + 1) * sizeof(*s->targets));
	s->target_paths =
		xrealloc(s->target_paths, (size_t)(s->ntargets + 1) * sizeof(*s->target_paths));
	s->targets[s->ntargets] = bi;
	s->target_paths[s->ntargets] = arena_strdup(s->arena, path);
	s->ntargets++;
	return bi;
}

static struct sema_site_info *add_site(struct sema *s, struct binfo *bi,
					const struct binfo_func *f, enum go_point point,
					const char *probe, uint64_t vaddr, uint64_t off,
					uint32_t flags)
{
	if (!pairset__add(&s->group_sites, (uint64_t)(uintptr_t)bi, off))
		return NULL; /* the same site twice in one clause would fire twice */
	struct plan_site site = {
		.target = binfo_path(bi),
		.func = f->name,
		.probe = probe,
		.vaddr = vaddr,
		.file_off = off,
		.cookie_flags = flags,
		.kernel_refuses = binfo_uprobe_refuses(bi, vaddr),
	};
	struct sema_site_info info = {.bi = bi, .f = f, .point = point};
	vec_push(&s->sites, site);
	vec_push(&s->site_info, info);
	return &s->site_info.v[s->site_info.n - 1];
}

/* Lists up to three suggestions as ", did you mean X, Y?" (empty when none). */
static const char *suggest_funcs(struct sema *s, struct binfo *bi, const char *name)
{
	const char *best[3];
	int n = binfo_suggest(bi, name, best, 3);
	if (n <= 0)
		return "";
	struct strbuf sb = {0};
	strbuf_puts(&sb, "; did you mean ");
	for (int i = 0; i < n; i++)
		strbuf_printf(&sb, "%s%s", i ? (i == n - 1 ? " or " : ", ") : "", best[i]);
	strbuf_puts(&sb, "?");
	const char *r = arena_strdup(s->arena, sb.buf);
	strbuf_free(&sb);
	return r;
}

bool sema_parse_offset(const char *s, uint64_t *out)
{
	if (*s != '+')
		return false;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s + 1, &end, 0);
	if (errno || end == s + 1 || *end)
		return false;
	*out = v;
	return true;
}

/* Parses go:[PATH:]FUNC:entry|return|+OFFSET and opens its target. */
static int parse_go_probe(struct sema *s, struct ast_node *p, struct go_probe *gp)
{
	const char **parts = (const char **)p->u.probe.parts;
	int n = p->u.probe.nparts;
	const char *path = NULL;
	memset(gp, 0, sizeof(*gp));
	gp->node = p;
	/* go:F:entry? -- optional, as SystemTap writes it: the point names end in no '?' */
	size_t last = n > 0 ? strlen(parts[n - 1]) : 0;
	if (last > 1 && parts[n - 1][last - 1] == '?') {
		gp->optional = true;
		parts[n - 1] = arena_strndup(s->arena, parts[n - 1], last - 1);
	}
	if (n == 3) {
		path = parts[0];
		gp->func = parts[1];
		gp->where = parts[2];
	} else if (n == 2) {
		gp->func = parts[0];
		gp->where = parts[1];
	} else {
		diag_error(s->src, p->loc,
			   "a go probe is go:[PATH:]FUNC:entry, go:[PATH:]FUNC:return, "
			   "go:[PATH:]FUNC:+OFFSET or go:[PATH:]FILE.go:LINE");
		return -EINVAL;
	}
	size_t flen = strlen(gp->func);
	if (flen > 3 && !strcmp(gp->func + flen - 3, ".go") && gp->where[0] >= '0' &&
	    gp->where[0] <= '9') {
		char *end;
		errno = 0;
		unsigned long line = strtoul(gp->where, &end, 10);
		if (errno || *end || !line || line > INT32_MAX) {
			diag_error(s->src, p->loc, "bad line number '%s' in %s:%s", gp->where,
				   gp->func, gp->where);
			return -EINVAL;
		}
		gp->point = GO_OFFSET; /* a point in the code, as +OFFSET */
		gp->off = line;
	} else if (!strcmp(gp->where, "entry")) {
		gp->point = GO_ENTRY;
	} else if (!strcmp(gp->where, "return")) {
		gp->point = GO_RETURN;
	} else if (sema_parse_offset(gp->where, &gp->off)) {
		gp->point = GO_OFFSET;
	} else {
		diag_error(s->src, p->loc,
			   "unknown go probe point '%s': expected entry, return or +OFFSET",
			   gp->where);
		return -EINVAL;
	}
	if (!path)
		path = s->opts->default_target;
	if (!path) {
		diag_error(s->src, p->loc,
			   "no target binary for this probe: give -c CMD, -p PID or -b BINARY, "
			   "or write go:PATH:FUNC:%s",
			   gp->where);
		return -EINVAL;
	}
	gp->path = path;
	gp->bi = sema_target(s, path, p->loc);
	return gp->bi ? 0 : -ENOENT;
}

/* g is in its register (arch.h) where the function checks its stack against it
 * (ABIInternal code), and in all Go code where the processor keeps it there
 * (arch_go_g_always_in_reg); elsewhere the runtime reads g from thread-local storage. A
 * function that is one RET has its :entry and :return at one address, where the kernel
 * runs the programs in no order that pairing could rely on: both sites say so. */
static uint32_t site_flags(struct binfo *bi, const struct binfo_func *f)
{
	uint64_t entry;
	uint32_t g = arch_go_g_always_in_reg ? GT_SITE_G_IN_REG : 0;
	if (binfo_entry_addr(bi, f, &entry) != 0)
		return g;
	if (entry != f->addr)
		return GT_SITE_G_IN_REG;
	return g | (binfo_is_ret(bi, entry) ? GT_SITE_RET_AT_ENTRY : 0);
}

int sema_add_func_sites(struct sema *s, struct binfo *bi, const struct binfo_func *f,
			enum go_point point, uint64_t off, struct gt_loc loc, bool quiet)
{
	static const char *const point_names[] = {"entry", "return", NULL};
	uint64_t addrs1[1], *addrs = addrs1;
	int n = 1, err = 0;
	const char *where = point_names[point];
	if (point == GO_ENTRY) {
		err = binfo_entry_addr(bi, f, &addrs1[0]);
	} else if (point == GO_RETURN) {
		n = binfo_ret_addrs(bi, f, &addrs);
		if (n == 0 && !quiet)
			diag_warning(s->src, loc,
				     "%s has no RET instruction (it never returns, or returns "
				     "through a function it jumps to): no :return probe for it",
				     f->name);
		err = n < 0 && !quiet ? n : 0; /* a wildcard skips bytes that do not decode */
	} else {
		addrs1[0] = f->addr + off;
		if (off >= f->size || !binfo_is_insn_boundary(bi, f, addrs1[0])) {
			diag_error(s->src, loc, "%s+%llu is not an instruction boundary of %s",
				   f->name, (unsigned long long)off, f->name);
			return -EINVAL;
		}
		where = arena_printf(s->arena, "+%llu", (unsigned long long)off);
	}
	if (err) {
		diag_error(s->src, loc, "cannot place a probe in %s", f->name);
		return err;
	}
	const char *probe = arena_printf(s->arena, "go:%s:%s", f->name, where);
	uint32_t flags = site_flags(bi, f);
	if (point != GO_OFFSET || binfo_frameless(bi, f))
		flags |= GT_SITE_CALLER_AT_SP; /* before the frame is pushed, or after it is popped */
	for (int i = 0; i < n && !err; i++) {
		uint64_t foff;
		if (!binfo_can_probe(bi, addrs[i])) {
			/* e.g. runtime.abort starts with int3: uprobes cannot go there */
			if (!quiet)
				diag_warning(s->src, loc,
					     "%s: no probe on its trap instruction (int3) at +%llu",
					     f->name, (unsigned long long)(addrs[i] - f->addr));
			continue;
		}
		err = binfo_vaddr_to_offset(bi, addrs[i], &foff);
		if (err)
			diag_error(s->src, loc, "cannot place a probe in %s", f->name);
		else
			add_site(s, bi, f, point, probe, addrs[i], foff, flags);
	}
	if (addrs != addrs1)
		free(addrs);
	return err;
}

/* go:FILE.go:LINE: the parser keeps LINE in `where` (a digit where +OFFSET has '+'). */
static bool is_line_probe(const struct go_probe *gp)
{
	return gp->point == GO_OFFSET && gp->where[0] != '+';
}

/* A point probe at ADDR of F (a line's start, an inlined copy's start); NULL when the
 * kernel cannot probe there (a warning says why unless QUIET) or the clause has it. */
static struct sema_site_info *add_point_site(struct sema *s, struct binfo *bi,
					     const struct binfo_func *f, const char *probe,
					     uint64_t addr, struct gt_loc loc, bool quiet)
{
	uint64_t foff;
	if (!binfo_is_insn_boundary(bi, f, addr) || !binfo_can_probe(bi, addr) ||
	    binfo_vaddr_to_offset(bi, addr, &foff)) {
		if (!quiet)
			diag_warning(s->src, loc, "%s: no probe at %s+%llu (not an instruction "
				     "the kernel can probe)", probe, f->name,
				     (unsigned long long)(addr - f->addr));
		return NULL;
	}
	return add_site(s, bi, f, GO_OFFSET, probe, addr, foff,
			site_flags(bi, f) | (binfo_frameless(bi, f) ? GT_SITE_CALLER_AT_SP : 0));
}

/* go:[PATH:]FILE.go:LINE: the line's start in every function its code is in (DWARF). */
static int add_line_sites(struct sema *s, struct go_probe *gp)
{
	struct gt_loc loc = gp->node->loc;
	struct binfo_lines *l;
	struct binfo_line_site *ls = NULL;
	struct binfo_line_query q = {.file = gp->func, .line = (int)gp->off};
	const char *probe = arena_printf(s->arena, "go:%s:%d", q.file, q.line);
	if (binfo_lines__open(gp->bi, BINFO_LINES_DWARF, &l)) {
		diag_error(s->src, loc, "%s:%d: %s has no DWARF line table (stripped, or built "
			   "with -ldflags=-w): source-line probes need it", q.file, q.line,
			   gp->path);
		return -ENOENT;
	}
	int n = binfo_line_sites(l, &q, &ls), before = s->sites.n;
	if (n == -ESRCH)
		diag_error(s->src, loc, "no source file '%s' in %s", q.file, gp->path);
	else if (n == -EEXIST)
		/* in name order: the table's order of files changes with the Go release */
		diag_error(s->src, loc, "'%s' names more than one source file of %s (%s, %s): "
			   "give more of its path", q.file, gp->path,
			   strcmp(q.path, q.other) < 0 ? q.path : q.other,
			   strcmp(q.path, q.other) < 0 ? q.other : q.path);
	else if (n == 0 && q.before && q.after)
		diag_error(s->src, loc, "%s:%d has no code; the nearest lines with code are %d "
			   "and %d", q.file, q.line, q.before, q.after);
	else if (n == 0 && (q.before || q.after))
		diag_error(s->src, loc, "%s:%d has no code; the nearest line with code is %d",
			   q.file, q.line, q.before ? q.before : q.after);
	else if (n == 0)
		diag_error(s->src, loc, "%s:%d has no code", q.file, q.line);
	for (int i = 0; i < n; i++) {
		struct sema_site_info *in =
			add_point_site(s, gp->bi, ls[i].func, probe, ls[i].addr, loc, false);
		if (in)
			s->sites.v[s->sites.n - 1].sole = true;
	}
	if (n > 0 && s->sites.n == before)
		diag_error(s->src, loc, "no site for %s in %s", probe, gp->path);
	free(ls);
	binfo_lines__close(l);
	return n > 0 && s->sites.n > before ? 0 : -ENOENT;
}

static const char *type_args_glob(struct sema *s, const char *name)
{
	char *g = binfo_type_args_glob(name);
	const char *r = arena_strdup(s->arena, g);
	free(g);
	return r;
}

/* "main.work and main.main": the functions holding the copies (address order). */
static const char *outer_names(struct sema *s, const struct binfo_inlined *c, int n)
{
	const char *seen[3];
	int k = 0, more = 0;
	for (int i = 0; i < n; i++) {
		bool dup = false;
		for (int j = 0; j < i && !dup; j++)
			dup = c[j].outer == c[i].outer;
		if (dup)
			continue;
		if (k < 3)
			seen[k++] = c[i].outer->name;
		else
			more++;
	}
	if (k == 1)
		return seen[0];
	if (more)
		return arena_printf(s->arena, "%s, %s, %s and %d more", seen[0], seen[1], seen[2],
				    more);
	if (k == 2)
		return arena_printf(s->arena, "%s and %s", seen[0], seen[1]);
	return arena_printf(s->arena, "%s, %s and %s", seen[0], seen[1], seen[2]);
}

/* One name-only binfo_func per inlined function and target: every copy is one probe.
 * By the name's pointer: binfo_inlined_copies gives one per name and target. */
static const struct binfo_func *inlined_func(struct sema *s, struct binfo *bi, const char *name)
{
	uint64_t v;
	if (pairset__get(&s->inl_funcs, (uintptr_t)bi, (uintptr_t)name, &v))
		return (const struct binfo_func *)(uintptr_t)v;
	struct binfo_func *f = arena_alloc(s->arena, sizeof(*f));
	*f = (struct binfo_func){.name = name};
	pairset__put(&s->inl_funcs, (uintptr_t)bi, (uintptr_t)name, (uintptr_t)f);
	return f;
}

/* :entry at the start of each inlined copy (a point probe: no frame is pushed, there
 * is no return to pop it). */
static void add_inlined_sites(struct sema *s, struct go_probe *gp,
			      const struct binfo_inlined *c, int n, bool quiet)
{
	for (int i = 0; i < n; i++) {
		const char *probe = arena_printf(s->arena, "go:%s:entry", c[i].name);
		struct sema_site_info *in =
			add_point_site(s, gp->bi, c[i].outer, probe, c[i].addr, gp->node->loc, quiet);
		if (!in)
			continue;
		in->f = inlined_func(s, gp->bi, c[i].name);
		in->inlined_into = c[i].outer;
		s->sites.v[s->sites.n - 1].func = c[i].name;
		s->sites.v[s->sites.n - 1].cookie_flags |= GT_SITE_INLINED;
	}
}

/* A clause that reads args / rets: the inlined copies of functions that also have
 * out-of-line code are left out (their values live wherever the caller's code put
 * them), with a warning; functions that are only inlined stay (sema_go's error).
 * Returns the copies kept, compacted in CS. */
static int drop_inlined_copies(struct sema *s, struct go_probe *gp, const struct binfo_func **fs,
			       int nf, struct binfo_inlined *cs, int nc)
{
	int kept = 0, ndropped = 0;
	struct binfo_inlined *dropped = xmalloc(sizeof(*dropped) * (size_t)nc);
	for (int i = 0; i < nc; i++) {
		bool out_of_line = false;
		for (int j = 0; j < nf && !out_of_line; j++)
			out_of_line = fs[j] && !strcmp(fs[j]->name, cs[i].name);
		if (out_of_line)
			dropped[ndropped++] = cs[i];
		else
			cs[kept++] = cs[i];
	}
	if (ndropped && s->src && s->src->origin == DIAG_SRC_GENERATED)
		diag_warning(s->src, gp->node->loc, "%s is also inlined into %s: --args reads "
			     "arguments, which an inlined copy has none of, so only calls of its "
			     "out-of-line code are traced", dropped[0].name,
			     outer_names(s, dropped, ndropped));
	else if (ndropped)
		diag_warning(s->src, gp->node->loc, "%s%s is also inlined into %s: the clause reads "
			     "args, which an inlined copy has none of, so only calls of its "
			     "out-of-line code are traced", dropped[0].name,
			     nf > 1 ? " (and others the pattern matches)" : "",
			     outer_names(s, dropped, ndropped));
	free(dropped);
	return kept;
}

static bool excluded_name(struct sema *s, const char *name)
{
	return glob_match_any(s->opts->excludes, s->opts->nexcludes, name);
}

static int add_go_sites(struct sema *s, struct go_probe *gp)
{
	if (is_line_probe(gp))
		return add_line_sites(s, gp);
	struct binfo *bi = gp->bi;
	const struct binfo_func **fs = NULL;
	const char *pat = type_args_glob(s, gp->func);
	bool wild = glob_go_wildcard(pat);
	int nf, excluded = 0;
	if (wild) {
		nf = binfo_match_funcs(bi, pat, &fs);
		int kept = 0;
		for (int i = 0; i < nf; i++)
			if (!excluded_name(s, fs[i]->name))
				fs[kept++] = fs[i];
		excluded = nf > 0 ? nf - kept : 0;
		nf = nf > 0 ? kept : nf;
	} else {
		const struct binfo_func *f = binfo_find_func(bi, gp->func);
		if (!f) /* assembly functions carry an ABI suffix: runtime.memmove.abi0 */
			f = binfo_find_func(bi, arena_printf(s->arena, "%s.abi0", gp->func));
		nf = f ? 1 : 0;
		fs = xmalloc(sizeof(*fs));
		fs[0] = f;
	}
	/* the copies the compiler inlined: traced at :entry along with the out-of-line code */
	struct binfo_inlined *cs = NULL;
	int nc = binfo_inlined_copies(bi, pat, &cs), kept = 0;
	const char *no_tree = nc == -ENOENT ? " (nor inlined copies of one: without "
			      "symbols its inline trees cannot be read)" : "";
	for (int i = 0; i < nc; i++) {
		bool out = wild && excluded_name(s, cs[i].name);
		/* an excluded inlined-only function counts once, as an out-of-line one */
		bool counted = !out || binfo_find_func(bi, cs[i].name);
		for (int j = 0; j < i && !counted; j++)
			counted = !strcmp(cs[j].name, cs[i].name);
		excluded += !counted;
		if (!out)
			cs[kept++] = cs[i];
	}
	nc = kept;
	int err = 0, before = s->sites.n;
	enum sema_missing miss = sema_missing_probes();
	if (nf <= 0 && nc <= 0 && !gp->optional && miss != MISSING_ERROR) {
		/* config = { missing_probes = warn | ignore }: skipped, as an optional one */
		if (miss == MISSING_WARN)
			diag_warning(s->src, gp->node->loc, "No matches for %s. Skipping.",
				     gp->node->u.probe.raw);
		free(fs);
		free(cs);
		return 0;
	}
	if (nf <= 0 && nc <= 0 && gp->optional) {
		struct sema_skip sk = {gp->node->loc,
				       arena_printf(s->arena, "optional probe skipped: no function "
						    "%s '%s' in %s", wild ? "matches" : "named",
						    gp->func, gp->path)};
		vec_push(&s->skips, sk);
		free(fs);
		free(cs);
		return 0;
	}
	if (nf <= 0 && nc <= 0) {
		if (excluded)
			diag_error(s->src, gp->node->loc, "--exclude leaves none of the %d "
				   "functions matching '%s' in %s", excluded, gp->func, gp->path);
		else if (wild)
			diag_error(s->src, gp->node->loc, "no function matches '%s' in %s%s",
				   gp->func, gp->path, no_tree);
		else
			diag_error(s->src, gp->node->loc, "no function '%s' in %s%s%s", gp->func,
				   gp->path, no_tree, suggest_funcs(s, bi, gp->func));
		err = -ENOENT;
	} else if (nf <= 0 && !wild && gp->point != GO_ENTRY) {
		diag_error(s->src, gp->node->loc, "%s is inlined into %s: %s%s cannot be placed "
			   "on an inlined copy", gp->func, outer_names(s, cs, nc),
			   gp->point == GO_RETURN ? ":" : "", gp->where);
		err = -EINVAL;
	} else if (nc > 0 && !wild && gp->point != GO_ENTRY &&
		   !(s->src && s->src->origin == DIAG_SRC_GENERATED)) {
		/* (--funcgraph's :entry shows the copies, as leaves: nothing to warn of) */
		diag_warning(s->src, gp->node->loc, "%s is also inlined into %s: %s%s probes only "
			     "its out-of-line code", gp->func, outer_names(s, cs, nc),
			     gp->point == GO_RETURN ? ":" : "", gp->where);
	}
	if (!err && nc > 0 && nf > 0 && s->clause_reads_go_names && gp->point == GO_ENTRY)
		nc = drop_inlined_copies(s, gp, fs, nf, cs, nc);
	bool generated = s->src && s->src->origin == DIAG_SRC_GENERATED;
	for (int i = 0; i < nf && !err; i++) {
		int had = s->sites.n;
		err = sema_add_func_sites(s, bi, fs[i], gp->point, gp->off, gp->node->loc,
					  nf > 1 || generated);
		/* quiet in a wildcard (runtime.abort's int3): said with the sites the kernel
		 * refuses (plan.unprobed); an alias of a function probed already is not */
		uint64_t at;
		if (!err && nf > 1 && !generated && gp->point == GO_ENTRY && s->sites.n == had &&
		    (binfo_entry_addr(bi, fs[i], &at) || !binfo_can_probe(bi, at)))
			vec_push(&s->unprobed, arena_printf(s->arena, "go:%s:entry", fs[i]->name));
	}
	if (!err && gp->point == GO_ENTRY)
		add_inlined_sites(s, gp, cs, nc, wild);
	if (!err && s->sites.n == before && generated) {
		/* an int3, or inlined copies only where the program has a site already */
		if (!s->gen_unprobed++)
			s->gen_unprobed_first = gp->func;
	} else if (!err && s->sites.n == before) {
		diag_error(s->src, gp->node->loc, "no %s site for '%s' in %s", gp->where, gp->func,
			   gp->path);
		err = -ENOENT;
	}
	for (int i = before; i < s->sites.n && !wild; i++)
		s->sites.v[i].sole = true; /* named alone: the runtime may not skip it */
	free(fs);
	free(cs);
	return err;
}

/* The name `probe` prints: the canonical provider and the parts (i:ms:100 is
 * interval:ms:100, as bpftrace prints it). */
static const char *probe_name(struct sema *s, const struct provider *pv, struct ast_node *p)
{
	struct strbuf sb = {0};
	strbuf_puts(&sb, pv->name);
	for (int i = 0; i < p->u.probe.nparts; i++)
		strbuf_printf(&sb, ":%s", p->u.probe.parts[i]);
	const char *name = arena_strdup(s->arena, sb.buf ? sb.buf : "");
	strbuf_free(&sb);
	return name;
}

struct plan_prog *sema_pseudo_site(struct sema *s, struct ast_node *clause, int prog_kind,
				   const char *probe, enum sema_hidden hidden, const char *name)
{
	sema_open_group(s);
	struct plan_site site = {.target = "", .func = "", .probe = probe};
	struct sema_site_info info = {0};
	vec_push(&s->sites, site);
	vec_push(&s->site_info, info);
	sema_close_group(s, clause, prog_kind, NULL, GO_ENTRY, hidden, name);
	return &s->progs.v[s->progs.n - 1];
}

/* The script's program over one pseudo-site, called c<clause>_<KIND> in the object. */
static struct plan_prog *pseudo_site_prog(struct sema *s, struct ast_node *clause, int prog_kind,
					  const char *probe, const char *kind, int ci)
{
	return sema_pseudo_site(s, clause, prog_kind, probe, HIDDEN_NONE,
				arena_printf(s->arena, "c%d_%s", ci, kind));
}

/* $N in a probe name is the text of positional parameter N (BEG$1, i:ms:$1), as in
 * bpftrace; a missing one is an error there, since the name would be cut short. */
static int subst_posparams(struct sema *s, struct ast_node *p)
{
	const char *raw = p->u.probe.raw;
	if (!strchr(raw, '$'))
		return 0;
	struct strbuf sb = {0};
	int err = 0;
	for (const char *c = raw; *c && !err; c++) {
		if (*c != '$' || c[1] < '1' || c[1] > '9') {
			strbuf_putc(&sb, *c);
			continue;
		}
		char *end;
		long n = strtol(c + 1, &end, 10);
		if (n > s->opts->nposargs) {
			diag_error(s->src, p->loc, "positional parameter $%ld is not set", n);
			err = -EINVAL;
			break;
		}
		strbuf_puts(&sb, s->opts->posargs[n - 1]);
		c = end - 1;
	}
	if (!err) {
		p->u.probe.raw = arena_strdup(s->arena, sb.buf ? sb.buf : "");
		ast_probe_split(s->arena, p);
	}
	strbuf_free(&sb);
	return err;
}

/* uprobe:[PATH:]SYM[+OFF], uretprobe:[PATH:]SYM: plain probes for non-Go code. */
static int expand_uprobe(struct sema *s, struct ast_node *clause, struct ast_node *p,
			 const struct provider *pv, int ci)
{
	bool ret = pv->id == PV_URETPROBE;
	int n = p->u.probe.nparts;
	const char *path = n == 2 ? p->u.probe.parts[0] : s->opts->default_target;
	const char *spec = n == 2 ? p->u.probe.parts[1] : n == 1 ? p->u.probe.parts[0] : NULL;
	if (!spec || !path) {
		diag_error(s->src, p->loc, "%s probes are %s:PATH:SYMBOL%s", pv->name, pv->name,
			   ret ? "" : "[+OFFSET]");
		return -EINVAL;
	}
	struct binfo *bi = sema_target_elf(s, path, p->loc, false);
	if (!bi)
		return -ENOENT;
	char *sym = arena_strdup(s->arena, spec);
	uint64_t off = 0;
	char *plus = strrchr(sym, '+');
	if (plus && !ret && sema_parse_offset(plus, &off))
		*plus = 0;
	const struct binfo_func *f = binfo_find_func(bi, sym);
	if (!f) {
		diag_error(s->src, p->loc, "no function '%s' in %s%s", sym, path,
			   suggest_funcs(s, bi, sym));
		return -ENOENT;
	}
	/* Go symbols are package-qualified; cgo's C functions are not. */
	if (ret && binfo_is_go(bi) && strchr(sym, '.') && !s->opts->unsafe) {
		diag_error(s->src, p->loc,
			   "uretprobe on the Go function %s is refused: Go copies goroutine stacks "
			   "and a uretprobe's rewritten return address then crashes the program; "
			   "use go:%s:return (probes on its RET instructions), or --unsafe",
			   sym, sym);
		return -EPERM;
	}
	uint64_t addr = f->addr + off;
	if (off && (off >= f->size || !binfo_is_insn_boundary(bi, f, addr))) {
		diag_error(s->src, p->loc, "%s+%llu is not an instruction boundary of %s", sym,
			   (unsigned long long)off, sym);
		return -EINVAL;
	}
	uint64_t foff;
	if (binfo_vaddr_to_offset(bi, addr, &foff)) {
		diag_error(s->src, p->loc, "cannot place a probe in %s", sym);
		return -EINVAL;
	}
	sema_open_group(s);
	add_site(s, bi, f, ret ? UP_RETURN : UP_ENTRY, probe_name(s, pv, p), addr, foff, 0);
	s->sites.v[s->sites.n - 1].sole = true;
	sema_close_group(s, clause, PLAN_PROG_UPROBE, bi, ret ? UP_RETURN : UP_ENTRY, HIDDEN_NONE,
			 arena_printf(s->arena, "c%d_%s", ci, pv->name));
	s->progs.v[s->progs.n - 1].uprobe_return = ret;
	return 0;
}

/* interval:UNIT:N, profile:UNIT:N -> a PERF program with a pseudo-site named after it */
static int expand_timer(struct sema *s, struct ast_node *clause, struct ast_node *p,
			const struct provider *pv, int ci)
{
	const char *prov = pv->name;
	bool profile = pv->id == PV_PROFILE;
	char *end = NULL;
	unsigned long long n = 0;
	errno = 0;
	const char *unit = p->u.probe.parts[0], *count = p->u.probe.nparts == 2 ? p->u.probe.parts[1] : NULL;
	if (p->u.probe.nparts == 1) { /* current bpftrace's interval:100ms, profile:99hz */
		count = unit;
		unit = count + strspn(count, "0123456789");
		if (unit == count)
			count = NULL;
	}
	if (count)
		n = strtoull(count, &end, 10);
	if (!count || !end || (p->u.probe.nparts == 2 ? *end != 0 : end != unit) || n == 0) {
		diag_error(s->src, p->loc, "%s probes are %s:hz:N, %s:s:N, %s:ms:N or %s:us:N "
			   "(or %s:NUNIT: %s:100ms)", prov, prov, prov, prov, prov, prov, prov);
		return -EINVAL;
	}
	uint64_t period = 0, freq = 0, scale = 0;
	if (!strcmp(unit, "s"))
		scale = 1000000000ull;
	else if (!strcmp(unit, "ms"))
		scale = 1000000ull;
	else if (!strcmp(unit, "us"))
		scale = 1000ull;
	else if (!strcmp(unit, "hz"))
		freq = n;
	else {
		diag_error(s->src, p->loc, "unknown %s unit '%s': expected hz, s, ms or us", prov,
			   unit);
		return -EINVAL;
	}
	/* a period that does not fit in 64 bits of nanoseconds would wrap to a wrong rate */
	if ((scale && n > UINT64_MAX / scale) || errno == ERANGE) {
		diag_error(s->src, p->loc, "%s period %s%s does not fit in 64 bits of nanoseconds",
			   prov, count, unit);
		return -EINVAL;
	}
	period = n * scale;
	struct plan_prog *pp = pseudo_site_prog(s, clause, PLAN_PROG_PERF, probe_name(s, pv, p), prov, ci);
	pp->perf_period_ns = period;
	pp->perf_freq = freq;
	pp->perf_all_cpus = profile;
	pp->perf_type = PERF_TYPE_SOFTWARE;
	pp->perf_config = PERF_COUNT_SW_CPU_CLOCK;
	return 0;
}

/* software:EVENT[:COUNT], hardware:EVENT[:COUNT]: a perf event on every CPU, the program
 * running every COUNT occurrences (bpftrace's defaults without one) */
static int expand_perf_event(struct sema *s, struct ast_node *clause, struct ast_node *p,
			     const struct provider *pv, int ci)
{
	int n = p->u.probe.nparts;
	const struct perf_event_name *ev = n >= 1 ? provider_perf_event(pv->id, p->u.probe.parts[0])
						  : NULL;
	char *end = NULL;
	unsigned long long count = ev ? ev->default_count : 0;
	if (n == 2 && *p->u.probe.parts[1])
		count = strtoull(p->u.probe.parts[1], &end, 10);
	if (!ev || n > 2 || (end && *end) || !count) {
		diag_error(s->src, p->loc, "%s probes are %s:EVENT[:COUNT] with an event -l %s:* lists",
			   pv->name, pv->name, pv->name);
		return -EINVAL;
	}
	struct plan_prog *pp = pseudo_site_prog(s, clause, PLAN_PROG_PERF, probe_name(s, pv, p), pv->name, ci);
	pp->perf_period_ns = count; /* a sample period, in events */
	pp->perf_all_cpus = true;
	pp->perf_type = ev->type;
	pp->perf_config = ev->config;
	return 0;
}

static int expand_tracepoint(struct sema *s, struct ast_node *clause, struct ast_node *p,
			     const struct provider *pv, int ci)
{
	if (p->u.probe.nparts != 2) {
		diag_error(s->src, p->loc, "a tracepoint probe is tracepoint:CATEGORY:NAME");
		return -EINVAL;
	}
	const char *cat = p->u.probe.parts[0], *name = p->u.probe.parts[1];
	struct tp_format *fmt = arena_alloc(s->arena, sizeof(*fmt));
	int err = tp_format_read(cat, name, fmt);
	if (err == -ENOTSUP) {
		diag_error(s->src, p->loc, "tracefs is not available (mount it on /sys/kernel/tracing)");
		return err;
	}
	if (err && sema_missing_probes() != MISSING_ERROR) {
		/* config = { missing_probes = warn | ignore }: the clause's other probes stay */
		if (sema_missing_probes() == MISSING_WARN)
			diag_warning(s->src, p->loc, "No matches for tracepoint %s:%s. Skipping.",
				     cat, name);
		return 0;
	}
	if (err) {
		diag_error(s->src, p->loc, "tracepoint not found: %s:%s", cat, name);
		return err;
	}
	vec_push(&s->tp_formats, fmt);
	s->clause_tp = s->clause_tp ? (struct tp_format *)-1 : fmt; /* -1: several */
	struct plan_prog *pp =
		pseudo_site_prog(s, clause, PLAN_PROG_TRACEPOINT, probe_name(s, pv, p), "tp", ci);
	pp->tp_category = cat;
	s->clause_tp_user = !strcmp(cat, "syscalls"); /* their pointer arguments are user's */
	pp->tp_name = name;
	pp->tp_id = fmt->id;
	return 0;
}

void sema_open_group(struct sema *s)
{
	s->group_site_begin = s->sites.n;
	pairset__clear(&s->group_sites);
}

/* One program over the sites added since sema_open_group. */
void sema_close_group(struct sema *s, struct ast_node *clause, int kind, struct binfo *bi,
		      enum go_point point, enum sema_hidden hidden, const char *name)
{
	struct plan_prog prog = {
		.kind = kind,
		.fn_name = arena_printf(s->arena, "gt_%s%d", name, s->progs.n),
		.site_begin = s->group_site_begin,
		.site_count = s->sites.n - s->group_site_begin,
		.clause_line = clause ? clause->loc.line : 0,
		.attach_rank = point == GO_RETURN ? PLAN_ATTACH_RETURN : PLAN_ATTACH_OTHER,
	};
	struct sema_prog sp = {
		.clause = clause,
		.plan_prog = s->progs.n,
		.bi = bi,
		.point = point,
		.hidden = hidden,
	};
	vec_push(&s->progs, prog);
	vec_push(&s->sprogs, sp);
}

int sema_expand_probes(struct sema *s, struct ast_node *clause, int ci)
{
	int err = 0;
	struct ast_list *probes = &clause->u.clause.probes;
	const struct provider *pvs[probes->n + 1];
	for (int i = 0; i < probes->n; i++) {
		struct ast_node *p = probes->v[i];
		if (subst_posparams(s, p)) {
			err = -EINVAL;
			continue;
		}
		const char *prov = p->u.probe.provider;
		const struct provider *pv = pvs[i] = provider_find(prov);
		if (!pv) {
			diag_error(s->src, p->loc,
				   "unknown probe type '%s': expected BEGIN, END, go, uprobe, uretprobe, "
				   "kprobe, kretprobe, kfunc, kretfunc, interval, profile or tracepoint",
				   prov);
			err = -EINVAL;
			continue;
		}
		switch (pv->id) {
		case PV_BEGIN:
		case PV_END:
			if (p->u.probe.nparts) {
				diag_error(s->src, p->loc, "%s takes no arguments", pv->name);
				err = -EINVAL;
				continue;
			}
			s->clause_kinds |= 1u << (pv->id == PV_BEGIN ? PLAN_PROG_BEGIN : PLAN_PROG_END);
			break;
		case PV_GO:
			s->clause_kinds |= 1u << PLAN_PROG_UPROBE;
			break;
		case PV_INTERVAL:
		case PV_PROFILE:
		case PV_SOFTWARE:
		case PV_HARDWARE:
			s->clause_kinds |= 1u << PLAN_PROG_PERF;
			break;
		case PV_TRACEPOINT:
			s->clause_kinds |= 1u << PLAN_PROG_TRACEPOINT;
			break;
		case PV_UPROBE:
		case PV_URETPROBE:
			s->clause_kinds |= 1u << PLAN_PROG_UPROBE;
			s->clause_points |= 1u << (pv->id == PV_URETPROBE ? UP_RETURN : UP_ENTRY);
			break;
		case PV_KPROBE:
		case PV_KRETPROBE:
			s->clause_kinds |= 1u << PLAN_PROG_KPROBE;
			s->clause_points |= 1u << (pv->id == PV_KRETPROBE ? UP_RETURN : UP_ENTRY);
			break;
		case PV_KFUNC:
		case PV_KRETFUNC:
			s->clause_kinds |= 1u << PLAN_PROG_FENTRY;
			s->clause_points |= 1u << (pv->id == PV_KRETFUNC ? UP_RETURN : UP_ENTRY);
			break;
		case PV_LATER:
			diag_error(s->src, p->loc, "%s probes are not supported yet", pv->name);
			err = -EINVAL;
			break;
		}
	}
	if (err)
		return err;

	for (int k = PLAN_PROG_BEGIN; k <= PLAN_PROG_END; k++) {
		if (!(s->clause_kinds & (1u << k)))
			continue;
		sema_open_group(s);
		/* A pseudo-site gives `probe` a name in BEGIN/END. */
		const char *name = k == PLAN_PROG_BEGIN ? "BEGIN" : "END";
		struct plan_site site = {.target = "", .func = name, .probe = name};
		struct sema_site_info info = {0};
		vec_push(&s->sites, site);
		vec_push(&s->site_info, info);
		sema_close_group(s, clause, k, NULL, GO_ENTRY, HIDDEN_NONE,
				 arena_printf(s->arena, "c%d_%s", ci, name));
	}

	for (int i = 0; i < probes->n; i++) {
		struct ast_node *p = probes->v[i];
		const struct provider *pv = pvs[i];
		int e = 0;
		if (pv->id == PV_INTERVAL || pv->id == PV_PROFILE)
			e = expand_timer(s, clause, p, pv, ci);
		else if (pv->id == PV_TRACEPOINT)
			e = expand_tracepoint(s, clause, p, pv, ci);
		else if (pv->id == PV_SOFTWARE || pv->id == PV_HARDWARE)
			e = expand_perf_event(s, clause, p, pv, ci);
		else if (pv->id == PV_UPROBE || pv->id == PV_URETPROBE)
			e = expand_uprobe(s, clause, p, pv, ci);
		else if (pv->id == PV_KPROBE || pv->id == PV_KRETPROBE)
			e = sema_expand_kprobe(s, clause, p, pv, ci);
		else if (pv->id == PV_KFUNC || pv->id == PV_KRETFUNC)
			e = sema_expand_kfunc(s, clause, p, pv, ci);
		if (e)
			err = -EINVAL;
	}
	if (err)
		return err;

	/* Sites of one program are contiguous: go probes are grouped by (target, point). */
	struct go_probe gps[probes->n];
	int ngp = 0;
	for (int i = 0; i < probes->n; i++) {
		struct ast_node *p = probes->v[i];
		if (pvs[i]->id != PV_GO)
			continue;
		if (parse_go_probe(s, p, &gps[ngp])) {
			err = -EINVAL;
			continue;
		}
		int minor = binfo_go_minor(gps[ngp].bi);
		if (minor >= 0 && minor < 17)
			s->clause_stack_abi = binfo_go_version(gps[ngp].bi);
		s->clause_points |= 1u << gps[ngp++].point;
	}
	if (err)
		return err;
	bool used[ngp + 1];
	memset(used, 0, sizeof(used));
	for (int i = 0; i < ngp; i++) {
		if (used[i])
			continue;
		sema_open_group(s);
		for (int j = i; j < ngp; j++) {
			if (used[j] || gps[j].bi != gps[i].bi || gps[j].point != gps[i].point)
				continue;
			used[j] = true;
			if (add_go_sites(s, &gps[j]))
				err = -EINVAL;
		}
		static const char *const names[] = {"entry", "return", "offset"};
		if (s->sites.n > s->group_site_begin) /* optional probes may leave none */
			sema_close_group(s, clause, PLAN_PROG_UPROBE, gps[i].bi, gps[i].point,
					 HIDDEN_NONE, arena_printf(s->arena, "c%d_%s", ci,
								   names[gps[i].point]));
	}
	return err;
}
