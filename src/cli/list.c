/* list: -l [PATTERN]: the probes gotrace can attach, one full name per line, as
 * bpftrace lists them. Go functions of the target (go:NAME); kernel tracepoints from
 * tracefs (tracepoint:CAT:NAME, with their fields under -v). A pattern may name the
 * provider (`t:syscalls:*`, `go:main.*`) or not (`*sleep*`: every kind it matches).
 * The functions of loaded BPF programs as fentry:bpf:ID:NAME (`fentry:bpf:*`). */
#include "list.h"

#include <bpf/btf.h>
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binfo/binfo.h"
#include "common/arena.h"
#include "common/diag.h"
#include "common/kbtf.h"
#include "common/util.h"
#include "parser/ast.h"
#include "sema/providers.h"
#include "sema/tracepoint.h"

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void print_fields(const char *cat, const char *name)
{
	struct tp_format f;
	if (tp_format_read(cat, name, &f))
		return;
	for (int i = 0; i < f.nfields; i++)
		if (strncmp(f.fields[i].name, "common_", 7))
			printf("    %s\n", f.fields[i].decl);
	tp_format_free(&f);
}

/* Tracepoints whose full name "tracepoint:CAT:NAME" matches PAT, sorted. */
static int list_tracepoints(const char *pat, bool verbose)
{
	const char *root = tp_tracefs();
	if (!root) {
		diag_fatal("-l: tracefs is not available (mount it on /sys/kernel/tracing)");
		return -ENOENT;
	}
	char path[512];
	snprintf(path, sizeof(path), "%s/events", root);
	DIR *cats = opendir(path);
	if (!cats) {
		diag_fatal("-l: %s: %s", path, strerror(errno));
		return -errno;
	}
	VEC(char *) names = {0};
	struct dirent *c;
	while ((c = readdir(cats))) {
		if (c->d_name[0] == '.' || c->d_type != DT_DIR)
			continue;
		snprintf(path, sizeof(path), "%s/events/%s", root, c->d_name);
		DIR *evs = opendir(path);
		struct dirent *e;
		while (evs && (e = readdir(evs))) {
			if (e->d_name[0] == '.' || e->d_type != DT_DIR)
				continue;
			char full[600];
			snprintf(full, sizeof(full), "tracepoint:%s:%s", c->d_name, e->d_name);
			if (!fnmatch(pat, full, 0))
				vec_push(&names, xstrdup(full));
		}
		if (evs)
			closedir(evs);
	}
	closedir(cats);
	vec_sort(&names, cmp_str);
	for (int i = 0; i < names.n; i++) {
		puts(names.v[i]);
		if (verbose) {
			char *cat = names.v[i] + strlen("tracepoint:"), *name = strchr(cat, ':');
			*name++ = 0;
			print_fields(cat, name);
		}
		free(names.v[i]);
	}
	vec_free(&names);
	return 0;
}

/* software:EVENT: and hardware:EVENT: whose names match PAT ("s:cpu*" is "software:cpu*") */
static int list_perf(const char *pat, enum provider_id id)
{
	const char *prov = id == PV_HARDWARE ? "hardware" : "software";
	const char *colon = strchr(pat, ':');
	char full[256];
	if (colon) {
		char p0[64];
		snprintf(p0, sizeof(p0), "%.*s", (int)(colon - pat), pat);
		const struct provider *pv = provider_find(p0);
		if (pv && pv->id == id) {
			snprintf(full, sizeof(full), "%s%s", prov, colon);
			pat = full;
		}
	}
	for (const struct perf_event_name *e = provider_perf_events(id); e->name; e++) {
		char name[128], bare[128];
		snprintf(name, sizeof(name), "%s:%s:", prov, e->name);
		snprintf(bare, sizeof(bare), "%s:%s", prov, e->name);
		if (!fnmatch(pat, name, 0) || !fnmatch(pat, bare, 0))
			puts(name);
	}
	return 0;
}

/* PROV:FUNC (kprobe or kretprobe) for the kernel functions whose name matches what
 * follows the provider in PAT ("kprobe:vfs_*", "kr:vfs_*"), or, without PROV, whose
 * "kprobe:FUNC" matches all of PAT, as bpftrace lists them; nothing where the kernel
 * has no kprobes. */
