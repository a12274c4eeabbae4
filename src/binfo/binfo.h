/* binfo: what gotrace knows about a target binary: Go functions from the ELF symbol
 * table (.gopclntab when stripped), address -> file offset through PT_LOAD headers,
 * the post-prologue probe point of a Go function (capstone), the Go version. */
#ifndef GT_BINFO_H
#define GT_BINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct binfo;
struct btf;

struct binfo_func {
	const char *name;
	uint64_t addr; /* virtual address (st_value) */
	uint64_t size; /* st_size */
};

/* Opens and indexes PATH. On failure prints one clear line through diag_fatal
 * ("PATH: No such file or directory", "PATH: not an ELF file", "PATH: not a Go
 * binary (no .gopclntab / Go build info)", ...) and returns a negative errno. */
int binfo__open(const char *path, struct binfo **out);
/* The same for any x86-64 ELF with symbols (uprobe: on C code); no Go required. */
int binfo__open_elf(const char *path, struct binfo **out);
/* binfo__open_elf without a message: whether PATH opens. */
int binfo__open_quiet(const char *path, struct binfo **out);
bool binfo_is_go(const struct binfo *bi);
void binfo__close(struct binfo *bi);

/* Where binfo keeps what it derives from a binary at some cost and would derive again
 * on every run (the index of inlined copies: ~90 ms for a web server's 183k functions),
 * under a KEY that names the file by its identity (path, size, mtime, inode, device).
 * LOAD: 0 and *BUF (malloc'd), *LEN; else negative. Whatever comes back is checked
 * before use. Set by the program before binaries are opened (NULL: none). */
struct binfo_store {
	int (*load)(void *ctx, const char *key, void **buf, size_t *len);
	void (*save)(void *ctx, const char *key, const void *buf, size_t len);
	void *ctx;
};
void binfo_set_store(const struct binfo_store *store);

const char *binfo_path(const struct binfo *bi);      /* absolute path */
bool binfo_same_file(const struct binfo *bi, dev_t dev, ino_t ino);
int binfo_reopen(const struct binfo *bi); /* a new fd on the file read, or -errno */
const char *binfo_go_version(const struct binfo *bi); /* "go1.19.8" or NULL */
/* N of the binary's "go1.N..." version (also of a devel toolchain), -1 when unknown. */
int binfo_go_minor(const struct binfo *bi);
bool binfo_is_pie(const struct binfo *bi);

/* Functions (STT_FUNC, defined) whose name matches the glob PATTERN ('*', '?'),
 * sorted by address, no duplicates. Returns the count; *out is malloc'd (caller
 * frees the array, not the entries). */
int binfo_match_funcs(struct binfo *bi, const char *pattern, const struct binfo_func ***out);
const struct binfo_func *binfo_find_func(struct binfo *bi, const char *name);

/* Up to `max` function names closest to NAME (edit distance, then shared
 * package/receiver prefix), best first. Returns the count. */
int binfo_suggest(struct binfo *bi, const char *name, const char **out, int max);

/* The descriptor of the ELF note NT_GNU_BUILD_ID ("GNU"), LEN bytes at ID: 0, or -ENOENT
 * (Go's own linker writes one only when asked: -ldflags=-B). */
int binfo_gnu_build_id(const struct binfo *bi, const uint8_t **id, size_t *len);
/* Virtual address -> file offset through the PT_LOAD header that maps it; -ENOENT when none. */
int binfo_vaddr_to_offset(const struct binfo *bi, uint64_t vaddr, uint64_t *off);
/* The address of symbol NAME (.symtab: data too; else a function .gopclntab names):
 * 0, or -ENOENT. */
int binfo_symbol_addr(const struct binfo *bi, const char *name, uint64_t *addr);
/* The link-time address of file offset OFF (in a loaded segment): 0, or -ENOENT. */
int binfo_offset_to_vaddr(const struct binfo *bi, uint64_t off, uint64_t *vaddr);

