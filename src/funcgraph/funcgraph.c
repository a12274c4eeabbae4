/* funcgraph: the --funcgraph front end. The patterns, --drilldown and --args become a
 * program of the language, compiled by the normal pipeline in call-graph mode:
 *
 *   go:"main.add":entry, go:"main.add1":entry { fgentry("%u%u", reg("ip"), pid); }
 *   go:"main.(*Student).String":entry
 *   { fgentry("%u%us.name=%s, s.age=%ld", reg("ip"), pid, arg(*+0(%ax)):c64,
 *             arg(+16(%ax)):s64); }
 *   go:"main.add3":return { fgreturn("r0=%v", rets.r0); }
 *   go:"main.add":return, go:"main.add1":return, ... { fgreturn(); }
 *   go:"runtime.newproc1":return { fgspawn("%u%u%u%u%u", nsecs, pid, rets.r0.goid,
 *                                          rets.r0.parentGoid, rets.r0.gopc); }
 *   (the last with -f chrome, for the goroutines' lineage)
 *
 * fgentry()/fgreturn() put the goroutine id, its traced-call depth, the time and the
 * site (and at entry the return address) ahead of their own arguments; reg("ip") lets
 * the consumer take a PIE's load bias out of the return address, and pid names the
 * process (-f chrome). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/diag.h"
#include "binfo/gotypes.h"
#include "funcgraph/fg_int.h"

struct funcgraph {
	struct binfo *bi;
	struct binfo_godwarf *gd; /* --args by name: opened on first use */
	bool gd_tried;
	char *program;
	struct fg_argspec *specs; /* --args */
	int nspecs;
	struct fg_argspec *rspecs; /* --rets */
	int nrspecs;
	struct fg_tree_opts topts;
	struct fg_consumer *consumer;
	struct fg_summary *summary;
	struct rt_consumer rc;
	char *attached; /* "Attaching N functions..." */
};

void fg_options_free(struct fg_options *o)
{
	vec_free(&o->patterns);
	vec_free(&o->args);
	vec_free(&o->rets);
	vec_free(&o->excludes);
}

struct funcset {
	VEC(const struct binfo_func *) v;
	VEC(const char *) inlined; /* functions the compiler only ever inlined: their copies */
	struct pairset seen;       /* (func, 0) and (inlined name, 1): each once, at any size */
};

static void funcset_add(struct funcset *s, const struct binfo_func *f)
{
	if (pairset__add(&s->seen, (uint64_t)(uintptr_t)f, 0))
		vec_push(&s->v, f);
}

static void funcset_free(struct funcset *s)
{
	vec_free(&s->v);
	vec_free(&s->inlined);
	pairset__free(&s->seen);
}

static void add_spec(struct fg_argspec **specs, int *n, const struct fg_argspec *a)
{
	*specs = xrealloc(*specs, sizeof(**specs) * (size_t)(*n + 1));
	(*specs)[(*n)++] = *a;
}

static const struct fg_argspec *find_spec(const struct fg_argspec *specs, int n,
					  const char *func)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(specs[i].func, func))
			return &specs[i];
	return NULL;
}

/* Go's DWARF names an unnamed result ~r0; gotrace's rets.r0 */
static const char *go_name(const struct binfo_goparam *p)
{
	return p->result && p->name[0] == '~' ? p->name + 1 : p->name;
}

/* The Go parameters of FUNC from DWARF, NULL (after an error when WHY) without them. */
static const struct binfo_gofunc *gofunc(struct funcgraph *fg, const char *func, const char *why)
{
	const struct binfo_gofunc *gf = NULL;
	if (!fg->gd_tried) {
		fg->gd_tried = true;
		binfo_godwarf__open(fg->bi, &fg->gd);
	}
	if ((!fg->gd || (binfo_godwarf_data_release(fg->gd) &&
			 binfo_godwarf_func(fg->gd, func, &gf))) && why)
		diag_fatal("%s: Go values by name need DWARF, and %s has none (stripped, or "
			   "built with -ldflags=-w): use NAME=RULE:TYPE", why, binfo_path(fg->bi));
	else if (fg->gd && binfo_godwarf_func(fg->gd, func, &gf) && why)
		diag_fatal("%s: DWARF does not describe %s: use NAME=RULE:TYPE", why, func);
	return gf;
}

/* --args FUNC(a, s.name), --rets FUNC(r0, err): each name's parameter or result exists
 * (sema checks the rest). */