static int list_kprobes(const char *pat, const char *prov)
{
	const char *const *names;
	size_t n;
	if (binfo_kernel_funcs(&names, &n))
		return 0;
	char full[512];
	for (size_t i = 0; i < n; i++) {
		snprintf(full, sizeof(full), "%s:%s", prov ? prov : "kprobe", names[i]);
		if (!fnmatch(prov ? strchr(pat, ':') + 1 : pat, prov ? names[i] : full, 0))
			puts(full);
	}
	return 0;
}

/* fentry:bpf:ID:NAME (fexit for FEXIT): the functions of the loaded BPF programs with
 * BTF that match PAT's "bpf[:ID]:NAME" (ID may be *), sorted as bpftrace lists them. */
static int list_bpfprogs(const char *pat, bool fexit)
{
	const struct binfo_bpf_func *f;
	size_t n;
	int err = binfo_bpf_funcs(&f, &n);
	if (err) {
		diag_fatal("-l: the loaded BPF programs cannot be listed: %s", strerror(-err));
		return err;
	}
	const char *rest = strchr(pat, ':') + 1; /* "bpf:..." */
	const char *tail = rest + 3;
	char want[512];
	snprintf(want, sizeof(want), "bpf:%s%s", strchr(tail + 1, ':') ? "" : "*:",
		 *tail ? tail + 1 : "*");
	char **lines = xcalloc(n + 1, sizeof(*lines));
	size_t nl = 0;
	for (size_t i = 0; i < n; i++) {
		char *full = xasprintf("bpf:%u:%s", f[i].prog_id, f[i].name);
		if (f[i].btf_id && !f[i].own && !fnmatch(want, full, 0))
			lines[nl++] = full;
		else
			free(full);
	}
	qsort(lines, nl, sizeof(*lines), cmp_str);
	for (size_t i = 0; i < nl; i++) {
		if (!i || strcmp(lines[i], lines[i - 1]))
			printf("%s:%s\n", fexit ? "fexit" : "fentry", lines[i]);
	}
	for (size_t i = 0; i < nl; i++)
		free(lines[i]);
	free(lines);
	return 0;
}

static void dump_printf(void *ctx, const char *fmt, va_list ap)
{
	strbuf_vprintf(ctx, fmt, ap);
}

/* "struct NAME", "union NAME", "enum NAME" of BTF type T, or NULL (anonymous, or no such
 * kind). */
static char *type_full_name(const struct btf *b, const struct btf_type *t)
{
	const char *kw = btf_is_struct(t) ? "struct" : btf_is_union(t) ? "union"
		       : btf_is_enum(t) || btf_is_enum64(t) ? "enum" : NULL;
	const char *name = btf__name_by_offset(b, t->name_off);
	return kw && name && *name ? xasprintf("%s %s", kw, name) : NULL;
}

/* -l 'struct NAME' (union, enum; wildcards): the kernel's named types in its BTF that
 * match, sorted, as bpftrace lists them; -lv prints their definitions in C (libbpf's
 * btf_dump, the types they need first, from which only the matching ones are kept). */
static int list_types(const char *pat, bool verbose)
{
	const struct btf *b = kbtf_vmlinux();
	if (!b) {
		diag_fatal("-l %s: this kernel has no BTF (/sys/kernel/btf/vmlinux)", pat);
		return -ENOENT;
	}
	VEC(char *) out = {0};
	struct strbuf defs = {0};
	struct btf_dump *d = verbose ? btf_dump__new(b, dump_printf, &defs, NULL) : NULL;
	if (verbose && !d) {
		diag_fatal("-l: cannot print the kernel's types: %s", strerror(errno));
		return -errno;
	}
	for (unsigned id = 1; id < btf__type_cnt(b); id++) {
		char *full = type_full_name(b, btf__type_by_id(b, id));
		if (full && !fnmatch(pat, full, 0) && verbose) {
			btf_dump__dump_type(d, id);
		} else if (full && !fnmatch(pat, full, 0)) {
			vec_push(&out, full);
			continue;
		}
		free(full);
	}
	/* the dump's definitions: "struct NAME {" at a line's start to the next line that
	 * starts with '}' ("};", "} __attribute__((aligned(8)));") */
	for (char *p = defs.buf; p && *p;) {
		char *eol = strchr(p, '\n');
		if (!eol)
			break;
		char *close = eol - p > 2 && !strncmp(eol - 2, " {", 2) ? strstr(eol, "\n}") : NULL;
		if (!close) {
			p = eol + 1;
			continue;
		}
		char *head = xasprintf("%.*s", (int)(eol - 2 - p), p);
		char *end = strchr(close + 1, '\n');
		end = end ? end : close + strlen(close);
		if (!fnmatch(pat, head, 0))
			vec_push(&out, xasprintf("%.*s", (int)(end - p), p));
		free(head);
		p = end;
	}
	btf_dump__free(d);
	strbuf_free(&defs);
	qsort(out.v, (size_t)out.n, sizeof(*out.v), cmp_str);
	for (int i = 0; i < out.n; i++)
		if (!i || strcmp(out.v[i], out.v[i - 1]))
			printf("%s\n%s", out.v[i], verbose ? "\n" : ""); /* as bpftrace */
	for (int i = 0; i < out.n; i++)
		free(out.v[i]);
	vec_free(&out);
	return 0;
}

