/* dw: small libdwarf helpers shared by the DWARF readers of src/binfo. */
#include "binfo/dw.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "binfo/binfo_int.h"
#include "common/diag.h"

/* Turns a libdwarf result into true (DW_DLV_OK) / false, freeing the error of DW_DLV_ERROR. */
bool dw_ok(struct dw *d, int res)
{
	if (res == DW_DLV_OK)
		return true;
	if (res == DW_DLV_ERROR) {
		d->failed = true;
		if (d->err)
			dwarf_dealloc_error(d->dbg, d->err);
	}
	d->err = NULL;
	return false;
}

void dw_free_die(Dwarf_Die die)
{
	if (die)
		dwarf_dealloc_die(die);
}

/* The name of DIE, pointing into .debug_str (not to be freed), or NULL. */
const char *dw_name(struct dw *d, Dwarf_Die die)
{
	char *name = NULL;
	return dw_ok(d, dwarf_diename(die, &name, &d->err)) ? name : NULL;
}

Dwarf_Half dw_tag(struct dw *d, Dwarf_Die die)
{
	Dwarf_Half tag = 0;
	return dw_ok(d, dwarf_tag(die, &tag, &d->err)) ? tag : 0;
}

/* DW_AT_data_member_location of MEMBER: a constant (what Go emits), or the old
 * location-expression form DW_OP_plus_uconst N. */
bool dw_member_offset(struct dw *d, Dwarf_Die member, uint64_t *off)
{
	Dwarf_Attribute attr = NULL;
	Dwarf_Half form = 0;
	bool ok = false;

	if (!dw_ok(d, dwarf_attr(member, DW_AT_data_member_location, &attr, &d->err)))
		return false;
	if (!dw_ok(d, dwarf_whatform(attr, &form, &d->err)))
		goto out;
	if (form == DW_FORM_exprloc) {
		Dwarf_Unsigned len = 0;
		Dwarf_Ptr expr = NULL;
		if (dw_ok(d, dwarf_formexprloc(attr, &len, &expr, &d->err)) && len >= 2) {
			const uint8_t *p = expr, *end = p + len;
			ok = *p++ == DW_OP_plus_uconst && binfo_uleb128(&p, end, off) && p == end;
		}
	} else {
		Dwarf_Unsigned v = 0;
		ok = dw_ok(d, dwarf_formudata(attr, &v, &d->err));
		*off = v;
	}
out:
	dwarf_dealloc_attribute(attr);
	return ok;
}

bool dw_attr_udata(struct dw *d, Dwarf_Die die, Dwarf_Half at, uint64_t *v)
{
	Dwarf_Attribute attr = NULL;
	Dwarf_Unsigned u = 0;
	Dwarf_Addr addr = 0;
	Dwarf_Half form = 0;
	*v = 0;
	if (!dw_ok(d, dwarf_attr(die, at, &attr, &d->err)))
		return false;
	bool ok = dw_ok(d, dwarf_whatform(attr, &form, &d->err));
	if (ok && form == DW_FORM_addr) { /* Go's DW_AT_go_runtime_type on some releases */
		ok = dw_ok(d, dwarf_formaddr(attr, &addr, &d->err));
		u = addr;
	} else if (ok) {
		ok = dw_ok(d, dwarf_formudata(attr, &u, &d->err));
	}
	dwarf_dealloc_attribute(attr);
	*v = u;
	return ok;
}

bool dw_attr_ref(struct dw *d, Dwarf_Die die, Dwarf_Half at, Dwarf_Off *ref)
{
	Dwarf_Attribute attr = NULL;
	if (!dw_ok(d, dwarf_attr(die, at, &attr, &d->err)))
		return false;
	bool ok = dw_ok(d, dwarf_global_formref(attr, ref, &d->err));
	dwarf_dealloc_attribute(attr);
	return ok;
}

bool dw_type_ref(struct dw *d, Dwarf_Die die, Dwarf_Off *ref)
{
	return dw_attr_ref(d, die, DW_AT_type, ref);
}

Dwarf_Die dw_next_sibling(struct dw *d, Dwarf_Die cur)
{
	Dwarf_Die next = NULL;
	dw_ok(d, dwarf_siblingof_b(d->dbg, cur, true, &next, &d->err));
	dw_free_die(cur);
	return next;
}

Dwarf_Die dw_next_cu(struct dw *d)
{
	Dwarf_Unsigned hdr_len = 0, abbrev_off = 0, typeoff = 0, next_off = 0;
	Dwarf_Half version = 0, addr_size = 0, off_size = 0, ext_size = 0, cu_type = 0;
	Dwarf_Sig8 sig;
	Dwarf_Die cu = NULL;
	if (!dw_ok(d, dwarf_next_cu_header_d(d->dbg, true, &hdr_len, &version, &abbrev_off,
					     &addr_size, &off_size, &ext_size, &sig, &typeoff,
					     &next_off, &cu_type, &d->err)))
		return NULL;
	/* The CU's own DIE only: its children are read when asked for. */
	return dw_ok(d, dwarf_siblingof_b(d->dbg, NULL, true, &cu, &d->err)) ? cu : NULL;
}


/* Whether the units of a DWARF 5 location or range list section (P, N bytes) hold
 * together: each unit's length inside the section, version 5, 4- or 8-byte addresses,
 * its offset table inside the unit. */
