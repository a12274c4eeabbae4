/* kallsyms: kernel symbols from /proc/kallsyms (modules included), read once, sorted by
 * name for lookups, and a copy by address for symbolizing (binary search). */
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

static struct ksym *ksyms, *by_addr_v; /* by_addr_v: the same names, by address */
static size_t nksyms;
static bool loaded;

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct ksym *)a)->name, ((const struct ksym *)b)->name);
}

static int by_addr(const void *a, const void *b)
{
	uint64_t x = ((const struct ksym *)a)->addr, y = ((const struct ksym *)b)->addr;
	return x < y ? -1 : x > y;
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
	by_addr_v = xmalloc((nksyms ? nksyms : 1) * sizeof(*by_addr_v));
	if (nksyms)
		memcpy(by_addr_v, ksyms, nksyms * sizeof(*ksyms));
	qsort(by_addr_v, nksyms, sizeof(*by_addr_v), by_addr);
}

int binfo_kallsyms_sym(uint64_t addr, const char **name, uint64_t *off)
{
	if (!loaded)
		load();
	size_t lo = 0, hi = nksyms;
	while (lo < hi) { /* the last symbol at or below ADDR */
		size_t mid = lo + (hi - lo) / 2;
		if (by_addr_v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || !by_addr_v[lo - 1].addr)
		return -ENOENT; /* below every symbol, or addresses hidden (kptr_restrict) */
	*name = by_addr_v[lo - 1].name;
	*off = addr - by_addr_v[lo - 1].addr;
	return 0;
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
	free(by_addr_v);
	ksyms = by_addr_v = NULL;
	nksyms = 0;
	loaded = false;
}

int binfo_kallsyms_size(const char *name, uint64_t *size)
{
	uint64_t addr;
	int err = binfo_kallsyms_addr(name, &addr);
	if (err)
		return err;
	size_t lo = 0, hi = nksyms;
	while (lo < hi) { /* the first symbol above ADDR */
		size_t mid = lo + (hi - lo) / 2;
		if (by_addr_v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == nksyms)
		return -ENOENT;
	*size = by_addr_v[lo].addr - addr;
	return 0;
}
