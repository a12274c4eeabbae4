/* binfo/suggest: "did you mean" names for a function that does not exist. */
#include <stdlib.h>
#include <string.h>

#include "binfo/binfo_int.h"
#include "common/util.h"

struct cand {
	const char *name;
	int score;
	bool same_pkg;
	int len_diff;
};

/* Length of the package path of a Go symbol: "github.com/a/b.(*T).M" -> "github.com/a/b".
 * The path ends at the first '.' after its last '/'; 0 when there is no '.'. */
static size_t pkg_len(const char *s)
{
	const char *start = s;
	for (const char *p = s; *p && *p != '(' && *p != '['; p++)
		if (*p == '/')
			start = p + 1;
	const char *dot = strchr(start, '.');
	return dot ? (size_t)(dot - s) : 0;
}

/* NAME without its type arguments: "main.Map[go.shape.int_0]" -> "main.Map", so that
 * a generic function is found by its plain name. Returns NAME itself when it has none
 * or does not fit BUF. */
static const char *strip_targs(const char *name, char *buf, size_t size)
{
	if (!strchr(name, '['))
		return name;
	size_t n = 0;
	int depth = 0;
	for (const char *p = name; *p; p++) {
		if (*p == '[')
			depth++;
		else if (*p == ']' && depth > 0)
			depth--;
		else if (depth == 0) {
			if (n + 1 >= size)
				return name;
			buf[n++] = *p;
		}
	}
	buf[n] = 0;
	return buf;
}

/* The package named in a query matches FN's package "a/b/http" when equal to it or,
 * written without a path ("http.Get"), to its last element. */
static bool pkg_matches(const char *q, size_t qpkg, const char *fn, size_t fpkg)
{
	if (qpkg == 0)
		return true;
	if (qpkg == fpkg)
		return memcmp(q, fn, qpkg) == 0;
	if (qpkg > fpkg || memchr(q, '/', qpkg))
		return false;
	return fn[fpkg - qpkg - 1] == '/' && memcmp(q, fn + fpkg - qpkg, qpkg) == 0;
}

/* The part after the last '.' outside brackets: "main.(*T).String" -> "String",
 * "main.Map[go.shape.int_0]" -> "Map[go.shape.int_0]". */
static const char *short_name(const char *s)
{
	const char *last = s;
	int depth = 0;
	for (const char *p = s; *p; p++) {
		if (*p == '[' || *p == '(')
			depth++;
		else if ((*p == ']' || *p == ')') && depth > 0)
			depth--;
		else if (*p == '.' && depth == 0)
			last = p + 1;
	}
	return last;
}

static bool better(const struct cand *a, const struct cand *b)
{
	if (a->score != b->score)
		return a->score < b->score;
	if (a->same_pkg != b->same_pkg)
		return a->same_pkg;
	if (a->len_diff != b->len_diff)
		return a->len_diff < b->len_diff;
	return strcmp(a->name, b->name) < 0;
}

static int max_int(int a, int b)
{
	return a > b ? a : b;
}

int binfo_suggest(struct binfo *bi, const char *name, const char **out, int max)
{
	if (max <= 0 || !*name)
		return 0;
	char qbuf[512], fbuf[512];
	int cap = max_int(3, (int)strlen(name) / 3);
	size_t qpkg = pkg_len(name);
	const char *qplain = strip_targs(name, qbuf, sizeof(qbuf));
	const char *qshort = short_name(qplain);
	int qlen = (int)strlen(qplain);
	/* Matching the last component alone is looser (any package has a String), so its
	 * threshold is tighter; a hit in another package than the one named costs 2. */
	int cap_short = max_int(1, (int)strlen(qshort) / 3);
	struct cand *best = xcalloc((size_t)max, sizeof(*best));
	int n = 0;

	for (int i = 0; i < bi->nfuncs; i++) {
		const char *fn = bi->funcs[i].name;
		const char *fplain = strip_targs(fn, fbuf, sizeof(fbuf));
		bool same_pkg = pkg_matches(name, qpkg, fn, pkg_len(fn));
		int score = edit_distance(name, fn, cap);
		if (fplain != fn || qplain != name) {
			int d = edit_distance(qplain, fplain, cap);
			if (d < score)
				score = d;
		}
		int ds = edit_distance(qshort, short_name(fplain), cap_short);
		if (ds <= cap_short) {
			ds += same_pkg ? 0 : 2;
			if (ds < score)
				score = ds;
		}
		if (score > cap)
			continue;
		int flen = (int)strlen(fplain);
		struct cand c = {fn, score, same_pkg, flen > qlen ? flen - qlen : qlen - flen};

		/* Same name at another address (C statics): identical score, list it once. */
		bool dup = false;
		for (int j = 0; j < n && !dup; j++)
			dup = strcmp(best[j].name, fn) == 0;
		if (dup)
			continue;
		if (n == max && !better(&c, &best[n - 1]))
			continue;
		int k = n < max ? n++ : max - 1;
		while (k > 0 && better(&c, &best[k - 1])) {
			best[k] = best[k - 1];
			k--;
		}
		best[k] = c;
	}
	for (int j = 0; j < n; j++)
		out[j] = best[j].name;
	free(best);
	return n;
}
