// SPDX-License-Identifier: GPL-2.0
/*
 * uniqdctl symbols: every func.func and llvm.func symbol that the modules
 * of a build saw with different function types, from the mlir.symbol
 * records the MLIR plugin's --uniqd-symbols interns: (module, name, type,
 * kind, loc) handles. Handles are canonical, so grouping by name and
 * counting distinct type handles is integer work; only the symbols that
 * differ are resolved to text, and reported as a compiler reports:
 *
 *	b.mlir:3: error: 'ext' is declared here with type (i64) -> i64, but
 *	    a.mlir:1 defines it with type (i32) -> i32
 *
 * (one line). A func.func is compared with func.func records, an llvm.func
 * with llvm.func ones: their types are of different dialects until
 * func.func is lowered. The reference of a symbol is its definition, or
 * when it has none the type most of its records have.
 *
 * Exit status: 0 no mismatch, 1 a mismatch, 2 an error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libuniqd.h"
#include "../mlir/mlir_keys.h"
#include "json.h"
#include "symbols.h"

#define EXIT_MISMATCH	1
#define EXIT_ERROR	2

struct rec {
	struct mk_symbol s;
	int family;		/* 0 func.func, 1 llvm.func, 2 unknown */
	int def;		/* a definition */
};

struct recs {
	struct rec *r;
	size_t n, cap;
	size_t malformed;
};

/* Resolved kinds: few distinct handles, looked up once each. */
struct kinds {
	uint64_t h[16];
	int family[16], def[16];
	size_t n;
};

struct ctx {
	const struct symbols_opts *o;
	uniqd_pool *pool;
	struct kinds k;
	size_t symbols, modules, mismatched;
	int json_first;
};

static void *sym_xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p) {
		fprintf(stderr, "uniqdctl: out of memory\n");
		exit(EXIT_ERROR);
	}
	return p;
}

static void sym_die(const char *what)
{
	fprintf(stderr, "uniqdctl: symbols: %s: %s\n", what, uniqd_last_error());
	exit(EXIT_ERROR);
}

static int sym_collect(void *arg, uint64_t handle, uint32_t class_id, const void *data,
		       size_t len)
{
	struct recs *r = arg;

	(void)handle;
	(void)class_id;
	if (len != MK_SYMBOL_LEN) {
		r->malformed++;
		return 0;
	}
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 256;
		r->r = sym_xrealloc(r->r, r->cap * sizeof(*r->r));
	}
	memset(&r->r[r->n], 0, sizeof(r->r[r->n]));
	mk_symbol_decode(&r->r[r->n++].s, data);
	return 0;
}

/* HANDLE's content, NUL-terminated; "<0x...>" when it cannot be read. */
static char *sym_text(struct ctx *c, uint64_t h, size_t *len)
{
	char buf[64];
	char *s = h ? uniqd_resolve_alloc(c->pool, h, len, NULL) : NULL;

	if (s)
		return s;
	snprintf(buf, sizeof(buf), "<0x%016" PRIx64 ">", h);
	*len = strlen(buf);
	return strdup(buf);
}

/*
 * A type's printed form: its content, each MK_REF and handle in it (the
 * plugin's key=handles) replaced by that handle's printed form.
 */
static char *type_text(struct ctx *c, uint64_t h, int depth)
{
	size_t len, n = 0;
	char *s = sym_text(c, h, &len), *out;

	if (!memchr(s, MK_REF, len) || depth > 64)
		return s;
	out = sym_xrealloc(NULL, len + 1);
	for (size_t i = 0; i < len;) {
		if ((unsigned char)s[i] == MK_REF && i + MK_REF_LEN <= len) {
			char *sub = type_text(c, uq_le_get64((const uint8_t *)s + i + 1), depth + 1);
			size_t sl = strlen(sub);

			out = sym_xrealloc(out, n + sl + (len - i) + 1);
			memcpy(out + n, sub, sl);
			n += sl;
			free(sub);
			i += MK_REF_LEN;
		} else {
			out[n++] = s[i++];
		}
	}
	out[n] = '\0';
	free(s);
	return out;
}

