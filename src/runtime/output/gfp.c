/* gfp: printf's %gr, current bpftrace's GFP flags by name ("GFP_KERNEL|__GFP_ZERO"), the
 * way the kernel's ftrace and %pGg name them: the compound masks first, in the kernel's
 * order, then single flags, then what is left in hex. The masks are the running
 * kernel's own: the table of kmem:kmalloc's print format in tracefs (the masks differ
 * between releases: GFP_NOWAIT gained __GFP_NOWARN, __GFP_ATOMIC went in 6.3). Without
 * it, a table of our own: bits from the kernel's BTF (enum ___GFP_*_BIT) where it has
 * them, else that enum's order as of 6.12, which 6.1's #defines share but for bit 9
 * (__GFP_ATOMIC before 6.3: uname tells). */
#include "runtime/output/output.h"

#include <bpf/btf.h>
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/utsname.h>

#include "common/kbtf.h"
#include "common/util.h"

enum { DMA, HIGHMEM, DMA32, MOVABLE, RECLAIMABLE, HIGH, IO, FS, ZERO, UNUSED, DIRECT_RECLAIM,
       KSWAPD_RECLAIM, WRITE, NOWARN, RETRY_MAYFAIL, NOFAIL, NORETRY, MEMALLOC, COMP,
       NOMEMALLOC, HARDWALL, THISNODE, ACCOUNT, ZEROTAGS, SKIP_ZERO, SKIP_KASAN, NO_OBJ_EXT,
       NBITS };

static const char *const bit_names[NBITS] = {
	"DMA", "HIGHMEM", "DMA32", "MOVABLE", "RECLAIMABLE", "HIGH", "IO", "FS", "ZERO", "UNUSED",
	"DIRECT_RECLAIM", "KSWAPD_RECLAIM", "WRITE", "NOWARN", "RETRY_MAYFAIL", "NOFAIL", "NORETRY",
	"MEMALLOC", "COMP", "NOMEMALLOC", "HARDWALL", "THISNODE", "ACCOUNT", "ZEROTAGS",
	"SKIP_ZERO", "SKIP_KASAN", "NO_OBJ_EXT"};

/* Before Linux 6.3: bit 9 is __GFP_ATOMIC */
static bool atomic_bit(void)
{
	struct utsname u;
	int major = 0, minor = 0;
	return !uname(&u) && sscanf(u.release, "%d.%d", &major, &minor) == 2 &&
	       (major < 6 || (major == 6 && minor < 3));
}

/* Each bit's position: the kernel's where its BTF says, else the enum's index */
static void bit_positions(int pos[NBITS])
{
	for (int i = 0; i < NBITS; i++)
		pos[i] = i;
	const struct btf *b = kbtf_vmlinux();
	for (unsigned id = 1; b && id < btf__type_cnt(b); id++) {
		const struct btf_type *t = btf__type_by_id(b, id);
		if (!btf_is_enum(t) || !btf_vlen(t) ||
		    strcmp(btf__name_by_offset(b, btf_enum(t)[0].name_off), "___GFP_DMA_BIT"))
			continue;
		for (int j = 0; j < btf_vlen(t); j++) {
			const char *n = btf__name_by_offset(b, btf_enum(t)[j].name_off);
			for (int k = 0; k < NBITS; k++) {
				char want[40];
				snprintf(want, sizeof(want), "___GFP_%s_BIT", bit_names[k]);
				if (n && !strcmp(n, want))
					pos[k] = (int)btf_enum(t)[j].val;
			}
		}
		return;
	}
}

static int own_table(void);

/* The C constant expressions of the kernel's table: casts, parentheses, ~, <<, &, |,
 * integers with C's suffixes. R->err on anything else. */
struct rd {
	const char *p;
	bool err;
};

static uint64_t ex_or(struct rd *r);

static void skip(struct rd *r)
{
	while (*r->p == ' ' || *r->p == '\t' || *r->p == '\n')
		r->p++;
}

