#include "common/kbtf.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"

/* /sys/kernel/btf/vmlinux through mmap (kernels from 6.16 allow it): one mapping
 * instead of ~1,350 page-sized reads of sysfs, which took half of the ~100 ms a load
 * took here under load. NULL where it cannot be mapped. */
static struct btf *load_mapped(void)
{
	int fd = open("/sys/kernel/btf/vmlinux", O_RDONLY | O_CLOEXEC);
	struct stat st;
	struct btf *btf = NULL;
	if (fd < 0)
		return NULL;
	if (!fstat(fd, &st) && st.st_size > 0) {
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p != MAP_FAILED) {
			btf = btf__new(p, (__u32)st.st_size); /* copies what it keeps */
			munmap(p, (size_t)st.st_size);
			if (libbpf_get_error(btf))
				btf = NULL;
		}
	}
	close(fd);
	return btf;
}

/* Kept for the process's life: sema (kernel types), binfo (user space's thread pointer in task_struct),
 * the runtime (task_struct.mm) and the feature probes may all ask in one run. */
const struct btf *kbtf_vmlinux(void)
{
	static struct btf *btf;
	static bool tried;
	if (!tried) {
		tried = true;
		btf = load_mapped();
		if (!btf)
			btf = btf__load_vmlinux_btf();
		if (libbpf_get_error(btf))
			btf = NULL;
	}
	return btf;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int kbtf_modules(const char *const **out, size_t *n)
{
	static char **names;
	static size_t count;
	static bool tried;
	if (!tried) {
		tried = true;
		DIR *d = opendir("/sys/kernel/btf");
		struct dirent *e;
		size_t cap = 0;
		while (d && (e = readdir(d))) {
			if (e->d_name[0] == '.' || !strcmp(e->d_name, "vmlinux"))
				continue;
			if (count == cap) {
				cap = cap ? 2 * cap : 64;
				names = xrealloc(names, cap * sizeof(*names));
			}
			names[count++] = xstrdup(e->d_name);
		}
		if (d)
			closedir(d);
		if (count)
			qsort(names, count, sizeof(*names), cmp_str);
	}
	*out = (const char *const *)names;
	*n = count;
	return 0;
}

const struct btf *kbtf_module(const char *name)
{
	static struct {
		char *name;
		struct btf *btf;
	} *cache;
	static size_t n;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(cache[i].name, name))
			return cache[i].btf;
	const struct btf *base = kbtf_vmlinux();
	const char *const *mods;
	size_t nmods;
	kbtf_modules(&mods, &nmods);
	/* only a name the kernel lists: never a path made of what a script says */
	if (!base || !bsearch(&name, mods, nmods, sizeof(*mods), cmp_str))
		return NULL;
	char path[320];
	snprintf(path, sizeof(path), "/sys/kernel/btf/%s", name);
	struct btf *b = btf__parse_split(path, (struct btf *)base);
	if (libbpf_get_error(b))
		b = NULL;
	cache = xrealloc(cache, (n + 1) * sizeof(*cache));
	cache[n].name = xstrdup(name);
	cache[n++].btf = b;
	return b;
}

/* Bit offset of member NAME (LEN bytes) in the struct/union TYPE_ID, looking through
 * anonymous members; its type in *TYPE_OUT. */
static bool member_bits(const struct btf *btf, uint32_t type_id, const char *name, size_t len,
			uint32_t *type_out, uint64_t *bits, int depth)
{
	int id = btf__resolve_type(btf, type_id);
	const struct btf_type *t = id < 0 ? NULL : btf__type_by_id(btf, (uint32_t)id);
	if (!t || depth > 8 || (!btf_is_struct(t) && !btf_is_union(t)))
		return false;
	const struct btf_member *m = btf_members(t);
	for (uint16_t i = 0; i < btf_vlen(t); i++, m++) {
		const char *mname = btf__name_by_offset(btf, m->name_off);
		uint64_t off = btf_member_bit_offset(t, i);
		if (mname && strlen(mname) == len && !strncmp(mname, name, len)) {
			*type_out = m->type;
			*bits = off;
			return true;
		}
		if ((!mname || !*mname) &&
		    member_bits(btf, m->type, name, len, type_out, bits, depth + 1)) {
			*bits += off;
			return true;
		}
	}
	return false;
}

long kbtf_offsetof(const char *struct_name, const char *path)
{
	const struct btf *btf = kbtf_vmlinux();
	int32_t id = btf ? btf__find_by_name_kind(btf, struct_name, BTF_KIND_STRUCT) : -1;
	if (id <= 0)
		return -ENOENT;
	uint32_t type = (uint32_t)id;
	uint64_t total = 0;
	for (const char *p = path; *p;) {
		size_t len = strcspn(p, ".");
		uint64_t bits;
		if (!member_bits(btf, type, p, len, &type, &bits, 0))
			return -ENOENT;
		total += bits;
		p += len + (p[len] == '.');
	}
	return total % 8 == 0 && total / 8 <= INT32_MAX ? (long)(total / 8) : -ENOENT;
}

const struct btf *kbtf_object(const char *obj, unsigned *first_id)
{
	const struct btf *vml = kbtf_vmlinux();
	if (!vml)
		return NULL;
	if (!strcmp(obj, "vmlinux")) {
		*first_id = 1;
		return vml;
	}
	*first_id = btf__type_cnt(vml);
	return kbtf_module(obj);
}
