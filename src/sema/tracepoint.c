#include "sema/tracepoint.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"

const char *tp_tracefs(void)
{
	return tracefs_root(true);
}

/* "field:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;" */
static int parse_field(char *line, struct tp_field *f)
{
	char *decl = strstr(line, "field:");
	char *off = strstr(line, "offset:"), *size = strstr(line, "size:");
	char *sgn = strstr(line, "signed:");
	if (!decl || !off || !size)
		return -EINVAL;
	decl += 6;
	char *semi = strchr(decl, ';');
	if (!semi)
		return -EINVAL;
	*semi = 0;
	f->decl = xstrdup(decl);
	f->offset = atoi(off + 7);
	f->size = atoi(size + 5);
	f->is_signed = sgn && atoi(sgn + 7);
	f->is_data_loc = strstr(decl, "__data_loc") != NULL;
	char *end = decl + strlen(decl);
	while (end > decl && (end[-1] == ' ' || end[-1] == '\t'))
		*--end = 0;
	/* "char comm[16]" is an array; "__data_loc char[] name" is not */
	char *bracket = end > decl && end[-1] == ']' ? strrchr(decl, '[') : NULL;
	if (bracket) {
		*bracket = 0;
		end = bracket;
	}
	/* the name is the last word of the declaration */
	char *name = end;
	while (name > decl && name[-1] != ' ' && name[-1] != '*')
		name--;
	f->name = xstrdup(name);
	f->is_string = bracket && strstr(decl, "char") != NULL;
	return 0;
}

int tp_format_read(const char *cat, const char *name, struct tp_format *out)
{
	memset(out, 0, sizeof(*out));
	const char *root = tp_tracefs();
	if (!root)
		return -ENOTSUP;
	char path[512];
	snprintf(path, sizeof(path), "%s/events/%s/%s/format", root, cat, name);
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	char line[1024];
	VEC(struct tp_field) v = {0};
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "ID:", 3))
			out->id = atoi(line + 3);
		struct tp_field fld = {0};
		if (strstr(line, "field:") && parse_field(line, &fld) == 0)
			vec_push(&v, fld);
	}
	fclose(f);
	out->fields = v.v;
	out->nfields = v.n;
	return 0;
}

void tp_format_free(struct tp_format *f)
{
	for (int i = 0; i < f->nfields; i++) {
		free(f->fields[i].name);
		free(f->fields[i].decl);
	}
	free(f->fields);
	f->fields = NULL;
	f->nfields = 0;
}

const struct tp_field *tp_field_find(const struct tp_format *f, const char *name)
{
	for (int i = 0; i < f->nfields; i++)
		if (!strcmp(f->fields[i].name, name))
			return &f->fields[i];
	return NULL;
}
