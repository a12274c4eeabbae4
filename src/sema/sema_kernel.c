/* sema_kernel: probes on kernel functions. kprobe:/kretprobe: (one KPROBE program, a
 * site each function, told apart by the cookie) and kfunc:/kretfunc: (fentry/fexit:
 * one FENTRY program each function, its arguments typed from the kernel's BTF). Names
 * are matched against tracefs available_filter_functions, as bpftrace does. The same
 * providers on a loaded BPF program's function (fentry:bpf[:ID]:NAME) find it through
 * binfo/bpfprogs.c and type its arguments from that program's BTF. */
#include "sema/sema_int.h"

#include <bpf/btf.h>
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>

#include "binfo/binfo.h"
#include "common/kbtf.h"
#include "common/util.h"
#include "sema/providers.h"

/* kprobe:FUNC[+OFFSET], kretprobe:FUNC, with * and ? in FUNC: one KPROBE program, a
 * site for each kernel function (bpftrace's names: available_filter_functions). */
int sema_expand_kprobe(struct sema *s, struct ast_node *clause, struct ast_node *p,
			 const struct provider *pv, int ci)
{
	bool ret = pv->id == PV_KRETPROBE;
	if (p->u.probe.nparts != 1 || !p->u.probe.parts[0][0]) {
		/* bpftrace's words first: scripts and tests look for them */
		diag_error(s->src, p->loc, "%s probe type requires 1 argument: %s:FUNCTION%s",
			   pv->name, pv->name, ret ? "" : "[+OFFSET]");
		return -EINVAL;
	}
	char *fn = arena_strdup(s->arena, p->u.probe.parts[0]);
	uint64_t off = 0;
	char *plus = strrchr(fn, '+');
	if (plus && (ret || !sema_parse_offset(plus, &off))) {
		diag_error(s->src, p->loc, ret ? "kretprobe takes no offset: %s"
					       : "bad offset in %s: expected FUNCTION+N",
			   p->u.probe.parts[0]);
		return -EINVAL;
	}
	if (plus)
		*plus = 0;
	bool wild = strpbrk(fn, "*?[") != NULL;
	if (wild && off) {
		diag_error(s->src, p->loc, "an offset needs one function, not a wildcard: %s",
			   p->u.probe.parts[0]);
		return -EINVAL;
	}
	const char *const *names;
	size_t n;
	int err = binfo_kernel_funcs(&names, &n);
	if (err && access("/sys/bus/event_source/devices/kprobe", F_OK)) {
		diag_error(s->src, p->loc, "this kernel has no kprobes (no kprobe PMU: "
			   "CONFIG_KPROBE_EVENTS): %s probes cannot attach", pv->name);
		return -ENOTSUP;
	}
	if (err) {
		diag_error(s->src, p->loc, "%s: the kernel's function list is not readable "
			   "(tracefs available_filter_functions: %s)", pv->name, strerror(-err));
		return err;
	}
	/* kretprobes bpftrace refuses: their trampoline takes a lock these hold, and the
	 * machine can lock up; a wildcard leaves them out */
	static const char *const banned[] = {"_raw_spin_lock", "_raw_spin_lock_irqsave",
					     "_raw_spin_unlock_irqrestore",
					     "queued_spin_lock_slowpath"};
	if (ret && !wild) {
		for (size_t i = 0; i < ARRAY_SIZE(banned); i++) {
			if (!strcmp(fn, banned[i])) {
				diag_error(s->src, p->loc, "kretprobe:%s can't be used as it might lock "
					   "up your system.", fn);
				return -EPERM;
			}
		}
	}
	uint64_t size;
	if (off && !binfo_kallsyms_size(fn, &size) && off >= size) {
		diag_error(s->src, p->loc, "Offset outside the function bounds ('%s' size is %llu)",
			   fn, (unsigned long long)size);
		return -EINVAL;
	}
	sema_open_group(s);
	int found = 0;
	for (size_t i = 0; i < n; i++) {
		if (wild ? fnmatch(fn, names[i], 0) : strcmp(fn, names[i]))
			continue;
		bool skip = false;
		for (size_t k = 0; ret && k < ARRAY_SIZE(banned); k++)
			skip |= !strcmp(names[i], banned[k]);
		if (skip)
			continue;
		struct plan_site site = {
			.target = "",
			.func = arena_strdup(s->arena, names[i]),
			.probe = arena_printf(s->arena, "%s:%s", pv->name, names[i]),
			.file_off = off,
			.sole = !wild,
		};
		struct sema_site_info info = {.point = ret ? UP_RETURN : UP_ENTRY};
		vec_push(&s->sites, site);
		vec_push(&s->site_info, info);
		found++;
		if (!wild)
			break;
	}
	if (!found) {
		diag_error(s->src, p->loc, wild ? "no kernel function matches '%s'"
					    : "no kernel function '%s' (or it cannot be traced: "
					      "available_filter_functions)",
			   fn);
		return -ENOENT;
	}
	if (!wild && off) /* the offset is the site's, in its probe name too */
		s->sites.v[s->sites.n - 1].probe =
			arena_printf(s->arena, "%s:%s+%llu", pv->name, fn, (unsigned long long)off);
	/* the program named after what it probes, as bpftrace's are: `bpftool prog` shows
	 * gt_c0_ksys__0 (the kernel keeps 15 characters) */
	char *tag = arena_printf(s->arena, "c%d_%.20s_", ci, fn);
	for (char *c = tag; *c; c++)
		if (!isalnum((unsigned char)*c))
			*c = '_';
	sema_close_group(s, clause, PLAN_PROG_KPROBE, NULL, ret ? UP_RETURN : UP_ENTRY,
			 HIDDEN_NONE, tag);
	s->progs.v[s->progs.n - 1].kprobe_return = ret;
	return 0;
}


