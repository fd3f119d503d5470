// SPDX-License-Identifier: GPL-2.0
/*
 * `uniqdctl layouts` in the VM, against real pools: the guest has no
 * compiler, so this program interns the GCC plugin's classes by hand,
 * in the plugin's formats (tools/gcc-plugin/gcc_keys.h; the layout keys
 * are the ones the plugin writes for tests/gcc-plugin/), and checks the
 * checker's report and exit status: a planted ABI mismatch (in the
 * default output, GCC's diagnostic form, and in --format=text's report),
 * names-only differences (with and without --strict, and inside an inline
 * anonymous struct), a clean build, many units, no records, no pool.
 * tools/testing/plugin-check.sh runs the plugin itself natively.
 */
#define _GNU_SOURCE
#include <errno.h>
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
#include "../tools/gcc-plugin/gcc_keys.h"

/* The plugin's keys for tests/gcc-plugin/ (a.c; b.c with -DCFG_TRACE
 * -DSTAMP_PUBLIC). */
#define CFG_TAG		"struct cfg@inc/cfg.h:6"
#define CFG_AT		"inc/cfg.h:6: "		/* where GCC's form puts it */
#define CFG_PLAIN	CFG_TAG " size=8 align=4 { id @0:32 int; flags @32:32 unsigned int; }"
#define CFG_TRACE	CFG_TAG " size=24 align=8 { id @0:32 int; trace @64:64 *char; " \
			"flags @128:32 unsigned int; }"
#define STAMP_TAG	"struct stamp@inc/stamp.h:7"
#define STAMP_AT	"inc/stamp.h:7: "
#define STAMP_PRIV	STAMP_TAG " size=16 align=8 { sec @0:64 long int; __zone_off @64:64 long int; }"
#define STAMP_PUB	STAMP_TAG " size=16 align=8 { sec @0:64 long int; zone_off @64:64 long int; }"
#define POINT_TAG	"struct point@inc/shapes.h:9"
#define POINT		POINT_TAG " size=8 align=4 { x @0:32 int; y @32:32 int; }"
#define COLOR_TAG	"enum color@inc/shapes.h:8"
#define COLOR		COLOR_TAG " size=4 align=4 { RED=0; GREEN=5; BLUE=6; }"
/* Inline anonymous members: a renamed nested member is not an ABI change. */
#define WRAP_TAG	"struct wrap@inc/wrap.h:3"
#define WRAP_AT		"inc/wrap.h:3: "
#define WRAP_AB		WRAP_TAG " size=8 align=4 { in @0:64 struct { a @0:32 int; b @32:32 int; }; }"
#define WRAP_AC		WRAP_TAG " size=8 align=4 { in @0:64 struct { a @0:32 int; c @32:32 int; }; }"
#define WRAP_AU		WRAP_TAG " size=8 align=4 { in @0:64 struct { a @0:32 int; b @32:32 unsigned int; }; }"

struct gcc {
	uniqd_pool *p;
	uint32_t unit, tag, layout, use;
};

static int open_gcc(struct gcc *g, const char *pool)
{
	g->p = uniqd_open(pool, 0);
	if (!g->p)
		return -1;
	g->unit = uniqd_class(g->p, GK_CLASS_UNIT);
	g->tag = uniqd_class(g->p, GK_CLASS_TAG);
	g->layout = uniqd_class(g->p, GK_CLASS_LAYOUT);
	g->use = uniqd_class(g->p, GK_CLASS_USE);
	return g->unit && g->tag && g->layout && g->use ? 0 : -1;
}

/* What the plugin publishes for one type one unit saw. */
static int saw(struct gcc *g, const char *unit, const char *tag, const char *layout)
{
	unsigned char rec[GK_USE_LEN];
	struct gk_use u = {
		.unit = uniqd_intern_str(g->p, g->unit, unit),
		.tag = uniqd_intern_str(g->p, g->tag, tag),
		.layout = uniqd_intern_str(g->p, g->layout, layout),
	};

	if (!u.unit || !u.tag || !u.layout)
		return -1;
	gk_use_encode(rec, &u);
	return uniqd_intern(g->p, g->use, rec, sizeof(rec)) ? 0 : -1;
}

