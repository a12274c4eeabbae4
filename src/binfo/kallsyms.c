/* kallsyms: kernel symbols from /proc/kallsyms (modules included), read once, sorted by
 * name for lookups. */
#include "binfo/binfo.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

struct ksym {
	char *name;
	uint64_t addr;
};

static struct ksym *ksyms;
static size_t nksyms;
static bool loaded;

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct ksym *)a)->name, ((const struct ksym *)b)->name);
}

static void load(void)
{
	loaded = true;
	FILE *f = fopen("/proc/kallsyms", "r");
	if (!f)
		return;
	char line[512];
	size_t cap = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long addr;
		char type, name[256];
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		if (nksyms == cap) {
			cap = cap ? 2 * cap : 65536;
			ksyms = xrealloc(ksyms, cap * sizeof(*ksyms));
		}
		ksyms[nksyms++] = (struct ksym){xstrdup(name), addr};
	}
	fclose(f);
	qsort(ksyms, nksyms, sizeof(*ksyms), by_name);
}

int binfo_kallsyms_addr(const char *name, uint64_t *addr)
{
	if (!loaded)
		load();
	struct ksym key = {(char *)name, 0};
	const struct ksym *k = nksyms ? bsearch(&key, ksyms, nksyms, sizeof(*ksyms), by_name) : NULL;
	if (!k || !k->addr)
		return -ENOENT; /* absent, or hidden (kptr_restrict) */
	*addr = k->addr;
	return 0;
}

void binfo_kallsyms_free(void)
{
	for (size_t i = 0; i < nksyms; i++)
		free(ksyms[i].name);
	free(ksyms);
	ksyms = NULL;
	nksyms = 0;
	loaded = false;
}