static int check_names(struct funcgraph *fg, const char *opt, const struct fg_argspec *a,
		       bool results)
{
	const char *what = results ? "result" : "parameter";
	for (int k = 0; k < a->nargs; k++) {
		if (a->args[k].rule)
			continue;
		char why[600];
		snprintf(why, sizeof(why), "%s '%s'", opt, a->func);
		const struct binfo_gofunc *gf = gofunc(fg, a->func, why);
		if (!gf)
			return -ENOENT;
		size_t n = strcspn(a->args[k].name, ".[");
		bool found = false;
		for (int i = 0; i < gf->nparams && !found; i++)
			found = gf->params[i].result == results &&
				strlen(go_name(&gf->params[i])) == n &&
				!strncmp(go_name(&gf->params[i]), a->args[k].name, n);
		if (!found) {
			struct strbuf l = {0};
			for (int i = 0; i < gf->nparams; i++)
				if (gf->params[i].result == results)
					strbuf_printf(&l, "%s%s", l.len ? ", " : "",
						      go_name(&gf->params[i]));
			diag_fatal("%s: %s has no %s '%.*s'; its %ss: %s", opt, a->func, what,
				   (int)n, a->args[k].name, what, l.buf ? l.buf : "none");
			strbuf_free(&l);
			return -ENOENT;
		}
	}
	return 0;
}

/* Is a value of type T, in a --summary's ranking, only nil or not: an address (a
 * pointer, slice, map, chan or func), which differs from call to call. */
static bool only_nil(const struct binfo_gotype *t)
{
	return t->kind == GK_PTR || t->kind == GK_SLICE || t->kind == GK_MAP ||
	       t->kind == GK_CHAN || t->kind == GK_FUNC;
}

/* --args auto, --rets auto: every named parameter (every result, r0 for an unnamed one)
 * of FUNC that uprobes can read (no floats, in X registers). NIL_ONLY (--summary's
 * results): addresses as <nil> or non-nil. */
static void auto_spec(struct funcgraph *fg, struct fg_argspec **specs, int *nspecs,
		      const char *func, bool results, bool nil_only)
{
	if (find_spec(*specs, *nspecs, func))
		return; /* given by hand */
	const struct binfo_gofunc *gf = gofunc(fg, func, NULL);
	struct fg_argspec a = {.func = xstrdup(func)};
	for (int i = 0; gf && i < gf->nparams; i++) {
		const struct binfo_goparam *p = &gf->params[i];
		if (p->result != results || (!results && p->name[0] == '~') ||
		    !strcmp(p->name, "_") || p->type->kind == GK_FLOAT ||
		    p->type->kind == GK_COMPLEX)
			continue;
		a.args = xrealloc(a.args, sizeof(*a.args) * (size_t)(a.nargs + 1));
		a.args[a.nargs++] = (struct fg_arg){xstrdup(go_name(p)), NULL,
						    xstrdup(nil_only && only_nil(p->type) ? "nil" : "v")};
	}
	add_spec(specs, nspecs, &a);
}

static const struct binfo_func *find_exact(struct binfo *bi, const char *what,
					   const char *name);

/* --args or --rets SPECS: parsed and checked, into *OUT; *AUTO for "auto". */
static int collect_specs(struct funcgraph *fg, const char *opt, const char *const *specs,
			 int n, struct fg_argspec **out, int *nout, bool results,
			 struct funcset *set, bool *is_auto)
{
	for (int i = 0; i < n; i++) {
		if (!strcmp(specs[i], "auto")) {
			*is_auto = true;
			continue;
		}
		struct fg_argspec a;
		if (fg_argspec_parse(opt, specs[i], &a))
			return -EINVAL;
		add_spec(out, nout, &a);
		if (find_spec(*out, *nout - 1, a.func)) {
			diag_fatal("%s: %s is given twice", opt, a.func);
			return -EINVAL;
		}
		const struct binfo_func *f = find_exact(fg->bi, opt, a.func);
		if (!f || check_names(fg, opt, &(*out)[*nout - 1], results))
			return -ENOENT;
		funcset_add(set, f);
	}
	return 0;
}

/* The function named NAME, or NULL after an error with suggestions. */
static const struct binfo_func *find_exact(struct binfo *bi, const char *what, const char *name)
{
	const struct binfo_func *f = binfo_find_func(bi, name);
	if (f)
		return f;
	const char *best[3];
	int n = binfo_suggest(bi, name, best, 3);
	struct strbuf sb = {0};
	for (int i = 0; i < n; i++)
		strbuf_printf(&sb, "%s%s", i ? (i == n - 1 ? " or " : ", ") : "; did you mean ",
			      best[i]);
	if (n)
		strbuf_puts(&sb, "?");
	diag_fatal("%s: no function '%s' in %s%s", what, name, binfo_path(bi),
		   sb.buf ? sb.buf : "");
	strbuf_free(&sb);
	return NULL;
}

