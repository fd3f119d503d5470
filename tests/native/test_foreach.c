// SPDX-License-Identifier: GPL-2.0
/*
 * uniqd_foreach() against the fake device (fake/uniqd_fake.c), whose pools
 * created with fk_map set are mapped as the ABI lays them out: the walk
 * from the mapping and with RESOLVE (UNIQD_OPEN_NOMAP, UNIQD_NOMAP=1) give
 * the same entries in the same order; class filter; early stop; entries
 * interned during the walk; slots never published; a hostile mapping
 * (EPROTO); no mapping at all (EOPNOTSUPP). tests/lib_foreach.c runs the
 * same against the module.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/uniqd.h>

#include "fake/uniqd_fake.h"
#include "harness.h"
#include "libuniqd.h"

#define N 3000

struct entry {
	uint64_t handle;
	uint32_t class_id;
	uint32_t len;
	char data[640];
};

static struct entry want[N];
static size_t nwant;

/* What a walk saw, and when to stop it. */
struct seen {
	struct entry *e;
	size_t n, cap;
	size_t stop_after;	/* 0: never */
	int stop_value;
	uniqd_pool *pool;	/* if set: resolve each entry meanwhile */
	uint32_t intern_class;	/* if set: intern a new entry at each visit */
	unsigned long bad_resolve;
};

static int collect(void *arg, uint64_t handle, uint32_t class_id,
		   const void *data, size_t len)
{
	struct seen *s = arg;
	struct entry *e;

	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 1024;
		s->e = realloc(s->e, s->cap * sizeof(*s->e));
	}
	e = &s->e[s->n++];
	e->handle = handle;
	e->class_id = class_id;
	e->len = (uint32_t)len;
	memcpy(e->data, data, len < sizeof(e->data) ? len : sizeof(e->data));
	if (s->pool) {
		char buf[sizeof(e->data)];
		uint32_t c = 0;
		ssize_t r = uniqd_resolve(s->pool, handle, buf, sizeof(buf), &c);

		if (r != (ssize_t)len || c != class_id || memcmp(buf, data, len))
			s->bad_resolve++;
	}
	if (s->intern_class) {
		char k[32];

		snprintf(k, sizeof(k), "during-%zu", s->n);
		uniqd_intern(s->pool, s->intern_class, k, strlen(k));
	}
	if (s->stop_after && s->n == s->stop_after)
		return s->stop_value;
	return 0;
}

static int entry_eq(const struct entry *a, const struct entry *b)
{
	return a->handle == b->handle && a->class_id == b->class_id &&
	       a->len == b->len && !memcmp(a->data, b->data, a->len);
}

/* Is walk B walk A without A's entry SKIP (none if beyond A)? */
static int same_walk(const struct seen *a, const struct seen *b, size_t skip)
{
	size_t j = 0;

	for (size_t i = 0; i < a->n; i++) {
		if (i == skip)
			continue;
		if (j >= b->n || !entry_eq(&a->e[i], &b->e[j]))
			return 0;
		j++;
	}
	return j == b->n;
}

static void seen_reset(struct seen *s)
{
	free(s->e);
	memset(s, 0, sizeof(*s));
}

/* Do the walk S saw match want[] (of class CLS only, unless 0)? */
static int matches(const struct seen *s, uint32_t cls, char *why, size_t n)
{
	size_t j = 0;

	for (size_t i = 0; i < nwant; i++) {
		const struct entry *w = &want[i];
		const struct entry *e = &s->e[j];

		if (cls && w->class_id != cls)
			continue;
		if (j >= s->n) {
			snprintf(why, n, "ended after %zu entries, want %#llx next", s->n,
				 (unsigned long long)w->handle);
			return 0;
		}
		if (e->handle != w->handle || e->class_id != w->class_id ||
		    e->len != w->len || memcmp(e->data, w->data, w->len)) {
			snprintf(why, n, "entry %zu: %#llx class %u len %u, want %#llx class %u len %u",
				 j, (unsigned long long)e->handle, e->class_id, e->len,
				 (unsigned long long)w->handle, w->class_id, w->len);
			return 0;
		}
		j++;
	}
	if (j != s->n) {
		snprintf(why, n, "%zu entries, want %zu", s->n, j);
		return 0;
	}
	return 1;
}

