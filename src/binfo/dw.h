/* dw: small libdwarf helpers shared by the DWARF readers of src/binfo (internal). */
#ifndef GT_BINFO_DW_H
#define GT_BINFO_DW_H

#include <stdbool.h>
#include <stdint.h>

#include <libdwarf/dwarf.h>
#include <libdwarf/libdwarf.h>

/* Go's own DWARF attributes (cmd/internal/dwarf) */
#define DW_AT_go_kind 0x2900
#define DW_AT_go_key 0x2901
#define DW_AT_go_elem 0x2902
#define DW_AT_go_embedded_field 0x2903
#define DW_AT_go_runtime_type 0x2904

/* reflect.Kind values that DW_AT_go_kind carries */
enum { RK_CHAN = 18, RK_FUNC = 19, RK_IFACE = 20, RK_MAP = 21, RK_SLICE = 23, RK_STRING = 24 };

struct dw {
	Dwarf_Debug dbg;
	Dwarf_Error err;
	bool failed; /* a libdwarf call returned DW_DLV_ERROR: stop walking */
	int fd;
};

struct binfo;
/* Opens BI's DWARF; false when it has none, or cannot be read, or is malformed in a way
 * libdwarf does not survive (its location or range lists, as libdwarf would see them:
 * it would free memory twice), then with one warning. */
bool dw_open(struct dw *d, const struct binfo *bi);
bool dw_present(const struct binfo *bi);
void dw_close(struct dw *d);

/* Turns a libdwarf result into true (DW_DLV_OK) / false, freeing the error of
 * DW_DLV_ERROR (then d->failed is set). */
bool dw_ok(struct dw *d, int res);
void dw_free_die(Dwarf_Die die);
/* The name of DIE, pointing into .debug_str (not to be freed), or NULL. */
const char *dw_name(struct dw *d, Dwarf_Die die);
Dwarf_Half dw_tag(struct dw *d, Dwarf_Die die);
/* DW_AT_data_member_location of MEMBER (a constant, or DW_OP_plus_uconst N). */
bool dw_member_offset(struct dw *d, Dwarf_Die member, uint64_t *off);
/* An unsigned constant (or address) attribute AT of DIE. */
bool dw_attr_udata(struct dw *d, Dwarf_Die die, Dwarf_Half at, uint64_t *v);
/* Global .debug_info offset of the DIE that attribute AT (a reference) of DIE names;
 * dw_type_ref: of DW_AT_type. */
bool dw_attr_ref(struct dw *d, Dwarf_Die die, Dwarf_Half at, Dwarf_Off *ref);
bool dw_attr_flag(struct dw *d, Dwarf_Die die, Dwarf_Half at);
bool dw_type_ref(struct dw *d, Dwarf_Die die, Dwarf_Off *ref);
/* The sibling after CUR (NULL at the end), CUR freed: `for (; cur; cur =
 * dw_next_sibling(d, cur))`, and dw_free_die(cur) after a break. */
Dwarf_Die dw_next_sibling(struct dw *d, Dwarf_Die cur);
/* The DIE of the next compile unit, NULL after the last (or on an error). */
Dwarf_Die dw_next_cu(struct dw *d);

struct member_want {
	const char *name;
	int *out;       /* offset, set when found */
	Dwarf_Off *ref; /* optional: its DW_AT_type */
	bool found;
};

/* Offsets of the wanted members of the structure ST, each found one's `found` set.
 * True when all are found. */
bool dw_members(struct dw *d, Dwarf_Die st, struct member_want *w, int nw);

#endif
