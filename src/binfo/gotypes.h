/* binfo/gotypes: a Go function's parameters and results, typed from the binary's DWARF
 * and placed by Go's register ABI (ABIInternal; its registers: arch.h): which integer registers hold
 * each part of a value at the function's entry / its RET, or where on the stack. */
#ifndef GT_BINFO_GOTYPES_H
#define GT_BINFO_GOTYPES_H

#include <stdbool.h>
#include <stdint.h>

struct binfo;

enum binfo_gokind {
	GK_BOOL,
	GK_INT,     /* int, int8 .. int64 */
	GK_UINT,    /* uint, uint8 .. uint64, uintptr */
	GK_FLOAT,   /* float32, float64: in X registers */
	GK_COMPLEX, /* complex64, complex128: two X registers */
	GK_PTR,     /* *T (elem), unsafe.Pointer (no elem) */
	GK_STRING,  /* {ptr, len} */
	GK_SLICE,   /* {ptr, len, cap}, elem */
	GK_ARRAY,   /* [count]elem */
	GK_STRUCT,  /* fields */
	GK_IFACE,   /* {itab or type, data}; empty_iface for interface{} / any */
	GK_MAP,     /* a pointer to the runtime's map header */
	GK_CHAN,    /* a pointer to the runtime's hchan */
	GK_FUNC,    /* a pointer to a closure */
};

struct binfo_gofield;

struct binfo_gotype {
	enum binfo_gokind kind;
	const char *name; /* Go's spelling: "int", "*main.Point", "[]string", "error" */
	uint64_t size, align;
	bool empty_iface;
	const struct binfo_gotype *elem; /* PTR (NULL: unsafe.Pointer), SLICE, ARRAY; MAP:
					    the value type */
	const struct binfo_gotype *key;  /* MAP */
	const struct binfo_gotype *hdr;  /* MAP: the linker's *hash<K,V> (Go < 1.24) or
					    *map<K,V> (swiss), whose parts lay out the walk */
	uint64_t count;                  /* ARRAY */
	int nfields;                     /* STRUCT */
	const struct binfo_gofield *fields;
};

struct binfo_gofield {
	const char *name;
	uint64_t offset;
	const struct binfo_gotype *type;
	bool embedded; /* DWARF's DW_AT_go_embedded_field: its fields are promoted */
};

/* A part of a register-assigned value: SIZE bytes at OFFSET of the value live in the
 * ABI's integer register IREG (arch_go_int_regs) or, for floats, in its float register
 * FREG (ireg is then -1). */
struct binfo_gopiece {
	uint32_t offset, size;
	int8_t ireg, freg;
};

struct binfo_goparam {
	const char *name; /* DWARF's: "~r0" for an unnamed result, "~p0" for a blank one */
	bool result;
	const struct binfo_gotype *type;
	bool on_stack;
	int64_t stack_off; /* on_stack: from SP at entry and at the RET (return address at 0) */
	int npieces;       /* register-assigned: the parts, in register order */
	const struct binfo_gopiece *pieces;
};

struct binfo_gofunc {
	const char *name;
	int nparams; /* parameters (the receiver first), then results */
	const struct binfo_goparam *params;
};

struct binfo_godwarf;

/* Opens BI's DWARF for Go types, else (a stripped binary) gotrace's data of the binary's
 * Go release (godata.h), which has the runtime's and the standard library's functions:
 * 0, or -ENOENT when the binary has no DWARF and its release no data. */
int binfo_godwarf__open(struct binfo *bi, struct binfo_godwarf **out);
/* "go1.26" when GD is that release's shipped data, NULL when it is the binary's DWARF. */
const char *binfo_godwarf_data_release(const struct binfo_godwarf *gd);
/* Every function name DWARF describes (not the data's), unsorted: the count with *out
 * malloc'd (names valid until close), or -ENOENT for data. */
int binfo_godwarf_names(struct binfo_godwarf *gd, const char ***out);
void binfo_godwarf__close(struct binfo_godwarf *gd);
/* Whether the functions read from DWARF are given to binfo_store (the default): not
 * for a listing of thousands (-l), which a later run does not ask for one by one. */
void binfo_godwarf_set_keep(struct binfo_godwarf *gd, bool keep);
/* The parameters and results of FUNC (its out-of-line code), valid until close: 0, or
 * -ENOENT when DWARF does not describe such a function. */
int binfo_godwarf_func(struct binfo_godwarf *gd, const char *func, const struct binfo_gofunc **out);

/* How an interface holding a value of a runtime type shows it. */
enum binfo_goshow {
	GS_OTHER, /* (T)(data pointer) */
	GS_PTR,   /* pointer-shaped (pointers, maps, chans, funcs): the data word is the value */
	GS_PSTR,  /* errors.New's and fmt.Errorf's errors: the string they start with */
	GS_INT,   /* the data word points at SIZE bytes */
	GS_UINT,
	GS_BOOL,
	GS_STR,   /* the data word points at a string header */
	GS_CONST, /* an error type whose Error() is one text (context.DeadlineExceeded's) */
	GS_ERRNO, /* syscall.Errno: the data word points at the number */
	GS_CHAIN, /* an error that wraps another: a string at offset 0 of the pointee, maybe
		     a second one and addresses, and the wrapped error (chain, off) */
	GS_NETADDR, /* a net.Addr of an IP (and a port): off = {IP, Port, Zone} */
};

/* How a GS_CHAIN error's Error() reads its fields (Go's own methods). */
enum binfo_gochain {
	GC_NONE,
	GC_PATH,    /* *io/fs.PathError: Op + " " + Path + ": " + Err */
	GC_SYSCALL, /* *os.SyscallError: Syscall + ": " + Err */
	GC_URL,     /* *net/url.Error: Op + " " + %q of URL + ": " + Err */
	GC_OP,      /* *net.OpError: Op [" " Net] [" " Source] [("->" | " ") Addr] ": " Err */
	GC_DNS,     /* *net.DNSError: "lookup " Name [" on " Server] ": " Err (a string) */
	GC_EMBED,   /* a struct (or pointer to one) embedding `error` whose Error() is the
		       promoted one (the compiler's <autogenerated> wrapper): Err's text */
};
/* GS_CHAIN: the offsets in the pointee of its three strings, the source and the address
 * (net.Addr interfaces) and the wrapped error; GS_NETADDR: IP's, Port's and Zone's (the
 * first three). -1: none. plan.h's PGO_* are these. */
enum { GT_OFF_S1, GT_OFF_S2, GT_OFF_S3, GT_OFF_SRC, GT_OFF_ADDR, GT_OFF_NEXT, GT_NOFFS };
enum { GT_OFF_IP, GT_OFF_PORT, GT_OFF_ZONE };

struct binfo_gortype {
	uint64_t addr;    /* the descriptor's address in the binary as linked */
	const char *name; /* Go's spelling */
	enum binfo_goshow show;
	int size;
	const char *text; /* GS_CONST: what Error() returns */
	enum binfo_gochain chain;
	int off[GT_NOFFS];
};

struct arena;
/* Every runtime type descriptor DWARF names (DW_AT_go_runtime_type), sorted by address,
 * names in A: their number, or -ENOENT without DWARF. */
int binfo_gortypes(struct binfo *bi, struct arena *a, struct binfo_gortype **out);

/* The names Go's tools give the ABI's integer and float registers (arch.h). */
const char *binfo_goreg_name(int ireg);
const char *binfo_gofreg_name(int freg);

#endif
