// SPDX-License-Identifier: GPL-2.0
/*
 * uniqdctl layouts: every tag (kind, name, defining header and line) that
 * the units of a build saw with more than one layout, from the gcc.use
 * records the GCC plugin interns: (unit, tag, layout) handles. Handles are
 * canonical, so grouping by the tag handle and counting distinct layout
 * handles is integer work; only the tags that differ are resolved to text
 * and compared member by member, to tell an ABI difference (size,
 * alignment, an offset, a bit size, a type) from a difference in names
 * alone (glibc's struct tm: __tm_gmtoff or tm_gmtoff by feature macros).
 *
 * Output (--format): GCC's diagnostic form by default (FILE:LINE: error:
 * ..., FILE:LINE: note: ..., as editors and CI problem matchers read it),
 * the report member by member (text), JSON, or SARIF 2.1.0. Notes on
 * standard error say which units the plugin saw that published no layout,
 * and why.
 *
 * Exit status: 0 no ABI mismatch, 1 an ABI mismatch (with --strict any
 * mismatch), 2 an error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libuniqd.h"
#include "../gcc-plugin/gcc_keys.h"
#include "json.h"
#include "layouts.h"

#define EXIT_MISMATCH	1
#define EXIT_ERROR	2

/* Units listed per layout in the gcc and text output; --json lists all. */
#define SHOW_UNITS	8

enum diff { SAME, NAMES, ABI };

static const char *const diff_word[] = { "same", "names-only", "ABI" };

struct member {
	const char *name;	/* into the layout's text */
	int name_len;
	const char *rest;	/* "@OFF:BITS TYPE" or "=VALUE" */
	int rest_len;
	char *abi;		/* REST without the names of nested members */
	enum diff mark;		/* against the other layouts */
};

struct layout {
	uint64_t handle;
	char *text;
	size_t len;
	int parsed;		/* follows the documented grammar */
	const char *size, *align;
	int size_len, align_len;
	struct member *m;
	size_t n;
	const uint64_t *units;	/* into the sorted uses */
	size_t nunits;
};

struct report {
	uint64_t tag;
	char *text;
	enum diff kind;
	struct layout *l;
	size_t n;
};

struct uses {
	struct gk_use *u;
	size_t n, cap;
	size_t malformed;
};

struct ctx {
	const struct layouts_opts *o;
	uniqd_pool *pool;
	struct report *r;
	size_t nr;
	size_t tags, units;
	uint64_t *used;		/* the units with gcc.use records, sorted, distinct */
	struct left *left;	/* the gcc.unit entries of the others */
	size_t nleft, seen;	/* seen: gcc.unit entries in all */
};

/* A unit the plugin named (gcc.unit) that published no gcc.use record. */
struct left {
	char *name;
	const char *why;
};

static void oom(void)
{
	fprintf(stderr, "uniqdctl: out of memory\n");
	exit(EXIT_ERROR);
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom();
	return p;
}

static void die_uniqd(const char *what)
{
	fprintf(stderr, "uniqdctl: layouts: %s: %s\n", what, uniqd_last_error());
	exit(EXIT_ERROR);
}

/* ---- collecting gcc.use -------------------------------------------------- */

