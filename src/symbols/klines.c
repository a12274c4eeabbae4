/* klines: the source line of a kernel address, from a vmlinux with DWARF (Debian's
 * linux-image-*-dbg installs /usr/lib/debug/boot/vmlinux-RELEASE; GT_VMLINUX or
 * BPFTRACE_VMLINUX names another). Opened on first use only: reading its .debug_line
 * takes ~2 s and ~80 MB for Debian's 6.1. Used only when it is the running kernel's
 * (the KASLR offset of _stext and _etext the same) and nobody but root could have
 * written it. */
#include "symbols/klines.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "binfo/binfo.h"
#include "common/diag.h"
#include "common/trust.h"
#include "common/util.h"

struct klines {
	bool tried;
	struct binfo *bi;
	struct binfo_lines *lines;
	uint64_t slide; /* running address - link-time address (KASLR) */
};

struct klines *klines__new(void)
{
	return xcalloc(1, sizeof(struct klines));
}

void klines__free(struct klines *k)
{
	if (!k)
		return;
	binfo_lines__close(k->lines);
	binfo__close(k->bi);
	free(k);
}

static void open_vmlinux(struct klines *k)
{
	k->tried = true;
	const char *env = gt_getenv("VMLINUX"); /* bpftrace: BPFTRACE_VMLINUX */
	char def[PATH_MAX];
	struct utsname u;
	if (!env || !*env) {
		if (uname(&u))
			return;
		snprintf(def, sizeof(def), "/usr/lib/debug/boot/vmlinux-%s", u.release);
		struct stat st;
		if (stat(def, &st))
			return; /* no -dbg package: kernel frames without lines, silently */
	}
	const char *path = env && *env ? env : def;
	struct stat st = {0};
	char *why = trust_path_distrust(path, 0, &st); /* root's, as root reads it */
	uint64_t a, b, c, d;
	if (!why && binfo__open_quiet(path, &k->bi))
		why = xasprintf("%s: not an ELF file with symbols", path);
	else if (!why && !binfo_same_file(k->bi, st.st_dev, st.st_ino))
		why = xasprintf("%s changed while it was read", path);
	else if (!why && (binfo_symbol_addr(k->bi, "_stext", &a) ||
			  binfo_symbol_addr(k->bi, "_etext", &b) ||
			  binfo_kallsyms_addr("_stext", &c) || binfo_kallsyms_addr("_etext", &d)))
		why = xasprintf("%s or /proc/kallsyms has no _stext/_etext", path);
	else if (!why && c - a != d - b)
		why = xasprintf("%s is not the running kernel's", path);
	else if (!why && binfo_lines__open(k->bi, BINFO_LINES_DWARF, &k->lines))
		why = xasprintf("%s has no DWARF line table", path);
	if (why) {
		diag_print(DIAG_WARNING, "kernel source lines: %s", why);
		free(why);
		binfo__close(k->bi);
		k->bi = NULL;
		return;
	}
	k->slide = c - a;
}

int klines_lookup(struct klines *k, uint64_t pc, const char **file, int *line)
{
	if (!k->tried)
		open_vmlinux(k);
	struct binfo_pcline pl;
	if (!k->lines || binfo_lines_lookup(k->lines, pc - k->slide, &pl) || !pl.file)
		return -ENOENT;
	*file = pl.file;
	*line = pl.line;
	return 0;
}
