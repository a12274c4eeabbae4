/* kfuncs: the kernel functions kprobe:/kretprobe: may name, as bpftrace takes them: the
 * tracefs list available_filter_functions ("name" or "name [module]"), sorted and
 * without duplicates (static functions of one name in several files). Read once. */
#include "binfo/binfo.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

static char **names;
static size_t nnames;
static int status = 1; /* 1: not read yet, else 0 or a negative errno */

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
	size_t cap = 0;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, " \t\n")] = 0;
		if (!line[0])
			continue;
		if (nnames == cap) {
			cap = cap ? 2 * cap : 65536;
			names = xrealloc(names, cap * sizeof(*names));
		}
		names[nnames++] = xstrdup(line);
	}
	fclose(f);
	qsort(names, nnames, sizeof(*names), cmp);
	size_t n = 0;
	for (size_t i = 0; i < nnames; i++) {
		if (n && !strcmp(names[n - 1], names[i]))
			free(names[i]);
		else
			names[n++] = names[i];
	}
	nnames = n;
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
	const char *const *v;
	size_t n;
	if (binfo_kernel_funcs(&v, &n) || !n)
		return false;
	return bsearch(&name, v, n, sizeof(*v), cmp) != NULL;
}

void binfo_kernel_funcs_free(void)
{
	for (size_t i = 0; i < nnames; i++)
		free(names[i]);
	free(names);
	names = NULL;
	nnames = 0;
	status = 1;
}