static int collect(void *arg, uint64_t handle, uint32_t class_id, const void *data, size_t len)
{
	struct uses *u = arg;

	(void)handle;
	(void)class_id;
	if (len != GK_USE_LEN) {
		u->malformed++;
		return 0;
	}
	if (u->n == u->cap) {
		u->cap = u->cap ? 2 * u->cap : 1024;
		u->u = xrealloc(u->u, u->cap * sizeof(*u->u));
	}
	gk_use_decode(&u->u[u->n++], data);
	return 0;
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

/* By tag, then layout, then unit: each tag's layouts and their units are runs. */
static int cmp_use(const void *a, const void *b)
{
	const struct gk_use *x = a, *y = b;
	int c = cmp_u64(x->tag, y->tag);

	if (!c)
		c = cmp_u64(x->layout, y->layout);
	return c ? c : cmp_u64(x->unit, y->unit);
}

static int cmp_h(const void *a, const void *b)
{
	return cmp_u64(*(const uint64_t *)a, *(const uint64_t *)b);
}

static char *resolve(struct ctx *c, uint64_t h, size_t *len)
{
	char buf[64];
	char *s = uniqd_resolve_alloc(c->pool, h, len, NULL);

	if (!s) {
		snprintf(buf, sizeof(buf), "resolve 0x%016" PRIx64, h);
		die_uniqd(buf);
	}
	return s;
}

/* ---- reading a layout key --------------------------------------------------- */

/* The end of the member starting at S: its ';' at depth 0, or the '}' closing
 * the list, or E. */
static const char *member_end(const char *s, const char *e)
{
	int depth = 0;

	for (; s < e; s++) {
		if (*s == '{' || *s == '(')
			depth++;
		else if ((*s == '}' || *s == ')') && depth-- == 0)
			return s;
		else if (*s == ';' && depth == 0)
			return s;
	}
	return e;
}

/* Where the name of the member at [S, E) ends: names hold neither '@' nor '='. */
static const char *name_end(const char *s, const char *e)
{
	const char *p = s;

	while (p < e && *p != '@' && *p != '=')
		p++;
	return p;
}

/* Copy [S, E) to OUT without the member names of nested { } lists: what
 * the ABI of a type written inline depends on. */
static void abi_of(char **out, size_t *n, const char *s, const char *e)
{
	while (s < e) {
		const char *p, *q;

		if (*s != '{') {
			*out = xrealloc(*out, *n + 2);
			(*out)[(*n)++] = *s++;
			continue;
		}
		*out = xrealloc(*out, *n + 2);
		(*out)[(*n)++] = '{';
		for (p = s + 1; p < e && *p != '}'; p = q + (q < e && *q == ';')) {
			q = member_end(p, e);
			abi_of(out, n, name_end(p, q) < q ? name_end(p, q) : p, q);
			if (q < e && *q == ';') {
				*out = xrealloc(*out, *n + 2);
				(*out)[(*n)++] = ';';
			}
		}
		s = p < e ? p : e;
	}
	*out = xrealloc(*out, *n + 1);
	(*out)[*n] = '\0';
}

static int expect(const char **p, const char *e, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(e - *p) < n || memcmp(*p, word, n))
		return 0;
	*p += n;
	return 1;
}

static const char *word(const char **p, const char *e, int *len)
{
	const char *s = *p;

	while (*p < e && **p != ' ')
		(*p)++;
	*len = (int)(*p - s);
	return s;
}

/* TAG " size=" S " align=" A " { " (NAME REST "; ")* "}" */
static void parse(struct layout *l, const char *tag, size_t tag_len)
{
	const char *p = l->text, *e = l->text + l->len;

	if (l->len < tag_len || memcmp(p, tag, tag_len))
		return;
	p += tag_len;
	if (!expect(&p, e, " size="))
		return;
	l->size = word(&p, e, &l->size_len);
	if (!expect(&p, e, " align="))
		return;
	l->align = word(&p, e, &l->align_len);
	if (!expect(&p, e, " { "))
		return;
	while (p < e && *p != '}') {
		const char *q = member_end(p, e), *ne = name_end(p, q);
		struct member *m;
		size_t an = 0;

		if (q >= e || *q != ';' || ne == q)
			return;
		l->m = xrealloc(l->m, (l->n + 1) * sizeof(*l->m));
		m = &l->m[l->n++];
		memset(m, 0, sizeof(*m));
		m->name = p;
		m->name_len = (int)(ne - p);
		while (m->name_len && p[m->name_len - 1] == ' ')
			m->name_len--;
		m->rest = ne;
		m->rest_len = (int)(q - ne);
		abi_of(&m->abi, &an, ne, q);
		p = q + 1;
		if (p < e && *p == ' ')
			p++;
	}
	l->parsed = p + 1 == e && *p == '}';
}

/* How B differs from A; marks B's members (and A's where B differs). */
static enum diff compare(struct layout *a, struct layout *b)
{
	enum diff d = SAME;
	size_t n = a->n > b->n ? a->n : b->n;

