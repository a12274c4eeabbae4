/* tracepoint: kernel tracepoints' record layouts, from tracefs format files. */
#ifndef GT_TRACEPOINT_H
#define GT_TRACEPOINT_H

#include <stdbool.h>

struct tp_field {
	char *name;
	char *decl; /* the declaration as the format file writes it: "const char * filename" */
	int offset, size;
	bool is_signed;
	bool is_string;   /* char name[N] */
	bool is_data_loc; /* __data_loc char[]: u32 (len << 16 | offset) at offset */
};

struct tp_format {
	struct tp_field *fields;
	int nfields;
	int id;
};

/* Where tracefs is, mounting it when it is not (needs root). NULL when impossible. */
const char *tp_tracefs(void);
/* Reads CAT/NAME's format. Returns 0 or a negative errno (-ENOENT: no such tracepoint). */
int tp_format_read(const char *cat, const char *name, struct tp_format *out);
void tp_format_free(struct tp_format *f);
const struct tp_field *tp_field_find(const struct tp_format *f, const char *name);

#endif
