/* pb: the few pieces of the protobuf wire format that gotrace writes (varints, fixed
 * 64-bit fields, length-delimited fields) into a growable byte buffer: pprof's
 * profile.proto (runtime/profile) and OTLP's requests (runtime/otlp). No schema, no
 * decoder: each writer knows its messages' field numbers. */
#ifndef GT_COMMON_PB_H
#define GT_COMMON_PB_H

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
/* The same, written even when 0: a member of a oneof (OTLP's AnyValue.int_value). */
void pb_buf__uint_always(struct pb_buf *b, int field, uint64_t v);
/* fixed64 / sfixed64 / double fields (wire type 1), written even when 0 (OTLP's times
 * and values: a zero there is a value) */
void pb_buf__fixed64(struct pb_buf *b, int field, uint64_t v);
void pb_buf__double(struct pb_buf *b, int field, double v);
/* A bare 8-byte little-endian value: a packed repeated fixed64 or double's element,
 * after pb_buf__head(FIELD, 8 * N). */
void pb_buf__le64(struct pb_buf *b, uint64_t v);
/* fixed32 (wire type 5): OTLP's span flags */
void pb_buf__fixed32(struct pb_buf *b, int field, uint32_t v);
/* Length-delimited bytes (ids), and the head of one whose LEN-byte body the caller
 * writes next (a body built elsewhere, copied once). */
void pb_buf__bytes(struct pb_buf *b, int field, const void *p, size_t n);
void pb_buf__head(struct pb_buf *b, int field, size_t len);
/* The size of varint V, for lengths worked out before writing. */
size_t pb_varint_size(uint64_t v);
/* A length-delimited string, written even when empty (an element of a repeated string:
 * profile.proto's string_table starts with ""). */
void pb_buf__str(struct pb_buf *b, int field, const char *s);
/* A nested message or packed repeated field: open writes the tag and returns a mark,
 * the body is written after it, close inserts the body's length at the mark. */
size_t pb_buf__open(struct pb_buf *b, int field);
void pb_buf__close(struct pb_buf *b, size_t mark);

#endif /* GT_COMMON_PB_H */