	if (!a->parsed || !b->parsed)
		return ABI;	/* not ours to read: assume the worst */
	if (a->size_len != b->size_len || memcmp(a->size, b->size, a->size_len) ||
	    a->align_len != b->align_len || memcmp(a->align, b->align, a->align_len) ||
	    a->n != b->n)
		d = ABI;
	for (size_t i = 0; i < n; i++) {
		struct member *x = i < a->n ? &a->m[i] : NULL, *y = i < b->n ? &b->m[i] : NULL;
		enum diff m = SAME;

		if (!x || !y || strcmp(x->abi, y->abi))
			m = ABI;
		else if (x->name_len != y->name_len || memcmp(x->name, y->name, x->name_len) ||
			 x->rest_len != y->rest_len || memcmp(x->rest, y->rest, x->rest_len))
			m = NAMES;
		if (x && m > x->mark)
			x->mark = m;
		if (y && m > y->mark)
			y->mark = m;
		if (m > d)
			d = m;
	}
	return d;
}

/* ---- finding the tags ------------------------------------------------------- */

/* More units first: the first layout is the one most of the build saw. */
static int cmp_layout(const void *a, const void *b)
{
	const struct layout *x = a, *y = b;

	if (x->nunits != y->nunits)
		return x->nunits > y->nunits ? -1 : 1;
	return cmp_u64(x->handle, y->handle);
}

static int cmp_report(const void *a, const void *b)
{
	const struct report *x = a, *y = b;

	return strcmp(x->text, y->text);
}

/* USES[0..N) share one tag and have more than one layout. */
static void add_report(struct ctx *c, const struct gk_use *uses, size_t n, uint64_t *units)
{
	struct report *r;
	size_t tag_len, len;

	c->r = xrealloc(c->r, (c->nr + 1) * sizeof(*c->r));
	r = &c->r[c->nr++];
	memset(r, 0, sizeof(*r));
	r->tag = uses[0].tag;
	r->text = resolve(c, r->tag, &tag_len);
	for (size_t i = 0; i < n; i++)
		units[i] = uses[i].unit;
	for (size_t i = 0, j; i < n; i = j) {
		struct layout *l;

		for (j = i; j < n && uses[j].layout == uses[i].layout; j++)
			;
		r->l = xrealloc(r->l, (r->n + 1) * sizeof(*r->l));
		l = &r->l[r->n++];
		memset(l, 0, sizeof(*l));
		l->handle = uses[i].layout;
		l->text = resolve(c, l->handle, &len);
		l->len = len;
		/* A unit that saw one layout twice (a header without a guard) counts once. */
		l->units = &units[i];
		for (size_t k = i; k < j; k++)
			if (k == i || units[k] != units[k - 1])
				units[i + l->nunits++] = units[k];
		parse(l, r->text, tag_len);
	}
	qsort(r->l, r->n, sizeof(*r->l), cmp_layout);
	for (size_t i = 1; i < r->n; i++) {
		enum diff d = compare(&r->l[0], &r->l[i]);

		if (d > r->kind)
			r->kind = d;
	}
	if (r->kind == SAME)	/* distinct handles, equal text: cannot be */
		r->kind = ABI;
}

static void find(struct ctx *c, struct uses *u)
{
	uint64_t *units = xrealloc(NULL, u->n * sizeof(*units));

	qsort(u->u, u->n, sizeof(*u->u), cmp_use);
	for (size_t i = 0, j; i < u->n; i = j) {
		size_t layouts = 1;

		for (j = i + 1; j < u->n && u->u[j].tag == u->u[i].tag; j++)
			layouts += u->u[j].layout != u->u[j - 1].layout;
		c->tags++;
		if (layouts > 1)
			add_report(c, &u->u[i], j - i, &units[i]);
	}
	qsort(c->r, c->nr, sizeof(*c->r), cmp_report);

	/* The distinct units, for the summary (units[] is the reports' now). */
	uint64_t *all = xrealloc(NULL, u->n * sizeof(*all));

	for (size_t i = 0; i < u->n; i++)
		all[i] = u->u[i].unit;
	qsort(all, u->n, sizeof(*all), cmp_h);
	for (size_t i = 0; i < u->n; i++)
		if (!i || all[i] != all[i - 1])
			all[c->units++] = all[i];
	c->used = all;
	/* units[] stays: the reports point into it until exit. */
}