static bool excluded(const struct fg_options *o, const char *name)
{
	return glob_match_any(o->excludes.v, o->excludes.n, name);
}

/* The functions matching PAT that have no out-of-line code, only inlined copies (each
 * name once): into SET. Returns how many names were added. */
static int collect_inlined(struct funcgraph *fg, const struct fg_options *o, const char *pat,
			   struct funcset *set)
{
	struct binfo_inlined *cs = NULL;
	int n = binfo_inlined_copies(fg->bi, pat, &cs), added = 0;
	for (int i = 0; i < n; i++) {
		/* the copies of one name share one pointer, in address order */
		if (pairset__has(&set->seen, (uint64_t)(uintptr_t)cs[i].name, 1) ||
		    binfo_find_func(fg->bi, cs[i].name) || excluded(o, cs[i].name))
			continue;
		pairset__add(&set->seen, (uint64_t)(uintptr_t)cs[i].name, 1);
		vec_push(&set->inlined, cs[i].name);
		added++;
	}
	free(cs);
	return added;
}

static int collect(struct funcgraph *fg, const struct fg_options *o, struct funcset *set)
{
	struct binfo *bi = fg->bi;
	for (int i = 0; i < o->patterns.n; i++) {
		const char *pat = o->patterns.v[i];
		if (!strncmp(pat, "go:", 3))
			pat += 3;
		if (!glob_go_wildcard(pat)) {
			if (!binfo_find_func(bi, pat) && collect_inlined(fg, o, pat, set))
				continue; /* always inlined: its copies are what is traced */
			const struct binfo_func *f = find_exact(bi, "--funcgraph", pat);
			if (!f)
				return -ENOENT;
			funcset_add(set, f);
			continue;
		}
		const struct binfo_func **fs = NULL;
		int n = binfo_match_funcs(bi, pat, &fs);
		int ninl = collect_inlined(fg, o, pat, set);
		if (n <= 0 && !ninl) {
			free(fs);
			diag_fatal("--funcgraph: no function matches '%s' in %s", pat,
				   binfo_path(bi));
			return -ENOENT;
		}
		for (int k = 0; k < n; k++)
			if (!excluded(o, fs[k]->name))
				funcset_add(set, fs[k]);
		free(fs);
	}
	if (o->drilldown) {
		const struct binfo_func *f = find_exact(bi, "--drilldown", o->drilldown);
		if (!f)
			return -ENOENT;
		funcset_add(set, f); /* the root is traced even when no pattern names it */
	}
	bool auto_args = false, auto_rets = false;
	if (collect_specs(fg, "--args", o->args.v, o->args.n, &fg->specs, &fg->nspecs, false,
			  set, &auto_args) ||
	    collect_specs(fg, "--rets", o->rets.v, o->rets.n, &fg->rspecs, &fg->nrspecs, true,
			  set, &auto_rets))
		return -EINVAL;
	for (int i = 0; i < set->v.n; i++) {
		if (auto_args)
			auto_spec(fg, &fg->specs, &fg->nspecs, set->v.v[i]->name, false, false);
		if (auto_rets)
			auto_spec(fg, &fg->rspecs, &fg->nrspecs, set->v.v[i]->name, true,
				  o->summary);
	}
	return 0;
}

/* FMT ("%u%u" + the conversions) and the values of SPEC's items, for fgentry() and
 * fgreturn(): NAME (a Go value) is PREFIX.NAME, else arg(RULE):TYPE. */
static void put_items(struct strbuf *sb, const char *head, const struct fg_argspec *a,
		      const char *prefix)
{
	strbuf_printf(sb, "(\"%s", head);
	for (int k = 0; k < a->nargs; k++)
		strbuf_printf(sb, "%s%s=%s", k ? ", " : "", a->args[k].name,
			      fg_arg_conv(a->args[k].type));
	strbuf_puts(sb, "\"");
	if (*head)
		strbuf_puts(sb, ", reg(\"ip\"), pid");
	for (int k = 0; k < a->nargs; k++)
		if (a->args[k].rule)
			strbuf_printf(sb, ", arg(%s):%s", a->args[k].rule, a->args[k].type);
		else if (!strcmp(a->args[k].type, "nil"))
			strbuf_printf(sb, ", %s.%s == nil ? \"<nil>\" : \"non-nil\"", prefix,
				      a->args[k].name);
		else
			strbuf_printf(sb, ", %s.%s", prefix, a->args[k].name);
	strbuf_puts(sb, "); }\n");
}

