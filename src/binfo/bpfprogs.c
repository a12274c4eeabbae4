/* bpfprogs: the BPF programs loaded in the kernel, as fentry:bpf:/fexit:bpf: probes name
 * them: each program's functions (its BTF func_info: [0] the main one, then its
 * subprograms), as bpftrace lists them. Read once: the kernel's id walk
 * (BPF_PROG_GET_NEXT_ID) and each program's info, and its BTF object kept for sema to
 * type `args` from. Programs this process holds are marked: gotrace never traces itself
 * (a -c follow checks the script again once its own programs are loaded). */
#include "binfo/binfo.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"

static struct binfo_bpf_func *funcs;
static size_t nfuncs, cap;
static int status = 1; /* 1: not read yet, else 0 or a negative errno */
static struct btf **btfs; /* the programs' BTF objects, by first use */
static uint32_t *btf_ids;
static size_t nbtfs;

/* The ids of programs this process holds an fd of (programs and links alike). */
static size_t own_ids(uint32_t **out)
{
	size_t n = 0, c = 0;
	*out = NULL;
	DIR *d = opendir("/proc/self/fdinfo");
	if (!d)
		return 0;
	for (struct dirent *e; (e = readdir(d));) {
		char path[300], line[128];
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%s", e->d_name);
		FILE *f = e->d_name[0] != '.' ? fopen(path, "r") : NULL;
		if (!f)
			continue;
		unsigned id;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "prog_id: %u", &id) == 1) {
				if (n == c) {
					c = c ? 2 * c : 16;
					*out = xrealloc(*out, c * sizeof(**out));
				}
				(*out)[n++] = id;
			}
		fclose(f);
	}
	closedir(d);
	return n;
}

const struct btf *binfo_bpf_btf(uint32_t btf_id)
{
	for (size_t i = 0; i < nbtfs; i++)
		if (btf_ids[i] == btf_id)
			return btfs[i];
	struct btf *b = btf__load_from_kernel_by_id(btf_id);
	if (!b)
		return NULL;
	btfs = xrealloc(btfs, (nbtfs + 1) * sizeof(*btfs));
	btf_ids = xrealloc(btf_ids, (nbtfs + 1) * sizeof(*btf_ids));
	btfs[nbtfs] = b;
	btf_ids[nbtfs++] = btf_id;
	return b;
}

static void add(const struct binfo_bpf_func *f)
{
	if (nfuncs == cap) {
		cap = cap ? 2 * cap : 64;
		funcs = xrealloc(funcs, cap * sizeof(*funcs));
	}
	funcs[nfuncs++] = *f;
}

/* The functions of the program at FD (INFO its first answer): one entry a func_info
 * record, or one without a name of its BTF where it has none. */
static void add_prog(int fd, uint32_t id, const struct bpf_prog_info *info, bool own)
{
	struct binfo_bpf_func f = {.prog_id = id, .prog_type = info->type, .btf_id = info->btf_id,
				   .own = own, .main = true};
	f.name = xstrdup(info->name); /* the kernel's 16-byte name, where BTF has none */
	uint32_t n = info->nr_func_info, rec = info->func_info_rec_size;
	const struct btf *b = info->btf_id ? binfo_bpf_btf(info->btf_id) : NULL;
	if (!b || !n || rec < sizeof(struct bpf_func_info)) {
		f.btf_id = 0; /* not a target: fentry needs the function's BTF */
		add(&f);
		return;
	}
	char *recs = xcalloc(n, rec);
	struct bpf_prog_info again = {.nr_func_info = n, .func_info_rec_size = rec,
				      .func_info = (uint64_t)(uintptr_t)recs};
	uint32_t len = sizeof(again);
	if (bpf_obj_get_info_by_fd(fd, &again, &len) || again.nr_func_info < n) {
		free(recs);
		f.btf_id = 0;
		add(&f);
		return;
	}
	free((char *)f.name);
	for (uint32_t i = 0; i < n; i++) {
		const struct bpf_func_info *fi = (const void *)(recs + (size_t)i * rec);
		const struct btf_type *t = btf__type_by_id(b, fi->type_id);
		const char *name = t && btf_is_func(t) ? btf__name_by_offset(b, t->name_off) : NULL;
		if (!name || !*name)
			continue;
		f.type_id = fi->type_id;
		f.name = xstrdup(name);
		f.main = i == 0;
		add(&f);
	}
	free(recs);
}

static int load(void)
{
	uint32_t *own;
	size_t nown = own_ids(&own);
	uint32_t id = 0;
	int err;
	while (!(err = bpf_prog_get_next_id(id, &id))) {
		int fd = bpf_prog_get_fd_by_id(id);
		if (fd < 0)
			continue; /* unloaded meanwhile */
		struct bpf_prog_info info = {0};
		uint32_t len = sizeof(info);
		if (!bpf_obj_get_info_by_fd(fd, &info, &len)) {
			bool mine = false;
			for (size_t i = 0; i < nown && !mine; i++)
				mine = own[i] == id;
			add_prog(fd, id, &info, mine);
		}
		close(fd);
	}
	free(own);
	return err == -ENOENT ? 0 : err; /* -EPERM without the right */
}

int binfo_bpf_funcs(const struct binfo_bpf_func **out, size_t *n)
{
	if (status == 1)
		status = load();
	*out = funcs;
	*n = nfuncs;
	return status;
}

void binfo_bpf_funcs_free(void)
{
	for (size_t i = 0; i < nfuncs; i++)
		free((char *)funcs[i].name);
	free(funcs);
	for (size_t i = 0; i < nbtfs; i++)
		btf__free(btfs[i]);
	free(btfs);
	free(btf_ids);
	funcs = NULL;
	btfs = NULL;
	btf_ids = NULL;
	nfuncs = cap = nbtfs = 0;
	status = 1;
}