/* ---- the units left out ------------------------------------------------------ */

static bool ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n >= k && !memcmp(s + n - k, suffix, k);
}

/* Why a unit that the plugin saw published no layout, from its name: the
 * plugin publishes layouts of C units alone, of types defined in a file
 * other than the unit's main file as GCC's line map has it. */
static const char *why_left(const char *name, size_t n)
{
	static const char *const cxx[] = { ".cc", ".cp", ".cxx", ".cpp", ".CPP", ".c++", ".C",
					   ".ii", ".mm", ".M" };

	for (size_t i = 0; i < sizeof(cxx) / sizeof(cxx[0]); i++)
		if (ends_with(name, n, cxx[i]))
			return "C++: the plugin publishes no layouts for C++";
	if (ends_with(name, n, ".i"))
		return "preprocessed source: without line markers (gcc -E -P) every type is "
		       "the unit's own";
	return "no struct, union or enum of a header (or compiled from preprocessed "
	       "source without line markers)";
}

static int collect_unit(void *arg, uint64_t handle, uint32_t class_id, const void *data,
			size_t len)
{
	struct ctx *c = arg;
	struct left *l;

	(void)class_id;
	c->seen++;
	if (bsearch(&handle, c->used, c->units, sizeof(*c->used), cmp_h))
		return 0;
	c->left = xrealloc(c->left, (c->nleft + 1) * sizeof(*c->left));
	l = &c->left[c->nleft++];
	l->name = xrealloc(NULL, len + 1);
	memcpy(l->name, data, len);
	l->name[len] = '\0';
	l->why = why_left(l->name, len);
	return 0;
}

static int cmp_left(const void *a, const void *b)
{
	return strcmp(((const struct left *)a)->name, ((const struct left *)b)->name);
}

/* The pool's gcc.unit entries that published no gcc.use record. */
static void find_left(struct ctx *c)
{
	uint32_t cls = uniqd_class_n(c->pool, GK_CLASS_UNIT, strlen(GK_CLASS_UNIT),
				     UNIQD_CLASS_FIND);

	if (!cls && errno != ENOENT)
		die_uniqd("class " GK_CLASS_UNIT);
	if (cls && uniqd_foreach(c->pool, cls, 0, collect_unit, c) < 0)
		die_uniqd("walk " GK_CLASS_UNIT);
	qsort(c->left, c->nleft, sizeof(*c->left), cmp_left);
}

/* Notes on standard error: what was there to check, and what was not. */
static void note_left(struct ctx *c, size_t malformed)
{
	const char *pool = c->o->pool;

	if (!c->units && !c->seen)
		fprintf(stderr, "uniqdctl: note: pool '%s' holds no " GK_CLASS_USE " records "
			"(was the build's gcc given -fplugin=uniqd -fplugin-arg-uniqd-pool=%s?)\n",
			pool, pool);
	else if (!c->units)
		fprintf(stderr, "uniqdctl: note: pool '%s' holds no " GK_CLASS_USE " records: "
			"the plugin saw %zu unit%s and none published a layout\n", pool, c->seen,
			c->seen == 1 ? "" : "s");
	else if (c->nleft)
		fprintf(stderr, "uniqdctl: note: %zu of the %zu units the plugin saw published no "
			"layout and are left out:\n", c->nleft, c->seen);
	for (size_t i = 0; i < c->nleft && i < SHOW_UNITS; i++)
		fprintf(stderr, "uniqdctl: note:   %s: %s\n", c->left[i].name, c->left[i].why);
	if (c->nleft > SHOW_UNITS)
		fprintf(stderr, "uniqdctl: note:   and %zu more (--json lists them)\n",
			c->nleft - SHOW_UNITS);
	if (malformed)
		fprintf(stderr, "uniqdctl: note: %zu " GK_CLASS_USE " records are not %d bytes; "
			"skipped\n", malformed, GK_USE_LEN);
}