/* The address where an :entry probe fires once per call: the first instruction after
 * Go's stack-check prologue (cmp 0x10(%r14),%rsp / jbe morestack), or the function's
 * first instruction when it has no such prologue. */
int binfo_entry_addr(struct binfo *bi, const struct binfo_func *f, uint64_t *addr);

/* True when ADDR is the start of an instruction of F (capstone, linear sweep). */
bool binfo_is_insn_boundary(struct binfo *bi, const struct binfo_func *f, uint64_t addr);
/* Whether F never sets %rbp to a frame of its own (a Go function without a frame, a
 * leaf): anywhere in it
 * the return address is on top of the stack. False when F does not decode. */
bool binfo_frameless(struct binfo *bi, const struct binfo_func *f);
/* Whether the kernel's uprobes refuse the instruction at VADDR: a trap, a LOCK or
 * ES/CS/SS/DS prefix, MOV/POP SS, HLT (ENOTSUPP); false when unsure: the kernel decides.
 * One rule with binfo_can_probe (arch_uprobe_verdict). */
bool binfo_uprobe_refuses(const struct binfo *bi, uint64_t vaddr);

/* False where the kernel refuses a uprobe: a trap instruction (int3, int N). */
bool binfo_can_probe(const struct binfo *bi, uint64_t addr);
/* True when the instruction at ADDR is a RET (Go emits the one-byte near RET). */
bool binfo_is_ret(const struct binfo *bi, uint64_t addr);
/* The instruction at ADDR is `push %rbp` (Go 1.21+ entries after the stack check): where
 * a uprobe's user stack holds the return address on top of the stack on kernels that add
 * it (Linux 6.11, and backports: sema_options.uprobe_stack_has_caller). */
bool binfo_is_push_rbp(const struct binfo *bi, uint64_t addr);

/* Addresses of every RET instruction of F. Returns the count; *out malloc'd. */
int binfo_ret_addrs(struct binfo *bi, const struct binfo_func *f, uint64_t **out);

/* ---- Go runtime layout: what the BPF side needs to find the current goroutine ---- */

enum binfo_tls_mode {
	BINFO_TLS_INTERNAL, /* Go's linker placed g: always at ARCH_GO_TLS_G_INTERNAL */
	BINFO_TLS_EXTERNAL, /* external linker (cgo): from runtime.tlsg and PT_TLS */
};

struct binfo_goruntime {
	const char *source; /* "dwarf" or "go-version table" (static strings) */
	/* offsets inside runtime.g */
	int g_stack_hi; /* g.stack.hi (g.stack is struct{lo, hi uintptr}) */
	int g_m;        /* g.m */
	int g_goid;     /* g.goid */
	/* offsets inside runtime.m */
	int m_g0;   /* m.g0 */
	int m_curg; /* m.curg */
	/* where the runtime leaves the Go frame it left for the vDSO (runtime.nanotime1:
	 * m.vdsoSP / m.vdsoPC) and for a cgo call (g.syscallsp / g.syscallpc), what its
	 * own profiler unwinds from; DWARF only, 0 when unknown */
	int m_vdso_sp, m_vdso_pc;
	int g_syscall_sp, g_syscall_pc;
	/* where g lives in TLS: g = *(tp + tls_g_offset), tp the thread pointer */
	enum binfo_tls_mode tls_mode;
	int64_t tls_g_offset; /* ARCH_GO_TLS_G_INTERNAL for internally linked binaries; for
	                         external linking (cgo) runtime.tlsg's (arch_tls_offset) */
	bool regabi;          /* Go >= 1.17 on amd64: R14 holds g in ABIInternal code */
};

/* Fills OUT from the binary's DWARF (runtime.g / runtime.m in the runtime CUs), else
 * from a table keyed by the Go version (Go 1.17 .. 1.24; the layout of amd64 and arm64
 * alike, unit/arm64 checks it), and the TLS slot of g
 * from the ELF headers and symbols. Returns 0, or -ENOENT when neither DWARF nor a
 * known Go version gives the offsets. Prints nothing. */
