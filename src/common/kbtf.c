#include "common/kbtf.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Kept for the process's life: binfo (task_struct.thread.fsbase) and the runtime
 * (task_struct.mm, mm_struct.start_code) may both ask in one run. */
static const struct btf *vmlinux(void)
{
	static struct btf *btf;
	static bool tried;
	if (!tried) {
		tried = true;
		btf = btf__load_vmlinux_btf();
		if (libbpf_get_error(btf))
			btf = NULL;
	}
	return btf;
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
	const struct btf *btf = vmlinux();
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
