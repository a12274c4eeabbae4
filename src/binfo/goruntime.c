/* binfo/goruntime: what the BPF side needs to find the current goroutine.
 *
 *   g      = R14 at a Go function's entry (ABIInternal, Go >= 1.17), or
 *            *(tp + tls_g_offset) with tp = *(task + off(task_struct's thread pointer))
 *   g      = g.m.curg when g is the m's g0 (system stack)
 *   goid   = *(g + off(g.goid)); stack depth = g.stack.hi - SP
 *
 * Offsets inside runtime.g / runtime.m come from the binary's DWARF (only the runtime
 * CUs are walked, and only their top level), else from a table keyed by the Go
 * version. The TLS slot comes from the ELF program headers and runtime.tlsg. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libdwarf/dwarf.h>
#include <libdwarf/libdwarf.h>

#include "arch/arch.h"
#include "binfo/dw.h"

#include "binfo/binfo_int.h"
#include "common/kbtf.h"

/* ---- Go version ---- */

/* Minor version N of "go1.N", "go1.N.P", "go1.NrcK", "go1.N-<suffix> ..." (Google's
 * internal toolchains), and of "devel go1.N-<hash> ..." (then *release = false); -1 when
 * the string is not one of those. */
static int go_minor(const char *v, bool *release)
{
	*release = true;
	if (!v)
		return -1;
	if (strncmp(v, "devel ", 6) == 0) {
		*release = false;
		v += 6;
	}
	if (strncmp(v, "go1.", 4) != 0 || v[4] < '0' || v[4] > '9')
		return -1;
	int n = 0;
	for (v += 4; *v >= '0' && *v <= '9' && n < 1000; v++)
		n = n * 10 + (*v - '0');
	return n;
}

/* Offsets of linux/amd64 Go releases. The fields before g.goid and m.curg, read in
 * src/runtime/runtime2.go of go1.17.13, 1.18, 1.19.8, 1.20.2, 1.20.6, 1.21.12 and
 * 1.23.5 (with gsignalStack = 5 words, sigset = [2]uint32 on amd64, tlsSlots = 6):
 *   g.stack = 0 (stack.hi = 8), g.m = 48 (after stackguard0/1, _panic, _defer),
 *   g.goid  = 152: sched gobuf (7 words) at 56, syscallsp, syscallpc, stktopsp, param,
 *                  atomicstatus + stackLock (2 x 4 bytes)          (1.17 .. 1.22)
 *           = 160: g.syscallbp inserted after syscallpc            (1.23, 1.24)
 *           = 152: gobuf.ret removed, gobuf is 6 words             (1.25 ..)
 *   m.g0    = 0, m.curg = 192: g0, morebuf gobuf, divmod + pad, procid, gsignal,
 *                  goSigStack, sigmask, tls [6]uintptr, mstartfn   (.. 1.24)
 *           = 184: the 6-word gobuf                                (1.25 ..)
 * Checked on real binaries of each release (docs/go-versions.md has the matrix): the
 * DWARF of go1.19.8 and go1.24 builds, and live processes of stripped builds from
 * go1.17.1 to go1.27.3 under gdb (g from R14 at main.main: g.goid is 1, g.m.curg == g,
 * SP between g.stack.lo and g.stack.hi). Later releases are refused until they are
 * checked the same way. */
static const struct go_layout {
	int first_minor, last_minor;
	int g_stack_hi, g_m, g_goid, m_g0, m_curg;
} go_layouts[] = {
    {17, 22, 8, 48, 152, 0, 192},
    {23, 24, 8, 48, 160, 0, 192},
    {25, 27, 8, 48, 152, 0, 184},
};

int binfo_go_minor(const struct binfo *bi)
{
	bool release;
	return go_minor(bi->go_version, &release);
}

