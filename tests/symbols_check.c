// SPDX-License-Identifier: GPL-2.0
/*
 * `uniqdctl symbols` in the VM, against real pools: the guest has no
 * mlir-opt, so this program interns the MLIR plugin's classes by hand, in
 * the plugin's formats (tools/mlir/mlir_keys.h; the types are the printed
 * forms the plugin interns for tests/mlir/), and checks the checker's
 * report and exit status: a planted declaration/definition mismatch, a
 * clean pair, func.func and llvm.func kept apart, a symbol without a
 * definition (the commonest type is the reference), a key=handles type,
 * JSON, no records, no pool. tools/testing/mlir-check.sh runs the plugin
 * itself natively.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "libuniqd.h"
#include "lib/ut_ctl.h"
#include "../tools/mlir/mlir_keys.h"

struct mlir {
	uniqd_pool *p;
	uint32_t module, name, kind, loc, symbol, function, llvm_func, integer;
};

static int open_mlir(struct mlir *m, const char *pool)
{
	m->p = uniqd_open(pool, 0);
	if (!m->p)
		return -1;
	m->module = uniqd_class(m->p, MK_CLASS_MODULE);
	m->name = uniqd_class(m->p, MK_CLASS_NAME);
	m->kind = uniqd_class(m->p, MK_CLASS_KIND);
	m->loc = uniqd_class(m->p, MK_CLASS_LOC);
	m->symbol = uniqd_class(m->p, MK_CLASS_SYMBOL);
	m->function = uniqd_class(m->p, "builtin.function");
	m->llvm_func = uniqd_class(m->p, "llvm.func");
	m->integer = uniqd_class(m->p, "builtin.integer");
	return m->module && m->name && m->kind && m->loc && m->symbol && m->function &&
	       m->llvm_func && m->integer ? 0 : -1;
}

/* What --uniqd-symbols publishes for one symbol one module sees. */
static int sees(struct mlir *m, const char *module, const char *name, uint32_t type_class,
		const char *type, const char *kind, const char *loc)
{
	unsigned char rec[MK_SYMBOL_LEN];
	struct mk_symbol s = {
		.module = uniqd_intern_str(m->p, m->module, module),
		.name = uniqd_intern_str(m->p, m->name, name),
		.type = uniqd_intern_str(m->p, type_class, type),
		.kind = uniqd_intern_str(m->p, m->kind, kind),
		.loc = uniqd_intern_str(m->p, m->loc, loc),
	};

	if (!s.module || !s.name || !s.type || !s.kind || !s.loc)
		return -1;
	mk_symbol_encode(rec, &s);
	return uniqd_intern(m->p, m->symbol, rec, sizeof(rec)) ? 0 : -1;
}

static int lines(const char *text, const char *part)
{
	int n = 0;

	for (const char *p = text; (p = strstr(p, part)); p++)
		n++;
	return n;
}

