/* sema_kernel: probes on kernel functions. kprobe:/kretprobe: (one KPROBE program, a
 * site each function, told apart by the cookie) and kfunc:/kretfunc: (fentry/fexit:
 * one FENTRY program each function, its arguments typed from the kernel's BTF). Names
 * are matched against tracefs available_filter_functions, as bpftrace does. */
#include "sema/sema_int.h"

#include <bpf/btf.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	sema_open_group(s);
	int found = 0;
	for (size_t i = 0; i < n; i++) {
		if (wild ? fnmatch(fn, names[i], 0) : strcmp(fn, names[i]))
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
	sema_close_group(s, clause, PLAN_PROG_KPROBE, NULL, ret ? UP_RETURN : UP_ENTRY,
			 HIDDEN_NONE, arena_printf(s->arena, "c%d_%s", ci, pv->name));
	s->progs.v[s->progs.n - 1].kprobe_return = ret;
	return 0;
}


/* The FUNCs of OBJ ("vmlinux" or a module) whose name matches FN (a pattern when WILD)
 * and ftrace can trace: an FENTRY program each. A module's split BTF holds vmlinux's
 * types first: only its own are looked at. The number found, or a negative errno. */
static int kfunc_object(struct sema *s, struct ast_node *clause, const struct provider *pv,
			int ci, const char *obj, const char *fn, bool wild, int found)
{
	bool ret = pv->id == PV_KRETFUNC;
	const struct btf *vml = kbtf_vmlinux();
	bool is_vmlinux = !strcmp(obj, "vmlinux");
	const struct btf *b = is_vmlinux ? vml : kbtf_module(obj);
	if (!b)
		return found;
	/* ftrace's list, where it can be read: fentry goes through its trampolines */
	const char *const *names;
	size_t nn;
	bool ftrace_list = !binfo_kernel_funcs(&names, &nn) && nn;
	unsigned n = btf__type_cnt(b);
	for (unsigned id = is_vmlinux ? 1 : btf__type_cnt(vml); id < n; id++) {
		const struct btf_type *t = btf__type_by_id(b, id);
		if (!btf_is_func(t))
			continue;
		const char *name = btf__name_by_offset(b, t->name_off);
		if (!name || (wild ? fnmatch(fn, name, 0) : strcmp(fn, name)))
			continue;
		if (ftrace_list && !binfo_kernel_func_exists(name))
			continue;
		sema_open_group(s);
		struct plan_site site = {
			.target = "",
			.func = arena_strdup(s->arena, name),
			/* bpftrace's name: the module, vmlinux for the kernel's own */
			.probe = arena_printf(s->arena, "%s:%s:%s", pv->name, obj, name),
			.sole = !wild,
		};
		struct sema_site_info info = {.point = ret ? UP_RETURN : UP_ENTRY};
		vec_push(&s->sites, site);
		vec_push(&s->site_info, info);
		sema_close_group(s, clause, PLAN_PROG_FENTRY, NULL, ret ? UP_RETURN : UP_ENTRY,
				 HIDDEN_NONE, arena_printf(s->arena, "c%d_%s_%d", ci, pv->name, found));
		s->progs.v[s->progs.n - 1].kprobe_return = ret;
		s->clause_kfunc = !s->clause_kfunc ? (int)id : -1;
		s->clause_kfunc_btf = b;
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
	if (np < 1 || np > 2) {
		diag_error(s->src, p->loc, "%s probe type requires 1 or 2 arguments: %s:FUNCTION "
			   "or %s:MODULE:FUNCTION", pv->name, pv->name, pv->name);
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
	const struct btf_type *f = btf__type_by_id(b, (unsigned)s->clause_kfunc);
	return f ? btf__type_by_id(b, f->type) : NULL;
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
	struct gt_type *t = kfunc_ctype(s, type_id);
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
