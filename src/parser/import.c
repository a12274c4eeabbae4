/* import: current bpftrace's `import "PATH";`. A .bt script's probes, macros, map
 * declarations and C definitions join the importing program; a .h header's C
 * definitions and #define lines do; a directory imports its .bt and .h files. Paths are
 * relative to the importing file's directory (the current one for -e), each file comes
 * in once, and, as gotrace runs as root, only from files no one but the script's owner
 * (or root) could have written. */
#include "parser/ast.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/trust.h"
#include "common/util.h"

/* Files larger than this are not scripts. */
#define IMPORT_MAX_BYTES (16u << 20)

struct imported {
	const char *name; /* as bpftrace keys it: the path written, "DIR/FILE" in a directory */
	struct ast_node *program;
	const struct diag_src *src;
};

struct importer {
	struct arena *a;
	uid_t owner;
	VEC(const char *) seen; /* real paths of the files read, the root script's too */
	VEC(struct imported) files;
};

static int import_any(struct importer *im, const struct ast_node *at, const char *dir,
		      const char *name, bool in_dir);

static const char *quoted_name(const struct ast_node *at)
{
	return at->u.str.bytes;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && !strcmp(s + n - m, suffix);
}

static char *dir_of(struct arena *a, const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return ".";
	return slash == path ? "/" : arena_strndup(a, path, (size_t)(slash - path));
}

static bool seen(struct importer *im, const char *real)
{
	for (int i = 0; i < im->seen.n; i++)
		if (!strcmp(im->seen.v[i], real))
			return true;
	vec_push(&im->seen, arena_strdup(im->a, real));
	return false;
}

/* PATH's text, or NULL with errno set (EFBIG: too big, or not text: it holds a NUL). */
static char *read_all(struct arena *a, const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	struct strbuf b = {0};
	int err = strbuf_read(&b, f, IMPORT_MAX_BYTES);
	fclose(f);
	if (!err && memchr(b.buf ? b.buf : "", 0, b.len))
		err = -EFBIG;
	char *text = err ? NULL : arena_strndup(a, b.buf ? b.buf : "", b.len);
	strbuf_free(&b);
	errno = -err;
	return text;
}

/* A header's preprocessor lines: #define NAME VALUE and #include stay; an include guard
 * (#ifndef X, #define X ... #endif), #pragma once and a #define without a value go; any
 * other conditional is refused: nothing here evaluates them. */
static int header_directives(struct importer *im, struct ast_node *program)
{
	struct ast_list *l = &program->u.program.cdefs;
	int first = -1, last = -1, n = 0;
	const char *guard = NULL;
	bool closed = false;
	struct gt_loc guard_loc = {0};
	for (int i = 0; i < l->n; i++) {
		if (l->v[i]->kind == AST_DIRECTIVE) {
			first = first < 0 ? i : first;
			last = i;
		}
	}
	for (int i = 0; i < l->n; i++) {
		struct ast_node *d = l->v[i];
		if (d->kind != AST_DIRECTIVE) {
			l->v[n++] = d;
			continue;
		}
		const char *p = d->u.name + 1 + strspn(d->u.name + 1, " \t");
		size_t w = strcspn(p, " \t\r/");
		const char *arg = p + w + strspn(p + w, " \t");
		size_t alen = strcspn(arg, " \t\r/");
		bool keep = false, ok = true;
		if (w == 7 && !strncmp(p, "include", 7)) {
			keep = true;
		} else if (w == 6 && !strncmp(p, "define", 6)) {
			/* not the guard's own, which may have a value */
			const char *val = arg + strcspn(arg, " \t(");
			keep = *val != '(' && val[strspn(val, " \t\r")] != 0 &&
			       !(guard && strlen(guard) == alen && !strncmp(arg, guard, alen));
		} else if (w == 6 && !strncmp(p, "pragma", 6)) {
			ok = !strncmp(arg, "once", 4);
		} else if (w == 6 && !strncmp(p, "ifndef", 6)) {
			ok = i == first && alen;
			guard = arena_strndup(im->a, arg, alen);
			guard_loc = d->loc;
		} else if (w == 5 && !strncmp(p, "endif", 5)) {
			ok = closed = guard && i == last;
		} else {
			ok = false;
		}
		if (!ok) {
			diag_error(NULL, d->loc, "%.*s: an imported header may use #ifndef and "
				   "#endif only as its include guard, and #pragma only as once",
				   (int)(w + (size_t)(p - d->u.name)), d->u.name);
			return -EINVAL;
		}
		if (keep)
			l->v[n++] = d;
	}
	l->n = n;
	if (guard && !closed) {
		diag_error(NULL, guard_loc, "the include guard #ifndef %s has no #endif", guard);
		return -EINVAL;
	}
	return 0;
}