static void kind_of(struct ctx *c, struct rec *r)
{
	size_t i, len;
	char *s;

	for (i = 0; i < c->k.n; i++)
		if (c->k.h[i] == r->s.kind)
			break;
	if (i == c->k.n) {
		s = sym_text(c, r->s.kind, &len);
		if (i < sizeof(c->k.h) / sizeof(c->k.h[0]))
			c->k.n++;
		else
			i--;	/* more kinds than there are: the last slot is reused */
		c->k.h[i] = r->s.kind;
		c->k.family[i] = !strncmp(s, "func.func ", 10) ? 0 :
				 !strncmp(s, "llvm.func ", 10) ? 1 : 2;
		c->k.def[i] = len > 11 && !strcmp(s + len - 11, " definition");
		free(s);
	}
	r->family = c->k.family[i];
	r->def = c->k.def[i];
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_h64(const void *a, const void *b)
{
	return cmp_u64(*(const uint64_t *)a, *(const uint64_t *)b);
}

/* By name, family, then type, definitions first, then where. */
static int cmp_rec(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	int c = cmp_u64(x->s.name, y->s.name);

	if (!c)
		c = x->family - y->family;
	if (!c)
		c = cmp_u64(x->s.type, y->s.type);
	if (!c)
		c = y->def - x->def;
	if (!c)
		c = cmp_u64(x->s.loc, y->s.loc);
	return c ? c : cmp_u64(x->s.module, y->s.module);
}

/* One symbol of one family: records R[0..N), sorted by type. */
static void check_group(struct ctx *c, struct rec *r, size_t n)
{
	size_t ref = 0, best = 0, types = 0;
	char *name, *reftype, *refloc;
	size_t len;

	for (size_t i = 0; i < n; i++) {
		size_t run = 1;

		if (i && r[i].s.type == r[i - 1].s.type)
			continue;
		types++;
		while (i + run < n && r[i + run].s.type == r[i].s.type)
			run++;
		/* A definition is the reference; else the commonest type. */
		if (r[i].def && !r[ref].def) {
			ref = i;
			best = (size_t)-1;
		} else if (!r[ref].def && run > best) {
			ref = i;
			best = run;
		}
	}
	if (types < 2)
		return;
	c->mismatched++;
	name = sym_text(c, r[0].s.name, &len);
	reftype = type_text(c, r[ref].s.type, 0);
	refloc = sym_text(c, r[ref].s.loc, &len);
	for (size_t i = 0; i < n; i++) {
		char *type, *loc;

		if (r[i].s.type == r[ref].s.type && !c->o->json)
			continue;
		type = type_text(c, r[i].s.type, 0);
		loc = sym_text(c, r[i].s.loc, &len);
		if (c->o->json) {
			printf("%s{\"symbol\":", c->json_first ? "" : ",");
			c->json_first = 0;
			json_cstr(stdout, name);
			printf(",\"family\":\"%s\",\"loc\":", r[i].family == 1 ? "llvm.func" : "func.func");
			json_cstr(stdout, loc);
			printf(",\"definition\":%s,\"type\":", r[i].def ? "true" : "false");
			json_cstr(stdout, type);
			printf(",\"differs\":%s}", r[i].s.type == r[ref].s.type ? "false" : "true");
		} else {
			printf("%s: error: '%s' is %s here with type %s, but %s %s it with type %s\n",
			       loc, name, r[i].def ? "defined" : "declared", type, refloc,
			       r[ref].def ? "defines" : "declares", reftype);
		}
		free(type);
		free(loc);
	}
	free(name);
	free(reftype);
	free(refloc);
}

int cmd_symbols(const struct symbols_opts *o, int argc, char **argv)
{
	struct recs r = { 0 };
	struct ctx c = { .o = o, .json_first = 1 };
	uint64_t *mods;
	uint32_t cls;

	(void)argv;
	if (argc) {
		fprintf(stderr, "uniqdctl: symbols takes no arguments (the pool is --pool)\n");
		return EXIT_ERROR;
	}
	c.pool = uniqd_open_ex(o->device, o->pool, strlen(o->pool), UNIQD_OPEN_EXISTING, NULL);
	if (!c.pool)
		sym_die("open");
	cls = uniqd_class_n(c.pool, MK_CLASS_SYMBOL, strlen(MK_CLASS_SYMBOL), UNIQD_CLASS_FIND);
	if (!cls && errno != ENOENT)
		sym_die("class " MK_CLASS_SYMBOL);
	if (cls && uniqd_foreach(c.pool, cls, 0, sym_collect, &r) < 0)
		sym_die("walk " MK_CLASS_SYMBOL);
	if (!r.n)
		fprintf(stderr, "uniqdctl: note: pool '%s' holds no " MK_CLASS_SYMBOL " records "
			"(was mlir-opt run with the plugin's uniqd-symbols{pool=%s}?)\n",
			o->pool, o->pool);
	if (r.malformed)
		fprintf(stderr, "uniqdctl: note: %zu " MK_CLASS_SYMBOL " records are not %d bytes; "
			"skipped\n", r.malformed, MK_SYMBOL_LEN);

	for (size_t i = 0; i < r.n; i++)
		kind_of(&c, &r.r[i]);
	qsort(r.r, r.n, sizeof(*r.r), cmp_rec);

	if (o->json) {
		printf("{\"pool\":");
		json_cstr(stdout, o->pool);
		printf(",\"reports\":[");
	}
	for (size_t i = 0; i < r.n;) {
		size_t j = i;

		while (j < r.n && r.r[j].s.name == r.r[i].s.name && r.r[j].family == r.r[i].family)
			j++;
		if (i == 0 || r.r[i].s.name != r.r[i - 1].s.name)
			c.symbols++;
		check_group(&c, r.r + i, j - i);
		i = j;
	}
	/* Modules: distinct module handles. */
	mods = sym_xrealloc(NULL, r.n * sizeof(*mods));
	for (size_t i = 0; i < r.n; i++)
		mods[i] = r.r[i].s.module;
	qsort(mods, r.n, sizeof(*mods), cmp_h64);
	for (size_t i = 0; i < r.n; i++)
		c.modules += !i || mods[i] != mods[i - 1];
	free(mods);
	if (o->json) {
		printf("],\"symbols\":%zu,\"modules\":%zu,\"mismatches\":%zu}\n", c.symbols,
		       c.modules, c.mismatched);
	} else if (c.mismatched) {
		printf("%zu symbol%s with mismatched types; %zu symbol%s, %zu module%s checked\n",
		       c.mismatched, c.mismatched == 1 ? "" : "s", c.symbols,
		       c.symbols == 1 ? "" : "s", c.modules, c.modules == 1 ? "" : "s");
	} else {
		printf("no symbol has more than one type; %zu symbol%s, %zu module%s checked\n",
		       c.symbols, c.symbols == 1 ? "" : "s", c.modules, c.modules == 1 ? "" : "s");
	}
	fflush(stdout);
	free(r.r);
	uniqd_close(c.pool);
	return c.mismatched ? EXIT_MISMATCH : 0;
}