/* One FENTRY program (fexit where RET) on function FUNC, site PROBE, the clause's
 * program TAG_FOUND; its BTF id ID in B becomes the clause's (args, retval). */
static struct plan_prog *add_fentry(struct sema *s, struct ast_node *clause, bool ret, int ci,
				    const char *tag, int found, const char *func, char *probe,
				    bool sole, unsigned id, const struct btf *b)
{
	sema_open_group(s);
	struct plan_site site = {
		.target = "",
		.func = arena_strdup(s->arena, func),
		.probe = probe,
		.sole = sole,
	};
	struct sema_site_info info = {.point = ret ? UP_RETURN : UP_ENTRY};
	vec_push(&s->sites, site);
	vec_push(&s->site_info, info);
	sema_close_group(s, clause, PLAN_PROG_FENTRY, NULL, ret ? UP_RETURN : UP_ENTRY,
			 HIDDEN_NONE, arena_printf(s->arena, "c%d_%s_%d", ci, tag, found));
	struct plan_prog *pp = &s->progs.v[s->progs.n - 1];
	pp->kprobe_return = ret;
	s->clause_kfunc = !s->clause_kfunc ? (int)id : -1;
	s->clause_kfunc_btf = b;
	return pp;
}

/* Why nothing of fentry:bpf:ID:NAME matched, where something was left out on purpose. */
static void bpfprog_none(struct sema *s, struct ast_node *p, const char *spell, uint32_t want,
			 const char *fn, bool wild, const struct binfo_bpf_func *own,
			 const struct binfo_bpf_func *nobtf, const struct binfo_bpf_func *tracing)
{
	char id[16] = "*";
	if (want)
		snprintf(id, sizeof(id), "%u", want);
	if (nobtf)
		diag_error(s->src, p->loc, "BPF program %u (%s) has no BTF: %s:bpf needs its "
			   "functions' BTF (a program loaded without it cannot be traced)",
			   nobtf->prog_id, nobtf->name, spell);
	else if (tracing)
		diag_error(s->src, p->loc, "%s:bpf:%s:%s matches only fentry/fexit or extension "
			   "programs (%u %s ...), left out without an ID: the kernel refuses "
			   "fentry on them (6.1: \"Cannot recursively attach\"); name one by ID "
			   "and function to try",
			   spell, id, fn, tracing->prog_id, tracing->name);
	else if (own)
		diag_error(s->src, p->loc, "%s:bpf:%s:%s matches only gotrace's own program %u "
			   "(%s): gotrace does not trace itself", spell, id, fn, own->prog_id,
			   own->name);
	else if (want)
		diag_error(s->src, p->loc, wild ? "no function of BPF program %u matches '%s' "
					   "(-l '%s:bpf:%u:*' lists them)"
					 : "BPF program %u has no function '%s' (-l '%s:bpf:%u:*' "
					   "lists them)", want, fn, spell, want);
	else
		diag_error(s->src, p->loc, wild ? "no function of a loaded BPF program matches "
					   "'%s' (-l '%s:bpf:*' lists them)"
					 : "no loaded BPF program has a function '%s' (-l '%s:bpf:*' "
					   "lists them)", fn, spell);
}