/* ---- output ------------------------------------------------------------------ */

static char *unit_name(struct ctx *c, uint64_t h)
{
	size_t len;

	return resolve(c, h, &len);
}

/* " unit unit ... and N more" and the end of the line: who saw layout L. */
static void unit_list(struct ctx *c, const struct layout *l)
{
	for (size_t k = 0; k < l->nunits && k < SHOW_UNITS; k++) {
		char *u = unit_name(c, l->units[k]);

		printf(" %s", u);
		free(u);
	}
	if (l->nunits > SHOW_UNITS)
		printf(" and %zu more", l->nunits - SHOW_UNITS);
	putchar('\n');
}

/* Where a tag was defined: "struct cfg@inc/cfg.h:6" is the type "struct cfg"
 * at line 6 of inc/cfg.h. 0 when TEXT is not of that form. */
struct where {
	const char *type, *file;
	int type_len, file_len;
	unsigned long line;
};

static int tag_where(const char *text, struct where *w)
{
	const char *at = strchr(text, '@'), *colon = strrchr(text, ':');
	char *end;

	if (!at || !colon || colon < at || colon == at + 1)
		return 0;
	w->line = strtoul(colon + 1, &end, 10);
	if (*end || end == colon + 1 || !w->line)
		return 0;
	w->type = text;
	w->type_len = (int)(at - text);
	w->file = at + 1;
	w->file_len = (int)(colon - at - 1);
	return 1;
}

/* A finding is an error when it fails the check. */
static bool fails(const struct ctx *c, const struct report *r)
{
	return r->kind == ABI || (c->o->strict && r->kind == NAMES);
}

static void summary(struct ctx *c)
{
	size_t abi = 0, names = 0;

	for (size_t i = 0; i < c->nr; i++) {
		abi += c->r[i].kind == ABI;
		names += c->r[i].kind == NAMES;
	}
	if (c->nr)
		printf("%zu tag%s with an ABI mismatch, %zu with names-only differences; ",
		       abi, abi == 1 ? "" : "s", names);
	else
		printf("no tag has more than one layout; ");
	printf("%zu tag%s, %zu unit%s checked\n", c->tags, c->tags == 1 ? "" : "s", c->units,
	       c->units == 1 ? "" : "s");
}

/* The members of L that differ from the first layout: "trace, flags". */
static void differing(FILE *f, const struct layout *l)
{
	const char *sep = "";

	for (size_t k = 0; k < l->n; k++)
		if (l->m[k].mark != SAME) {
			fprintf(f, "%s%.*s", sep, l->m[k].name_len, l->m[k].name);
			sep = ", ";
		}
}

static void layout_words(FILE *f, const struct layout *l)
{
	if (l->parsed)
		fprintf(f, "size=%.*s align=%.*s", l->size_len, l->size, l->align_len, l->align);
	else
		fprintf(f, "unreadable: %.*s", (int)l->len, l->text);
}

/* GCC's diagnostic form, as editors and CI problem matchers read it (the
 * default):
 *	FILE:LINE: error: TYPE: ABI mismatch, N layouts
 *	FILE:LINE: note: layout 1 (size=8 align=4) in 2 units: a.c c.c
 *	FILE:LINE: note: b.c: layout 2 (size=24 align=8), differs in trace, flags
 * one note per unit of each layout but the first (the one most units saw). */
