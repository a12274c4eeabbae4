/* sema_probes: expand each clause's probe list into programs and sites. */
#include "sema/sema_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "binfo/binfo.h"
#include "common/util.h"

/* Opened targets, shared by all clauses; closed by sema_result_free through the plan. */
struct binfo *sema_target(struct sema *s, const char *path, struct gt_loc loc)
{
	for (int i = 0; i < s->ntargets; i++)
		if (!strcmp(s->target_paths[i], path))
			return s->targets[i];
	struct binfo *bi = NULL;
	int err = binfo__open(path, &bi);
	if (err < 0) {
		(void)loc;
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

static void add_site(struct sema *s, struct binfo *bi, const char *func, const char *probe,
		     uint64_t vaddr, uint64_t off)
{
	for (int i = s->group_site_begin; i < s->sites.n; i++)
		if (s->sites.v[i].file_off == off && !strcmp(s->sites.v[i].target, binfo_path(bi)))
			return; /* the same site twice in one clause would fire twice */
	struct plan_site site = {
		.target = binfo_path(bi),
		.func = func,
		.probe = probe,
		.vaddr = vaddr,
		.file_off = off,
	};
	vec_push(&s->sites, site);
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

/* '*' right after '(' is Go's pointer-receiver syntax, main.(*T).M, not a wildcard. */
static bool is_wildcard(const char *name)
{
	for (const char *p = name; *p; p++)
		if (*p == '?' || (*p == '*' && (p == name || p[-1] != '(')))
			return true;
	return false;
}

static bool parse_offset(const char *s, uint64_t *out)
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

/* go:[PATH:]FUNC:entry | go:[PATH:]FUNC:+OFFSET */
static int expand_go_probe(struct sema *s, struct ast_node *p, int *kind_out,
			   const char **target_out)
{
	const char **parts = (const char **)p->u.probe.parts;
	int n = p->u.probe.nparts;
	const char *path = NULL, *func, *where;
	if (n == 3) {
		path = parts[0];
		func = parts[1];
		where = parts[2];
	} else if (n == 2) {
		func = parts[0];
		where = parts[1];
	} else {
		diag_error(s->src, p->loc,
			   "a go probe is go:[PATH:]FUNC:entry, go:[PATH:]FUNC:return, "
			   "go:[PATH:]FUNC:+OFFSET or go:[PATH:]FILE.go:LINE");
		return -EINVAL;
	}
	size_t flen = strlen(func);
	if (flen > 3 && !strcmp(func + flen - 3, ".go") && where[0] >= '0' && where[0] <= '9') {
		diag_error(s->src, p->loc, "source-line probes (FILE.go:LINE) are not supported yet");
		return -ENOTSUP;
	}
	bool is_entry = !strcmp(where, "entry");
	uint64_t off = 0;
	if (!strcmp(where, "return")) {
		diag_error(s->src, p->loc, "go:FUNC:return probes are not supported yet");
		return -ENOTSUP;
	}
	if (!is_entry && !parse_offset(where, &off)) {
		diag_error(s->src, p->loc,
			   "unknown go probe point '%s': expected entry, return or +OFFSET", where);
		return -EINVAL;
	}
	if (!path)
		path = s->opts->default_target;
	if (!path) {
		diag_error(s->src, p->loc,
			   "no target binary for this probe: give -c CMD, -p PID or -b BINARY, "
			   "or write go:PATH:FUNC:%s",
			   where);
		return -EINVAL;
	}
	struct binfo *bi = sema_target(s, path, p->loc);
	if (!bi)
		return -ENOENT;
	*target_out = binfo_path(bi);

	const struct binfo_func **fs = NULL;
	int nf;
	if (is_wildcard(func)) {
		nf = binfo_match_funcs(bi, func, &fs);
	} else {
		const struct binfo_func *f = binfo_find_func(bi, func);
		nf = f ? 1 : 0;
		fs = xmalloc(sizeof(*fs));
		fs[0] = f;
	}
	if (nf <= 0) {
		free(fs);
		if (is_wildcard(func))
			diag_error(s->src, p->loc, "no function matches '%s' in %s", func, path);
		else
			diag_error(s->src, p->loc, "no function '%s' in %s%s", func, path,
				   suggest_funcs(s, bi, func));
		return -ENOENT;
	}
	int err = 0;
	for (int i = 0; i < nf && !err; i++) {
		uint64_t addr;
		if (is_entry) {
			err = binfo_entry_addr(bi, fs[i], &addr);
		} else {
			addr = fs[i]->addr + off;
			if (off >= fs[i]->size || !binfo_is_insn_boundary(bi, fs[i], addr)) {
				diag_error(s->src, p->loc,
					   "%s+%llu is not an instruction boundary of %s",
					   fs[i]->name, (unsigned long long)off, fs[i]->name);
				err = -EINVAL;
				break;
			}
		}
		uint64_t foff;
		if (!err)
			err = binfo_vaddr_to_offset(bi, addr, &foff);
		if (err) {
			diag_error(s->src, p->loc, "cannot place a probe in %s", fs[i]->name);
			break;
		}
		const char *probe = arena_printf(s->arena, "go:%s:%s", fs[i]->name, where);
		add_site(s, bi, fs[i]->name, probe, addr, foff);
	}
	free(fs);
	*kind_out = PLAN_PROG_UPROBE;
	return err;
}

static const char *const later_providers[] = {
	"uprobe", "uretprobe", "tracepoint", "profile", "interval", "kfunc", "kretfunc",
	"kprobe", "kretprobe", "usdt", "software", "hardware", "watchpoint",
};

/* One program per (probe kind, target) pair of the clause. */
static void close_group(struct sema *s, struct ast_node *clause, int kind, const char *target,
			int ci)
{
	static const char *const kind_names[] = {"BEGIN", "END", "uprobe"};
	struct plan_prog prog = {
		.kind = kind,
		.fn_name = arena_printf(s->arena, "gt_c%d_%s%d", ci, kind_names[kind],
					s->progs.n),
		.site_begin = s->group_site_begin,
		.site_count = s->sites.n - s->group_site_begin,
		.clause_line = clause->loc.line,
	};
	(void)target;
	struct sema_prog sp = {.clause = clause, .plan_prog = s->progs.n};
	vec_push(&s->progs, prog);
	vec_push(&s->sprogs, sp);
}

int sema_expand_probes(struct sema *s, struct ast_node *clause, int ci)
{
	int err = 0;
	struct ast_list *probes = &clause->u.clause.probes;
	/* Sites of one program must be contiguous: gather probes of a kind/target together. */
	for (int i = 0; i < probes->n; i++) {
		struct ast_node *p = probes->v[i];
		const char *prov = p->u.probe.provider;
		if (!strcmp(prov, "BEGIN") || !strcmp(prov, "END")) {
			if (p->u.probe.nparts) {
				diag_error(s->src, p->loc, "%s takes no arguments", prov);
				err = -EINVAL;
				continue;
			}
			s->clause_kinds |= 1u << (prov[0] == 'B' ? PLAN_PROG_BEGIN : PLAN_PROG_END);
			continue;
		}
		if (!strcmp(prov, "go")) {
			s->clause_kinds |= 1u << PLAN_PROG_UPROBE;
			continue;
		}
		bool later = false;
		for (size_t k = 0; k < ARRAY_SIZE(later_providers); k++)
			later |= !strcmp(prov, later_providers[k]);
		if (later)
			diag_error(s->src, p->loc, "%s probes are not supported yet", prov);
		else
			diag_error(s->src, p->loc,
				   "unknown probe type '%s': expected BEGIN, END or go:...", prov);
		err = -EINVAL;
	}
	if (err)
		return err;

	/* BEGIN / END groups */
	for (int k = PLAN_PROG_BEGIN; k <= PLAN_PROG_END; k++) {
		if (!(s->clause_kinds & (1u << k)))
			continue;
		s->group_site_begin = s->sites.n;
		/* A pseudo-site gives `probe` a name in BEGIN/END. */
		const char *name = k == PLAN_PROG_BEGIN ? "BEGIN" : "END";
		struct plan_site site = {.target = "", .func = name, .probe = name};
		vec_push(&s->sites, site);
		close_group(s, clause, k, NULL, ci);
	}
	/* go: probes grouped per target, in order of first appearance */
	bool used[probes->n];
	memset(used, 0, sizeof(used));
	for (int i = 0; i < probes->n; i++) {
		struct ast_node *p = probes->v[i];
		if (used[i] || strcmp(p->u.probe.provider, "go"))
			continue;
		int kind;
		const char *target = NULL;
		s->group_site_begin = s->sites.n;
		int e = expand_go_probe(s, p, &kind, &target);
		used[i] = true;
		for (int j = i + 1; j < probes->n && !e; j++) {
			struct ast_node *q = probes->v[j];
			if (used[j] || strcmp(q->u.probe.provider, "go"))
				continue;
			/* Peek the target of q without expanding twice. */
			const char *qpath = q->u.probe.nparts == 3 ? q->u.probe.parts[0]
								    : s->opts->default_target;
			struct binfo *bi = qpath ? sema_target(s, qpath, q->loc) : NULL;
			if (!bi || strcmp(binfo_path(bi), target))
				continue;
			const char *t2;
			int k2;
			e = expand_go_probe(s, q, &k2, &t2);
			used[j] = true;
		}
		if (e) {
			err = e;
			continue;
		}
		close_group(s, clause, kind, target, ci);
	}
	return err;
}