static void probe_list(struct strbuf *sb, const char *const *names, int n, const char *point)
{
	for (int i = 0; i < n; i++)
		strbuf_printf(sb, "%sgo:\"%s\":%s", i ? ",\n" : "", names[i], point);
	strbuf_puts(sb, "\n");
}

/* -f chrome's goroutine lineage: runtime.newproc1 returns the new g, whose goid,
 * parentGoid and gopc (the go statement) DWARF places (Go 1.21+). */
static bool lineage_readable(struct funcgraph *fg)
{
	const struct binfo_gofunc *gf = gofunc(fg, "runtime.newproc1", NULL);
	const struct binfo_gotype *g = NULL;
	for (int i = 0; gf && i < gf->nparams; i++)
		if (gf->params[i].result && gf->params[i].type->kind == GK_PTR)
			g = gf->params[i].type->elem;
	int found = 0;
	for (int i = 0; g && g->kind == GK_STRUCT && i < g->nfields; i++)
		found += !strcmp(g->fields[i].name, "goid") ||
			 !strcmp(g->fields[i].name, "parentGoid") || !strcmp(g->fields[i].name, "gopc");
	return found == 3 && binfo_find_func(fg->bi, "runtime.newproc1");
}

/* Returns the number of functions with an :entry probe. */
static int write_program(struct funcgraph *fg, const struct funcset *set, bool lineage)
{
	int nentry = 0;
	struct strbuf sb = {0};
	VEC(const char *) plain = {0}, rets = {0};
	int unprobed = 0;

	strbuf_puts(&sb, "// generated by gotrace --funcgraph\n");
	for (int i = 0; i < set->v.n; i++) {
		const struct binfo_func *f = set->v.v[i];
		uint64_t entry, *ra = NULL;
		/* a name the probe syntax cannot quote, or no place for a probe: left out */
		if (strchr(f->name, '"') || binfo_entry_addr(fg->bi, f, &entry)) {
			unprobed++;
			continue;
		}
		int nret = binfo_ret_addrs(fg->bi, f, &ra);
		free(ra);
		nentry++;
		const struct fg_argspec *r = find_spec(fg->rspecs, fg->nrspecs, f->name);
		if (nret > 0 && r && r->nargs) {
			strbuf_printf(&sb, "go:\"%s\":return\n{ fgreturn", f->name);
			put_items(&sb, "", r, "rets");
		} else if (nret > 0) {
			vec_push(&rets, f->name);
		}
		const struct fg_argspec *a = find_spec(fg->specs, fg->nspecs, f->name);
		if (!a || !a->nargs) {
			vec_push(&plain, f->name);
			continue;
		}
		strbuf_printf(&sb, "go:\"%s\":entry\n{ fgentry", f->name);
		put_items(&sb, "%u%u", a, "args");
	}
	/* only inlined: the copies' starts, leaves with no values and no return */
	for (int i = 0; i < set->inlined.n; i++) {
		if (strchr(set->inlined.v[i], '"')) {
			unprobed++;
			continue;
		}
		vec_push(&plain, set->inlined.v[i]);
		nentry++;
	}
	if (plain.n) {
		probe_list(&sb, plain.v, plain.n, "entry");
		strbuf_puts(&sb, "{ fgentry(\"%u%u\", reg(\"ip\"), pid); }\n");
	}
	if (rets.n) {
		probe_list(&sb, rets.v, rets.n, "return");
		strbuf_puts(&sb, "{ fgreturn(); }\n");
	}
	if (lineage && lineage_readable(fg))
		strbuf_puts(&sb, "go:\"runtime.newproc1\":return\n{ fgspawn(\"%u%u%u%u%u\", nsecs, pid, "
			    "rets.r0.goid, rets.r0.parentGoid, rets.r0.gopc); }\n");
	if (unprobed)
		diag_print(DIAG_WARNING, "%d matched function%s cannot be probed and %s left out",
			   unprobed, unprobed == 1 ? "" : "s", unprobed == 1 ? "is" : "are");
	vec_free(&plain);
	vec_free(&rets);
	fg->program = sb.buf;
	return nentry;
}