/* fentry:bpf[:ID]:NAME, fexit:bpf:... (kfunc:/kretfunc: alike), as bpftrace spells them:
 * fentry/fexit on the function NAME (its BTF name: a program's main function or a
 * subprogram) of the loaded program ID, or of every loaded program with one; * and ?
 * in NAME, ID a number or *. An FENTRY program each function. Left out: what cannot be
 * a target, gotrace's own programs (a -c follow checks the script again once they are
 * loaded) and programs without BTF; and, unless ID and an exact NAME name one function,
 * fentry/fexit/extension programs (6.1 refuses fentry on them). */
static int expand_bpfprog(struct sema *s, struct ast_node *clause, struct ast_node *p,
			  const struct provider *pv, int ci)
{
	bool ret = pv->id == PV_KRETFUNC;
	const char *spell = ret ? "fexit" : "fentry"; /* bpftrace's names for this form */
	int np = p->u.probe.nparts;
	const char *idp = np == 3 ? p->u.probe.parts[1] : "*";
	const char *fn = p->u.probe.parts[np - 1];
	uint32_t want = 0;
	if (np < 2 || np > 3 || !*fn) {
		diag_error(s->src, p->loc, "%s:bpf probes are %s:bpf:PROGRAM or "
			   "%s:bpf:ID:PROGRAM (PROGRAM: a function name of a loaded BPF program)",
			   spell, spell, spell);
		return -EINVAL;
	}
	if (strcmp(idp, "*")) {
		char *end;
		unsigned long long v = strtoull(idp, &end, 10);
		if (!isdigit((unsigned char)*idp) || *end || !v || v > UINT32_MAX) {
			diag_error(s->src, p->loc, "the BPF program id must be a number or '*': %s",
				   idp);
			return -EINVAL;
		}
		want = (uint32_t)v;
	}
	bool wild = strpbrk(fn, "*?[") != NULL;
	bool one = want && !wild; /* one program's one function: the kernel's answer counts */
	const struct binfo_bpf_func *f, *own = NULL, *nobtf = NULL, *tracing = NULL;
	size_t n;
	int err = binfo_bpf_funcs(&f, &n);
	if (err) {
		diag_error(s->src, p->loc, "%s:bpf: the loaded BPF programs cannot be listed: %s",
			   spell, strerror(-err));
		return err;
	}
	int found = 0;
	bool loaded = !want;
	for (size_t i = 0; i < n; i++) {
		if (want && f[i].prog_id != want)
			continue;
		loaded = true;
		if (wild ? fnmatch(fn, f[i].name, 0) : strcmp(fn, f[i].name))
			continue;
		if (f[i].own) {
			own = own ? own : &f[i];
			continue;
		}
		if (!f[i].btf_id) {
			nobtf = nobtf ? nobtf : &f[i];
			continue;
		}
		if (!one && (f[i].prog_type == BPF_PROG_TYPE_TRACING ||
			     f[i].prog_type == BPF_PROG_TYPE_EXT)) {
			tracing = tracing ? tracing : &f[i];
			continue;
		}
		struct plan_prog *pp = add_fentry(
			s, clause, ret, ci, spell, found, f[i].name,
			/* bpftrace's probe name: the program's id, always */
			arena_printf(s->arena, "%s:bpf:%u:%s", spell, f[i].prog_id, f[i].name), one,
			f[i].type_id, binfo_bpf_btf(f[i].btf_id));
		pp->bpf_prog_id = f[i].prog_id;
		pp->bpf_btf_id = f[i].btf_id;
		s->clause_kfunc_bpf = true;
		found++;
	}
	if (!loaded) {
		diag_error(s->src, p->loc, "no BPF program %u is loaded (-l '%s:bpf:*' lists them)",
			   want, spell);
		return -ENOENT;
	}
	if (!found) {
		bpfprog_none(s, p, spell, want, fn, wild, own, nobtf, tracing);
		return -ENOENT;
	}
	return 0;
}

