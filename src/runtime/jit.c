/* -d jit: the machine code the kernel's JIT made of each loaded program, disassembled
 * with capstone, so a reader sees what a probe hit really executes; each source line
 * (proglines.c) above the instructions it produced. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <capstone/capstone.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/diag.h"
#include "common/util.h"
#include "runtime/rt_priv.h"

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
	memset(&info, 0, sizeof(info));
	info.jited_prog_len = n;
	info.jited_prog_insns = (uint64_t)(uintptr_t)code;
	len = sizeof(info);
	int err = 0;
	csh cs;
	cs_insn *insn = NULL;
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		err = -errno;
		goto out;
	}
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) {
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
	size_t count = cs_disasm(cs, code, n, 0, 0, &insn);
	fprintf(out, "%s: %u bytes of x86-64\n", name, n);
	const struct rt_src_line *last = NULL;
	int li = 0;
	for (size_t i = 0; i < count; i++) {
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