static bool layout_from_table(const struct binfo *bi, struct binfo_goruntime *out)
{
	bool release;
	int minor = go_minor(bi->go_version, &release);
	if (!release)
		return false; /* a development toolchain can be anywhere between two layouts */
	for (size_t i = 0; i < sizeof(go_layouts) / sizeof(go_layouts[0]); i++) {
		const struct go_layout *l = &go_layouts[i];
		if (minor < l->first_minor || minor > l->last_minor)
			continue;
		out->g_stack_hi = l->g_stack_hi;
		out->g_m = l->g_m;
		out->g_goid = l->g_goid;
		out->m_g0 = l->m_g0;
		out->m_curg = l->m_curg;
		out->source = "go-version table";
		return true;
	}
	return false;
}

/* ---- DWARF ---- */

/* runtime.stack's `hi`, through the type of g.stack: Go's members refer to a
 * DW_TAG_typedef "runtime.stack" whose DW_AT_type is the structure. */
static bool dw_stack_hi(struct dw *d, Dwarf_Off type, int *hi)
{
	Dwarf_Die st = NULL;
	Dwarf_Half tag = 0;
	for (int depth = 0; depth < 4; depth++) {
		if (!dw_ok(d, dwarf_offdie_b(d->dbg, type, true, &st, &d->err)))
			return false;
		tag = dw_tag(d, st);
		if (tag != DW_TAG_typedef || !dw_type_ref(d, st, &type))
			break;
		dw_free_die(st);
		st = NULL;
	}
	struct member_want w[] = {{"hi", hi, NULL, false}};
	bool ok = st && tag == DW_TAG_structure_type && dw_members(d, st, w, 1);
	dw_free_die(st);
	return ok;
}

struct dw_found {
	bool g, m, bad;
	int stack, stack_hi, m_field, goid, g0, curg;
	int vdso_sp, vdso_pc, syscall_sp, syscall_pc; /* optional: 0 when absent */
	Dwarf_Off stack_type;
	bool regabi_producer; /* DW_AT_producer of a runtime CU says "regabi" */
};

/* Top-level DIEs of one CU (its children, not their children): the struct types. */
static void dw_scan_cu(struct dw *d, Dwarf_Die cu, struct dw_found *f)
{
	Dwarf_Die cur = NULL;

	if (!dw_ok(d, dwarf_child(cu, &cur, &d->err)))
		return;
	for (; cur && !(f->g && f->m) && !f->bad && !d->failed; cur = dw_next_sibling(d, cur)) {
		if (dw_tag(d, cur) == DW_TAG_structure_type) {
			const char *name = dw_name(d, cur);
			if (name && !f->g && strcmp(name, "runtime.g") == 0) {
				struct member_want w[] = {
				    {"stack", &f->stack, &f->stack_type, false},
				    {"m", &f->m_field, NULL, false},
				    {"goid", &f->goid, NULL, false}};
				f->g = dw_members(d, cur, w, 3) && f->stack == 0 &&
				       dw_stack_hi(d, f->stack_type, &f->stack_hi);
				if (!f->g) {
					f->bad = true; /* not as expected: let the table decide */
					break;
				}
				struct member_want o[] = {{"syscallsp", &f->syscall_sp, NULL, false},
				                          {"syscallpc", &f->syscall_pc, NULL, false}};
				if (!dw_members(d, cur, o, 2))
					f->syscall_sp = f->syscall_pc = 0;
			} else if (name && !f->m && strcmp(name, "runtime.m") == 0) {
				struct member_want w[] = {{"g0", &f->g0, NULL, false},
				                          {"curg", &f->curg, NULL, false}};
				f->m = dw_members(d, cur, w, 2);
				if (!f->m) {
					f->bad = true;
					break;
				}
				struct member_want o[] = {{"vdsoSP", &f->vdso_sp, NULL, false},
				                          {"vdsoPC", &f->vdso_pc, NULL, false}};
				if (!dw_members(d, cur, o, 2))
					f->vdso_sp = f->vdso_pc = 0;
			}
		}
	}
	dw_free_die(cur);
}

