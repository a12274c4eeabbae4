/* kfuncs: the kernel functions kprobe:/kretprobe: may name, as bpftrace takes them: the
 * tracefs list available_filter_functions ("name" or "name [module]"), sorted and
 * without duplicates (static functions of one name in several files), with the module
 * each comes from (kfunc:MODULE:FUNC). Read once. */
#include "binfo/binfo.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

static char **names;
static char **mods; /* each name's module, "vmlinux" for the kernel's own; NULL: several */
static size_t nnames;
static int status = 1; /* 1: not read yet, else 0 or a negative errno */

struct entry {
	char *name, *mod;
};

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int load(void)
{
	const char *root = tracefs_root(true);
	if (!root)
		return -ENOENT;
	char path[256];
	snprintf(path, sizeof(path), "%s/available_filter_functions", root);
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	char line[512];
	size_t cap = 0, n = 0;
	struct entry *v = NULL;
	while (fgets(line, sizeof(line), f)) {
		size_t len = strcspn(line, " \t\n");
		char *mod = line + len + strspn(line + len, " \t");
		line[len] = 0;
		if (!line[0])
			continue;
		/* "name [module]" */
		mod = *mod == '[' ? mod + 1 : NULL;
		if (mod)
			mod[strcspn(mod, "]\n")] = 0;
		if (n == cap) {
			cap = cap ? 2 * cap : 65536;
			v = xrealloc(v, cap * sizeof(*v));
		}
		v[n++] = (struct entry){xstrdup(line), xstrdup(mod && *mod ? mod : "vmlinux")};
	}
	fclose(f);
	qsort(v, n, sizeof(*v), cmp); /* by name: the struct starts with it */
	names = xmalloc((n ? n : 1) * sizeof(*names));
	mods = xmalloc((n ? n : 1) * sizeof(*mods));
	for (size_t i = 0; i < n; i++) {
		if (nnames && !strcmp(names[nnames - 1], v[i].name)) {
			if (mods[nnames - 1] && strcmp(mods[nnames - 1], v[i].mod)) {
				free(mods[nnames - 1]);
				mods[nnames - 1] = NULL;
			}
			free(v[i].name);
			free(v[i].mod);
			continue;
		}
		names[nnames] = v[i].name;
		mods[nnames++] = v[i].mod;
	}
	free(v);
	return 0;
}

int binfo_kernel_funcs(const char *const **out, size_t *n)
{
	if (status == 1)
		status = load();
	*out = (const char *const *)names;
	*n = nnames;
	return status;
}

bool binfo_kernel_func_exists(const char *name)
{
	return binfo_kernel_func_module(name, NULL) > 0;
}

int binfo_kernel_func_module(const char *name, const char **mod)
{
	const char *const *v;
	size_t n;
	if (binfo_kernel_funcs(&v, &n) || !n)
		return 0;
	const char *const *p = bsearch(&name, v, n, sizeof(*v), cmp);
	if (!p)
		return 0;
	const char *m = mods[p - v];
	if (mod)
		*mod = m;
	return m ? 1 : 2;
}

void binfo_kernel_funcs_free(void)
{
	for (size_t i = 0; i < nnames; i++) {
		free(names[i]);
		free(mods[i]);
	}
	free(names);
	free(mods);
	names = mods = NULL;
	nnames = 0;
	status = 1;
}
