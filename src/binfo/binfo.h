/* binfo: what gotrace knows about a target binary: Go functions from the ELF symbol
 * table, address -> file offset through PT_LOAD headers, the post-prologue probe
 * point of a Go function (capstone), the Go version. */
#ifndef GT_BINFO_H
#define GT_BINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct binfo;

struct binfo_func {
	const char *name;
	uint64_t addr; /* virtual address (st_value) */
	uint64_t size; /* st_size */
};

/* Opens and indexes PATH. On failure prints one clear line through diag_fatal
 * ("PATH: No such file or directory", "PATH: not an ELF file", "PATH: not a Go
 * binary (no .gopclntab / Go build info)", ...) and returns a negative errno. */
int binfo__open(const char *path, struct binfo **out);
void binfo__close(struct binfo *bi);

const char *binfo_path(const struct binfo *bi);      /* absolute path */
const char *binfo_go_version(const struct binfo *bi); /* "go1.19.8" or NULL */
bool binfo_is_pie(const struct binfo *bi);

/* Functions (STT_FUNC, defined) whose name matches the glob PATTERN ('*', '?'),
 * sorted by address, no duplicates. Returns the count; *out is malloc'd (caller
 * frees the array, not the entries). */
int binfo_match_funcs(struct binfo *bi, const char *pattern, const struct binfo_func ***out);
const struct binfo_func *binfo_find_func(struct binfo *bi, const char *name);

/* Up to `max` function names closest to NAME (edit distance, then shared
 * package/receiver prefix), best first. Returns the count. */
int binfo_suggest(struct binfo *bi, const char *name, const char **out, int max);

/* Virtual address -> file offset through the PT_LOAD header that maps it; -ENOENT when none. */
int binfo_vaddr_to_offset(const struct binfo *bi, uint64_t vaddr, uint64_t *off);

/* The address where an :entry probe fires once per call: the first instruction after
 * Go's stack-check prologue (cmp 0x10(%r14),%rsp / jbe morestack), or the function's
 * first instruction when it has no such prologue. */
int binfo_entry_addr(struct binfo *bi, const struct binfo_func *f, uint64_t *addr);

/* True when ADDR is the start of an instruction of F (capstone, linear sweep). */
bool binfo_is_insn_boundary(struct binfo *bi, const struct binfo_func *f, uint64_t addr);

/* Addresses of every RET instruction of F. Returns the count; *out malloc'd. */
int binfo_ret_addrs(struct binfo *bi, const struct binfo_func *f, uint64_t **out);

#endif