int list_probes(const char *pattern, const char *target, bool verbose)
{
	const char *pat = pattern && *pattern ? pattern : "*";
	/* current bpftrace's -l 'a,b': each, with its spaces made single; not a comma of a
	 * Go generic instance's type arguments (go:"main.F[int,string]") */
	int depth = 0;
	bool quoted = false;
	for (const char *c = pat; *c; c++) {
		depth += *c == '[' ? 1 : *c == ']' ? -1 : 0;
		quoted ^= *c == '"';
		if (*c != ',' || depth || quoted)
			continue;
		char *first = xasprintf("%.*s", (int)(c - pat), pat);
		int err = list_probes(first, target, verbose);
		free(first);
		return list_probes(c + 1, target, verbose) || err ? -EINVAL : 0;
	}
	char *norm = xstrdup(pat + strspn(pat, " \t"));
	size_t k = 0;
	for (size_t i = 0; norm[i]; i++)
		if (!(norm[i] == ' ' || norm[i] == '\t') || (norm[i + 1] && norm[i + 1] != ' ' &&
							     norm[i + 1] != '\t'))
			norm[k++] = norm[i] == '\t' ? ' ' : norm[i];
	norm[k] = 0;
	if (!strncmp(norm, "struct ", 7) || !strncmp(norm, "union ", 6) ||
	    !strncmp(norm, "enum ", 5)) {
		int err = list_types(norm, verbose);
		free(norm);
		return err;
	}
	free(norm);
	for (const char *c = pat; *c; c++) {
		if ((unsigned char)*c <= ' ' || *c == '\\' || *c == 0x7f) {
			diag_fatal("invalid character '%s' in the search pattern",
				   *c == '\\' ? "\\" : "?");
			return -EINVAL;
		}
	}
	const char *colon = strchr(pat, ':');
	char prov[64] = "";
	if (colon && (size_t)(colon - pat) < sizeof(prov))
		snprintf(prov, sizeof(prov), "%.*s", (int)(colon - pat), pat);
	const struct provider *pv = prov[0] ? provider_find(prov) : NULL;
	if (pv && pv->id == PV_TRACEPOINT) {
		char full[512];
		snprintf(full, sizeof(full), "tracepoint:%s", colon + 1);
		return list_tracepoints(full, verbose);
	}
	if (pv && (pv->id == PV_SOFTWARE || pv->id == PV_HARDWARE))
		return list_perf(pat, pv->id);
	if (pv && (pv->id == PV_KPROBE || pv->id == PV_KRETPROBE))
		return list_kprobes(pat, pv->name);
	if (pv && (pv->id == PV_KFUNC || pv->id == PV_KRETFUNC) && !strncmp(colon, ":bpf", 4) &&
	    (!colon[4] || colon[4] == ':'))
		return list_bpfprogs(pat, pv->id == PV_KRETFUNC);
	if (pv && (pv->id == PV_KFUNC || pv->id == PV_KRETFUNC))
		return list_kfuncs(pat, pv->name, verbose);
	if (pv && pv->id == PV_GO) {
		if (!target) {
			diag_fatal("-l %s needs a target: -b BINARY, -c CMD or -p PID", pattern);
			return -EINVAL;
		}
		/* go:"NAME" as a script quotes it (methods, generic instances) */
		const char *fn = colon + 1;
		size_t n = strlen(fn);
		if (n >= 2 && fn[0] == '"' && fn[n - 1] == '"') {
			char *unq = xasprintf("%.*s", (int)(n - 2), fn + 1);
			int rc = list_go(unq, target, verbose);
			free(unq);
			return rc;
		}
		return list_go(fn, target, verbose);
	}
	if (pv && (pv->id == PV_INTERVAL || pv->id == PV_PROFILE)) {
		/* their kinds, as bpftrace lists them: interval:hz:, interval:us: ... */
		static const char *const units[] = {"hz", "us", "ms", "s"};
		for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
			char name[64];
			snprintf(name, sizeof(name), "%s:%s:", pv->name, units[i]);
			if (!fnmatch(pat, name, 0) || !fnmatch(pat, units[i], 0) ||
			    !strcmp(colon + 1, "*"))
				printf("%s\n", name);
		}
		return 0;
	}
	if (pv) {
		diag_fatal("-l: %s probes cannot be listed%s", pv->name,
			   pv->id == PV_LATER ? " (gotrace does not support them yet)" : "");
		return -EINVAL;
	}
	/* no provider: Go functions of the target by name, or every kind by full name */
	if (target && !colon)
		return list_go(pat, target, verbose);
	/* every full name has a colon: a bare name with no wildcard can match none, and is
	 * most likely a Go function asked for without its program */
	if (!colon && !strpbrk(pat, "*?[")) {
		diag_fatal("-l %s: no probe's full name (PROVIDER:NAME) is that; a Go program's "
			   "functions are listed with a target (-l '%s' -b BINARY, -c CMD or -p "
			   "PID), the kernel's as -l 'kprobe:%s'",
			   pat, pat, pat);
		return -EINVAL;
	}
	/* in bpftrace's order: its kinds by name, kretfunc and kretprobe left out */
	list_perf(pat, PV_HARDWARE);
	list_kfuncs(pat, NULL, verbose);
	list_kprobes(pat, NULL);
	list_perf(pat, PV_SOFTWARE);
	return list_tracepoints(pat, verbose);
}

