/* profile: pprof's profile.proto (gzipped) and folded stacks, see profile.h.
 *
 * Why no protobuf library: Debian's protobuf-c would bring a code generator into the
 * build and a runtime dependency for five small messages that are only ever written;
 * the wire format they need (varints and length-delimited fields) is pb.c, ~100 lines.
 * Field numbers follow github.com/google/pprof proto/profile.proto. */
#include "runtime/profile/profile.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/pb.h"

/* profile.proto field numbers */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	VALUETYPE_TYPE = 1,
	VALUETYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1,
	SAMPLE_VALUE = 2,
	SAMPLE_LABEL = 3,
	LABEL_KEY = 1,
	LABEL_STR = 2,
	LABEL_NUM = 3,
	MAPPING_ID = 1,
	MAPPING_MEMORY_START = 2,
	MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILE_OFFSET = 4,
	MAPPING_FILENAME = 5,
	MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7,
	MAPPING_HAS_FILENAMES = 8,
	MAPPING_HAS_LINE_NUMBERS = 9,
	MAPPING_HAS_INLINE_FRAMES = 10,
	LOCATION_ID = 1,
	LOCATION_MAPPING_ID = 2,
	LOCATION_ADDRESS = 3,
	LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1,
	LINE_LINE = 2,
	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4,
};

