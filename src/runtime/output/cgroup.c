/* cgroup: cgroup_path(id) as bpftrace prints it: for each mounted cgroup hierarchy
 * (cgroup2 as "unified", v1 ones by their controllers or name=), the path of the cgroup
 * whose id (its directory's inode number) is ID; "unified:/a,cpu:/b,...", unified first,
 * the rest in name order. */
/* nftw's FTW_ACTIONRETVAL needs _GNU_SOURCE, which the build defines */
#include "runtime/output/output.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

struct hierarchy {
	char *name, *mount;
};

static int by_name(const void *a, const void *b)
{
	const struct hierarchy *x = a, *y = b;
	bool ux = !strcmp(x->name, "unified"), uy = !strcmp(y->name, "unified");
	if (ux != uy)
		return ux ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* nftw has no user argument: one search at a time */
static uint64_t want_id;
static char *found;

static int visit(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)f;
	if (flag == FTW_D && (uint64_t)st->st_ino == want_id) {
		found = xstrdup(path);
		return FTW_STOP;
	}
	return FTW_CONTINUE;
}

void rt_cgroup_path(struct strbuf *sb, uint64_t id)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	if (!f)
		return;
	VEC(struct hierarchy) hs = {0};
	char line[1024];
	while (fgets(line, sizeof(line), f)) {
		/* ID PARENT MAJ:MIN ROOT MOUNT OPTS ... - FSTYPE SOURCE SUPEROPTS */
		char mount[512], fstype[64], super[512];
		const char *dash = strstr(line, " - ");
		if (!dash || sscanf(line, "%*s %*s %*s %*s %511s", mount) != 1 ||
		    sscanf(dash + 3, "%63s %*s %511s", fstype, super) != 2)
			continue;
		char *name = NULL;
		if (!strcmp(fstype, "cgroup2")) {
			name = xstrdup("unified");
		} else if (!strcmp(fstype, "cgroup")) {
			/* the controllers among the super options, or name=NAME */
			struct strbuf n = {0};
			for (char *o = strtok(super, ","); o; o = strtok(NULL, ",")) {
				if (!strcmp(o, "rw") || !strcmp(o, "ro") || !strncmp(o, "release_agent", 13))
					continue;
				strbuf_printf(&n, "%s%s", n.len ? "," : "",
					      !strncmp(o, "name=", 5) ? o + 5 : o);
			}
			name = n.buf;
		}
		if (name) {
			struct hierarchy h = {name, xstrdup(mount)};
			vec_push(&hs, h);
		}
	}
	fclose(f);
	vec_sort(&hs, by_name);
	for (int i = 0; i < hs.n; i++) {
		want_id = id;
		found = NULL;
		nftw(hs.v[i].mount, visit, 16, FTW_PHYS | FTW_MOUNT | FTW_ACTIONRETVAL);
		if (found) {
			const char *rel = found + strlen(hs.v[i].mount);
			strbuf_printf(sb, "%s%s:%s", sb->len ? "," : "", hs.v[i].name, *rel ? rel : "/");
			free(found);
		}
		free(hs.v[i].name);
		free(hs.v[i].mount);
	}
	vec_free(&hs);
}