int main(void)
{
	static struct ut_run r;
	struct mlir planted, clean, families, nodef, handles, empty;

	th_init("symbols");

	th_case("a planted mismatch is reported, exit 1") {
		CHECK(!open_mlir(&planted, "symbols.planted"), "%s", uniqd_last_error());
		CHECK(!sees(&planted, "def.mlir", "ext", planted.function, "(i32) -> i32",
			    MK_KIND_FUNC_DEF, "def.mlir:3") &&
		      !sees(&planted, "def.mlir", "scale", planted.function,
			    "(tensor<4x8xf32>, f32) -> tensor<4x8xf32>", MK_KIND_FUNC_DEF, "def.mlir:9") &&
		      !sees(&planted, "use_bad.mlir", "ext", planted.function, "(i64) -> i64",
			    MK_KIND_FUNC_DECL, "use_bad.mlir:3") &&
		      !sees(&planted, "use_bad.mlir", "scale", planted.function,
			    "(tensor<4x8xf32>, f32) -> tensor<4x8xf32>", MK_KIND_FUNC_DECL,
			    "use_bad.mlir:4") &&
		      !sees(&planted, "use_good.mlir", "ext", planted.function, "(i32) -> i32",
			    MK_KIND_FUNC_DECL, "use_good.mlir:2"), "%s", uniqd_last_error());
		CHECK(ut_ctl(&r, "--pool", "symbols.planted", "symbols", NULL) == 1,
		      "status %d: %s", r.status, r.out);
		CHECK(ut_has_line(r.out, "use_bad.mlir:3: error: 'ext' is declared here with type "
			       "(i64) -> i64, but def.mlir:3 defines it with type (i32) -> i32"),
		      "%s", r.out);
		CHECK(lines(r.out, ": error: ") == 1 && !strstr(r.out, "scale"), "%s", r.out);
		CHECK(ut_has_line(r.out, "1 symbol with mismatched types; 2 symbols, 3 modules checked"),
		      "%s", r.out);
		CHECK(!r.err[0], "stderr %s", r.err);
	}

	th_case("--json: every record of the mismatched symbol") {
		CHECK(ut_ctl(&r, "--pool", "symbols.planted", "--json", "symbols", NULL) == 1,
		      "status %d", r.status);
		CHECK(!strncmp(r.out, "{\"pool\":\"symbols.planted\",\"reports\":[", 37), "%.200s",
		      r.out);
		CHECK(strstr(r.out, "{\"symbol\":\"ext\",\"family\":\"func.func\",\"loc\":\"use_bad.mlir:3\","
			     "\"definition\":false,\"type\":\"(i64) -> i64\",\"differs\":true}") &&
		      strstr(r.out, "\"loc\":\"def.mlir:3\",\"definition\":true,\"type\":\"(i32) -> i32\","
			     "\"differs\":false}") &&
		      strstr(r.out, "\"loc\":\"use_good.mlir:2\""), "%s", r.out);
		CHECK(strstr(r.out, "],\"symbols\":2,\"modules\":3,\"mismatches\":1}\n"), "%s", r.out);
	}

	th_case("a clean pair reports nothing, exit 0") {
		CHECK(!open_mlir(&clean, "symbols.clean"), "%s", uniqd_last_error());
		CHECK(!sees(&clean, "def.mlir", "ext", clean.function, "(i32) -> i32",
			    MK_KIND_FUNC_DEF, "def.mlir:3") &&
		      !sees(&clean, "use_good.mlir", "ext", clean.function, "(i32) -> i32",
			    MK_KIND_FUNC_DECL, "use_good.mlir:2"), "%s", uniqd_last_error());
		CHECK(ut_ctl(&r, "--pool", "symbols.clean", "symbols", NULL) == 0, "status %d: %s",
		      r.status, r.out);
		CHECK(!strcmp(r.out, "no symbol has more than one type; 1 symbol, 2 modules checked\n"),
		      "%s", r.out);
	}

	th_case("func.func and llvm.func of one name are not compared") {
		CHECK(!open_mlir(&families, "symbols.families"), "%s", uniqd_last_error());
		CHECK(!sees(&families, "a.mlir", "count", families.function, "(i64) -> i32",
			    MK_KIND_FUNC_DEF, "a.mlir:1") &&
		      !sees(&families, "b.mlir", "count", families.llvm_func,
			    "!llvm.func<i32 (ptr, i64)>", MK_KIND_LLVM_DEF, "b.mlir:2") &&
		      !sees(&families, "c.mlir", "count", families.llvm_func,
			    "!llvm.func<i32 (ptr, i64)>", MK_KIND_LLVM_DECL, "c.mlir:2"),
		      "%s", uniqd_last_error());
		CHECK(ut_ctl(&r, "--pool", "symbols.families", "symbols", NULL) == 0, "status %d: %s",
		      r.status, r.out);
		CHECK(!sees(&families, "d.mlir", "count", families.llvm_func,
			    "!llvm.func<i32 (ptr, i32)>", MK_KIND_LLVM_DECL, "d.mlir:2"),
		      "%s", uniqd_last_error());
		CHECK(ut_ctl(&r, "--pool", "symbols.families", "symbols", NULL) == 1, "status %d: %s",
		      r.status, r.out);
		CHECK(ut_has_line(r.out, "d.mlir:2: error: 'count' is declared here with type "
			       "!llvm.func<i32 (ptr, i32)>, but b.mlir:2 defines it with type "
			       "!llvm.func<i32 (ptr, i64)>") && lines(r.out, ": error: ") == 1,
		      "%s", r.out);
	}

	th_case("without a definition the commonest type is the reference") {
		CHECK(!open_mlir(&nodef, "symbols.nodef"), "%s", uniqd_last_error());
		CHECK(!sees(&nodef, "a.mlir", "f", nodef.function, "(i8) -> ()", MK_KIND_FUNC_DECL,
			    "a.mlir:1") &&
		      !sees(&nodef, "b.mlir", "f", nodef.function, "(i16) -> ()", MK_KIND_FUNC_DECL,
			    "b.mlir:1") &&
		      !sees(&nodef, "c.mlir", "f", nodef.function, "(i16) -> ()", MK_KIND_FUNC_DECL,
			    "c.mlir:1"), "%s", uniqd_last_error());
		CHECK(ut_ctl(&r, "--pool", "symbols.nodef", "symbols", NULL) == 1, "status %d: %s",
		      r.status, r.out);
		CHECK(ut_has_line(r.out, "a.mlir:1: error: 'f' is declared here with type (i8) -> (), "
			       "but b.mlir:1 declares it with type (i16) -> ()") &&
		      lines(r.out, ": error: ") == 1, "%s", r.out);
	}

	th_case("a key=handles type is printed whole") {
		unsigned char key[64];
		uint64_t i32;
		size_t n = 0;

		CHECK(!open_mlir(&handles, "symbols.handles"), "%s", uniqd_last_error());
		i32 = uniqd_intern_str(handles.p, handles.integer, "i32");
		/* "(" REF(i32) ") -> " REF(i32): the plugin's key of (i32) -> i32. */
		key[n++] = '(';
		key[n++] = MK_REF;
		uq_le_put64(key + n, i32);
		n += 8;
		memcpy(key + n, ") -> ", 5);
		n += 5;
		key[n++] = MK_REF;
		uq_le_put64(key + n, i32);
		n += 8;
		CHECK(i32 && uniqd_intern(handles.p, handles.function, key, n), "%s",
		      uniqd_last_error());
		CHECK(!sees(&handles, "use.mlir", "g", handles.function, "(i64) -> i64",
			    MK_KIND_FUNC_DECL, "use.mlir:2"), "%s", uniqd_last_error());
		/* The definition, its type by the handle-keyed content. */
		{
			unsigned char rec[MK_SYMBOL_LEN];
			struct mk_symbol s = {
				.module = uniqd_intern_str(handles.p, handles.module, "def.mlir"),
				.name = uniqd_intern_str(handles.p, handles.name, "g"),
				.type = uniqd_intern(handles.p, handles.function, key, n),
				.kind = uniqd_intern_str(handles.p, handles.kind, MK_KIND_FUNC_DEF),
				.loc = uniqd_intern_str(handles.p, handles.loc, "def.mlir:1"),
			};

			mk_symbol_encode(rec, &s);
			CHECK(uniqd_intern(handles.p, handles.symbol, rec, sizeof(rec)), "%s",
			      uniqd_last_error());
		}
		CHECK(ut_ctl(&r, "--pool", "symbols.handles", "symbols", NULL) == 1, "status %d: %s",
		      r.status, r.out);
		CHECK(ut_has_line(r.out, "use.mlir:2: error: 'g' is declared here with type "
			       "(i64) -> i64, but def.mlir:1 defines it with type (i32) -> i32"),
		      "%s", r.out);
	}

	th_case("a pool without mlir.symbol records: a note, exit 0") {
		CHECK((empty.p = uniqd_open("symbols.empty", 0)) != NULL, "%s", uniqd_last_error());
		CHECK(ut_ctl(&r, "--pool", "symbols.empty", "symbols", NULL) == 0, "status %d", r.status);
		CHECK(strstr(r.err, "holds no mlir.symbol records") &&
		      ut_has_line(r.out, "no symbol has more than one type; 0 symbols, 0 modules checked"),
		      "%s / %s", r.out, r.err);
	}

	th_case("errors exit 2") {
		CHECK(ut_ctl(&r, "--pool", "symbols.absent", "symbols", NULL) == 2 &&
		      strstr(r.err, "uniqdctl: symbols: open:"), "status %d: %s", r.status, r.err);
		CHECK(ut_ctl(&r, "--pool", "symbols.planted", "symbols", "extra", NULL) == 2,
		      "status %d", r.status);
	}

	uniqd_close(planted.p);
	uniqd_close(clean.p);
	uniqd_close(families.p);
	uniqd_close(nodef.p);
	uniqd_close(handles.p);
	uniqd_close(empty.p);
	return th_finish();
}