/* -l with a program (-e PROGRAM or a script): the probes its clauses name, each as -l
 * lists it; the ones -l has nothing to search for (BEGIN, interval:s:1 ...) as written. */
int list_program(const char *text, const char *path, const char *target, bool verbose)
{
	struct arena *a = arena__new();
	struct diag_src src = {.name = path ? path : "stdin", .text = text,
			       .origin = path ? DIAG_SRC_FILE : DIAG_SRC_TEXT};
	struct ast_node *p = parse_program(a, &src);
	int err = p ? 0 : -EINVAL;
	for (int i = 0; p && i < p->u.program.clauses.n; i++) {
		const struct ast_list *probes = &p->u.program.clauses.v[i]->u.clause.probes;
		for (int j = 0; j < probes->n; j++) {
			const struct ast_node *pr = probes->v[j];
			const struct provider *pv = provider_find(pr->u.probe.provider);
			enum provider_id id = pv ? pv->id : PV_LATER;
			if (id == PV_GO && pr->u.probe.nparts && target)
				err |= list_go(pr->u.probe.parts[0], target, verbose);
			else if ((id == PV_INTERVAL || id == PV_PROFILE) && pr->u.probe.nparts) {
				/* bpftrace lists the kind, not the rate: interval:ms: */
				const char *u = pr->u.probe.parts[0];
				if (pr->u.probe.nparts == 1) /* interval:100ms */
					u += strspn(u, "0123456789");
				printf("%s:%s:\n", pv->name, u);
			}
			else if (id == PV_KPROBE || id == PV_KRETPROBE || id == PV_KFUNC ||
				 id == PV_KRETFUNC || id == PV_TRACEPOINT || id == PV_SOFTWARE ||
				 id == PV_HARDWARE)
				err |= list_probes(pr->u.probe.raw, target, verbose);
			else
				printf("%s\n", pr->u.probe.raw);
		}
	}
	arena__free(a);
	return err ? -EINVAL : 0;
}