int binfo_goruntime(struct binfo *bi, struct binfo_goruntime *out);
/* How many times binfo_goruntime worked the layout out rather than taking the one it
 * kept for the same file (its cache, which the unit test checks by this count). */
unsigned binfo_goruntime_computed(void);

/* The kernel's offset of user space's thread pointer in task_struct (arch.h's
 * arch_kernel_tp_member: thread.fsbase on x86-64), from /sys/kernel/btf/vmlinux.
 * Negative errno on failure. The first success is cached. */
int binfo_kernel_tp_offset(void);

/* ---- source lines (lines.c) ---- */

/* The function symbol whose [addr, addr + size) holds ADDR, or NULL. */
const struct binfo_func *binfo_func_at(struct binfo *bi, uint64_t addr);

enum binfo_lines_source {
	BINFO_LINES_AUTO,    /* DWARF .debug_line when present, else .gopclntab */
	BINFO_LINES_DWARF,   /* only DWARF */
	BINFO_LINES_PCLNTAB, /* only .gopclntab (Go 1.18+) */
};

struct binfo_lines;

struct binfo_pcline {
	const char *func;  /* innermost function at the PC (inlined calls expanded) */
	const char *outer; /* the function symbol containing the PC */
	const char *file;  /* full path of the source file, NULL when unknown */
	int line;          /* 0 when unknown */
};

/* PC -> function, file and line for link-time addresses of BI (a PIE's runtime address
 * minus its load bias). DWARF .debug_line is decoded once, at open (~5 ms for a small
 * Go program, ~30 ms for the 15 MB cmd/go); .gopclntab per lookup. Returns 0, or -ENOENT when the wanted source is absent. The
 * strings live as long as the table (and BI). */
int binfo_lines__open(struct binfo *bi, enum binfo_lines_source want, struct binfo_lines **out);
void binfo_lines__close(struct binfo_lines *l);
/* BINFO_LINES_DWARF or BINFO_LINES_PCLNTAB: where file and line come from. */
enum binfo_lines_source binfo_lines_source(const struct binfo_lines *l);
/* The call site of a call is the line of the CALL: look up the return address - 1.
 * Returns 0, or -ENOENT when nothing is known about PC. */
int binfo_lines_lookup(struct binfo_lines *l, uint64_t pc, struct binfo_pcline *out);

/* One frame a PC stands for (binfo_lines_frames). */
struct binfo_frame {
	const char *func;  /* NULL when unknown */
	uint64_t off;      /* PC - the function's entry (0 for an inlined frame) */
	const char *file;  /* NULL when unknown */
	int line;          /* 0 when unknown */
	bool inlined;      /* inlined into the next frame */
};
/* The frames at link-time address PC, inlined calls expanded from .gopclntab's inline
 * trees: the innermost first, the function symbol last (file:line of each: where it
 * was at PC, for a caller the inlined call's line). Up to MAX; the count, or -ENOENT. */
int binfo_lines_frames(struct binfo_lines *l, uint64_t pc, struct binfo_frame *out, int max);

/* A run of one SP delta (.gopclntab's pcsp) from PC on: SP + sp is where a frame's
 * return address is; -1: no function there. */
struct binfo_sprow {
	uint64_t pc;
	int64_t sp;
};
/* The runs of every function of a Go binary, sorted by PC (malloc'd): 0, -ENOENT (no
 * usable .gopclntab) or -EINVAL. */
int binfo_spdeltas(struct binfo *bi, struct binfo_sprow **out, int *nout);

/* The kernel symbol holding ADDR and ADDR's offset in it: 0, or -ENOENT. */
int binfo_kallsyms_sym(uint64_t addr, const char **name, uint64_t *off);

/* The address of kernel symbol NAME (/proc/kallsyms, read once): 0, or -ENOENT. */
int binfo_kallsyms_addr(const char *name, uint64_t *addr);
/* The bytes from kernel symbol NAME to the next symbol above it (its size, as bpftrace
 * takes it): 0, or -ENOENT. */
int binfo_kallsyms_size(const char *name, uint64_t *size);
void binfo_kallsyms_free(void);