/* The FUNCs of OBJ ("vmlinux" or a module) whose name matches FN (a pattern when WILD)
 * and ftrace can trace: an FENTRY program each. A module's split BTF holds vmlinux's
 * types first: only its own are looked at. The number found, or a negative errno. */
static int kfunc_object(struct sema *s, struct ast_node *clause, const struct provider *pv,
			int ci, const char *obj, const char *fn, bool wild, int found)
{
	bool ret = pv->id == PV_KRETFUNC;
	unsigned first;
	const struct btf *b = kbtf_object(obj, &first);
	if (!b)
		return found;
	/* ftrace's list, where it can be read: fentry goes through its trampolines */
	const char *const *names;
	size_t nn;
	bool ftrace_list = !binfo_kernel_funcs(&names, &nn) && nn;
	unsigned n = btf__type_cnt(b);
	for (unsigned id = first; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(b, id);
		if (!btf_is_func(t))
			continue;
		const char *name = btf__name_by_offset(b, t->name_off);
		if (!name || (wild ? fnmatch(fn, name, 0) : strcmp(fn, name)))
			continue;
		if (ftrace_list && !binfo_kernel_func_exists(name))
			continue;
		/* bpftrace's name: the module, vmlinux for the kernel's own */
		add_fentry(s, clause, ret, ci, pv->name, found, name,
			   arena_printf(s->arena, "%s:%s:%s", pv->name, obj, name), !wild, id, b);
		found++;
		if (!wild)
			break;
	}
	return found;
}

/* kfunc:FUNC, kfunc:MODULE:FUNC (vmlinux: the kernel's own), kretfunc: alike; * and ? in
 * either: an FENTRY program for each kernel function with a BTF prototype that ftrace
 * can trace. A FUNC without module is the one ftrace's list names (bpftrace 0.17: an
 * error where several modules have one), a wildcard looks in every module. */