static void print_gcc(struct ctx *c)
{
	for (size_t i = 0; i < c->nr; i++) {
		struct report *r = &c->r[i];
		struct where w;
		char *loc;

		if (tag_where(r->text, &w)) {
			if (asprintf(&loc, "%.*s:%lu", w.file_len, w.file, w.line) < 0)
				loc = NULL;
		} else {
			w.type = r->text;
			w.type_len = (int)strlen(r->text);
			loc = strdup("uniqdctl");
		}
		if (!loc)
			oom();
		printf("%s: %s: %.*s: %s mismatch, %zu layouts\n", loc,
		       fails(c, r) ? "error" : "warning", w.type_len, w.type,
		       diff_word[r->kind], r->n);
		for (size_t j = 0; j < r->n; j++) {
			struct layout *l = &r->l[j];

			if (!j) {
				printf("%s: note: layout 1 (", loc);
				layout_words(stdout, l);
				printf(") in %zu unit%s:", l->nunits, l->nunits == 1 ? "" : "s");
				unit_list(c, l);
				continue;
			}
			for (size_t k = 0; k < l->nunits && k < SHOW_UNITS; k++) {
				char *u = unit_name(c, l->units[k]);

				printf("%s: note: %s: layout %zu (", loc, u, j + 1);
				layout_words(stdout, l);
				printf(")");
				if (l->parsed && l->n) {
					printf(", differs in ");
					differing(stdout, l);
				}
				putchar('\n');
				free(u);
			}
			if (l->nunits > SHOW_UNITS)
				printf("%s: note: and %zu more units with layout %zu\n", loc,
				       l->nunits - SHOW_UNITS, j + 1);
		}
		free(loc);
	}
	summary(c);
}

/* A file name as a SARIF artifact URI: relative names stay relative (to
 * the build's directory, %SRCROOT%), absolute ones are file:// URIs;
 * bytes outside RFC 3986's unreserved set and '/' are percent-encoded. */
static void json_uri(const char *p, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	char *s = xrealloc(NULL, 3 * n + 8), *o = s;

	if (n && p[0] == '/')
		o += sprintf(o, "file://");
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)p[i];

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		    strchr("-._~/", ch)) {
			*o++ = (char)ch;
		} else {
			*o++ = '%';
			*o++ = hex[ch >> 4];
			*o++ = hex[ch & 15];
		}
	}
	json_str(stdout, s, (size_t)(o - s));
	free(s);
}

static void sarif_location(const char *file, size_t file_len, unsigned long line)
{
	printf("{\"physicalLocation\":{\"artifactLocation\":{\"uri\":");
	json_uri(file, file_len);
	if (file_len && file[0] != '/')
		printf(",\"uriBaseId\":\"%%SRCROOT%%\"");
	printf("}");
	if (line)
		printf(",\"region\":{\"startLine\":%lu}", line);
	printf("}}");
}

/* SARIF 2.1.0, as GCC 13's -fdiagnostics-format=sarif-file writes it: one
 * run, one result per tag with more than one layout (rule
 * uniqd-layout-abi or uniqd-layout-names), located at the tag's
 * definition, with each unit of another layout than the first as a
 * related location. */
