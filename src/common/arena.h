/* arena: bump allocator; everything allocated from one arena is freed at once. */
#ifndef GT_ARENA_H
#define GT_ARENA_H

#include <stddef.h>

struct arena;

struct arena *arena__new(void);
void arena__free(struct arena *a);
/* Zeroed, 16-byte aligned memory; aborts on out-of-memory. */
void *arena_alloc(struct arena *a, size_t size);
char *arena_strdup(struct arena *a, const char *s);
char *arena_strndup(struct arena *a, const char *s, size_t n);
char *arena_printf(struct arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