/* The kernel functions kprobes may name (tracefs available_filter_functions, sorted,
 * unique; read once, kfuncs.c): 0, or a negative errno (no tracefs). */
int binfo_kernel_funcs(const char *const **names, size_t *n);
bool binfo_kernel_func_exists(const char *name);
/* NAME's module in that list ("vmlinux": the kernel's own) in *MOD when it is one: 1;
 * 2 when it is in several (*MOD untouched); 0 when NAME is absent or the list unread. */
int binfo_kernel_func_module(const char *name, const char **mod);
void binfo_kernel_funcs_free(void);

/* ---- loaded BPF programs (bpfprogs.c): fentry:bpf: targets ---- */

/* A function of a loaded BPF program: its main one (func_info[0]) or a subprogram. */
struct binfo_bpf_func {
	uint32_t prog_id;
	uint32_t prog_type; /* enum bpf_prog_type */
	uint32_t btf_id;    /* the program's BTF object; 0: it has none (not a target) */
	uint32_t type_id;   /* the function's FUNC in that BTF */
	const char *name;   /* the FUNC's name (without BTF: the kernel's 16-byte name) */
	bool main;          /* the program's main function */
	bool own;           /* a program of this process: never a target */
};

/* Every function of every loaded program (read once; ids ascending): 0, or a negative
 * errno (-EPERM: not allowed to walk them). */
int binfo_bpf_funcs(const struct binfo_bpf_func **out, size_t *n);
/* The BTF object BTF_ID of a loaded program (loaded once, kept until the free), or NULL. */
const struct btf *binfo_bpf_btf(uint32_t btf_id);
void binfo_bpf_funcs_free(void);

/* ---- source-line sites (golines.c) ---- */

struct binfo_line_site {
	uint64_t addr;                 /* where the line is entered */
	const struct binfo_func *func; /* the function symbol holding ADDR */
};

struct binfo_line_query {
	const char *file;  /* in: a base name (main.go) or a path suffix (lines/main.go) */
	int line;          /* in */
	const char *path;  /* out: the file matched (-EEXIST: the first of two) */
	const char *other; /* out, -EEXIST: the second file FILE matches */
	int before, after; /* out, no sites: the nearest lines with code, 0 when none */
};

/* Where line Q->line of Q->file starts running, from L's DWARF rows (L opened with
 * BINFO_LINES_DWARF): in every function, inlined copies included, the lowest is_stmt row
 * of each run of rows of that line; at a function's first instruction the address past
 * its stack-check prologue instead, and the prologue's morestack block left out (both
 * would fire again when the stack grows). Returns the count with *out malloc'd (0: the
 * line has no code), -ESRCH when no file matches, -EEXIST when two do. Strings live as
 * long as L. */
int binfo_line_sites(struct binfo_lines *l, struct binfo_line_query *q,
		     struct binfo_line_site **out);

/* ---- inlined copies (goinline.c) ---- */

struct binfo_inlined {
	const char *name;               /* the inlined function */
	const struct binfo_func *outer; /* the function symbol holding the copy */
	uint64_t addr;                  /* the copy's first (lowest) instruction */
};

/* Every inlined copy of a function whose name matches PATTERN (a plain name, which may
 * hold "(*T)" and "[...]", else a Go wildcard as glob_go_wildcard sees one),
 * from .gopclntab's inline trees, in address order; the copies of one name share one
 * name pointer, from one call to the next. One walk of the trees on first use. Returns
 * the count with *out malloc'd, or -ENOENT when the trees cannot be read (before Go
 * 1.18, or no symbol go:func.* to find them by: a stripped binary). */
int binfo_inlined_copies(struct binfo *bi, const char *pattern, struct binfo_inlined **out);

/* Go spells the instances of a generic function F[...] when it names them all: NAME with
 * each "[...]" made "[*]", a glob of any type arguments (brackets are characters of a Go
 * name). Malloc'd. */
char *binfo_type_args_glob(const char *name);

#endif
