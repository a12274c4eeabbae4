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

/* A flag attribute (DW_FORM_flag, _flag_present): false when absent or of another form. */
bool dw_attr_flag(struct dw *d, Dwarf_Die die, Dwarf_Half at)
{
	Dwarf_Attribute attr = NULL;
	Dwarf_Bool flag = 0;
	Dwarf_Half form = 0;
	if (!dw_ok(d, dwarf_attr(die, at, &attr, &d->err)))
		return false;
	if (dw_ok(d, dwarf_whatform(attr, &form, &d->err)) &&
	    (form == DW_FORM_flag || form == DW_FORM_flag_present) &&
	    !dw_ok(d, dwarf_formflag(attr, &flag, &d->err)))
		flag = 0;
	dwarf_dealloc_attribute(attr);
	return flag != 0;
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

/* One warning per binary, however many readers open its DWARF: "BI: WHY: its DWARF
 * is not read". */
static void dwarf_warn(const struct binfo *bi, const char *why)
{
	static char warned[4096];
	if (!strcmp(warned, bi->path))
		return;
	snprintf(warned, sizeof(warned), "%s", bi->path);
	diag_print(DIAG_WARNING, "%s: %s: its DWARF is not read", bi->path, why);
}

/* Whether libdwarf 20210528 takes section NAME for its range or location lists: it maps
 * .debug_X, .zdebug_X, .debug_X.dwo and .zdebug_X.dwo to the same lists, whatever the
 * section's type. */
static bool is_lists_name(const char *name)
{
	if (!strncmp(name, ".z", 2))
		name += 2;
	else if (*name == '.')
		name++;
	else
		return false;
	size_t n = strlen(name);
	if (n >= 4 && !strcmp(name + n - 4, ".dwo"))
		n -= 4;
	return n == 14 &&
	       (!strncmp(name, "debug_rnglists", 14) || !strncmp(name, "debug_loclists", 14));
}

/* The compressed lists section IDX (header SH, file bytes RAW; named .zdebug_* or
 * SHF_COMPRESSED) as libdwarf inflates it: a "ZLIB" header first (GNU style, whatever
 * the name or flags), else SHF_COMPRESSED's Elf64_Chdr (binfo reads ELF64 only). It is
 * inflated in a libelf handle of its own (that replaces the section's data) and its
 * units are checked there. False when it does not inflate, or not to the size its
 * header says. */
static bool zlists_ok(const struct binfo *bi, size_t idx, const GElf_Shdr *sh,
		      const uint8_t *raw)
{
	bool gnu = sh->sh_size >= 12 && !memcmp(raw, "ZLIB", 4);
	uint64_t want = 0;
	if (gnu) {
		for (int i = 4; i < 12; i++)
			want = want << 8 | raw[i];
	} else if ((sh->sh_flags & SHF_COMPRESSED) && sh->sh_size >= sizeof(Elf64_Chdr)) {
		Elf64_Chdr ch;
		memcpy(&ch, raw, sizeof(ch));
		want = ch.ch_size;
	} else {
		return false; /* .zdebug_ without "ZLIB": libdwarf fails on it, so do we */
	}
	Elf *e = elf_begin(bi->fd, ELF_C_READ_MMAP, NULL);
	Elf_Scn *zs = e ? elf_getscn(e, idx) : NULL;
	Elf_Data *data = NULL;
	if (zs && (gnu ? elf_compress_gnu(zs, 0, 0) : elf_compress(zs, 0, 0)) >= 0)
		data = elf_getdata(zs, NULL);
	bool ok = data && data->d_buf && data->d_size == want &&
		  lists_ok(data->d_buf, data->d_size);
	if (e)
		elf_end(e);
	return ok;
}

/* libdwarf 20210528 frees a list header twice when a unit of its range lists does not
 * parse (dwarf_load_rnglists, at the first dwarf_next_cu_header_d): hostile binaries
 * aborted gotrace. libdwarf reads the section headers itself, so the check follows its
 * view, not libelf's: every section needs a readable name (libdwarf gives up otherwise);
 * a section it takes as DWARF (.debug_*, .zdebug_*) must have its bytes in the file
 * (libdwarf reads an SHT_NOBITS one from its sh_offset all the same); and the range and
 * location lists it takes, of any type, under any of their names, compressed or not, must
 * hold together once inflated as libdwarf inflates them. False (with one warning) when
 * not. */
/* Section I's header into SH and its name (NULL when either cannot be read). */
static const char *section(const struct binfo *bi, size_t shstrndx, size_t i, GElf_Shdr *sh)
{
	Elf_Scn *scn = elf_getscn(bi->elf, i);
	return scn && gelf_getshdr(scn, sh) ? elf_strptr(bi->elf, shstrndx, sh->sh_name) : NULL;
}

static bool dwarf_sane(const struct binfo *bi)
{
	size_t shstrndx, nsec;
	char why[256];
	if (elf_getshdrstrndx(bi->elf, &shstrndx) || elf_getshdrnum(bi->elf, &nsec)) {
		dwarf_warn(bi, "malformed ELF (its section names cannot be read)");
		return false;
	}
	for (size_t i = 1; i < nsec; i++) {
		GElf_Shdr sh;
		const char *name = section(bi, shstrndx, i, &sh);
		if (!name) {
			snprintf(why, sizeof(why),
				 "malformed ELF (section %zu has no readable name)", i);
			dwarf_warn(bi, why);
			return false;
		}
		/* libdwarf loads nothing of an empty section */
		if ((strncmp(name, ".debug_", 7) && strncmp(name, ".zdebug_", 8)) || !sh.sh_size)
			continue;
		if (sh.sh_type == SHT_NOBITS) {
			snprintf(why, sizeof(why), "malformed %.64s (SHT_NOBITS: no bytes in "
				 "the file)", name);
			dwarf_warn(bi, why);
			return false;
		}
		if (sh.sh_offset > bi->img_size || sh.sh_size > bi->img_size - sh.sh_offset) {
			snprintf(why, sizeof(why), "malformed %.64s (it runs past the end of "
				 "the file)", name);
			dwarf_warn(bi, why);
			return false;
		}
		if (!is_lists_name(name))
			continue;
		const uint8_t *raw = bi->img + sh.sh_offset;
		bool compressed = !strncmp(name, ".z", 2) || (sh.sh_flags & SHF_COMPRESSED);
		if (compressed ? !zlists_ok(bi, i, &sh, raw) : !lists_ok(raw, sh.sh_size)) {
			snprintf(why, sizeof(why), "malformed %.64s (a unit runs past the "
				 "section or its header is wrong)", name);
			dwarf_warn(bi, why);
			return false;
		}
	}
	return true;
}

/* Whether BI has a .debug_info (or .zdebug_info) with bytes: its section headers only. */
bool dw_present(const struct binfo *bi)
{
	size_t shstrndx, nsec;
	if (elf_getshdrstrndx(bi->elf, &shstrndx) || elf_getshdrnum(bi->elf, &nsec))
		return false;
	for (size_t i = 1; i < nsec; i++) {
		GElf_Shdr sh;
		const char *name = section(bi, shstrndx, i, &sh);
		if (name && (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info")) &&
		    sh.sh_size && sh.sh_type != SHT_NOBITS)
			return true;
	}
	return false;
}

bool dw_open(struct dw *d, const struct binfo *bi)
{
	memset(d, 0, sizeof(*d));
	d->fd = -1;
	/* the check inflates every list section: once per binary, not per reader */
	struct binfo *mbi = (struct binfo *)bi;
	if (!mbi->dwarf_checked)
		mbi->dwarf_checked = dwarf_sane(bi) ? 1 : -1;
	if (mbi->dwarf_checked < 0)
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

/* Offsets of the wanted members of the structure STRUCT_DIE. True when all are found. */
bool dw_members(struct dw *d, Dwarf_Die st, struct member_want *w, int nw)
{
	Dwarf_Die cur = NULL;
	int left = nw;

	if (!dw_ok(d, dwarf_child(st, &cur, &d->err)))
		return false;
	for (; cur && left > 0 && !d->failed; cur = dw_next_sibling(d, cur)) {
		if (dw_tag(d, cur) == DW_TAG_member) {
			const char *name = dw_name(d, cur);
			for (int i = 0; name && i < nw; i++) {
				uint64_t off;
				if (w[i].found || strcmp(name, w[i].name) != 0)
					continue;
				if (!dw_member_offset(d, cur, &off) || off > INT32_MAX)
					break;
				if (w[i].ref && !dw_type_ref(d, cur, w[i].ref))
					break;
				*w[i].out = (int)off;
				w[i].found = true;
				left--;
				break;
			}
		}
	}
	dw_free_die(cur);
	return left == 0;
}
