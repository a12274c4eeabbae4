/* list_kfunc: -l kfunc:PATTERN / kretfunc:PATTERN, as bpftrace 0.17 lists them: the
 * kernel's and its modules' BTF functions that ftrace can trace, as PROV:MODULE:FUNC
 * (vmlinux for the kernel's own), sorted; under -v each parameter ("    TYPE NAME", the
 * type as C spells it) and the return value ("    TYPE retval"). */
#include "list.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binfo/binfo.h"
#include "common/diag.h"
#include "common/kbtf.h"
#include "common/util.h"
#include "runtime/rt.h"

struct kfunc {
	char *name; /* MODULE:FUNC */
	const struct btf *btf;
	unsigned id;
};

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct kfunc *)a)->name, ((const struct kfunc *)b)->name);
}

static void dump_printf(void *ctx, const char *fmt, va_list ap)
{
	char buf[512];
	vsnprintf(buf, sizeof(buf), fmt, ap);
	strbuf_puts(ctx, buf);
}

/* "    TYPE NAME" of TYPE_ID in B, the type as btf_dump declares it. */
static void print_decl(const struct btf *b, unsigned type_id, const char *name)
{
	struct strbuf sb = {0};
	struct btf_dump *d = btf_dump__new(b, dump_printf, &sb, NULL);
	if (libbpf_get_error(d))
		return;
	LIBBPF_OPTS(btf_dump_emit_type_decl_opts, o, .field_name = "");
	if (!btf_dump__emit_type_decl(d, type_id, &o))
		printf("    %s %s\n", sb.buf ? sb.buf : "", name);
	btf_dump__free(d);
	strbuf_free(&sb);
}

/* OBJ's functions whose PREFIX + "MODULE:FUNC" matches PAT. */
static void add_object(struct kfunc **v, size_t *n, size_t *cap, const char *obj,
		       const char *prefix, const char *pat)
{
	unsigned first;
	const struct btf *b = kbtf_object(obj, &first);
	if (!b)
		return;
	const char *const *names;
	size_t nn;
	bool ftrace_list = !binfo_kernel_funcs(&names, &nn) && nn;
	char full[512];
	size_t plen = strlen(prefix);
	for (unsigned id = first; id < btf__type_cnt(b); id++) {
		const struct btf_type *t = btf__type_by_id(b, id);
		if (!btf_is_func(t))
			continue;
		const char *name = btf__name_by_offset(b, t->name_off);
		if (!name || (ftrace_list && !binfo_kernel_func_exists(name)))
			continue;
		snprintf(full, sizeof(full), "%s%s:%s", prefix, obj, name);
		if (fnmatch(pat, full, 0))
			continue;
		if (*n == *cap) {
			*cap = *cap ? 2 * *cap : 4096;
			*v = xrealloc(*v, *cap * sizeof(**v));
		}
		(*v)[(*n)++] = (struct kfunc){xstrdup(full + plen), b, id};
	}
}

int list_kfuncs(const char *pat, const char *prov, bool verbose)
{
	if (!kbtf_vmlinux() || !rt_features_get()->fentry) {
		if (!prov) /* every kind: kfunc: is not one here */
			return 0;
		diag_fatal("-l: %s", kbtf_vmlinux() ? "this kernel refuses fentry programs: no "
						      "kfunc probes to list"
						    : "kfunc probes need the kernel's BTF "
						      "(/sys/kernel/btf/vmlinux)");
		return -ENOTSUP;
	}
	/* with PROV, what follows it in PAT: MODULE:FUNC, or FUNC of any module; without,
	 * all of PAT against kfunc:MODULE:FUNC */
	const char *rest = prov ? strchr(pat, ':') + 1 : pat;
	char *want = xasprintf(prov && !strchr(rest, ':') ? "*:%s" : "%s", rest);
	const char *prefix = prov ? "" : "kfunc:";
	struct kfunc *v = NULL;
	size_t n = 0, cap = 0;
	add_object(&v, &n, &cap, "vmlinux", prefix, want);
	const char *const *mods;
	size_t nmods;
	kbtf_modules(&mods, &nmods);
	for (size_t i = 0; i < nmods; i++)
		add_object(&v, &n, &cap, mods[i], prefix, want);
	if (n)
		qsort(v, n, sizeof(*v), by_name);
	for (size_t i = 0; i < n; i++) {
		if (i && !strcmp(v[i].name, v[i - 1].name))
			continue;
		printf("%s:%s\n", prov ? prov : "kfunc", v[i].name);
		if (!verbose)
			continue;
		const struct btf_type *f = btf__type_by_id(v[i].btf, v[i].id);
		const struct btf_type *proto = btf__type_by_id(v[i].btf, f->type);
		const struct btf_param *pa = btf_params(proto);
		for (int k = 0; k < btf_vlen(proto); k++)
			print_decl(v[i].btf, pa[k].type, btf__name_by_offset(v[i].btf, pa[k].name_off));
		if (proto->type)
			print_decl(v[i].btf, proto->type, "retval");
	}
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
	free(want);
	return 0;
}