int sema_expand_kfunc(struct sema *s, struct ast_node *clause, struct ast_node *p,
		      const struct provider *pv, int ci)
{
	int np = p->u.probe.nparts;
	if (np >= 1 && !strcmp(p->u.probe.parts[0], "bpf"))
		return expand_bpfprog(s, clause, p, pv, ci);
	if (np < 1 || np > 2) {
		diag_error(s->src, p->loc, "%s probe type requires 1 or 2 arguments: %s:FUNCTION, "
			   "%s:MODULE:FUNCTION or %s:bpf[:ID]:PROGRAM", pv->name, pv->name, pv->name,
			   pv->name);
		return -EINVAL;
	}
	const char *fn = p->u.probe.parts[np - 1];
	if (!kbtf_vmlinux()) {
		diag_error(s->src, p->loc, "%s probes need the kernel's BTF "
			   "(/sys/kernel/btf/vmlinux)", pv->name);
		return -ENOTSUP;
	}
	bool wild = strpbrk(fn, "*?[") != NULL;
	const char *target = np == 2 ? p->u.probe.parts[0] : "*";
	if (np == 1 && !wild) {
		const char *mod = "vmlinux";
		if (binfo_kernel_func_module(fn, &mod) == 2) {
			diag_error(s->src, p->loc, "%s:%s is ambiguous: several modules have a "
				   "function '%s'; name one (%s:MODULE:%s)", pv->name, fn, fn,
				   pv->name, fn);
			return -EINVAL;
		}
		target = mod;
	}
	int found = 0;
	if (!fnmatch(target, "vmlinux", 0))
		found = kfunc_object(s, clause, pv, ci, "vmlinux", fn, wild, found);
	const char *const *mods;
	size_t nmods;
	kbtf_modules(&mods, &nmods);
	for (size_t i = 0; i < nmods && (wild || !found); i++)
		if (!fnmatch(target, mods[i], 0))
			found = kfunc_object(s, clause, pv, ci, mods[i], fn, wild, found);
	if (!found) {
		diag_error(s->src, p->loc, wild ? "no kernel function with BTF matches '%s'"
					    : "no kernel function '%s' in the kernel's BTF (or it cannot "
					      "be traced)", fn);
		return -ENOENT;
	}
	return 0;
}

/* The clause's one FUNC_PROTO, or an error at E. */
static const struct btf_type *kfunc_proto(struct sema *s, struct ast_node *e, const char *what)
{
	if (s->clause_kinds != (1u << PLAN_PROG_FENTRY) || s->clause_kfunc <= 0) {
		diag_error(s->src, e->loc, "%s needs a clause of one kfunc or kretfunc function%s",
			   what, s->clause_kfunc < 0 ? " (this one matches several)" : "");
		return NULL;
	}
	const struct btf *b = s->clause_kfunc_btf;
	const struct btf_type *f = b ? btf__type_by_id(b, (unsigned)s->clause_kfunc) : NULL;
	return f ? btf__type_by_id(b, f->type) : NULL;
}

static const struct btf_type *skip_mods(const struct btf *b, const struct btf_type *t)
{
	while (t && (btf_is_mod(t) || btf_is_typedef(t)))
		t = btf__type_by_id(b, t->type);
	return t;
}

/* A type of a BPF program's own BTF, as sema's: integers and enums by size; a pointer
 * to a struct the kernel's BTF has by that name is typed as the kernel's (a program's
 * ctx: struct pt_regs *), other pointers as void's; anything else a struct (refused). */
static struct gt_type *bpf_ctype(struct sema *s, const struct btf *b, unsigned id)
{
	const struct btf_type *t = skip_mods(b, btf__type_by_id(b, id));
	if (!t)
		return sema_type_new(s, TY_INT, 8, false);
	if (btf_is_int(t))
		return sema_type_new(s, TY_INT, (int)t->size, btf_int_encoding(t) & BTF_INT_SIGNED);
	if (btf_is_any_enum(t))
		return sema_type_new(s, TY_INT, (int)t->size, btf_kflag(t));
	if (!btf_is_ptr(t))
		return sema_type_new(s, TY_STRUCT, (int)t->size, false);
	struct gt_type *r = sema_type_new(s, TY_PTR, 8, false);
	const struct btf_type *to = skip_mods(b, btf__type_by_id(b, t->type));
	const char *name = to && btf_is_composite(to) ? btf__name_by_offset(b, to->name_off) : NULL;
	if (name && *name)
		r->pointee = sema_struct_named(s, arena_printf(s->arena, "%s %s", btf_is_union(to) ?
							       "union" : "struct", name));
	if (!r->pointee)
		r->pointee = sema_type_new(s, TY_INT, 1, false);
	return r;
}

/* Type ID of the clause's BTF: vmlinux's types through sema_ctypes; a module's own (ids
 * past vmlinux's) as far as a context slot needs them: integers, enums, pointers (to a
 * vmlinux type, else to bytes), and structs only to be refused by value. */
