// SPDX-License-Identifier: GPL-2.0
/*
 * uniqd_intern_refs() against the module: records of another pool's
 * handles interned with this pool's (a record naming a record, a 0, runs
 * that end before a record of the same run, a run longer than a kernel
 * batch), each handle looked up once and the items' data given back; a
 * record of 12 bytes, a forward or an unknown handle refused with EBADMSG
 * and the pool unchanged; REFS NULL as uniqd_intern_many().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "libuniqd.h"
#include "uniqd_le.h"

#define OTHER	(7ULL << 32)	/* the other pool's handles: OTHER | 1 + index */
#define CHAIN	600		/* records each naming the one before: 600 runs */
#define WIDE	1000		/* plain entries, then one record: one long run */

/* Item I of the other pool had handle OTHER | (I + 1). */
struct other {
	size_t n;
	size_t calls;
	uint64_t last;
};

static size_t other_index(void *arg, uint64_t h)
{
	struct other *o = arg;

	o->calls++;
	o->last = h;
	if (h >> 32 != OTHER >> 32 || !(uint32_t)h || (uint32_t)h > o->n)
		return SIZE_MAX;
	return (uint32_t)h - 1;
}

static uint64_t entries_of(uniqd_pool *p)
{
	struct uniqd_pool_stats st;

	return uniqd_stats(p, &st) ? 0 : st.entries;
}

/* Does HANDLE hold the little-endian handles WANT[0..N)? */
static int rec_is(uniqd_pool *p, uint64_t handle, const uint64_t *want, size_t n)
{
	uint8_t buf[64];
	ssize_t len = uniqd_resolve(p, handle, buf, sizeof(buf), NULL);

	if (len != (ssize_t)(8 * n))
		return 0;
	for (size_t k = 0; k < n; k++)
		if (uq_le_get64(buf + 8 * k) != want[k])
			return 0;
	return 1;
}

static void put(uint8_t *rec, uint64_t a, uint64_t b, uint64_t c)
{
	uq_le_put64(rec, a);
	uq_le_put64(rec + 8, b);
	uq_le_put64(rec + 16, c);
}

