/* pb_int: the few pieces of the protobuf wire format that profile.c needs (varints, tags,
 * length-delimited fields) written into a growable byte buffer. No schema, no decoder;
 * profile/'s own. */
#ifndef GT_RT_PB_INT_H
#define GT_RT_PB_INT_H

#include <stddef.h>
#include <stdint.h>

/* A byte buffer whose first allocation failure sticks in err (-ENOMEM): writers go on
 * unchecked and the caller looks at err once, at the end. */
struct pb_buf {
	uint8_t *data;
	size_t len, cap;
	int err;
};

void pb_buf__free(struct pb_buf *b);
void pb_buf__append(struct pb_buf *b, const void *p, size_t n);
void pb_buf__varint(struct pb_buf *b, uint64_t v);
/* A varint field (uint64, int64 as two's complement, bool); proto3 leaves out zeros. */
void pb_buf__uint(struct pb_buf *b, int field, uint64_t v);
/* A length-delimited string, written even when empty (an element of a repeated string:
 * profile.proto's string_table starts with ""). */
void pb_buf__str(struct pb_buf *b, int field, const char *s);
/* A nested message or packed repeated field: open writes the tag and returns a mark,
 * the body is written after it, close inserts the body's length at the mark. */
size_t pb_buf__open(struct pb_buf *b, int field);
void pb_buf__close(struct pb_buf *b, size_t mark);

#endif