/* True when the CU is Go's "runtime" package; notes the regabi producer flag. */
static bool dw_is_runtime_cu(struct dw *d, Dwarf_Die cu, struct dw_found *f)
{
	const char *name = dw_name(d, cu);
	if (!name || strcmp(name, "runtime") != 0)
		return false;
	Dwarf_Attribute attr = NULL;
	if (dw_ok(d, dwarf_attr(cu, DW_AT_producer, &attr, &d->err))) {
		char *prod = NULL;
		if (dw_ok(d, dwarf_formstring(attr, &prod, &d->err)) && strstr(prod, "regabi"))
			f->regabi_producer = true;
		dwarf_dealloc_attribute(attr);
	}
	return true;
}

/* 1 = offsets filled from DWARF, 0 = no DWARF or the types are not in it. */
static int layout_from_dwarf(const struct binfo *bi, struct binfo_goruntime *out,
                             bool *regabi_producer)
{
	struct dw d;
	struct dw_found f = {0};

	if (!dw_open(&d, bi))
		return 0;
	for (Dwarf_Die cu; (cu = dw_next_cu(&d));) {
		if (dw_is_runtime_cu(&d, cu, &f))
			dw_scan_cu(&d, cu, &f);
		dw_free_die(cu);
		if ((f.g && f.m) || f.bad || d.failed)
			break;
	}
	*regabi_producer = f.regabi_producer;

	dw_close(&d);

	if (!f.g || !f.m || f.bad)
		return 0;
	out->g_stack_hi = f.stack + f.stack_hi;
	out->g_m = f.m_field;
	out->g_goid = f.goid;
	out->m_g0 = f.g0;
	out->m_curg = f.curg;
	out->m_vdso_sp = f.vdso_sp;
	out->m_vdso_pc = f.vdso_pc;
	out->g_syscall_sp = f.syscall_sp;
	out->g_syscall_pc = f.syscall_pc;
	out->source = "dwarf";
	return 1;
}

/* ---- TLS slot of g ---- */

/* Value of the STT_TLS symbol runtime.tlsg (its offset inside the TLS segment). */
static bool find_tlsg(const struct binfo *bi, uint64_t *value)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(bi->elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB ||
		    sh.sh_entsize != sizeof(Elf64_Sym))
			continue;
		Elf_Scn *strscn = elf_getscn(bi->elf, sh.sh_link);
		Elf_Data *d = elf_getdata(scn, NULL),
		         *sd = strscn ? elf_getdata(strscn, NULL) : NULL;
		if (!d || !sd || !d->d_buf || !sd->d_buf)
			return false;
		const Elf64_Sym *syms = d->d_buf;
		const char *strs = sd->d_buf;
		size_t n = d->d_size / sizeof(Elf64_Sym);
		for (size_t i = 0; i < n; i++) {
			/* Few symbols are TLS: test the type before the name. */
			if (ELF64_ST_TYPE(syms[i].st_info) != STT_TLS ||
			    syms[i].st_name >= sd->d_size)
				continue;
			const char *name = strs + syms[i].st_name;
			size_t len = strlen(arch_go_tls_symbol);
			if (strnlen(name, sd->d_size - syms[i].st_name) == len &&
			    memcmp(name, arch_go_tls_symbol, len) == 0) {
				*value = syms[i].st_value;
				return true;
			}
		}
		return false;
	}
	return false;
}

/* The executable's TLS block is placed by the processor's TLS variant (arch.h). Go's own
 * linker always puts g at ARCH_GO_TLS_G_INTERNAL from the thread pointer
 * (runtime.tlsg is then not in .symtab, even when a PT_TLS segment of 8 bytes exists:
 * PIE, internal cgo link). */
/* Without runtime.tlsg (stripped), the slot is where the linker made Go's code load g
 * from (arch.h). */
static bool slot_from_code(const struct binfo *bi, int64_t *off)
{
	uint64_t size;
	const uint8_t *p = binfo__section(bi, ".text", &size, NULL);
	return p && arch_go_tls_g_slot(p, (size_t)size, off);
}

