/* golines: the addresses of a source line, for go:FILE.go:LINE probes.
 *
 * A line's code is found in the DWARF line table (lines.c keeps its is_stmt flag): Go
 * gives an inlined function's code the inlined function's file and line, so a line of
 * a function inlined in three places has rows in all three. The compiler splits a line
 * into several runs of rows (a loop header's init and its condition; the rest of a
 * statement after an inlined call), and a run is entered once each time control
 * reaches it: its lowest is_stmt row is where the probe goes. A run without is_stmt
 * (the tail of a statement after inlined code) is the same execution going on. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "binfo/lines_int.h"
#include "common/util.h"

/* PATH is WANT, or ends with "/" WANT. */
static bool file_matches(const char *path, const char *want)
{
	size_t lp = strlen(path), lw = strlen(want);
	return lp >= lw && !strcmp(path + lp - lw, want) && (lp == lw || path[lp - lw - 1] == '/');
}

/* The file FILE names: its index in l->files, or -ESRCH / -EEXIST. */
static int find_file(struct binfo_lines *l, struct binfo_line_query *q)
{
	int found = -ESRCH;
	for (uint32_t i = 0; i < l->files.n; i++) {
		if (!file_matches(l->files.v[i], q->file))
			continue;
		if (found >= 0) {
			q->other = l->files.v[i];
			return -EEXIST;
		}
		found = (int)i;
		q->path = l->files.v[i];
	}
	return found;
}

static bool same_line(const struct line_row *a, const struct line_row *b)
{
	return a->file == b->file && a->line == b->line;
}

int binfo_line_sites(struct binfo_lines *l, struct binfo_line_query *q,
		     struct binfo_line_site **out)
{
	VEC(struct binfo_line_site) v = {0};
	int fi = find_file(l, q);
	*out = NULL;
	q->before = q->after = 0;
	if (fi < 0)
		return fi;
	for (size_t i = 0; i < l->nrows; i++) {
		const struct line_row *r = &l->rows[i];
		if (r->file != (uint32_t)fi || !r->line)
			continue;
		int ln = (int)r->line;
		if (r->stmt && ln < q->line && ln > q->before)
			q->before = ln;
		if (r->stmt && ln > q->line && (!q->after || ln < q->after))
			q->after = ln;
		const struct binfo_func *f = ln == q->line ? binfo_func_at(l->bi, r->addr) : NULL;
		if (!f)
			continue;
		/* the run: this row and the rows of the same line after it inside F */
		uint64_t fend = f->addr + f->size, end = fend;
		size_t j = i, stmt = r->stmt ? i : SIZE_MAX;
		while (j + 1 < l->nrows && same_line(&l->rows[j + 1], r) && l->rows[j + 1].addr < fend) {
			j++;
			if (stmt == SIZE_MAX && l->rows[j].stmt)
				stmt = j;
		}
		if (j + 1 < l->nrows && l->rows[j + 1].addr < fend)
			end = l->rows[j + 1].addr;
		uint64_t start = r->addr, entry = f->addr;
		i = j;
		if (stmt == SIZE_MAX)
			continue;
		if (binfo_entry_addr(l->bi, f, &entry))
			entry = f->addr;
		uint64_t more = binfo__morestack_block(l->bi, f);
		if (more && more >= start && more < end)
			continue;
		struct binfo_line_site s = {l->rows[stmt].addr, f};
		if (s.addr == f->addr)
			s.addr = entry;
		vec_push(&v, s);
	}
	*out = v.v;
	return v.n;
}
