/* util: allocation that cannot fail silently, growable strings, small helpers. */
#ifndef GT_UTIL_H
#define GT_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
/* qsort's contract, for arrays made of a few sorted runs (a linker's symbol table): the
 * runs merged pairwise, n log(runs) comparisons instead of n log n. Stable. */
void sort_runs(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Growable vector of pointers or plain values: VEC(T) v = {0}; vec_push(&v, x). */
#define VEC(T)                                                                                     \
	struct {                                                                                   \
		T *v;                                                                              \
		int n, cap;                                                                        \
	}
#define vec_push(vec, x)                                                                           \
	do {                                                                                       \
		if ((vec)->n == (vec)->cap) {                                                      \
			(vec)->cap = (vec)->cap ? 2 * (vec)->cap : 8;                              \
			(vec)->v = xrealloc((vec)->v, (size_t)(vec)->cap * sizeof(*(vec)->v));     \
		}                                                                                  \
		(vec)->v[(vec)->n++] = (x);                                                        \
	} while (0)
/* qsort wants a non-null array even of no elements, and an empty VEC has none */
#define vec_sort(vec, cmp)                                                                         \
	do {                                                                                       \
		if ((vec)->n)                                                                      \
			qsort((vec)->v, (size_t)(vec)->n, sizeof(*(vec)->v), (cmp));               \
	} while (0)
#define vec_free(vec)                                                                              \
	do {                                                                                       \
		free((vec)->v);                                                                    \
		(vec)->v = NULL;                                                                   \
		(vec)->n = (vec)->cap = 0;                                                         \
	} while (0)

struct strbuf {
	char *buf;
	size_t len, cap;
};

void strbuf_putc(struct strbuf *sb, char c);
void strbuf_puts(struct strbuf *sb, const char *s);
void strbuf_putn(struct strbuf *sb, const char *s, size_t n);
void strbuf_printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_vprintf(struct strbuf *sb, const char *fmt, va_list ap);
void strbuf_free(struct strbuf *sb);
/* Appends what F holds to its end: 0, -EIO on a read error, or -EFBIG once more than MAX
 * bytes came (reading stops there). */
int strbuf_read(struct strbuf *sb, FILE *f, size_t max);
/* S[0..N) as JSON string text, escaped as bpftrace 0.17 escapes it: `"`, `\`, \n, \r,
 * \t by name, other bytes below 0x20 as \u00xx, 0x7f as it is. Valid UTF-8 passes
 * through; any other byte >= 0x80 becomes \u00XX (docs/bpftrace-differences.md).
 * _escape appends the text alone (a JSON map key joins several), _string quotes it. */
void strbuf_json_escape(struct strbuf *sb, const char *s, size_t n);
void strbuf_json_string(struct strbuf *sb, const char *s, size_t n);

/* Shell-style glob: '*', '?' and classes ([12], [a-z], [!x]). Go's generic instances
 * (F[...], F[go.shape.int]) are not classes: brackets holding '.', ',', ' ', '[', '*'
 * or '?' are plain characters (main.Map[*] matches every instance), and so is every
 * bracket inside them (F[go.shape.map[string]int]: "[string]" is a map's key type). */
bool glob_match(const char *pat, const char *s);
/* Whether S matches any of the N patterns PATS (--exclude's) */
bool glob_match_any(const char *const *pats, int n, const char *s);
bool has_glob(const char *s);
/* The ']' of a character class starting at P of the pattern that starts at START, or
 * NULL. */
const char *glob_class_end(const char *start, const char *p);
/* Whether the Go function name or pattern NAME has a wildcard: '*' right after '(' is
 * Go's pointer receiver, main.(*T).M. */
bool glob_go_wildcard(const char *name);
/* Levenshtein distance, capped: returns cap+1 when larger. */
int edit_distance(const char *a, const char *b, int cap);

uint64_t now_ns(void); /* CLOCK_MONOTONIC */
/* CLOCK_REALTIME - CLOCK_MONOTONIC now, ns: a monotonic time (a probe's nsecs) plus this
 * is Unix time. */
int64_t wall_off_ns(void);
/* FNV-1a of S: the hash of the name tables (binfo's functions, codegen's sites). */
uint32_t str_hash(const char *s);

/* GT_NAME, or bpftrace's BPFTRACE_NAME for the same setting, or else what the script's
 * config block set (gt_config_set): the environment wins, as in bpftrace. NULL when none. */
const char *gt_getenv(const char *name);
/* A config block's NAME = VALUE (NAME as gt_getenv takes it); VALUE is kept, not copied. */
void gt_config_set(const char *name, const char *value);
/* Forgets every config block setting (the fuzzer frees their values after each input). */
void gt_config_reset(void);
/* Whether the environment variable NAME is set to something other than "" or "0". */
bool env_flag(const char *name);

/* Where tracefs is (/sys/kernel/tracing, else /sys/kernel/debug/tracing: the one whose
 * events/ can be read); MOUNT: mount it on /sys/kernel/tracing when neither is. NULL
 * when it is not there. */
const char *tracefs_root(bool mount);

#endif