int main(void)
{
	static struct ut_run r;
	struct gcc planted, names, clean, many, empty;

	th_init("layouts");

	th_case("a planted ABI mismatch is reported, exit 1") {
		CHECK(!open_gcc(&planted, "layouts.planted"), "%s", uniqd_last_error());
		CHECK(!saw(&planted, "a.c", CFG_TAG, CFG_PLAIN) &&
		      !saw(&planted, "a.c", STAMP_TAG, STAMP_PRIV) &&
		      !saw(&planted, "a.c", POINT_TAG, POINT) &&
		      !saw(&planted, "a.c", COLOR_TAG, COLOR) &&
		      !saw(&planted, "b.c", CFG_TAG, CFG_TRACE) &&
		      !saw(&planted, "b.c", STAMP_TAG, STAMP_PUB) &&
		      !saw(&planted, "b.c", POINT_TAG, POINT) &&
		      !saw(&planted, "c.c", CFG_TAG, CFG_PLAIN), "%s", uniqd_last_error());
		CHECK(ut_ctl(&r, "--pool", "layouts.planted", "layouts", NULL) == 1,
		      "status %d: %s", r.status, r.out);
		CHECK(ut_has_line(r.out, CFG_AT "error: struct cfg: ABI mismatch, 2 layouts") &&
		      ut_has_line(r.out, CFG_AT "note: layout 1 (size=8 align=4) in 2 units: a.c c.c") &&
		      ut_has_line(r.out, CFG_AT "note: b.c: layout 2 (size=24 align=8), differs in "
			       "trace, flags"), "%s", r.out);
		/* One unit each: layout 1 is the one of the lower handle. */
		CHECK(ut_has_line(r.out, STAMP_AT "warning: struct stamp: names-only mismatch, "
			       "2 layouts") &&
		      (ut_has_line(r.out, STAMP_AT "note: b.c: layout 2 (size=16 align=8), differs in "
				"zone_off") ||
		       ut_has_line(r.out, STAMP_AT "note: a.c: layout 2 (size=16 align=8), differs in "
				"__zone_off")), "%s", r.out);
		CHECK(!strstr(r.out, "struct point") && !strstr(r.out, "enum color"), "%s", r.out);
		CHECK(ut_has_line(r.out, "1 tag with an ABI mismatch, 1 with names-only differences; "
			       "4 tags, 3 units checked"), "%s", r.out);
		CHECK(!r.err[0], "stderr %s", r.err);
	}

	th_case("--format=text: each layout member by member") {
		CHECK(ut_ctl(&r, "--pool", "layouts.planted", "--format=text", "layouts", NULL) == 1,
		      "status %d: %s", r.status, r.out);
		CHECK(ut_has_line(r.out, CFG_TAG ": ABI mismatch, 2 layouts"), "%s", r.out);
		CHECK(ut_has_line(r.out, "  layout 1: size=8 align=4, 2 units: a.c c.c"), "%s", r.out);
		CHECK(ut_has_line(r.out, "  layout 2: size=24 align=8, 1 unit: b.c"), "%s", r.out);
		CHECK(ut_has_line(r.out, "      id @0:32 int") &&
		      ut_has_line(r.out, "    ! trace @64:64 *char") &&
		      ut_has_line(r.out, "    ! flags @128:32 unsigned int"), "%s", r.out);
		CHECK(ut_has_line(r.out, STAMP_TAG ": names-only mismatch, 2 layouts") &&
		      ut_has_line(r.out, "    ~ zone_off @64:64 long int"), "%s", r.out);
		CHECK(!strstr(r.out, POINT_TAG) && !strstr(r.out, COLOR_TAG), "%s", r.out);
		CHECK(ut_has_line(r.out, "1 tag with an ABI mismatch, 1 with names-only differences; "
			       "4 tags, 3 units checked"), "%s", r.out);
		CHECK(!r.err[0], "stderr %s", r.err);
	}

	th_case("--json says the same") {
		CHECK(ut_ctl(&r, "--pool", "layouts.planted", "--json", "layouts", NULL) == 1,
		      "status %d", r.status);
		static const char head[] = "{\"pool\":\"layouts.planted\",\"tags\":4,\"units\":3,"
			"\"abi_mismatches\":1,\"names_only\":1,\"mismatches\":[";

		CHECK(!strncmp(r.out, head, sizeof(head) - 1), "%.200s", r.out);
		CHECK(strstr(r.out, "{\"tag\":\"" CFG_TAG "\",") &&
		      strstr(r.out, "\"kind\":\"ABI\"") && strstr(r.out, "\"kind\":\"names-only\""),
		      "%s", r.out);
		CHECK(strstr(r.out, "\"layout\":\"" CFG_TRACE "\""), "%s", r.out);
		CHECK(strstr(r.out, "\"units\":[\"a.c\",\"c.c\"]"), "%s", r.out);
		CHECK(strstr(r.out, "{\"name\":\"trace\",\"member\":\"@64:64 *char\",\"differs\":\"ABI\"}"),
		      "%s", r.out);
		CHECK(strlen(r.out) > 2 && !strcmp(r.out + strlen(r.out) - 3, "]}\n"), "%s", r.out);
	}

	th_case("names-only differences pass, fail under --strict") {
		CHECK(!open_gcc(&names, "layouts.names"), "%s", uniqd_last_error());
		CHECK(!saw(&names, "a.c", STAMP_TAG, STAMP_PRIV) &&
		      !saw(&names, "b.c", STAMP_TAG, STAMP_PUB) &&
		      !saw(&names, "a.c", WRAP_TAG, WRAP_AB) &&
		      !saw(&names, "b.c", WRAP_TAG, WRAP_AC), "%s", uniqd_last_error());
		CHECK(ut_ctl(&r, "--pool", "layouts.names", "layouts", NULL) == 0, "status %d: %s",
		      r.status, r.out);
		CHECK(ut_has_line(r.out, WRAP_AT "warning: struct wrap: names-only mismatch, 2 layouts"),
		      "%s", r.out);
		CHECK(ut_has_line(r.out, "0 tags with an ABI mismatch, 2 with names-only differences; "
			       "2 tags, 2 units checked"), "%s", r.out);
		CHECK(ut_ctl(&r, "--pool", "layouts.names", "--format", "text", "layouts", NULL) == 0,
		      "status %d: %s", r.status, r.out);
		CHECK(ut_has_line(r.out, WRAP_TAG ": names-only mismatch, 2 layouts") &&
		      ut_has_line(r.out, "    ~ in @0:64 struct { a @0:32 int; c @32:32 int; }"),
		      "%s", r.out);
		CHECK(ut_has_line(r.out, "0 tags with an ABI mismatch, 2 with names-only differences; "
			       "2 tags, 2 units checked"), "%s", r.out);
		CHECK(ut_ctl(&r, "--pool", "layouts.names", "--strict", "layouts", NULL) == 1 &&
		      ut_has_line(r.out, WRAP_AT "error: struct wrap: names-only mismatch, 2 layouts"),
		      "--strict: status %d: %s", r.status, r.out);
		/* The same nested member with another type is an ABI change. */
		CHECK(!saw(&names, "c.c", WRAP_TAG, WRAP_AU), "%s", uniqd_last_error());
		CHECK(ut_ctl(&r, "--pool", "layouts.names", "layouts", NULL) == 1, "status %d: %s",
		      r.status, r.out);
		CHECK(ut_has_line(r.out, WRAP_AT "error: struct wrap: ABI mismatch, 3 layouts"), "%s",
		      r.out);
	}

	th_case("a clean build reports nothing, exit 0") {
		CHECK(!open_gcc(&clean, "layouts.clean"), "%s", uniqd_last_error());
		CHECK(!saw(&clean, "a.c", CFG_TAG, CFG_PLAIN) && !saw(&clean, "b.c", CFG_TAG, CFG_PLAIN) &&
		      !saw(&clean, "a.c", POINT_TAG, POINT) && !saw(&clean, "b.c", COLOR_TAG, COLOR),
		      "%s", uniqd_last_error());
		CHECK(ut_ctl(&r, "--pool", "layouts.clean", "--strict", "layouts", NULL) == 0,
		      "status %d: %s", r.status, r.out);
		CHECK(!strcmp(r.out, "no tag has more than one layout; 3 tags, 2 units checked\n"),
		      "%s", r.out);
	}

	th_case("many units: the gcc form and the text list 8, the JSON all") {
		char unit[32];
		bool ok = !open_gcc(&many, "layouts.many");

		for (int i = 0; ok && i < 40; i++) {
			snprintf(unit, sizeof(unit), "src/u%02d.c", i);
			ok = !saw(&many, unit, CFG_TAG, i == 17 ? CFG_TRACE : CFG_PLAIN);
		}
		CHECK(ok, "%s", uniqd_last_error());
		CHECK(ut_ctl(&r, "--pool", "layouts.many", "layouts", NULL) == 1, "status %d", r.status);
		CHECK(ut_has_line(r.out, CFG_AT "note: layout 1 (size=8 align=4) in 39 units: src/u00.c "
			       "src/u01.c src/u02.c src/u03.c src/u04.c src/u05.c src/u06.c "
			       "src/u07.c and 31 more") &&
		      ut_has_line(r.out, CFG_AT "note: src/u17.c: layout 2 (size=24 align=8), differs "
			       "in trace, flags"), "%s", r.out);
		CHECK(ut_ctl(&r, "--pool", "layouts.many", "--format=text", "layouts", NULL) == 1,
		      "status %d", r.status);
		CHECK(ut_has_line(r.out, "  layout 1: size=8 align=4, 39 units: src/u00.c src/u01.c "
			       "src/u02.c src/u03.c src/u04.c src/u05.c src/u06.c src/u07.c "
			       "and 31 more"), "%s", r.out);
		CHECK(ut_has_line(r.out, "  layout 2: size=24 align=8, 1 unit: src/u17.c"), "%s", r.out);
		CHECK(ut_ctl(&r, "--pool", "layouts.many", "--json", "layouts", NULL) == 1 &&
		      strstr(r.out, "\"src/u39.c\"]"), "%s", r.out);
	}

	th_case("a pool without gcc.use records: a note, exit 0") {
		CHECK((empty.p = uniqd_open("layouts.empty", 0)) != NULL, "%s", uniqd_last_error());
		CHECK(ut_ctl(&r, "--pool", "layouts.empty", "layouts", NULL) == 0, "status %d", r.status);
		CHECK(strstr(r.err, "holds no gcc.use records") &&
		      ut_has_line(r.out, "no tag has more than one layout; 0 tags, 0 units checked"),
		      "%s / %s", r.out, r.err);
	}

	th_case("errors exit 2") {
		CHECK(ut_ctl(&r, "--pool", "layouts.absent", "layouts", NULL) == 2 &&
		      strstr(r.err, "uniqdctl: layouts: open:"), "status %d: %s", r.status, r.err);
		CHECK(ut_ctl(&r, "--pool", "layouts.planted", "layouts", "extra", NULL) == 2,
		      "status %d", r.status);
	}

	uniqd_close(planted.p);
	uniqd_close(names.p);
	uniqd_close(clean.p);
	uniqd_close(many.p);
	uniqd_close(empty.p);
	return th_finish();
}