static bool has_pt_tls(const struct binfo *bi)
{
	size_t nphdr = 0;
	if (elf_getphdrnum(bi->elf, &nphdr) != 0)
		return false;
	for (size_t i = 0; i < nphdr; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(bi->elf, (int)i, &ph) && ph.p_type == PT_TLS)
			return true;
	}
	return false;
}

static void tls_slot(const struct binfo *bi, struct binfo_goruntime *out)
{
	size_t nphdr = 0;
	uint64_t tlsg;
	int64_t code_off = ARCH_GO_TLS_G_INTERNAL;

	out->tls_mode = BINFO_TLS_INTERNAL;
	out->tls_g_offset = ARCH_GO_TLS_G_INTERNAL;
	if (!find_tlsg(bi, &tlsg)) {
		/* only an external link (a PT_TLS segment) can move g off its internal slot */
		if (has_pt_tls(bi) && slot_from_code(bi, &code_off) &&
		    code_off != ARCH_GO_TLS_G_INTERNAL) {
			out->tls_mode = BINFO_TLS_EXTERNAL;
			out->tls_g_offset = code_off;
		}
		return;
	}
	if (elf_getphdrnum(bi->elf, &nphdr) != 0)
		return;
	for (size_t i = 0; i < nphdr; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(bi->elf, (int)i, &ph) || ph.p_type != PT_TLS)
			continue;
		out->tls_mode = BINFO_TLS_EXTERNAL;
		out->tls_g_offset = arch_tls_offset(tlsg, ph.p_vaddr, ph.p_memsz, ph.p_align);
		return;
	}
}

/* ---- public ---- */

/* The last answer, keyed by the file's identity: sema and codegen both ask, and the
 * DWARF path costs tens of milliseconds on a large binary (inflating .debug_info). */
static struct {
	bool valid;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	int rc;
	struct binfo_goruntime val;
} gr_cache;

static unsigned gr_computed;

unsigned binfo_goruntime_computed(void)
{
	return gr_computed;
}

static void remember(const struct stat *st, int rc, const struct binfo_goruntime *val)
{
	gr_cache.valid = true;
	gr_cache.dev = st->st_dev;
	gr_cache.ino = st->st_ino;
	gr_cache.size = st->st_size;
	gr_cache.mtime = st->st_mtim;
	gr_cache.rc = rc;
	gr_cache.val = *val;
}

/* The layout kept by binfo_store for a binary of many functions, whose DWARF walk to
 * runtime.g is long (a web server's: 960 M instructions). All fields as int64s. */
#define LAYOUT_WHAT "goruntime layout, format 1"
#define LAYOUT_MIN_FUNCS 4096
enum { LW_DWARF, LW_STACK_HI, LW_M, LW_GOID, LW_G0, LW_CURG, LW_VDSO_SP, LW_VDSO_PC,
       LW_SYSCALL_SP, LW_SYSCALL_PC, LW_TLS_MODE, LW_TLS_OFF, LW_REGABI, LW_N };

static void save_layout(struct binfo *bi, const struct binfo_goruntime *g)
{
	const struct binfo_store *st = binfo__store();
	if (!st || bi->nfuncs < LAYOUT_MIN_FUNCS)
		return;
	int64_t w[LW_N] = {
		[LW_DWARF] = !strcmp(g->source, "dwarf"), [LW_STACK_HI] = g->g_stack_hi,
		[LW_M] = g->g_m, [LW_GOID] = g->g_goid, [LW_G0] = g->m_g0, [LW_CURG] = g->m_curg,
		[LW_VDSO_SP] = g->m_vdso_sp, [LW_VDSO_PC] = g->m_vdso_pc,
		[LW_SYSCALL_SP] = g->g_syscall_sp, [LW_SYSCALL_PC] = g->g_syscall_pc,
		[LW_TLS_MODE] = g->tls_mode, [LW_TLS_OFF] = g->tls_g_offset,
		[LW_REGABI] = g->regabi,
	};
	char *key = binfo__store_key(bi, LAYOUT_WHAT);
	st->save(st->ctx, key, w, sizeof(w));
	free(key);
}

