/* gotrace-godata: writes the Go type data of one release (binfo/godata) from the DWARF
 * of a program that release built: the functions of LIST (globs, one a line, "!glob" to leave
 * out, '#' comments) that the DWARF describes, in name order, and every type they reach, read
 * by binfo's own DWARF reader (goparams), so the data is what gotrace would read there.
 * scripts/gen-gotypes.py builds the program with each release and runs this. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binfo/binfo.h"
#include "binfo/godata.h"
#include "binfo/gotypes.h"
#include "common/diag.h"
#include "common/util.h"

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Matched by a glob of LIST and by none of its "!glob" lines. */
static bool listed(char **globs, int n, const char *name)
{
	bool in = false;
	for (int i = 0; i < n; i++) {
		if (globs[i][0] == '!' && glob_match(globs[i] + 1, name))
			return false;
		in |= globs[i][0] != '!' && glob_match(globs[i], name);
	}
	return in;
}

int main(int argc, char **argv)
{
	struct binfo *bi = NULL;
	struct binfo_godwarf *gd = NULL;
	const char **names = NULL;
	const struct binfo_gofunc **fs = NULL;
	char *globs[512], line[512];
	int nglobs = 0, nnames, nfs = 0, rc = 1;
	if (argc != 4) {
		fprintf(stderr, "usage: gotrace-godata BINARY RELEASE LIST > go1.N.txt\n");
		return 2;
	}
	FILE *lf = fopen(argv[3], "re");
	if (!lf) {
		fprintf(stderr, "gotrace-godata: %s: %s\n", argv[3], strerror(errno));
		return 1;
	}
	while (fgets(line, sizeof(line), lf) && nglobs < 512) {
		char *p = line + strspn(line, " \t");
		p[strcspn(p, "#\r\n")] = 0;
		for (size_t k = strlen(p); k && (p[k - 1] == ' ' || p[k - 1] == '\t'); k--)
			p[k - 1] = 0;
		if (*p)
			globs[nglobs++] = xstrdup(p);
	}
	fclose(lf);
	if (binfo__open(argv[1], &bi))
		goto out;
	if (binfo_godwarf__open(bi, &gd) || binfo_godwarf_data_release(gd)) {
		fprintf(stderr, "gotrace-godata: %s has no DWARF\n", argv[1]);
		goto out;
	}
	nnames = binfo_godwarf_names(gd, &names);
	if (nnames < 0)
		goto out;
	qsort(names, (size_t)nnames, sizeof(*names), cmp_str);
	fs = xcalloc((size_t)nnames + 1, sizeof(*fs));
	for (int i = 0; i < nnames; i++) {
		/* a generic's instances are the program's own */
		if (strchr(names[i], '[') || !listed(globs, nglobs, names[i]))
			continue;
		if (!binfo_godwarf_func(gd, names[i], &fs[nfs]))
			nfs++;
	}
	rc = binfo_godata_write(stdout, argv[2], fs, nfs) || fflush(stdout) ? 1 : 0;
	fprintf(stderr, "gotrace-godata: %s: %d functions of %d\n", argv[2], nfs, nnames);
out:
	free(fs);
	free(names);
	binfo_godwarf__close(gd);
	if (bi)
		binfo__close(bi);
	for (int i = 0; i < nglobs; i++)
		free(globs[i]);
	return rc;
}