/* What a header may not hold: anything that is not a C definition. */
static int header_check(struct importer *im, struct ast_node *program)
{
	const struct ast_node *bad = program->u.program.clauses.n ? program->u.program.clauses.v[0]
				     : program->u.program.macros.n ? program->u.program.macros.v[0]
				     : program->u.program.imports.n ? program->u.program.imports.v[0]
								     : NULL;
	for (int i = 0; !bad && i < program->u.program.cdefs.n; i++) {
		const struct ast_node *d = program->u.program.cdefs.v[i];
		if (d->kind == AST_CONFIG || d->kind == AST_MAPDECL)
			bad = d;
	}
	if (bad) {
		diag_error(NULL, bad->loc, "an imported header may hold only struct, union and "
			   "enum definitions, #define and #include lines");
		return -EINVAL;
	}
	return header_directives(im, program);
}

static int import_file(struct importer *im, const struct ast_node *at, const char *name,
		       const char *path, bool header)
{
	char *text = read_all(im->a, path);
	if (!text) {
		diag_error(NULL, at->loc, "cannot import \"%s\": %s: %s", quoted_name(at), path,
			   errno == EFBIG ? "not a text file of at most 16 MiB" : strerror(errno));
		return -EINVAL;
	}
	struct diag_src *src = arena_alloc(im->a, sizeof(*src));
	src->name = arena_strdup(im->a, path);
	src->text = text;
	src->origin = DIAG_SRC_FILE;
	struct ast_node *p = parse_source(im->a, src, header);
	if (!p)
		return -EINVAL;
	if (header) {
		if (header_check(im, p))
			return -EINVAL;
	} else {
		struct ast_list *c = &p->u.program.cdefs;
		for (int i = 0; i < c->n; i++) {
			if (c->v[i]->kind == AST_CONFIG) {
				diag_error(NULL, c->v[i]->loc, "a config block may be only in the "
					   "main script, not in an import");
				return -EINVAL;
			}
		}
		/* its own imports, relative to its directory; they come in before it */
		const char *dir = dir_of(im->a, path);
		for (int i = 0; i < p->u.program.imports.n; i++) {
			const struct ast_node *imp = p->u.program.imports.v[i];
			if (import_any(im, imp, dir, imp->u.str.bytes, false))
				return -EINVAL;
		}
	}
	vec_push(&im->files, ((struct imported){arena_strdup(im->a, name), p, src}));
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A directory's .bt and .h files, in name order; anything else in it is passed over. */
static int import_dir(struct importer *im, const struct ast_node *at, const char *path,
		      const char *name)
{
	DIR *d = opendir(path);
	if (!d) {
		diag_error(NULL, at->loc, "cannot import \"%s\": %s: %s", quoted_name(at), path,
			   strerror(errno));
		return -EINVAL;
	}
	VEC(char *) names = {0};
	struct dirent *e;
	while ((e = readdir(d)))
		if (ends_with(e->d_name, ".bt") || ends_with(e->d_name, ".h"))
			vec_push(&names, arena_strdup(im->a, e->d_name));
	closedir(d);
	vec_sort(&names, cmp_str);
	int err = 0;
	for (int i = 0; i < names.n && !err; i++)
		err = import_any(im, at, path, arena_printf(im->a, "%s/%s", name, names.v[i]), true);
	vec_free(&names);
	return err;
}

/* NAME as written, from the file in DIR; IN_DIR: an entry of an imported directory. */
static int import_any(struct importer *im, const struct ast_node *at, const char *dir,
		      const char *name, bool in_dir)
{
	const char *entry = in_dir ? strrchr(name, '/') + 1 : name;
	const char *path = entry[0] == '/' || !strcmp(dir, ".") ? entry
			   : arena_printf(im->a, "%s/%s", dir, entry);
	struct stat st;
	if (stat(path, &st)) {
		diag_error(NULL, at->loc, "cannot import \"%s\": %s: %s", quoted_name(at), path,
			   strerror(errno));
		return -EINVAL;
	}
	if (in_dir && !S_ISREG(st.st_mode))
		return 0;
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) { /* a FIFO would never end */
		diag_error(NULL, at->loc, "cannot import \"%s\": %s is not a regular file",
			   quoted_name(at), path);
		return -EINVAL;
	}
	/* a file its owner's (the script's) or root's, in directories only they can change */
	char *why = trust_path_distrust(path, im->owner, &st);
	if (why && im->owner != 0) {
		free(why);
		why = trust_path_distrust(path, 0, &st);
	}
	if (why) {
		diag_error(NULL, at->loc, "cannot import \"%s\": not trusted: %s", quoted_name(at),
			   why);
		free(why);
		return -EPERM;
	}
	char real[PATH_MAX];
	if (!realpath(path, real)) {
		diag_error(NULL, at->loc, "cannot import \"%s\": %s: %s", quoted_name(at), path,
			   strerror(errno));
		return -EINVAL;
	}
	if (S_ISDIR(st.st_mode))
		return in_dir ? 0 : import_dir(im, at, path, name);
	if (!ends_with(path, ".bt") && !ends_with(path, ".h")) {
		if (ends_with(path, ".bpf.c") || ends_with(path, ".bpf.o"))
			diag_error(NULL, at->loc, "cannot import \"%s\": gotrace links no C sources "
				   "or BPF objects into its programs (only .bt scripts and .h "
				   "headers)", quoted_name(at));
		else
			diag_error(NULL, at->loc, "cannot import \"%s\": not a .bt script, a .h "
				   "header or a directory", quoted_name(at));
		return -EINVAL;
	}
	if (seen(im, real))
		return 0; /* imported once */
	return import_file(im, at, name, path, ends_with(path, ".h"));
}