int main(void)
{
	uint8_t r2[24], r3[8], r5[16], bad[24];
	unsigned char ref[6] = { 0, 0, 1, 1, 0, 1 };
	struct uniqd_item it[6], copy[6];
	struct other o = { .n = 6 };
	uniqd_pool *p;
	uint32_t x, rec;
	uint64_t before;

	th_init("lib-refs");
	p = uniqd_open("lib.refs", UNIQD_OPEN_NEW);
	x = p ? uniqd_class(p, "x") : 0;
	rec = p ? uniqd_class(p, "rec") : 0;

	/* Entries of its own first: its handles differ from the other pool's. */
	th_case("records are translated, each handle looked up once") {
		CHECK(p && x && rec, "pool: %s", uniqd_last_error());
		uniqd_intern(p, x, "own", 3);
		put(r2, OTHER | 1, 0, OTHER | 2);
		uq_le_put64(r3, OTHER | 3);
		uq_le_put64(r5, OTHER | 5);
		uq_le_put64(r5 + 8, OTHER | 4);
		memset(it, 0, sizeof(it));
		it[0] = (struct uniqd_item){ .data = "alpha", .len = 5, .class_id = x };
		it[1] = (struct uniqd_item){ .data = "beta", .len = 4, .class_id = x };
		it[2] = (struct uniqd_item){ .data = r2, .len = 24, .class_id = rec };
		it[3] = (struct uniqd_item){ .data = r3, .len = 8, .class_id = rec };
		it[4] = (struct uniqd_item){ .data = "gamma", .len = 5, .class_id = x };
		it[5] = (struct uniqd_item){ .data = r5, .len = 16, .class_id = rec };
		memcpy(copy, it, sizeof(it));
		CHECK(uniqd_intern_refs(p, it, 6, ref, other_index, &o, 0) == 6,
		      "intern: %s", uniqd_last_error());
		CHECK(o.calls == 5, "%zu lookups for 5 handles", o.calls);
		CHECK(it[0].handle != (OTHER | 1), "no translation seen");
		{
			uint64_t w2[3] = { it[0].handle, 0, it[1].handle };
			uint64_t w3[1] = { it[2].handle };
			uint64_t w5[2] = { it[4].handle, it[3].handle };

			CHECK(rec_is(p, it[2].handle, w2, 3), "record 2 not translated");
			CHECK(rec_is(p, it[3].handle, w3, 1),
			      "record 3 (of record 2) not translated");
			CHECK(rec_is(p, it[5].handle, w5, 2), "record 5 not translated");
		}
		for (int i = 0; i < 6; i++)
			CHECK(it[i].data == copy[i].data, "item %d's data not given back", i);
		CHECK(uq_le_get64(r2) == (OTHER | 1), "the caller's record changed");
	}

	th_case("again: the same handles, nothing created") {
		uint64_t h[6];

		for (int i = 0; i < 6; i++)
			h[i] = it[i].handle;
		CHECK(uniqd_intern_refs(p, it, 6, ref, other_index, &o, 0) == 6,
		      "intern: %s", uniqd_last_error());
		for (int i = 0; i < 6; i++)
			CHECK(it[i].handle == h[i] && !(it[i].status & UNIQD_CREATED),
			      "item %d: %#llx, status %#x", i,
			      (unsigned long long)it[i].handle, it[i].status);
	}

	th_case("a forward handle: EBADMSG, nothing interned") {
		memcpy(it, copy, sizeof(it));
		it[0].data = "alpha2";
		it[0].len = 6;
		put(bad, OTHER | 1, OTHER | 4, 0);
		it[2].data = bad;
		before = entries_of(p);
		o.calls = 0;
		CHECK(uniqd_intern_refs(p, it, 6, ref, other_index, &o, 0) == 2 &&
		      errno == EBADMSG, "forward: %s", uniqd_last_error());
		CHECK(o.last == (OTHER | 4), "last asked %#llx", (unsigned long long)o.last);
		CHECK(o.calls == 2, "%zu lookups", o.calls);
		CHECK(entries_of(p) == before, "%llu entries, not %llu",
		      (unsigned long long)entries_of(p), (unsigned long long)before);
		CHECK(it[2].data == bad, "data not given back");
	}

	th_case("a handle of no item: EBADMSG, nothing interned") {
		it[2].data = r2;
		uq_le_put64(r3, OTHER | 1000);
		CHECK(uniqd_intern_refs(p, it, 6, ref, other_index, &o, 0) == 3 &&
		      errno == EBADMSG, "unknown: %s", uniqd_last_error());
		uq_le_put64(r3, (8ULL << 32) | 1);
		CHECK(uniqd_intern_refs(p, it, 6, ref, other_index, &o, 0) == 3 &&
		      errno == EBADMSG, "another pool: %s", uniqd_last_error());
		CHECK(entries_of(p) == before, "entries changed");
		uq_le_put64(r3, OTHER | 3);
	}

	th_case("a record of 12 bytes: EBADMSG, nothing interned") {
		it[5].len = 12;
		CHECK(uniqd_intern_refs(p, it, 6, ref, other_index, &o, 0) == 5 &&
		      errno == EBADMSG, "12 bytes: %s", uniqd_last_error());
		CHECK(entries_of(p) == before, "entries changed");
		it[5].len = 16;
	}

	th_case("refs NULL: bytes as they are") {
		CHECK(uniqd_intern_refs(p, it, 6, NULL, NULL, NULL, 0) == 6,
		      "intern: %s", uniqd_last_error());
		CHECK(uniqd_lookup(p, rec, r2, 24) == it[2].handle, "record 2 changed");
		CHECK(uniqd_intern_refs(p, it, 6, ref, NULL, NULL, 0) == 0 &&
		      errno == EINVAL, "refs without lookup: %s", uniqd_last_error());
		CHECK(uniqd_intern_refs(p, it, 6, ref, other_index, &o, UNIQD_NOCREATE) == 0 &&
		      errno == EINVAL, "NOCREATE: %s", uniqd_last_error());
	}

	th_case("a chain of records and a run longer than a batch") {
		size_t n = CHAIN + WIDE + 1;
		struct uniqd_item *v = calloc(n, sizeof(*v));
		unsigned char *r = calloc(n, 1);
		uint8_t *recs = calloc(n, 8);
		char (*txt)[16] = calloc(n, sizeof(*txt));
		size_t i;

		CHECK(v && r && recs && txt, "memory");
		if (!v || !r || !recs || !txt)
			goto chain_out;
		/* Item 0 plain; 1 .. CHAIN-1 each a record of the one before. */
		for (i = 0; i < n; i++) {
			if (i && i < CHAIN) {
				uq_le_put64(recs + 8 * i, OTHER | i);
				v[i] = (struct uniqd_item){ .data = recs + 8 * i,
							    .len = 8, .class_id = rec };
				r[i] = 1;
			} else {
				snprintf(txt[i], sizeof(txt[i]), "wide%zu", i);
				v[i] = (struct uniqd_item){ .data = txt[i],
					.len = strlen(txt[i]), .class_id = x };
			}
		}
		/* The last, a record of the first plain entry of the wide run. */
		uq_le_put64(recs + 8 * (n - 1), OTHER | (CHAIN + 1));
		v[n - 1] = (struct uniqd_item){ .data = recs + 8 * (n - 1), .len = 8,
						.class_id = rec };
		r[n - 1] = 1;
		o.n = n;
		CHECK(uniqd_intern_refs(p, v, n, r, other_index, &o, 0) == n,
		      "intern: %s", uniqd_last_error());
		for (i = 1; i < CHAIN; i++)
			if (!rec_is(p, v[i].handle, &v[i - 1].handle, 1))
				break;
		CHECK(i == CHAIN, "chain record %zu not translated", i);
		CHECK(rec_is(p, v[n - 1].handle, &v[CHAIN].handle, 1),
		      "the wide run's record not translated");
chain_out:
		free(v);
		free(r);
		free(recs);
		free(txt);
	}

	uniqd_close(p);
	return th_finish();
}