static bool load_layout(struct binfo *bi, struct binfo_goruntime *g)
{
	const struct binfo_store *st = bi->nfuncs >= LAYOUT_MIN_FUNCS ? binfo__store() : NULL;
	void *buf = NULL;
	size_t len = 0;
	char *key = st ? binfo__store_key(bi, LAYOUT_WHAT) : NULL;
	bool ok = key && !st->load(st->ctx, key, &buf, &len) && len == LW_N * sizeof(int64_t);
	free(key);
	const int64_t *w = buf;
	/* offsets in a g or an m: small and not negative; a TLS mode binfo has */
	for (int i = LW_STACK_HI; ok && i <= LW_SYSCALL_PC; i++)
		ok = w[i] >= 0 && w[i] < 65536;
	ok = ok && w[LW_TLS_MODE] >= 0 && w[LW_TLS_MODE] <= BINFO_TLS_EXTERNAL && w[LW_DWARF] >= 0 &&
	     w[LW_DWARF] <= 1 && w[LW_REGABI] >= 0 && w[LW_REGABI] <= 1 &&
	     w[LW_TLS_OFF] > -65536 && w[LW_TLS_OFF] < 65536;
	if (ok)
		*g = (struct binfo_goruntime){
			.source = w[LW_DWARF] ? "dwarf" : "go-version table",
			.g_stack_hi = (int)w[LW_STACK_HI], .g_m = (int)w[LW_M],
			.g_goid = (int)w[LW_GOID], .m_g0 = (int)w[LW_G0], .m_curg = (int)w[LW_CURG],
			.m_vdso_sp = (int)w[LW_VDSO_SP], .m_vdso_pc = (int)w[LW_VDSO_PC],
			.g_syscall_sp = (int)w[LW_SYSCALL_SP], .g_syscall_pc = (int)w[LW_SYSCALL_PC],
			.tls_mode = (enum binfo_tls_mode)w[LW_TLS_MODE], .tls_g_offset = w[LW_TLS_OFF],
			.regabi = w[LW_REGABI] != 0,
		};
	free(buf);
	return ok;
}

int binfo_goruntime(struct binfo *bi, struct binfo_goruntime *out)
{
	bool release, regabi_producer = false;
	int minor = go_minor(bi->go_version, &release);
	struct stat st;
	bool have_st = fstat(bi->fd, &st) == 0;

	if (have_st && gr_cache.valid && gr_cache.dev == st.st_dev && gr_cache.ino == st.st_ino &&
	    gr_cache.size == st.st_size && gr_cache.mtime.tv_sec == st.st_mtim.tv_sec &&
	    gr_cache.mtime.tv_nsec == st.st_mtim.tv_nsec) {
		*out = gr_cache.val;
		return gr_cache.rc;
	}

	int rc = 0;
	memset(out, 0, sizeof(*out));
	if (load_layout(bi, out)) {
		if (have_st)
			remember(&st, 0, out);
		return 0;
	}
	gr_computed++;
	if (!layout_from_dwarf(bi, out, &regabi_producer) && !layout_from_table(bi, out)) {
		memset(out, 0, sizeof(*out));
		rc = -ENOENT;
	} else {
		tls_slot(bi, out);
		/* The register ABI is on for every linux/amd64 build since Go 1.17; the
		 * compiler also says so in DW_AT_producer ("Go cmd/compile go1.19.8; regabi"). */
		out->regabi = minor >= 0 ? minor >= 17 : regabi_producer;
		save_layout(bi, out);
	}
	if (have_st)
		remember(&st, rc, out);
	return rc;
}

int binfo_kernel_tp_offset(void)
{
	static int cached;
	if (cached > 0)
		return cached;
	long off = kbtf_offsetof("task_struct", arch_kernel_tp_member);
	if (off <= 0)
		return off < 0 ? (int)off : -EINVAL;
	return cached = (int)off;
}