int main(void)
{
	uint32_t cls[3];
	uniqd_pool *p;
	char why[256];

	th_init("foreach-fake");

	fk_map = 1;
	p = uniqd_open("walk", 0);
	th_case("open a mapped pool") {
		struct uniqd_map_info mi;

		CHECK(p != NULL, "%s", uniqd_last_error());
		CHECK(p && uniqd_map_info(p, &mi) == 0 && mi.addr, "not mapped: %s",
		      p ? uniqd_errname(mi.error) : "-");
	}
	if (!p)
		return th_finish();

	th_case("an empty pool") {
		struct seen s = { 0 };

		CHECK(uniqd_foreach(p, 0, 0, collect, &s) == 0, "%s", uniqd_last_error());
		CHECK(s.n == 0, "%zu entries", s.n);
		seen_reset(&s);
	}

	/* Class names are not entries: register them first, intern after. */
	cls[0] = uniqd_class(p, "walk.ident");
	cls[1] = uniqd_class(p, "walk.layout");
	cls[2] = uniqd_class(p, "walk.empty-class");
	for (size_t i = 0; i < N; i++) {
		struct entry *w = &want[nwant];
		uint64_t h;

		/* Lengths 0..600, two classes, some contents in both. */
		w->class_id = cls[i % 5 == 4];
		w->len = (uint32_t)((i * 37) % 601);
		for (uint32_t j = 0; j < w->len; j++)
			w->data[j] = (char)(' ' + (i * 7 + j) % 90);
		if (w->len >= 8)
			snprintf(w->data, 9, "%08zx", i / 2);
		h = uniqd_intern(p, w->class_id, w->data, w->len);
		if (h > (nwant ? want[nwant - 1].handle : 0))
			w->handle = h, nwant++;		/* new, not a repeat */
	}

	th_case("every entry once, in handle order, with its class and content") {
		struct seen s = { .pool = p };

		CHECK(nwant > N / 2, "only %zu distinct keys", nwant);
		CHECK(uniqd_foreach(p, 0, 0, collect, &s) == 0, "%s", uniqd_last_error());
		CHECK(matches(&s, 0, why, sizeof(why)), "%s", why);
		CHECK(s.bad_resolve == 0, "%lu entries resolve otherwise", s.bad_resolve);
		seen_reset(&s);
	}

	th_case("one class") {
		struct seen s = { 0 };

		CHECK(uniqd_foreach(p, cls[1], 0, collect, &s) == 0, "%s", uniqd_last_error());
		CHECK(s.n > 0 && matches(&s, cls[1], why, sizeof(why)), "%s", why);
		seen_reset(&s);
		CHECK(uniqd_foreach(p, cls[2], 0, collect, &s) == 0 && s.n == 0,
		      "a class without entries: %zu", s.n);
		seen_reset(&s);
		CHECK(uniqd_foreach(p, 999, 0, collect, &s) == 0 && s.n == 0,
		      "an unknown class: %zu", s.n);
		seen_reset(&s);
	}

	th_case("the callback stops the walk") {
		struct seen s = { .stop_after = 10, .stop_value = 7 };

		CHECK(uniqd_foreach(p, 0, 0, collect, &s) == 7, "return value");
		CHECK(s.n == 10 && s.e[9].handle == want[9].handle, "%zu entries", s.n);
		seen_reset(&s);
	}

	th_case("entries interned during the walk are not visited") {
		struct seen s = { .pool = p, .intern_class = cls[2] };

		CHECK(uniqd_foreach(p, 0, 0, collect, &s) == 0, "%s", uniqd_last_error());
		CHECK(matches(&s, 0, why, sizeof(why)), "%s", why);
		seen_reset(&s);
		/* They are there for the next walk. */
		CHECK(uniqd_foreach(p, cls[2], 0, collect, &s) == 0 && s.n == nwant,
		      "%zu of %zu", s.n, nwant);
		seen_reset(&s);
	}

	th_case("the same walk without the mapping (UNIQD_OPEN_NOMAP, UNIQD_NOMAP=1)") {
		uniqd_pool *q = uniqd_open("walk", UNIQD_OPEN_NOMAP);
		struct seen a = { 0 }, b = { 0 };
		unsigned long before;

		CHECK(q != NULL, "%s", uniqd_last_error());
		if (q) {
			CHECK(uniqd_foreach(p, 0, 0, collect, &a) == 0, "%s", uniqd_last_error());
			before = fk_calls(UNIQD_IOC_RESOLVE);
			CHECK(uniqd_foreach(q, 0, 0, collect, &b) == 0, "%s", uniqd_last_error());
			CHECK(fk_calls(UNIQD_IOC_RESOLVE) - before >= b.n, "%lu RESOLVE calls",
			      fk_calls(UNIQD_IOC_RESOLVE) - before);
			CHECK(same_walk(&a, &b, SIZE_MAX), "%zu and %zu entries differ",
			      a.n, b.n);
			seen_reset(&b);
			CHECK(uniqd_foreach(q, cls[1], 0, collect, &b) == 0 &&
			      matches(&b, cls[1], why, sizeof(why)), "class: %s", why);
			seen_reset(&b);
			b.stop_after = 3;
			b.stop_value = -5;
			CHECK(uniqd_foreach(q, 0, 0, collect, &b) == -5 && b.n == 3, "stop");
			seen_reset(&b);
			uniqd_close(q);
		}
		setenv("UNIQD_NOMAP", "1", 1);
		q = uniqd_open("walk", 0);
		unsetenv("UNIQD_NOMAP");
		CHECK(q != NULL, "%s", uniqd_last_error());
		if (q) {
			CHECK(uniqd_foreach(q, 0, 0, collect, &b) == 0, "%s", uniqd_last_error());
			CHECK(same_walk(&a, &b, SIZE_MAX),
			      "UNIQD_NOMAP: %zu and %zu entries differ", a.n, b.n);
			uniqd_close(q);
		}
		seen_reset(&a);
		seen_reset(&b);
	}

	th_case("a slot never published is skipped") {
		struct uniqd_map_info mi;
		struct uniqd_map_header *h;
		uint64_t *entries, saved;
		struct seen a = { 0 }, b = { 0 };

		uniqd_map_info(p, &mi);
		h = (struct uniqd_map_header *)mi.addr;
		entries = (uint64_t *)((uint8_t *)mi.addr + h->entries_off);
		CHECK(uniqd_foreach(p, 0, 0, collect, &a) == 0, "%s", uniqd_last_error());
		saved = entries[5];
		entries[5] = 0;		/* as if its insert had lost a race */
		CHECK(uniqd_foreach(p, 0, 0, collect, &b) == 0, "%s", uniqd_last_error());
		entries[5] = saved;
		/* Entry 5 is a.e[4]: b is a without it. */
		CHECK(same_walk(&a, &b, 4), "%zu entries, %zu before the hole", b.n, a.n);
		seen_reset(&a);
		seen_reset(&b);
	}

	th_case("a hostile mapping stops the walk with EPROTO") {
		struct uniqd_map_info mi;
		struct uniqd_map_header *h;
		struct uniqd_map_rec *r;
		uint64_t *entries, saved, end;
		struct seen s = { 0 };
		uniqd_pool *q;
		uint32_t v;

		uniqd_map_info(p, &mi);
		h = (struct uniqd_map_header *)mi.addr;
		entries = (uint64_t *)((uint8_t *)mi.addr + h->entries_off);
		saved = entries[3];
		for (int k = 0; k < 4; k++) {
			/* Outside the records, misaligned, past their end, the header. */
			const uint64_t bad[] = { 8, saved + 4, h->records_off + h->records_size,
						 h->entries_off };

			entries[3] = bad[k];
			errno = 0;
			CHECK(uniqd_foreach(p, 0, 0, collect, &s) == -1 && errno == EPROTO,
			      "offset %#llx: errno %d", (unsigned long long)bad[k], errno);
			CHECK(s.n == 2, "%zu entries before the bad one", s.n);
			seen_reset(&s);
		}
		entries[3] = saved;
		CHECK(strstr(uniqd_last_error(), "walk the entries (at handle ") &&
		      strstr(uniqd_last_error(), "in pool 'walk': Protocol error (EPROTO)"),
		      "%s", uniqd_last_error());

		r = (struct uniqd_map_rec *)((uint8_t *)mi.addr + saved);
		v = r->len;
		r->len = 0xfffffff0;	/* past the records */
		CHECK(uniqd_foreach(p, 0, 0, collect, &s) == -1 && errno == EPROTO, "length");
		seen_reset(&s);
		r->len = UNIQD_KEY_MAX + 1;	/* inside them, but no key is that long */
		CHECK(uniqd_foreach(p, 0, 0, collect, &s) == -1 && errno == EPROTO,
		      "key length");
		seen_reset(&s);
		r->len = v;
		v = r->class_id;
		r->class_id = 0;
		CHECK(uniqd_foreach(p, 0, 0, collect, &s) == -1 && errno == EPROTO, "class 0");
		seen_reset(&s);
		r->class_id = v;

		CHECK(uniqd_foreach(p, 0, 0, collect, &s) == 0 && s.n > nwant, "repaired");
		seen_reset(&s);

		/* An unmapped walk reads the header each time. */
		q = uniqd_open("walk", UNIQD_OPEN_NOMAP);

		CHECK(q != NULL, "%s", uniqd_last_error());
		end = h->handle_base;
		h->handle_base |= 1;	/* handles are handle_base | idx */
		CHECK(q && uniqd_foreach(q, 0, 0, collect, &s) == -1 && errno == EPROTO,
		      "handle_base with low bits");
		seen_reset(&s);
		h->handle_base = end;
		CHECK(q && uniqd_foreach(q, 0, 0, collect, &s) == 0 && s.n > nwant, "repaired");
		seen_reset(&s);
		uniqd_close(q);
	}

	th_case("entries_end counts whole pages: past entries_cap is no error") {
		struct uniqd_map_info mi;
		struct uniqd_map_header *h;
		struct seen a = { 0 }, b = { 0 };
		uint64_t end;

		uniqd_map_info(p, &mi);
		h = (struct uniqd_map_header *)mi.addr;
		CHECK(uniqd_foreach(p, 0, 0, collect, &a) == 0, "%s", uniqd_last_error());
		end = h->entries_end;
		h->entries_end = h->entries_cap + 511;	/* max_entries + 1 not page-aligned */
		CHECK(uniqd_foreach(p, 0, 0, collect, &b) == 0, "%s", uniqd_last_error());
		h->entries_end = end;
		CHECK(same_walk(&a, &b, SIZE_MAX), "%zu and %zu entries", a.n, b.n);
		seen_reset(&a);
		seen_reset(&b);
	}

	th_case("arguments") {
		struct seen s = { 0 };

		errno = 0;
		CHECK(uniqd_foreach(p, 0, 1, collect, &s) == -1 && errno == EINVAL, "flags");
		CHECK(uniqd_foreach(p, 0, 0, NULL, &s) == -1 && errno == EINVAL, "no fn");
		CHECK(uniqd_foreach(NULL, 0, 0, collect, &s) == -1 && errno == EINVAL, "no pool");
		CHECK(s.n == 0, "visited %zu", s.n);
	}

	th_case("a module without the mapping: EOPNOTSUPP") {
		uniqd_pool *q;
		struct seen s = { 0 };

		fk_map = 0;
		q = uniqd_open("flat", 0);
		CHECK(q != NULL, "%s", uniqd_last_error());
		if (q) {
			uniqd_intern(q, uniqd_class(q, "c"), "x", 1);
			errno = 0;
			CHECK(uniqd_foreach(q, 0, 0, collect, &s) == -1 && errno == EOPNOTSUPP,
			      "errno %d", errno);
			CHECK(strstr(uniqd_last_error(), "UNIQD_FEAT_MAP") != NULL, "%s",
			      uniqd_last_error());
			uniqd_close(q);
		}
		seen_reset(&s);
	}

	th_case("close") {
		CHECK(uniqd_close(p) == 0, "close");
		CHECK(fk_files_open() == 0, "%d fake files open", fk_files_open());
		CHECK(fk_maps_live() == 0, "%d mappings alive", fk_maps_live());
	}
	return th_finish();
}
