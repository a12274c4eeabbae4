/* pb: protobuf wire-format writer (see pb.h). Wire types: 0 varint, 1 64-bit,
 * 2 length-delimited, 5 32-bit; fixed-width values are little-endian. */
#include "common/pb.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2, PB_I32 = 5 };

void pb_buf__free(struct pb_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

static int pb_buf__reserve(struct pb_buf *b, size_t n)
{
	if (b->err)
		return b->err;
	if (n <= b->cap - b->len)
		return 0;
	size_t cap = b->cap ? b->cap : 256;
	while (cap - b->len < n) {
		if (cap > SIZE_MAX / 2)
			return b->err = -ENOMEM;
		cap *= 2;
	}
	uint8_t *p = realloc(b->data, cap);
	if (!p)
		return b->err = -ENOMEM;
	b->data = p;
	b->cap = cap;
	return 0;
}

void pb_buf__append(struct pb_buf *b, const void *p, size_t n)
{
	if (!n || pb_buf__reserve(b, n))
		return;
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

static size_t pb_varint_encode(uint8_t out[10], uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		out[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (uint8_t)v;
	return n;
}

void pb_buf__varint(struct pb_buf *b, uint64_t v)
{
	uint8_t tmp[10];
	pb_buf__append(b, tmp, pb_varint_encode(tmp, v));
}

static void pb_buf__tag(struct pb_buf *b, int field, int wire)
{
	pb_buf__varint(b, (uint64_t)field << 3 | (uint64_t)wire);
}

void pb_buf__uint(struct pb_buf *b, int field, uint64_t v)
{
	if (!v)
		return;
	pb_buf__tag(b, field, PB_VARINT);
	pb_buf__varint(b, v);
}

void pb_buf__uint_always(struct pb_buf *b, int field, uint64_t v)
{
	pb_buf__tag(b, field, PB_VARINT);
	pb_buf__varint(b, v);
}

void pb_buf__le64(struct pb_buf *b, uint64_t v)
{
	uint8_t le[8];
	for (int i = 0; i < 8; i++)
		le[i] = (uint8_t)(v >> (8 * i));
	pb_buf__append(b, le, sizeof(le));
}

void pb_buf__fixed64(struct pb_buf *b, int field, uint64_t v)
{
	pb_buf__tag(b, field, PB_I64);
	pb_buf__le64(b, v);
}

void pb_buf__double(struct pb_buf *b, int field, double v)
{
	uint64_t bits;
	memcpy(&bits, &v, sizeof(bits));
	pb_buf__fixed64(b, field, bits);
}

void pb_buf__fixed32(struct pb_buf *b, int field, uint32_t v)
{
	uint8_t le[4];
	for (int i = 0; i < 4; i++)
		le[i] = (uint8_t)(v >> (8 * i));
	pb_buf__tag(b, field, PB_I32);
	pb_buf__append(b, le, sizeof(le));
}

void pb_buf__head(struct pb_buf *b, int field, size_t len)
{
	pb_buf__tag(b, field, PB_LEN);
	pb_buf__varint(b, len);
}

void pb_buf__bytes(struct pb_buf *b, int field, const void *p, size_t n)
{
	pb_buf__head(b, field, n);
	pb_buf__append(b, p, n);
}

size_t pb_varint_size(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

void pb_buf__str(struct pb_buf *b, int field, const char *s)
{
	size_t n = strlen(s);
	pb_buf__tag(b, field, PB_LEN);
	pb_buf__varint(b, n);
	pb_buf__append(b, s, n);
}

size_t pb_buf__open(struct pb_buf *b, int field)
{
	pb_buf__tag(b, field, PB_LEN);
	return b->len;
}

/* The length goes in front of a body already written: one memmove of the body, cheap
 * for messages the size of a sample or a location, and no size pre-pass to keep in sync. */
void pb_buf__close(struct pb_buf *b, size_t mark)
{
	uint8_t tmp[10];
	size_t body = b->len - mark, n = pb_varint_encode(tmp, body);
	if (pb_buf__reserve(b, n))
		return;
	memmove(b->data + mark + n, b->data + mark, body);
	memcpy(b->data + mark, tmp, n);
	b->len += n;
}
