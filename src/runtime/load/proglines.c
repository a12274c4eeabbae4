/* The source lines the kernel holds for a loaded program (BTF line info, which LLVM
 * makes from codegen's debug locations and runtime-bpf's -g), placed in the program's
 * JIT image: what -d jit prints above the instructions each line produced. */
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "runtime/load/proglines_int.h"

static int cmp_line(const void *a, const void *b)
{
	const struct rt_src_line *x = a, *y = b;
	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

int rt_prog_lines__load(struct rt_prog_lines *pl, int prog_fd)
{
	memset(pl, 0, sizeof(*pl));
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return -errno;
	uint32_t n = info.nr_line_info, nfuncs = info.nr_jited_ksyms;
	/* no BTF in the object, or a kernel that keeps none; the JIT's addresses of the
	 * lines need a JIT and root (bpf_dump_raw_ok) */
	if (!info.btf_id || !n || info.nr_jited_line_info != n || !nfuncs ||
	    info.nr_jited_func_lens != nfuncs)
		return -ENODATA;

	struct bpf_line_info *li = xcalloc(n, sizeof(*li));
	uint64_t *addrs = xcalloc(n, sizeof(*addrs));
	uint64_t *ksyms = xcalloc(nfuncs, sizeof(*ksyms));
	uint32_t *lens = xcalloc(nfuncs, sizeof(*lens));
	int err = 0;
	memset(&info, 0, sizeof(info));
	info.nr_line_info = n;
	info.line_info_rec_size = sizeof(*li);
	info.line_info = (uint64_t)(uintptr_t)li;
	info.nr_jited_line_info = n;
	info.jited_line_info_rec_size = sizeof(*addrs);
	info.jited_line_info = (uint64_t)(uintptr_t)addrs;
	info.nr_jited_ksyms = nfuncs;
	info.jited_ksyms = (uint64_t)(uintptr_t)ksyms;
	info.nr_jited_func_lens = nfuncs;
	info.jited_func_lens = (uint64_t)(uintptr_t)lens;
	len = sizeof(info);
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len)) {
		err = -errno;
		goto out;
	}
	/* (the kernel refuses record sizes other than its own: EINVAL above) */
	if (info.nr_line_info != n || info.nr_jited_ksyms != nfuncs) {
		err = -ENODATA;
		goto out;
	}
	pl->btf = btf__load_from_kernel_by_id(info.btf_id);
	if (!pl->btf) {
		err = -errno;
		goto out;
	}
	/* the dumped image is the functions' images one after the other, in the order of
	 * jited_ksyms; a line's address is a kernel address inside one of them */
	pl->v = xcalloc(n, sizeof(*pl->v));
	for (uint32_t i = 0; i < n; i++) {
		uint64_t base = 0;
		uint32_t f = 0;
		for (; f < nfuncs; f++) {
			if (addrs[i] >= ksyms[f] && addrs[i] - ksyms[f] < lens[f])
				break;
			base += lens[f];
		}
		if (f == nfuncs || !ksyms[f]) /* addresses hidden (kptr_restrict) */
			continue;
		const char *file = btf__name_by_offset(pl->btf, li[i].file_name_off);
		struct rt_src_line *l = &pl->v[pl->n++];
		l->off = (uint32_t)(base + addrs[i] - ksyms[f]);
		l->idx = i;
		l->file = file ? file : "?";
		l->line = BPF_LINE_INFO_LINE_NUM(li[i].line_col);
		l->col = BPF_LINE_INFO_LINE_COL(li[i].line_col);
	}
	if (!pl->n) {
		err = -ENODATA;
		goto out;
	}
	qsort(pl->v, (size_t)pl->n, sizeof(*pl->v), cmp_line);
out:
	free(li);
	free(addrs);
	free(ksyms);
	free(lens);
	if (err)
		rt_prog_lines__free(pl);
	return err;
}

void rt_prog_lines__free(struct rt_prog_lines *pl)
{
	free(pl->v);
	btf__free(pl->btf);
	memset(pl, 0, sizeof(*pl));
}
