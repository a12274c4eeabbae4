/* builtins: the table made from builtins.def. */
#include "sema/builtins.h"

#include <string.h>

#include "common/util.h"
#include "sema/sema_int.h"

/* (the macro parameter is not called id: it would replace the .id designator) */
#define ENTRY(ID, NAME, FORMS, ...) [BI_##ID] = {.name = NAME, .id = BI_##ID, .forms = FORMS, __VA_ARGS__},
#define IDENT(ID, NAME, ...) ENTRY(ID, NAME, BFORM_IDENT, __VA_ARGS__)
#define CALL(ID, NAME, ...) ENTRY(ID, NAME, BFORM_CALL, __VA_ARGS__)
#define BOTH(ID, NAME, ...) ENTRY(ID, NAME, BFORM_IDENT | BFORM_CALL, __VA_ARGS__)
static const struct builtin table[BI_TABLE_END] = {
#include "sema/builtins.def"
};
#undef IDENT
#undef CALL
#undef BOTH
#undef ENTRY

const struct builtin *builtin_get(enum builtin_id id)
{
	return id > BI_NONE && id < BI_TABLE_END ? &table[id] : NULL;
}

const struct builtin *builtin_find(const char *name, enum builtin_form form, bool funcgraph)
{
	for (int i = BI_NONE + 1; i < BI_TABLE_END; i++) {
		const struct builtin *b = &table[i];
		if ((b->forms & form) && (funcgraph || !(b->flags & BF_FUNCGRAPH)) &&
		    !strcmp(b->name, name))
			return b;
	}
	return NULL;
}

int builtin_names(enum builtin_form form, const char **out, int max)
{
	int n = 0;
	for (int i = BI_NONE + 1; i < BI_TABLE_END && n < max; i++)
		if ((table[i].forms & form) && !(table[i].flags & BF_FUNCGRAPH))
			out[n++] = table[i].name;
	return n;
}