static bool lists_ok(const uint8_t *p, uint64_t n)
{
	for (uint64_t off = 0; off < n;) {
		uint64_t len, hdr = 4;
		uint32_t len32, count;
		uint16_t version;
		if (n - off < 4)
			return false;
		memcpy(&len32, p + off, 4);
		len = len32;
		if (len32 == 0xffffffffu) {
			if (n - off < 12)
				return false;
			memcpy(&len, p + off + 4, 8);
			hdr = 12;
		} else if (len32 >= 0xfffffff0u) {
			return false;
		}
		if (len > n - off - hdr || len < 8)
			return false;
		memcpy(&version, p + off + hdr, 2);
		memcpy(&count, p + off + hdr + 4, 4);
		if (version != 5 || (p[off + hdr + 2] != 8 && p[off + hdr + 2] != 4) ||
		    p[off + hdr + 3] != 0 || count > (len - 8) / (hdr == 4 ? 4 : 8))
			return false;
		off += hdr + len;
	}
	return true;
}

/* One warning per binary, however many readers open its DWARF. */
static void lists_warn(const struct binfo *bi, const char *name)
{
	static char warned[4096];
	if (!strcmp(warned, bi->path))
		return;
	snprintf(warned, sizeof(warned), "%s", bi->path);
	diag_print(DIAG_WARNING, "%s: malformed %s (a unit runs past the section or its "
		   "header is wrong): its DWARF is not read", bi->path, name);
}

/* libdwarf 20210528 frees a list header twice when a unit of .debug_rnglists or
 * .debug_loclists runs past its section (dwarf_load_rnglists, at the first
 * dwarf_next_cu_header_d): a hostile binary aborted gotrace. Such sections are checked
 * first; false (with a warning) when one is malformed. */
static bool lists_sane(const struct binfo *bi)
{
	static const char *const names[] = {".debug_rnglists", ".debug_loclists",
					    ".zdebug_rnglists", ".zdebug_loclists"};
	for (int i = 0; i < 4; i++) {
		GElf_Shdr sh;
		Elf_Scn *scn = binfo_elf_section(bi->elf, names[i], SHT_NULL, &sh);
		if (!scn)
			continue;
		if (!(sh.sh_flags & SHF_COMPRESSED) && i < 2) {
			if (sh.sh_offset > bi->img_size || sh.sh_size > bi->img_size - sh.sh_offset ||
			    !lists_ok(bi->img + sh.sh_offset, sh.sh_size)) {
				lists_warn(bi, names[i]);
				return false;
			}
			continue;
		}
		/* compressed: inflated in a handle of its own (that replaces the data) */
		Elf *e = elf_begin(bi->fd, ELF_C_READ_MMAP, NULL);
		Elf_Scn *zs = e ? binfo_elf_section(e, names[i], SHT_NULL, &sh) : NULL;
		Elf_Data *data = NULL;
		if (zs && ((sh.sh_flags & SHF_COMPRESSED) ? elf_compress(zs, 0, 0)
							  : elf_compress_gnu(zs, 0, 0)) >= 0)
			data = elf_getdata(zs, NULL);
		bool ok = data && data->d_buf && lists_ok(data->d_buf, data->d_size);
		if (e)
			elf_end(e);
		if (!ok) {
			lists_warn(bi, names[i]);
			return false;
		}
	}
	return true;
}

bool dw_open(struct dw *d, const struct binfo *bi)
{
	memset(d, 0, sizeof(*d));
	d->fd = -1;
	if (!lists_sane(bi))
		return false;
	/* A descriptor of its own: libdwarf reads with lseek/read, libelf has its mapping. */
	d->fd = binfo_reopen(bi);
	if (d->fd < 0)
		return false;
	int res = dwarf_init_b(d->fd, DW_DLC_READ, DW_GROUPNUMBER_ANY, NULL, NULL, &d->dbg, &d->err);
	if (res != DW_DLV_OK) {
		if (res == DW_DLV_ERROR && d->err)
			dwarf_dealloc_error(d->dbg, d->err);
		close(d->fd);
		d->fd = -1;
		return false;
	}
	/* libdwarf opens a binary whose only DWARF-like section is .eh_frame (a cgo build
	 * linked with -s -w): without .debug_info it has no DWARF for our purposes, and
	 * saying so beats "DWARF does not describe main.work" */
	Dwarf_Addr addr;
	Dwarf_Unsigned size = 0;
	Dwarf_Error e = NULL;
	if (dwarf_get_section_info_by_name(d->dbg, ".debug_info", &addr, &size, &e) != DW_DLV_OK ||
	    !size) {
		if (e)
			dwarf_dealloc_error(d->dbg, e);
		e = NULL;
		if (dwarf_get_section_info_by_name(d->dbg, ".zdebug_info", &addr, &size, &e) !=
			    DW_DLV_OK ||
		    !size) {
			if (e)
				dwarf_dealloc_error(d->dbg, e);
			dw_close(d);
			return false;
		}
	}
	return true;
}

void dw_close(struct dw *d)
{
	Dwarf_Error ferr = NULL;
	if (d->fd < 0)
		return;
	if (dwarf_finish(d->dbg, &ferr) == DW_DLV_ERROR && ferr)
		dwarf_dealloc_error(NULL, ferr);
	close(d->fd);
	d->fd = -1;
}