/* "5s", "500ms", "2m", "100us", a bare number of seconds; 0 is "at the end only". */
static int parse_interval(const char *text, uint64_t *ns)
{
	static const struct {
		const char *unit;
		uint64_t ns;
	} units[] = {{"", 1000000000}, {"s", 1000000000}, {"ms", 1000000}, {"us", 1000},
		     {"ns", 1},        {"m", 60000000000}};
	char *end;
	errno = 0;
	double v = strtod(text ? text : "5", &end);
	for (size_t i = 0; !errno && end != text && v >= 0 && i < ARRAY_SIZE(units); i++) {
		if (!strcmp(end, units[i].unit) && v * (double)units[i].ns < 1e18) {
			*ns = (uint64_t)(v * (double)units[i].ns);
			/* the event loop turns at least every 100 ms (RT_POLL_MS) */
			if (*ns && *ns < 100000000)
				break;
			return 0;
		}
	}
	diag_fatal("--interval '%s': expected a duration of at least 100ms such as 5s, 500ms "
		   "or 1m (0: at the end only)", text);
	return -EINVAL;
}

static int check_summary(const struct fg_options *o)
{
	const char *other = o->chrome ? "-f chrome" : o->drilldown ? "--drilldown"
			    : o->args.n ? "--args" : o->otlp ? "--otlp" : NULL;
	if (o->summary && other) {
		diag_fatal("--summary counts calls per function; %s is for the trees", other);
		return -EINVAL;
	}
	if (!o->summary && o->interval) {
		diag_fatal("--interval is how often --summary prints: give --summary");
		return -EINVAL;
	}
	return 0;
}

struct funcgraph *funcgraph_new(const struct fg_options *o, const char *target)
{
	struct funcset set = {0};
	uint64_t interval_ns = 0;
	if (!target) {
		diag_fatal("--funcgraph needs a target: -c CMD, -p PID or a BINARY path");
		return NULL;
	}
	if (check_summary(o) || (o->summary && parse_interval(o->interval, &interval_ns)))
		return NULL;
	struct funcgraph *fg = xcalloc(1, sizeof(*fg));
	if (binfo__open(target, &fg->bi) < 0 || collect(fg, o, &set)) {
		funcset_free(&set);
		funcgraph_free(fg);
		return NULL;
	}
	int n = write_program(fg, &set, o->chrome || o->otlp);
	funcset_free(&set);
	if (!n) {
		diag_fatal("--funcgraph: none of the matched functions can be probed");
		funcgraph_free(fg);
		return NULL;
	}
	fg->attached = xasprintf("Attaching %d function%s...", n, n == 1 ? "" : "s");
	if (o->verbose) {
		size_t len = strlen(fg->program);
		if (len && fg->program[len - 1] == '\n')
			len--; /* diag_print ends the message */
		diag_print(DIAG_INFO, "funcgraph program:\n%.*s", (int)len, fg->program);
	}
	fg->topts = (struct fg_tree_opts){
		.bi = fg->bi,
		.specs = fg->specs,
		.nspecs = fg->nspecs,
		.rspecs = fg->rspecs,
		.nrspecs = fg->nrspecs,
		.drilldown = o->drilldown,
		.no_color = o->no_color,
		.chrome = o->chrome,
		.summary = o->summary,
		.oncpu = !o->no_oncpu,
		.interval_ns = interval_ns,
	};
	return fg;
}

void funcgraph_set_otlp(struct funcgraph *fg, struct otlp *x)
{
	fg->topts.otlp = x;
}

void funcgraph_free(struct funcgraph *fg)
{
	if (!fg)
		return;
	fg_consumer_free(fg->consumer);
	fg_summary_free(fg->summary);
	free(fg->attached);
	binfo_godwarf__close(fg->gd);
	for (int i = 0; i < fg->nspecs; i++)
		fg_argspec_free(&fg->specs[i]);
	free(fg->specs);
	for (int i = 0; i < fg->nrspecs; i++)
		fg_argspec_free(&fg->rspecs[i]);
	free(fg->rspecs);
	free(fg->program);
	if (fg->bi)
		binfo__close(fg->bi);
	free(fg);
}

const char *funcgraph_program(const struct funcgraph *fg)
{
	return fg->program;
}

const struct rt_consumer *funcgraph_consumer(struct funcgraph *fg, const struct gt_plan *plan)
{
	if (fg->topts.summary) {
		fg_summary_free(fg->summary);
		fg->summary = fg_summary_new(&fg->topts, plan);
		fg->rc = (struct rt_consumer){
			.ctx = fg->summary,
			.record = fg_summary_record,
			.finish = fg_summary_finish,
			.tick = fg_summary_tick,
			.attached = fg->attached,
		};
		return &fg->rc;
	}
	fg_consumer_free(fg->consumer);
	fg->consumer = fg_consumer_new(&fg->topts, plan);
	fg->rc = (struct rt_consumer){
		.ctx = fg->consumer,
		.record = fg_consumer_record,
		.finish = fg_consumer_finish,
		.attached = fg->attached,
	};
	return &fg->rc;
}