static void list_prepend(struct arena *a, struct ast_list *to, const struct ast_list *from,
			 bool reversed)
{
	struct ast_list l = {0};
	for (int i = 0; i < from->n; i++)
		ast_list_push(a, &l, from->v[reversed ? from->n - 1 - i : i]);
	for (int i = 0; i < to->n; i++)
		ast_list_push(a, &l, to->v[i]);
	*to = l;
}

static int cmp_imported(const void *a, const void *b)
{
	return strcmp(((const struct imported *)a)->name, ((const struct imported *)b)->name);
}

int ast_import(struct arena *a, const struct diag_src *src, struct ast_node *program)
{
	if (!program->u.program.imports.n)
		return 0;
	struct importer im = {.a = a, .owner = geteuid()};
	struct stat st;
	char real[PATH_MAX];
	bool file = src->origin == DIAG_SRC_FILE && !stat(src->name, &st) && S_ISREG(st.st_mode);
	if (file) {
		im.owner = st.st_uid;
		if (realpath(src->name, real))
			seen(&im, real);
	}
	const char *dir = file ? dir_of(a, src->name) : ".";
	int err = 0;
	for (int i = 0; i < program->u.program.imports.n && !err; i++) {
		const struct ast_node *imp = program->u.program.imports.v[i];
		err = import_any(&im, imp, dir, imp->u.str.bytes, false);
	}
	if (!err) {
		/* C definitions in the order read (what an import needs comes before it);
		 * probes as bpftrace 0.26 orders them: an import's before the importer's,
		 * by name, each import's in reverse */
		program->u.program.sources = arena_alloc(a, sizeof(void *) * (size_t)im.files.n);
		for (int i = im.files.n - 1; i >= 0; i--) {
			struct ast_node *p = im.files.v[i].program;
			list_prepend(a, &program->u.program.cdefs, &p->u.program.cdefs, false);
			list_prepend(a, &program->u.program.macros, &p->u.program.macros, false);
		}
		for (int i = 0; i < im.files.n; i++)
			program->u.program.sources[program->u.program.nsources++] =
				im.files.v[i].src;
		vec_sort(&im.files, cmp_imported);
		for (int i = 0; i < im.files.n; i++)
			list_prepend(a, &program->u.program.clauses,
				     &im.files.v[i].program->u.program.clauses, true);
	}
	vec_free(&im.seen);
	vec_free(&im.files);
	return err;
}
