/* symbols: addresses of stacks to names for the runtime (see symbols.h). A user address
 * is looked up in the traced binary mapped in that process: a non-PIE as linked, a PIE
 * less the bias its mapping in /proc/PID/maps gives (learned while the process runs,
 * kept after it exits, so that stacks printed at the end are still named). */
#include "symbols/symbols.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "binfo/binfo.h"
#include "common/util.h"
#include "symbols/klines.h"

#define FRAMES_MAX 16

struct proc {
	int pid;
	int bin;       /* index into bins, -1: none of ours */
	uint64_t bias; /* runtime address - link-time address */
};

struct symbols {
	struct binfo **bins;    /* the sema targets, then the ones opened here */
	int nown;               /* bins[nbins - nown ..] are ours to close */
	struct binfo_lines **lines; /* opened on first use */
	int nbins;
	VEC(struct proc) procs;
	struct klines *klines; /* kernel frames' lines (-v), or NULL */
};

struct symbols *symbols__new(struct binfo **bins, int nbins, const char *main_path)
{
	struct symbols *s = xcalloc(1, sizeof(*s));
	s->bins = xcalloc((size_t)nbins + 2, sizeof(*s->bins));
	if (nbins)
		memcpy(s->bins, bins, sizeof(*bins) * (size_t)nbins);
	s->nbins = nbins;
	/* the -c / -p / -b binary, when no go: probe opened it (profile:, tracepoint:) */
	struct stat st;
	bool have = !main_path || stat(main_path, &st);
	for (int i = 0; i < nbins && !have; i++)
		have = binfo_same_file(bins[i], st.st_dev, st.st_ino);
	if (!have && binfo__open_quiet(main_path, &s->bins[nbins]) == 0) {
		s->nbins++;
		s->nown = 1;
	}
	s->lines = xcalloc((size_t)s->nbins + 1, sizeof(*s->lines));
	return s;
}

void symbols__free(struct symbols *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->nbins; i++)
		binfo_lines__close(s->lines[i]);
	for (int i = s->nbins - s->nown; i < s->nbins; i++)
		binfo__close(s->bins[i]);
	free(s->bins);
	free(s->lines);
	klines__free(s->klines);
	vec_free(&s->procs);
	free(s);
}

/* Whether mapping M is of one of our binaries: then OUT is its process, binary and bias
 * (the mapping holds file offset O at address A: bias = A - the link-time address of O). */
static bool match_mapping(struct symbols *s, const struct rt_mapping *m, struct proc *out)
{
	for (int i = 0; i < s->nbins; i++) {
		uint64_t va;
		/* by name, or by the file itself: a process of another mount namespace names it
		 * by a path of its own (and " (deleted)" once replaced) */
		bool same = !strcmp(m->path, binfo_path(s->bins[i])) ||
			    (m->ino && binfo_same_file(s->bins[i], makedev(m->maj, m->min),
						       (ino_t)m->ino));
		if (!same || binfo_offset_to_vaddr(s->bins[i], m->pgoff, &va))
			continue;
		*out = (struct proc){m->pid, i, m->start - va};
		return true;
	}
	return false;
}

/* Which of our binaries PID runs and at what bias: from its mappings. */
static bool read_maps(struct symbols *s, int pid, struct proc *out)
{
	char path[64], line[4096];
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	bool found = false;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long long start, off, ino;
		unsigned maj, min;
		int pos = 0;
		if (sscanf(line, "%llx-%*x %*s %llx %x:%x %llu%n", &start, &off, &maj, &min, &ino,
			   &pos) != 5)
			continue;
		char *file = line + pos;
		file += strspn(file, " \t");
		file[strcspn(file, "\n")] = 0;
		struct rt_mapping m = {.pid = pid, .start = start, .pgoff = off, .maj = maj,
				       .min = min, .ino = ino, .path = file};
		found = match_mapping(s, &m, out);
	}
	fclose(f);
	return found;
}

/* What is known of PID's mappings, or NULL. */
static const struct proc *find_proc(const struct symbols *s, int pid)
{
	for (int i = 0; i < s->procs.n; i++)
		if (s->procs.v[i].pid == pid)
			return &s->procs.v[i];
	return NULL;
}