static void print_sarif(struct ctx *c)
{
	printf("{\"$schema\":\"https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/"
	       "schemas/sarif-schema-2.1.0.json\",\"version\":\"2.1.0\",\"runs\":[{\"tool\":"
	       "{\"driver\":{\"name\":\"uniqdctl layouts\",\"version\":\"%s\","
	       "\"informationUri\":\"https://github.com/uniqd/uniqd\",\"rules\":["
	       "{\"id\":\"uniqd-layout-abi\",\"shortDescription\":{\"text\":\"units of one build "
	       "saw a type with layouts that differ in ABI (size, alignment, an offset, a type)\"}},"
	       "{\"id\":\"uniqd-layout-names\",\"shortDescription\":{\"text\":\"units of one "
	       "build saw a type whose members differ in names alone\"}}]}},"
	       "\"originalUriBaseIds\":{\"%%SRCROOT%%\":{\"description\":{\"text\":\"the "
	       "directory the build compiled from\"}}},"
	       "\"invocations\":[{\"executionSuccessful\":true}],\"results\":[", UNIQD_VERSION);
	for (size_t i = 0; i < c->nr; i++) {
		struct report *r = &c->r[i];
		struct where w;
		int id = 0;

		if (!tag_where(r->text, &w)) {
			w.type = r->text;
			w.type_len = (int)strlen(r->text);
			w.file = NULL;
		}
		printf("%s{\"ruleId\":\"%s\",\"level\":\"%s\",\"message\":{\"text\":", i ? "," : "",
		       r->kind == ABI ? "uniqd-layout-abi" : "uniqd-layout-names",
		       fails(c, r) ? "error" : "warning");
		{
			char *m = NULL;
			size_t mn = 0;
			FILE *f = open_memstream(&m, &mn);

			if (!f)
				oom();
			fprintf(f, "%.*s: %s mismatch, %zu layouts: layout 1 (", w.type_len, w.type,
				diff_word[r->kind], r->n);
			layout_words(f, &r->l[0]);
			fprintf(f, ") in %zu unit%s", r->l[0].nunits, r->l[0].nunits == 1 ? "" : "s");
			for (size_t j = 1; j < r->n; j++) {
				fprintf(f, "; layout %zu (", j + 1);
				layout_words(f, &r->l[j]);
				fprintf(f, ") in %zu unit%s", r->l[j].nunits,
					r->l[j].nunits == 1 ? "" : "s");
				if (r->l[j].parsed && r->l[j].n) {
					fprintf(f, ", differs in ");
					differing(f, &r->l[j]);
				}
			}
			fclose(f);
			json_str(stdout, m, mn);
			free(m);
		}
		printf("},\"locations\":[");
		if (w.file)
			sarif_location(w.file, (size_t)w.file_len, w.line);
		printf("],\"relatedLocations\":[");
		for (size_t j = 1; j < r->n; j++)
			for (size_t k = 0; k < r->l[j].nunits; k++) {
				char *u = unit_name(c, r->l[j].units[k]);
				char *msg;

				printf("%s{\"id\":%d,", id ? "," : "", id);
				id++;
				/* sarif_location's object, with a message */
				printf("\"physicalLocation\":{\"artifactLocation\":{\"uri\":");
				json_uri(u, strlen(u));
				if (u[0] != '/')
					printf(",\"uriBaseId\":\"%%SRCROOT%%\"");
				printf("}},\"message\":{\"text\":");
				if (asprintf(&msg, "%s saw layout %zu of %zu", u, j + 1, r->n) < 0)
					oom();
				json_cstr(stdout, msg);
				printf("}}");
				free(msg);
				free(u);
			}
		printf("],\"properties\":{\"tag\":");
		json_cstr(stdout, r->text);
		printf(",\"handle\":\"0x%016" PRIx64 "\"}}", r->tag);
	}
	printf("]}]}\n");
}

static const char mark_char[] = { ' ', '~', '!' };

/* --format=text: each layout, its units and its members, a member that
 * differs from another layout's marked '!' (ABI) or '~' (names). */
static void print_text(struct ctx *c)
{
	for (size_t i = 0; i < c->nr; i++) {
		struct report *r = &c->r[i];

		printf("%s: %s mismatch, %zu layouts\n", r->text, diff_word[r->kind], r->n);
		for (size_t j = 0; j < r->n; j++) {
			struct layout *l = &r->l[j];

			if (l->parsed)
				printf("  layout %zu: size=%.*s align=%.*s, %zu unit%s:", j + 1,
				       l->size_len, l->size, l->align_len, l->align, l->nunits,
				       l->nunits == 1 ? "" : "s");
			else
				printf("  layout %zu (unreadable: %.*s), %zu unit%s:", j + 1,
				       (int)l->len, l->text, l->nunits, l->nunits == 1 ? "" : "s");
			unit_list(c, l);
			for (size_t k = 0; k < l->n; k++)
				printf("    %c %.*s %.*s\n", mark_char[l->m[k].mark], l->m[k].name_len,
				       l->m[k].name, l->m[k].rest_len, l->m[k].rest);
		}
	}
	summary(c);
}