static uint64_t ex_unary(struct rd *r)
{
	skip(r);
	if (*r->p == '~') {
		r->p++;
		return ~ex_unary(r);
	}
	if (*r->p == '(') {
		r->p++;
		skip(r);
		if (isalpha((unsigned char)*r->p) || *r->p == '_') { /* ( gfp_t), (unsigned long) */
			while (isalnum((unsigned char)*r->p) || *r->p == '_' || *r->p == ' ')
				r->p++;
			if (*r->p != ')')
				goto bad;
			r->p++;
			return ex_unary(r);
		}
		uint64_t v = ex_or(r);
		skip(r);
		if (*r->p != ')')
			goto bad;
		r->p++;
		return v;
	}
	if (isdigit((unsigned char)*r->p)) {
		char *end;
		uint64_t v = strtoull(r->p, &end, 0);
		r->p = end;
		while (*r->p && strchr("uUlL", *r->p))
			r->p++;
		return v;
	}
bad:
	r->err = true;
	return 0;
}

static uint64_t ex_shift(struct rd *r)
{
	uint64_t v = ex_unary(r);
	while (!r->err && (skip(r), r->p[0] == '<' && r->p[1] == '<')) {
		r->p += 2;
		uint64_t n = ex_unary(r);
		v = n < 64 ? v << n : 0;
	}
	return v;
}

static uint64_t ex_and(struct rd *r)
{
	uint64_t v = ex_shift(r);
	while (!r->err && (skip(r), r->p[0] == '&' && r->p[1] != '&')) {
		r->p++;
		v &= ex_shift(r);
	}
	return v;
}

static uint64_t ex_or(struct rd *r)
{
	uint64_t v = ex_and(r);
	while (!r->err && (skip(r), r->p[0] == '|' && r->p[1] != '|')) {
		r->p++;
		v |= ex_and(r);
	}
	return v;
}

#define KTAB_MAX 64
static struct {
	uint64_t mask;
	char name[40];
} ktab[KTAB_MAX];
static int nktab = -1;

/* The table of __print_flags(REC->gfp_flags, "|", {MASK, "NAME"}, ...) in kmem:kmalloc's
 * format: its entries, or 0 when it is not there or not read whole. */
static int kernel_table(void)
{
	const char *root = tracefs_root(false);
	char path[256], text[16384];
	if (!root)
		return 0;
	snprintf(path, sizeof(path), "%s/events/kmem/kmalloc/format", root);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = 0;
	const char *p = strstr(text, "__print_flags(REC->gfp_flags");
	int k = 0;
	while (p && (p = strpbrk(p, "{)")) && *p == '{' && k < KTAB_MAX) {
		struct rd r = {p + 1, false};
		uint64_t mask = ex_or(&r);
		skip(&r);
		if (r.err || *r.p != ',')
			return 0;
		const char *e = strchr(r.p + 1, '"');
		const char *end = e ? strchr(e + 1, '"') : NULL;
		if (!end || end - e - 1 >= (long)sizeof(ktab[k].name))
			return 0;
		ktab[k].mask = mask;
		snprintf(ktab[k].name, sizeof(ktab[k].name), "%.*s", (int)(end - e - 1), e + 1);
		k++;
		p = end + 1;
	}
	return p && *p == ')' ? k : 0;
}

void rt_gfp_format(struct strbuf *sb, uint64_t flags)
{
	if (nktab < 0) {
		nktab = kernel_table();
		if (!nktab)
			nktab = own_table();
	}
	if (!flags) {
		strbuf_puts(sb, "0");
		return;
	}
	const char *sep = "";
	for (int i = 0; i < nktab && flags; i++) {
		if (!ktab[i].mask || (flags & ktab[i].mask) != ktab[i].mask)
			continue;
		strbuf_printf(sb, "%s%s", sep, ktab[i].name);
		flags &= ~ktab[i].mask;
		sep = "|";
	}
	if (flags)
		strbuf_printf(sb, "%s0x%" PRIx64, sep, flags);
}