/* Grows *p (of *cap elements of size) to hold at least n; 0 or -ENOMEM. */
static int prof_grow(void **p, size_t *cap, size_t n, size_t size)
{
	if (n <= *cap)
		return 0;
	size_t c = *cap ? *cap : 16;
	while (c < n)
		c *= 2;
	if (c > SIZE_MAX / size)
		return -ENOMEM;
	void *q = realloc(*p, c * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

/* An open-addressing set of entry numbers 0..n-1 kept by their hashes; the entries
 * themselves live in the caller's arrays, which eq() compares against a key. */
struct prof_index {
	uint32_t *slots; /* entry + 1, 0: empty; cap is a power of two */
	size_t cap;
	uint64_t *hashes; /* per entry, to rehash when growing */
	size_t n, hcap;
};

struct prof_builder;
typedef bool (*prof_eq_fn)(const struct prof_builder *b, size_t entry, const void *key);

/* The entry equal to key, or -1. */
static long prof_index__find(const struct prof_index *ix, uint64_t hash, prof_eq_fn eq,
			     const struct prof_builder *b, const void *key)
{
	if (!ix->cap)
		return -1;
	for (size_t i = hash & (ix->cap - 1);; i = (i + 1) & (ix->cap - 1)) {
		uint32_t e = ix->slots[i];
		if (!e)
			return -1;
		if (ix->hashes[e - 1] == hash && eq(b, e - 1, key))
			return (long)e - 1;
	}
}

static void prof_index__place(struct prof_index *ix, size_t entry)
{
	size_t i = ix->hashes[entry] & (ix->cap - 1);
	while (ix->slots[i])
		i = (i + 1) & (ix->cap - 1);
	ix->slots[i] = (uint32_t)entry + 1;
}

/* Adds entry number ix->n (the caller appends the entry itself); 0 or -ENOMEM. */
static int prof_index__add(struct prof_index *ix, uint64_t hash)
{
	if (ix->n >= UINT32_MAX - 1 || prof_grow((void **)&ix->hashes, &ix->hcap, ix->n + 1,
						 sizeof(*ix->hashes)))
		return -ENOMEM;
	ix->hashes[ix->n++] = hash;
	if (ix->n * 2 > ix->cap) { /* load at most 1/2 */
		size_t cap = ix->cap ? ix->cap * 2 : 64;
		uint32_t *slots = calloc(cap, sizeof(*slots));
		if (!slots)
			return -ENOMEM;
		free(ix->slots);
		ix->slots = slots;
		ix->cap = cap;
		for (size_t e = 0; e < ix->n; e++)
			prof_index__place(ix, e);
	} else {
		prof_index__place(ix, ix->n - 1);
	}
	return 0;
}

static void prof_index__free(struct prof_index *ix)
{
	free(ix->slots);
	free(ix->hashes);
}

static uint64_t prof_hash(uint64_t h, const void *p, size_t n)
{
	const uint8_t *s = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 0x100000001b3ull; /* FNV-1a */
	return h;
}

#define PROF_HASH_INIT 0xcbf29ce484222325ull

struct prof_func {
	int64_t name, file; /* string-table indexes */
};
struct prof_line {
	uint64_t func_id;
	int64_t line;
};
struct prof_loc {
	uint64_t addr;
	int mapping; /* -1: none */
	size_t line0, nlines; /* into the builder's lines */
};
struct prof_map_flags {
	bool files, lines, inlines;
};

/* The tables of one prof_write_pprof call; ids are index + 1. */
struct prof_builder {
	const char **strs; /* the caller's strings, not copied: they outlive the call */
	size_t nstrs, strs_cap;
	struct prof_index str_ix;
	struct prof_func *funcs;
	size_t nfuncs, funcs_cap;
	struct prof_index func_ix;
	struct prof_loc *locs;
	size_t nlocs, locs_cap;
	struct prof_index loc_ix;
	struct prof_line *lines;
	size_t nlines, lines_cap;
	uint64_t *stack; /* one sample's location ids */
	size_t stack_cap;
	struct prof_map_flags *map_flags;
};

static void prof_builder__free(struct prof_builder *b)
{
	free(b->strs);
	prof_index__free(&b->str_ix);
	free(b->funcs);
	prof_index__free(&b->func_ix);
	free(b->locs);
	prof_index__free(&b->loc_ix);
	free(b->lines);
	free(b->stack);
	free(b->map_flags);
}

static bool prof_str_eq(const struct prof_builder *b, size_t e, const void *key)
{
	return !strcmp(b->strs[e], key);
}

/* The string-table index of s (NULL and "" are 0); -ENOMEM. */
static int64_t prof_builder__str(struct prof_builder *b, const char *s)
{
	if (!s || !*s)
		return 0;
	uint64_t h = prof_hash(PROF_HASH_INIT, s, strlen(s));
	long e = prof_index__find(&b->str_ix, h, prof_str_eq, b, s);
	if (e >= 0)
		return e;
	if (prof_grow((void **)&b->strs, &b->strs_cap, b->nstrs + 1, sizeof(*b->strs)) ||
	    prof_index__add(&b->str_ix, h))
		return -ENOMEM;
	b->strs[b->nstrs] = s;
	return (int64_t)b->nstrs++;
}

static bool prof_func_eq(const struct prof_builder *b, size_t e, const void *key)
{
	const struct prof_func *k = key;
	return b->funcs[e].name == k->name && b->funcs[e].file == k->file;
}

/* The Function id of (name, file); -ENOMEM. */
static int64_t prof_builder__func(struct prof_builder *b, const char *name, const char *file)
{
	struct prof_func k = {prof_builder__str(b, name), prof_builder__str(b, file)};
	if (k.name < 0 || k.file < 0)
		return -ENOMEM;
	uint64_t h = prof_hash(PROF_HASH_INIT, &k, sizeof(k));
	long e = prof_index__find(&b->func_ix, h, prof_func_eq, b, &k);
	if (e >= 0)
		return e + 1;
	if (prof_grow((void **)&b->funcs, &b->funcs_cap, b->nfuncs + 1, sizeof(*b->funcs)) ||
	    prof_index__add(&b->func_ix, h))
		return -ENOMEM;
	b->funcs[b->nfuncs++] = k;
	return (int64_t)b->nfuncs;
}

static bool prof_loc_eq(const struct prof_builder *b, size_t e, const void *key)
{
	const struct prof_loc *x = &b->locs[e], *k = key;
	return x->addr == k->addr && x->mapping == k->mapping && x->nlines == k->nlines &&
	       !memcmp(b->lines + x->line0, b->lines + k->line0, k->nlines * sizeof(*b->lines));
}

/* The Location id of frames[0..nf-1], one PC: the inlined frames and their caller, the
 * last one. Its Lines are appended to b->lines first and taken back if it exists. */
static int64_t prof_builder__loc(struct prof_builder *b, const struct prof_frame *fr, int nf)
{
	const struct prof_frame *caller = &fr[nf - 1];
	struct prof_loc k = {caller->addr, caller->mapping, b->nlines, 0};
	if (prof_grow((void **)&b->lines, &b->lines_cap, b->nlines + (size_t)nf,
		      sizeof(*b->lines)))
		return -ENOMEM;
	for (int i = 0; i < nf; i++) {
		if (!fr[i].func) /* a Line needs a Function: pprof shows the address */
			continue;
		int64_t id = prof_builder__func(b, fr[i].func, fr[i].file);
		if (id < 0)
			return id;
		b->lines[k.line0 + k.nlines++] = (struct prof_line){(uint64_t)id, fr[i].line};
		if (caller->mapping >= 0) {
			struct prof_map_flags *mf = &b->map_flags[caller->mapping];
			mf->files |= fr[i].file != NULL;
			mf->lines |= fr[i].line > 0;
			mf->inlines |= nf > 1;
		}
	}
	uint64_t h = prof_hash(PROF_HASH_INIT, &k.addr, sizeof(k.addr));
	h = prof_hash(h, &k.mapping, sizeof(k.mapping));
	h = prof_hash(h, b->lines + k.line0, k.nlines * sizeof(*b->lines));
	long e = prof_index__find(&b->loc_ix, h, prof_loc_eq, b, &k);
	if (e >= 0)
		return e + 1;
	if (prof_grow((void **)&b->locs, &b->locs_cap, b->nlocs + 1, sizeof(*b->locs)) ||
	    prof_index__add(&b->loc_ix, h))
		return -ENOMEM;
	b->nlines += k.nlines;
	b->locs[b->nlocs++] = k;
	return (int64_t)b->nlocs;
}

static int prof_check_sample(const struct prof_sample *s, int nmaps)
{
	if (s->nframes < 0 || s->nlabels < 0 || (s->nframes && !s->frames) ||
	    (s->nlabels && !s->labels))
		return -EINVAL;
	for (int i = 0; i < s->nframes; i++)
		if (s->frames[i].mapping < -1 || s->frames[i].mapping >= nmaps)
			return -EINVAL;
	for (int i = 0; i < s->nlabels; i++)
		if (!s->labels[i].key || (!s->labels[i].is_num && !s->labels[i].str))
			return -EINVAL;
	return 0;
}

/* One Sample message: its stack's Locations are made (or found) on the way. */
static int prof_builder__sample(struct prof_builder *b, struct pb_buf *out,
				const struct prof_sample *s)
{
	size_t nids = 0;
	if (prof_grow((void **)&b->stack, &b->stack_cap, (size_t)s->nframes, sizeof(*b->stack)))
		return -ENOMEM;
	for (int i = 0; i < s->nframes;) {
		/* a run of inlined frames at one PC ends with the frame they were inlined into */
		int j = i;
		while (j + 1 < s->nframes && s->frames[j].inlined &&
		       s->frames[j + 1].addr == s->frames[i].addr)
			j++;
		int64_t id = prof_builder__loc(b, s->frames + i, j - i + 1);
		if (id < 0)
			return (int)id;
		b->stack[nids++] = (uint64_t)id;
		i = j + 1;
	}
	size_t msg = pb_buf__open(out, PROFILE_SAMPLE);
	size_t packed = pb_buf__open(out, SAMPLE_LOCATION_ID);
	for (size_t i = 0; i < nids; i++)
		pb_buf__varint(out, b->stack[i]);
	pb_buf__close(out, packed);
	packed = pb_buf__open(out, SAMPLE_VALUE);
	pb_buf__varint(out, (uint64_t)s->value);
	pb_buf__close(out, packed);
	for (int i = 0; i < s->nlabels; i++) {
		const struct prof_label *l = &s->labels[i];
		int64_t key = prof_builder__str(b, l->key);
		int64_t str = l->is_num ? 0 : prof_builder__str(b, l->str);
		if (key < 0 || str < 0)
			return -ENOMEM;
		size_t lm = pb_buf__open(out, SAMPLE_LABEL);
		pb_buf__uint(out, LABEL_KEY, (uint64_t)key);
		pb_buf__uint(out, LABEL_STR, (uint64_t)str);
		if (l->is_num)
			pb_buf__uint(out, LABEL_NUM, (uint64_t)l->num);
		pb_buf__close(out, lm);
	}
	pb_buf__close(out, msg);
	return 0;
}

static int prof_value_type(struct prof_builder *b, struct pb_buf *out, int field,
			   const char *type, const char *unit)
{
	int64_t t = prof_builder__str(b, type), u = prof_builder__str(b, unit);
	if (t < 0 || u < 0)
		return -ENOMEM;
	size_t mark = pb_buf__open(out, field);
	pb_buf__uint(out, VALUETYPE_TYPE, (uint64_t)t);
	pb_buf__uint(out, VALUETYPE_UNIT, (uint64_t)u);
	pb_buf__close(out, mark);
	return 0;
}

static int prof_builder__mappings(struct prof_builder *b, struct pb_buf *out,
				  const struct prof_mapping *maps, int nmaps)
{
	for (int i = 0; i < nmaps; i++) {
		int64_t file = prof_builder__str(b, maps[i].file);
		int64_t build_id = prof_builder__str(b, maps[i].build_id);
		if (file < 0 || build_id < 0)
			return -ENOMEM;
		size_t mark = pb_buf__open(out, PROFILE_MAPPING);
		pb_buf__uint(out, MAPPING_ID, (uint64_t)i + 1);
		pb_buf__uint(out, MAPPING_MEMORY_START, maps[i].start);
		pb_buf__uint(out, MAPPING_MEMORY_LIMIT, maps[i].limit);
		pb_buf__uint(out, MAPPING_FILE_OFFSET, maps[i].offset);
		pb_buf__uint(out, MAPPING_FILENAME, (uint64_t)file);
		pb_buf__uint(out, MAPPING_BUILD_ID, (uint64_t)build_id);
		/* symbolized already: pprof must not look for the binary to symbolize again */
		pb_buf__uint(out, MAPPING_HAS_FUNCTIONS, 1);
		pb_buf__uint(out, MAPPING_HAS_FILENAMES, b->map_flags[i].files);
		pb_buf__uint(out, MAPPING_HAS_LINE_NUMBERS, b->map_flags[i].lines);
		pb_buf__uint(out, MAPPING_HAS_INLINE_FRAMES, b->map_flags[i].inlines);
		pb_buf__close(out, mark);
	}
	return 0;
}

static void prof_builder__locations(const struct prof_builder *b, struct pb_buf *out)
{
	for (size_t i = 0; i < b->nlocs; i++) {
		const struct prof_loc *l = &b->locs[i];
		size_t mark = pb_buf__open(out, PROFILE_LOCATION);
		pb_buf__uint(out, LOCATION_ID, i + 1);
		pb_buf__uint(out, LOCATION_MAPPING_ID, (uint64_t)(l->mapping + 1));
		pb_buf__uint(out, LOCATION_ADDRESS, l->addr);
		for (size_t j = 0; j < l->nlines; j++) {
			const struct prof_line *ln = &b->lines[l->line0 + j];
			size_t lm = pb_buf__open(out, LOCATION_LINE);
			pb_buf__uint(out, LINE_FUNCTION_ID, ln->func_id);
			pb_buf__uint(out, LINE_LINE, (uint64_t)ln->line);
			pb_buf__close(out, lm);
		}
		pb_buf__close(out, mark);
	}
	for (size_t i = 0; i < b->nfuncs; i++) {
		size_t mark = pb_buf__open(out, PROFILE_FUNCTION);
		pb_buf__uint(out, FUNCTION_ID, i + 1);
		pb_buf__uint(out, FUNCTION_NAME, (uint64_t)b->funcs[i].name);
		pb_buf__uint(out, FUNCTION_SYSTEM_NAME, (uint64_t)b->funcs[i].name);
		pb_buf__uint(out, FUNCTION_FILENAME, (uint64_t)b->funcs[i].file);
		pb_buf__close(out, mark);
	}
}

static int prof_fwrite(FILE *f, const void *p, size_t n)
{
	errno = 0;
	if (fwrite(p, 1, n, f) != n)
		return errno ? -errno : -EIO;
	return 0;
}

/* gzip (windowBits 15 + 16: a gzip header and trailer, not zlib's) of data to f. */
static int prof_gzip(FILE *f, const uint8_t *data, size_t len)
{
	z_stream z;
	uint8_t chunk[16384];
	int err = 0, zr;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = (Bytef *)data;
	do {
		/* avail_in is a uInt: feed a large profile in pieces */
		size_t left = len - (size_t)(z.next_in - (Bytef *)data);
		z.avail_in = left > UINT_MAX ? UINT_MAX : (uInt)left;
		int flush = left > UINT_MAX ? Z_NO_FLUSH : Z_FINISH;
		do {
			z.next_out = chunk;
			z.avail_out = sizeof(chunk);
			zr = deflate(&z, flush);
			if (zr == Z_STREAM_ERROR) {
				err = -EINVAL;
				goto out;
			}
			err = prof_fwrite(f, chunk, sizeof(chunk) - z.avail_out);
			if (err)
				goto out;
		} while (z.avail_out == 0);
	} while (zr != Z_STREAM_END);
out:
	deflateEnd(&z);
	return err;
}

int prof_write_pprof(FILE *f, const struct prof_meta *m, const struct prof_sample *s, int n,
		     const struct prof_mapping *maps, int nmaps)
{
	static const struct prof_meta defaults = {"samples", "count", NULL, NULL, 0, 0, 0};
	struct prof_builder b;
	struct pb_buf out = {0};
	int err = 0;

	memset(&b, 0, sizeof(b));
	if (!f || n < 0 || nmaps < 0 || (n && !s) || (nmaps && !maps))
		return -EINVAL;
	for (int i = 0; i < n; i++)
		if ((err = prof_check_sample(&s[i], nmaps)))
			return err;
	if (!m)
		m = &defaults;
	b.map_flags = calloc((size_t)nmaps + 1, sizeof(*b.map_flags));
	if (!b.map_flags ||
	    prof_grow((void **)&b.strs, &b.strs_cap, 1, sizeof(*b.strs)) ||
	    prof_index__add(&b.str_ix, prof_hash(PROF_HASH_INIT, "", 0))) {
		err = -ENOMEM;
		goto out;
	}
	b.strs[b.nstrs++] = ""; /* string_table[0] */

	err = prof_value_type(&b, &out, PROFILE_SAMPLE_TYPE,
			      m->sample_type ? m->sample_type : defaults.sample_type,
			      m->sample_unit ? m->sample_unit : defaults.sample_unit);
	for (int i = 0; i < n && !err; i++)
		err = prof_builder__sample(&b, &out, &s[i]);
	if (!err)
		err = prof_builder__mappings(&b, &out, maps, nmaps);
	if (err)
		goto out;
	prof_builder__locations(&b, &out);
	if (m->period_type && (err = prof_value_type(&b, &out, PROFILE_PERIOD_TYPE,
						     m->period_type, m->period_unit)))
		goto out;
	for (size_t i = 0; i < b.nstrs; i++)
		pb_buf__str(&out, PROFILE_STRING_TABLE, b.strs[i]);
	pb_buf__uint(&out, PROFILE_TIME_NANOS, (uint64_t)m->time_nanos);
	pb_buf__uint(&out, PROFILE_DURATION_NANOS, (uint64_t)m->duration_nanos);
	pb_buf__uint(&out, PROFILE_PERIOD, (uint64_t)m->period);
	err = out.err;
	if (!err)
		err = prof_gzip(f, out.data, out.len);
	if (!err) {
		errno = 0;
		if (fflush(f))
			err = errno ? -errno : -EIO;
	}
out:
	pb_buf__free(&out);
	prof_builder__free(&b);
	return err;
}

/* Folded stacks */

/* name with ';' (the frame separator) and '\n' (the line end) replaced */
static void prof_folded_name(struct pb_buf *t, const char *s)
{
	for (; *s; s++) {
		char c = *s == ';' ? ':' : *s == '\n' ? ' ' : *s;
		pb_buf__append(t, &c, 1);
	}
}

static void prof_folded_text(struct pb_buf *t, const struct prof_sample *s)
{
	char num[32];
	bool sep = false;
	for (int i = 0; i < s->nlabels; i++, sep = true) {
		const struct prof_label *l = &s->labels[i];
		if (sep)
			pb_buf__append(t, ";", 1);
		prof_folded_name(t, l->key);
		pb_buf__append(t, "=", 1);
		if (l->is_num) {
			snprintf(num, sizeof(num), "%" PRId64, l->num);
			pb_buf__append(t, num, strlen(num));
		} else {
			prof_folded_name(t, l->str);
		}
	}
	for (int i = s->nframes - 1; i >= 0; i--, sep = true) {
		const struct prof_frame *fr = &s->frames[i];
		if (sep)
			pb_buf__append(t, ";", 1);
		if (fr->func) {
			prof_folded_name(t, fr->func);
		} else {
			snprintf(num, sizeof(num), "0x%" PRIx64, fr->addr);
			pb_buf__append(t, num, strlen(num));
		}
	}
	if (!sep) /* a line needs a first frame; flame graph tools know this name */
		pb_buf__append(t, "[unknown]", 9);
	pb_buf__append(t, "", 1);
}

struct prof_folded {
	union {
		size_t off; /* into the text buffer while it can still move */
		const char *text;
	};
	int64_t value;
};

static int prof_folded_cmp(const void *a, const void *b)
{
	return strcmp(((const struct prof_folded *)a)->text, ((const struct prof_folded *)b)->text);
}

int prof_write_folded(FILE *f, const struct prof_sample *s, int n)
{
	struct prof_folded *lines = NULL;
	struct pb_buf text = {0};
	int err = 0;

	if (!f || n < 0 || (n && !s))
		return -EINVAL;
	for (int i = 0; i < n; i++)
		if ((err = prof_check_sample(&s[i], INT_MAX)))
			return err;
	lines = calloc((size_t)n + 1, sizeof(*lines));
	if (!lines)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		lines[i].off = text.len;
		lines[i].value = s[i].value;
		prof_folded_text(&text, &s[i]);
	}
	if ((err = text.err))
		goto out;
	for (int i = 0; i < n; i++)
		lines[i].text = (const char *)text.data + lines[i].off;
	qsort(lines, (size_t)n, sizeof(*lines), prof_folded_cmp);
	for (int i = 0; i < n;) {
		uint64_t sum = 0; /* unsigned: a wrapping sum is not undefined */
		int j = i;
		for (; j < n && !strcmp(lines[j].text, lines[i].text); j++)
			sum += (uint64_t)lines[j].value;
		errno = 0;
		if (fprintf(f, "%s %" PRId64 "\n", lines[i].text, (int64_t)sum) < 0) {
			err = errno ? -errno : -EIO;
			goto out;
		}
		i = j;
	}
	errno = 0;
	if (fflush(f))
		err = errno ? -errno : -EIO;
out:
	pb_buf__free(&text);
	free(lines);
	return err;
}