static void learn(void *ctx, const struct rt_mapping *m)
{
	struct symbols *s = ctx;
	struct proc p;
	if (!find_proc(s, m->pid) && match_mapping(s, m, &p))
		vec_push(&s->procs, p);
}

static bool prime(void *ctx, int pid)
{
	struct symbols *s = ctx;
	struct proc p;
	bool pie = false;
	for (int i = 0; i < s->nbins; i++)
		pie |= binfo_is_pie(s->bins[i]);
	if (find_proc(s, pid))
		return true;
	if (read_maps(s, pid, &p)) {
		vec_push(&s->procs, p);
		return true;
	}
	return !pie; /* as linked: nothing to learn */
}

static const struct proc *proc_of(struct symbols *s, int pid)
{
	prime(s, pid);
	const struct proc *p = find_proc(s, pid);
	if (p)
		return p;
	/* gone before its mappings were read: a sole non-PIE target needs none */
	static const struct proc asis = {0, 0, 0};
	return s->nbins == 1 && !binfo_is_pie(s->bins[0]) ? &asis : NULL;
}

static int user(void *ctx, int pid, uint64_t pc, bool ret, struct rt_frame *out, int max)
{
	struct symbols *s = ctx;
	const struct proc *p = proc_of(s, pid);
	if (!p || p->bin < 0)
		return 0;
	if (!s->lines[p->bin] &&
	    binfo_lines__open(s->bins[p->bin], BINFO_LINES_PCLNTAB, &s->lines[p->bin]) &&
	    binfo_lines__open(s->bins[p->bin], BINFO_LINES_AUTO, &s->lines[p->bin]))
		return 0;
	struct binfo_frame fr[FRAMES_MAX];
	/* a return address names the call before it: look up PC - 1 */
	int n = binfo_lines_frames(s->lines[p->bin], pc - p->bias - (ret ? 1 : 0), fr,
				   max < FRAMES_MAX ? max : FRAMES_MAX);
	for (int i = 0; i < n; i++)
		out[i] = (struct rt_frame){
			.func = fr[i].func,
			.off = fr[i].off + (ret && !fr[i].inlined ? 1 : 0),
			.file = fr[i].file,
			.line = fr[i].line,
			.inlined = fr[i].inlined,
			.path = binfo_path(s->bins[p->bin]),
		};
	return n > 0 ? n : 0;
}

static int build_id(void *ctx, int pid, uint64_t pc, const uint8_t **id, size_t *len,
		    uint64_t *off)
{
	struct symbols *s = ctx;
	const struct proc *p = proc_of(s, pid);
	if (!p || p->bin < 0 || binfo_gnu_build_id(s->bins[p->bin], id, len) || *len > 20)
		return -ENOENT; /* the kernel's BPF_F_USER_BUILD_ID takes at most 20 bytes */
	return binfo_vaddr_to_offset(s->bins[p->bin], pc - p->bias, off);
}

void symbols_kernel_lines(struct symbols *s)
{
	if (!s->klines)
		s->klines = klines__new();
}

static int kernel(void *ctx, uint64_t pc, bool ret, struct rt_frame *out)
{
	struct symbols *s = ctx;
	const char *name;
	uint64_t off;
	if (binfo_kallsyms_sym(pc, &name, &off))
		return 0;
	*out = (struct rt_frame){.func = name, .off = off};
	/* a return address names the call before it, as for user frames; not at a symbol's
	 * first byte: an interrupted entry (a profile sample), whose byte before is the
	 * padding after another function, and the name says this one */
	if (s->klines)
		klines_lookup(s->klines, pc - (ret && off ? 1 : 0), &out->file, &out->line);
	return 1;
}

static int kernel_addr(void *ctx, const char *name, uint64_t *addr)
{
	(void)ctx;
	return binfo_kallsyms_addr(name, addr);
}

struct rt_symbolizer symbols_rt(struct symbols *s)
{
	return (struct rt_symbolizer){.ctx = s, .user = user, .kernel = kernel,
				      .kernel_addr = kernel_addr, .build_id = build_id,
				      .prime = prime, .learn = learn};
}