/* ktab from our own table: its entries */
static int own_table(void)
{
	int pos[NBITS];
	bit_positions(pos);
	bool atomic = atomic_bit();
#define F(x) ((uint64_t)1 << pos[x])
	const uint64_t a = atomic ? F(UNUSED) : 0;
	const uint64_t reclaim = F(DIRECT_RECLAIM) | F(KSWAPD_RECLAIM);
	const uint64_t kernel = reclaim | F(IO) | F(FS), user = kernel | F(HARDWALL);
	const uint64_t highuser_movable = user | F(HIGHMEM) | F(MOVABLE) | F(SKIP_KASAN);
	const uint64_t th_light = (highuser_movable | F(COMP) | F(NOMEMALLOC) | F(NOWARN)) & ~reclaim;
	const struct {
		uint64_t mask;
		const char *name;
	} masks[] = {
		{th_light | F(DIRECT_RECLAIM), "GFP_TRANSHUGE"},
		{th_light, "GFP_TRANSHUGE_LIGHT"},
		{highuser_movable, "GFP_HIGHUSER_MOVABLE"},
		{user | F(HIGHMEM), "GFP_HIGHUSER"},
		{user, "GFP_USER"},
		{kernel | F(ACCOUNT), "GFP_KERNEL_ACCOUNT"},
		{kernel, "GFP_KERNEL"},
		{reclaim | F(IO), "GFP_NOFS"},
		{F(HIGH) | a | F(KSWAPD_RECLAIM), "GFP_ATOMIC"},
		{reclaim, "GFP_NOIO"},
		{F(KSWAPD_RECLAIM) | F(NOWARN), "GFP_NOWAIT"},
		{F(DMA), "GFP_DMA"},
		{F(HIGHMEM), "__GFP_HIGHMEM"},
		{F(DMA32), "GFP_DMA32"},
		{F(HIGH), "__GFP_HIGH"},
		{a, "__GFP_ATOMIC"},
		{F(IO), "__GFP_IO"},
		{F(FS), "__GFP_FS"},
		{F(ZERO), "__GFP_ZERO"},
		{F(DIRECT_RECLAIM), "__GFP_DIRECT_RECLAIM"},
		{F(KSWAPD_RECLAIM), "__GFP_KSWAPD_RECLAIM"},
		{F(WRITE), "__GFP_WRITE"},
		{F(NOWARN), "__GFP_NOWARN"},
		{F(RETRY_MAYFAIL), "__GFP_RETRY_MAYFAIL"},
		{F(NOFAIL), "__GFP_NOFAIL"},
		{F(NORETRY), "__GFP_NORETRY"},
		{F(MEMALLOC), "__GFP_MEMALLOC"},
		{F(COMP), "__GFP_COMP"},
		{F(NOMEMALLOC), "__GFP_NOMEMALLOC"},
		{F(HARDWALL), "__GFP_HARDWALL"},
		{F(THISNODE), "__GFP_THISNODE"},
		{F(ACCOUNT), "__GFP_ACCOUNT"},
		{F(ZEROTAGS), "__GFP_ZEROTAGS"},
		{F(SKIP_ZERO), "__GFP_SKIP_ZERO"},
		{F(SKIP_KASAN), "__GFP_SKIP_KASAN"},
		{F(NO_OBJ_EXT), "__GFP_NO_OBJ_EXT"},
	};
#undef F
	int k = 0;
	for (size_t i = 0; i < sizeof(masks) / sizeof(masks[0]) && k < KTAB_MAX; i++) {
		ktab[k].mask = masks[i].mask;
		snprintf(ktab[k].name, sizeof(ktab[k].name), "%s", masks[i].name);
		k++;
	}
	return k;
}