static void print_json(struct ctx *c)
{
	size_t abi = 0, names = 0;

	for (size_t i = 0; i < c->nr; i++) {
		abi += c->r[i].kind == ABI;
		names += c->r[i].kind == NAMES;
	}
	printf("{\"pool\":");
	json_str(stdout, c->o->pool, strlen(c->o->pool));
	printf(",\"tags\":%zu,\"units\":%zu,\"abi_mismatches\":%zu,\"names_only\":%zu,"
	       "\"mismatches\":[", c->tags, c->units, abi, names);
	for (size_t i = 0; i < c->nr; i++) {
		struct report *r = &c->r[i];

		printf("%s{\"tag\":", i ? "," : "");
		json_str(stdout, r->text, strlen(r->text));
		printf(",\"handle\":\"0x%016" PRIx64 "\",\"kind\":\"%s\",\"layouts\":[",
		       r->tag, diff_word[r->kind]);
		for (size_t j = 0; j < r->n; j++) {
			struct layout *l = &r->l[j];

			printf("%s{\"handle\":\"0x%016" PRIx64 "\",\"layout\":", j ? "," : "",
			       l->handle);
			json_str(stdout, l->text, l->len);
			if (l->parsed) {
				printf(",\"size\":");
				json_str(stdout, l->size, l->size_len);
				printf(",\"align\":");
				json_str(stdout, l->align, l->align_len);
			}
			printf(",\"units\":[");
			for (size_t k = 0; k < l->nunits; k++) {
				char *u = unit_name(c, l->units[k]);

				printf("%s", k ? "," : "");
				json_str(stdout, u, strlen(u));
				free(u);
			}
			printf("],\"members\":[");
			for (size_t k = 0; k < l->n; k++) {
				printf("%s{\"name\":", k ? "," : "");
				json_str(stdout, l->m[k].name, l->m[k].name_len);
				printf(",\"member\":");
				json_str(stdout, l->m[k].rest, l->m[k].rest_len);
				printf(",\"differs\":");
				if (l->m[k].mark == SAME)
					printf("null}");
				else
					printf("\"%s\"}", diff_word[l->m[k].mark]);
			}
			printf("]}");
		}
		printf("]}");
	}
	/* Appended after "mismatches": readers of the older fields see them where they were. */
	printf("],\"units_seen\":%zu,\"left_out\":[", c->seen);
	for (size_t i = 0; i < c->nleft; i++) {
		printf("%s{\"unit\":", i ? "," : "");
		json_cstr(stdout, c->left[i].name);
		printf(",\"why\":");
		json_cstr(stdout, c->left[i].why);
		printf("}");
	}
	printf("]}\n");
}

int layouts_format_parse(const char *word, enum layouts_format *f)
{
	static const char *const names[] = {
		[LAYOUTS_TEXT] = "text", [LAYOUTS_GCC] = "gcc", [LAYOUTS_JSON] = "json",
		[LAYOUTS_SARIF] = "sarif",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(word, names[i])) {
			*f = (enum layouts_format)i;
			return 0;
		}
	return -1;
}

int cmd_layouts(const struct layouts_opts *o, int argc, char **argv)
{
	struct uses u = { 0 };
	struct ctx c = { .o = o };
	int status = 0;
	uint32_t cls;

	(void)argv;
	if (argc) {
		fprintf(stderr, "uniqdctl: layouts takes no arguments (the pool is --pool)\n");
		return EXIT_ERROR;
	}
	c.pool = uniqd_open_ex(o->device, o->pool, strlen(o->pool), UNIQD_OPEN_EXISTING, NULL);
	if (!c.pool)
		die_uniqd("open");
	cls = uniqd_class_n(c.pool, GK_CLASS_USE, strlen(GK_CLASS_USE), UNIQD_CLASS_FIND);
	if (!cls && errno != ENOENT)
		die_uniqd("class " GK_CLASS_USE);
	if (cls && uniqd_foreach(c.pool, cls, 0, collect, &u) < 0)
		die_uniqd("walk " GK_CLASS_USE);
	find(&c, &u);
	find_left(&c);
	note_left(&c, u.malformed);
	switch (o->format) {
	case LAYOUTS_TEXT: print_text(&c); break;
	case LAYOUTS_GCC: print_gcc(&c); break;
	case LAYOUTS_JSON: print_json(&c); break;
	case LAYOUTS_SARIF: print_sarif(&c); break;
	}
	for (size_t i = 0; i < c.nr; i++)
		if (fails(&c, &c.r[i]))
			status = EXIT_MISMATCH;
	fflush(stdout);
	uniqd_close(c.pool);
	return status;
}
