/* -d jit: the machine code the kernel's JIT made of each loaded program, disassembled
 * with capstone, so a reader sees what a probe hit really executes; each source line
 * (proglines.c) above the instructions it produced. */
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <capstone/capstone.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "common/diag.h"
#include "common/util.h"
#include "runtime/load/load.h"
#include "runtime/load/proglines_int.h"

/* FILE with its leading "./" parts off: LLVM names the script DIRECTORY/NAME, "." its
 * directory (codegen), while NAME is the script's path as given; a script of no file
 * (-e) has /dev/null for its directory. */
static const char *skip_dot(const char *file)
{
	if (!strncmp(file, "/dev/null/", 10))
		file += 10;
	while (file[0] == '.' && file[1] == '/')
		file += 2;
	return file;
}

static bool is_script(const struct diag_src *src, const struct rt_src_line *l)
{
	return src && src->name && src->text && !strcmp(skip_dot(l->file), skip_dot(src->name));
}

/* The script's lines as FILE:LINE:COL: TEXT; runtime-bpf's as FILE:LINE. */
static void print_line(FILE *out, const struct diag_src *src, const struct rt_src_line *l)
{
	if (is_script(src, l)) {
		const char *t = src->text;
		for (uint32_t i = 1; i < l->line && t; i++) {
			t = strchr(t, '\n');
			t = t ? t + 1 : NULL;
		}
		if (t) {
			const char *e = strchr(t, '\n');
			fprintf(out, "; %s:%u:%u: %.*s\n", src->name, l->line, l->col,
				e ? (int)(e - t) : (int)strlen(t), t);
			return;
		}
	}
	/* runtime-bpf's sources: named from the project's folder, not the build machine */
	const char *rt = strstr(l->file, "runtime-bpf/");
	fprintf(out, "; %s:%u\n", rt ? rt : l->file, l->line);
}

/* Whether B prints as A did (runtime-bpf's columns are not printed). */
static bool same_line(const struct diag_src *src, const struct rt_src_line *a,
		      const struct rt_src_line *b)
{
	return a && a->line == b->line && !strcmp(a->file, b->file) &&
	       (a->col == b->col || !is_script(src, b));
}

/* The JIT image is the program's functions one after another (jited_func_lens): the
 * name of function K from its BTF func_info, or NULL. */
static const char *func_name(const struct btf *btf, const struct bpf_func_info *fi, uint32_t nfi,
			     uint32_t k)
{
	if (!btf || k >= nfi)
		return NULL;
	const struct btf_type *t = btf__type_by_id(btf, fi[k].type_id);
	return t ? btf__name_by_offset(btf, t->name_off) : NULL;
}

static int dump_prog(FILE *out, const struct diag_src *src, const char *name, int fd,
		     bool *no_lines)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	uint32_t n = info.jited_prog_len;
	if (!n) {
		fprintf(out, "%s: not JIT-compiled (net.core.bpf_jit_enable is 0?)\n", name);
		return 0;
	}
	uint8_t *code = xmalloc(n);
	uint32_t nf = info.nr_jited_func_lens, nfi = info.nr_func_info, btf_id = info.btf_id;
	uint32_t *flens = xcalloc(nf + 1, sizeof(*flens));
	struct bpf_func_info *fi = xcalloc(nfi + 1, sizeof(*fi));
	struct btf *btf = NULL;
	memset(&info, 0, sizeof(info));
	info.jited_prog_len = n;
	info.jited_prog_insns = (uint64_t)(uintptr_t)code;
	info.nr_jited_func_lens = nf;
	info.jited_func_lens = (uint64_t)(uintptr_t)flens;
	info.nr_func_info = nfi;
	info.func_info_rec_size = sizeof(*fi);
	info.func_info = (uint64_t)(uintptr_t)fi;
	len = sizeof(info);
	int err = 0;
	csh cs;
	cs_insn *insn = NULL;
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		err = -errno;
		goto out;
	}
	int ca, cm;
	arch_capstone(&ca, &cm);
	if (cs_open((cs_arch)ca, (cs_mode)cm, &cs) != CS_ERR_OK) {
		err = -EINVAL;
		goto out;
	}
	struct rt_prog_lines pl;
	int lerr = rt_prog_lines__load(&pl, fd);
	if (lerr && !*no_lines) {
		diag_print(DIAG_WARNING, "-d jit: no source lines from the kernel (%s): "
			   "instructions only", lerr == -ENODATA ? "no BTF line info" : strerror(-lerr));
		*no_lines = true;
	}
	if (btf_id && nf > 1)
		btf = btf__load_from_kernel_by_id(btf_id);
	size_t count = cs_disasm(cs, code, n, 0, 0, &insn);
	/* the program's own code, then each subprogram's under its name (its code is in the
	 * program's image: the update functions of maps, loop bodies) */
	uint32_t k = 0, end = nf ? flens[0] : n;
	fprintf(out, "%s: %u bytes of %s\n", name, end, arch_title);
	const struct rt_src_line *last = NULL;
	int li = 0;
	for (size_t i = 0; i < count; i++) {
		while (k + 1 < nf && insn[i].address >= end) {
			const char *sub = func_name(btf, fi, nfi, ++k);
			fprintf(out, "%s: %u bytes of %s\n", sub ? sub : "subprogram", flens[k],
				arch_title);
			end += flens[k];
			last = NULL;
		}
		for (; li < pl.n && pl.v[li].off <= insn[i].address; li++) {
			if (!pl.v[li].line) /* code of no line (the compiler's own) */
				continue;
			if (!same_line(src, last, &pl.v[li]))
				print_line(out, src, &pl.v[li]);
			last = &pl.v[li];
		}
		fprintf(out, "  %4llx: %-8s %s\n", (unsigned long long)insn[i].address,
			insn[i].mnemonic, insn[i].op_str);
	}
	cs_free(insn, count);
	rt_prog_lines__free(&pl);
	cs_close(&cs);
out:
	btf__free(btf);
	free(flens);
	free(fi);
	free(code);
	return err;
}

int rt_session__dump_jit(struct rt_session *s, FILE *out)
{
	bool no_lines = false; /* said once */
	for (int i = 0; i < s->plan->nprogs; i++) {
		int err = dump_prog(out, s->opts->src, s->plan->progs[i].fn_name,
				    bpf_program__fd(s->progs[i]), &no_lines);
		if (err) {
			diag_print(DIAG_WARNING, "-d jit: %s: %s", s->plan->progs[i].fn_name,
				   strerror(-err));
			return err;
		}
	}
	fflush(out);
	return 0;
}