static struct gt_type *kfunc_ctype(struct sema *s, unsigned id)
{
	const struct btf *b = s->clause_kfunc_btf;
	unsigned base = btf__type_cnt(kbtf_vmlinux());
	for (int depth = 0; id >= base && depth < 32; depth++) {
		const struct btf_type *t = btf__type_by_id(b, id);
		if (!t)
			break;
		if (btf_is_typedef(t) || btf_is_mod(t)) {
			id = t->type;
		} else if (btf_is_int(t)) {
			return sema_type_new(s, TY_INT, t->size <= 8 ? (int)t->size : 8,
					     btf_int_encoding(t) & BTF_INT_SIGNED);
		} else if (btf_is_enum(t) || btf_is_enum64(t)) {
			return sema_type_new(s, TY_INT, t->size <= 8 ? (int)t->size : 8, btf_kflag(t));
		} else if (btf_is_ptr(t)) {
			struct gt_type *r = sema_type_new(s, TY_PTR, 8, false);
			r->pointee = t->type && t->type < base ? sema_ctype_from_btf(s, (int)t->type)
							       : sema_type_new(s, TY_INT, 1, false);
			return r;
		} else {
			return sema_type_new(s, btf_is_composite(t) ? TY_STRUCT : TY_INT, 8, false);
		}
	}
	return id < base ? sema_ctype_from_btf(s, (int)id) : sema_type_new(s, TY_INT, 8, false);
}

/* An 8-byte context slot: its integer narrowed to the BTF type's width. */
static int slot_type(struct sema *s, struct ast_node *e, int slot, unsigned type_id)
{
	struct sema_node *sn = sema_node_of(s, e);
	struct gt_type *t = s->clause_kfunc_bpf ? bpf_ctype(s, s->clause_kfunc_btf, type_id)
						: kfunc_ctype(s, type_id);
	if (e->kind == AST_FIELD)
		sn->builtin = BI_TPARG; /* retval keeps its own: codegen reads the slot */
	sn->tp_offset = 8 * slot;
	sn->tp_size = 8;
	if (t->kind == TY_INT) {
		sn->tp_signed = t->is_signed;
		sn->tp_narrow = t->size < 8 ? t->size : 0;
		e->ty = t;
	} else if (t->kind == TY_PTR) {
		e->ty = t; /* struct X *: its fields through -> (kernel BTF) */
	} else {
		diag_error(s->src, e->loc, "%s is a %s, which is not supported yet",
			   e->kind == AST_FIELD ? e->u.field.name : "retval",
			   t->kind == TY_STRUCT ? "struct passed by value" : "type of its own");
		return -ENOTSUP;
	}
	return 0;
}

int sema_check_kfunc_arg(struct sema *s, struct ast_node *e)
{
	const struct btf_type *proto = kfunc_proto(s, e, "args");
	if (!proto)
		return -EINVAL;
	const struct btf *b = s->clause_kfunc_btf;
	const struct btf_param *pa = btf_params(proto);
	int n = btf_vlen(proto);
	for (int i = 0; i < n; i++) {
		const char *name = btf__name_by_offset(b, pa[i].name_off);
		if (name && !strcmp(name, e->u.field.name))
			return slot_type(s, e, i, pa[i].type);
	}
	diag_error(s->src, e->loc, "the function has no argument '%s'", e->u.field.name);
	return -EINVAL;
}

int sema_check_kfunc_retval(struct sema *s, struct ast_node *e)
{
	if (s->clause_points != (1u << UP_RETURN)) {
		diag_error(s->src, e->loc, "retval is only available in kretfunc probes");
		return -EINVAL;
	}
	const struct btf_type *proto = kfunc_proto(s, e, "retval");
	if (!proto)
		return -EINVAL;
	if (!proto->type) {
		diag_error(s->src, e->loc, "the function returns void");
		return -EINVAL;
	}
	return slot_type(s, e, btf_vlen(proto), proto->type);
}
