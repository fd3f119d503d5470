// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the per-pool append-only arena (arena.c) that holds every record.
 */
#include <kunit/test.h>
#include <linux/align.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "arena.h"

static void uk_arena_destroy(void *a)
{
	uniqd_arena_destroy(a);
}

static struct uniqd_arena *uk_arena_new(struct kunit *test)
{
	struct uniqd_arena *a;

	a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, a);
	uniqd_arena_init(a);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, uk_arena_destroy, a),
			0);
	return a;
}

/*
 * Records of many sizes: 8-byte aligned, and each keeps its own bytes (an
 * overlap would show as a changed pattern; KASAN sees any overflow).
 */
static void arena_alloc_aligned_disjoint(struct kunit *test)
{
	const unsigned int n = 3000;
	struct uniqd_arena *a = uk_arena_new(test);
	size_t *size;
	u8 **p;
	unsigned int i, j;

	p = kunit_kcalloc(test, n, sizeof(*p), GFP_KERNEL);
	size = kunit_kcalloc(test, n, sizeof(*size), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_ASSERT_NOT_NULL(test, size);
	for (i = 0; i < n; i++) {
		/* Mostly small, now and then a big one with its own allocation. */
		size[i] = i % 500 == 499 ? UNIQD_ARENA_BIG + 8 * (i % 7 + 1) :
					   8 * (i % 40 + 1);
		p[i] = uniqd_arena_alloc(a, size[i]);
		KUNIT_ASSERT_NOT_NULL(test, p[i]);
		KUNIT_EXPECT_TRUE(test, IS_ALIGNED((unsigned long)p[i], 8));
		memset(p[i], (u8)i, size[i]);
	}
	for (i = 0; i < n; i++)
		for (j = 0; j < size[i]; j++)
			if (p[i][j] != (u8)i) {
				KUNIT_FAIL(test, "record %u byte %u overwritten", i, j);
				return;
			}
	KUNIT_EXPECT_GE(test, a->mem, (u64)n * 8);
}

/* Only the latest allocation can be given back, and its space is reused. */
static void arena_unalloc_latest(struct kunit *test)
{
	struct uniqd_arena *a = uk_arena_new(test);
	void *p1, *p2, *p3;
	u64 mem;

	p1 = uniqd_arena_alloc(a, 64);
	p2 = uniqd_arena_alloc(a, 64);
	KUNIT_ASSERT_NOT_NULL(test, p1);
	KUNIT_ASSERT_NOT_NULL(test, p2);
	KUNIT_EXPECT_PTR_EQ(test, p2, p1 + 64);
	mem = a->mem;
	KUNIT_EXPECT_EQ(test, mem, (u64)UNIQD_ARENA_CHUNK);

	KUNIT_EXPECT_FALSE(test, uniqd_arena_unalloc(a, p1, 64));
	KUNIT_EXPECT_FALSE(test, uniqd_arena_unalloc(a, p2, 56));
	KUNIT_EXPECT_TRUE(test, uniqd_arena_unalloc(a, p2, 64));
	/* Now p1 is the latest. */
	KUNIT_EXPECT_TRUE(test, uniqd_arena_unalloc(a, p1, 64));
	p3 = uniqd_arena_alloc(a, 128);
	KUNIT_EXPECT_PTR_EQ(test, p3, p1);
	KUNIT_EXPECT_EQ(test, a->mem, mem);
}

/*
 * A big record that does not fit in the current chunk gets an allocation of
 * its own: the chunk goes on after it, and it can be given back whole.
 */
static void arena_big_record(struct kunit *test)
{
	struct uniqd_arena *a = uk_arena_new(test);
	const size_t big = UNIQD_ARENA_BIG + 8;
	void *small, *filler, *b, *next;

	small = uniqd_arena_alloc(a, 16);
	filler = uniqd_arena_alloc(a, 60000);
	KUNIT_ASSERT_NOT_NULL(test, small);
	KUNIT_ASSERT_PTR_EQ(test, filler, small + 16);
	KUNIT_ASSERT_EQ(test, a->mem, (u64)UNIQD_ARENA_CHUNK);

	b = uniqd_arena_alloc(a, big);
	KUNIT_ASSERT_NOT_NULL(test, b);
	memset(b, 0x5a, big);
	KUNIT_EXPECT_GE(test, a->mem, (u64)UNIQD_ARENA_CHUNK + big);
	KUNIT_EXPECT_TRUE(test, b < small || b >= small + UNIQD_ARENA_CHUNK);
	next = uniqd_arena_alloc(a, 16);
	KUNIT_EXPECT_PTR_EQ(test, next, filler + 60000);

	KUNIT_EXPECT_FALSE(test, uniqd_arena_unalloc(a, b, big - 8));
	KUNIT_EXPECT_TRUE(test, uniqd_arena_unalloc(a, b, big));
	KUNIT_EXPECT_EQ(test, a->mem, (u64)UNIQD_ARENA_CHUNK);
	KUNIT_EXPECT_TRUE(test, uniqd_arena_unalloc(a, next, 16));

	/* Larger than a whole chunk. */
	b = uniqd_arena_alloc(a, 2 * UNIQD_ARENA_CHUNK);
	KUNIT_ASSERT_NOT_NULL(test, b);
	memset(b, 0xa5, 2 * UNIQD_ARENA_CHUNK);
	KUNIT_EXPECT_GE(test, a->mem, 3ULL * UNIQD_ARENA_CHUNK);
}

/* A full chunk is retired, a new one started; the old tail stays unused. */
static void arena_chunk_rollover(struct kunit *test)
{
	struct uniqd_arena *a = uk_arena_new(test);
	void *first, *p, *prev = NULL;
	unsigned int i;

	first = uniqd_arena_alloc(a, 1000);
	KUNIT_ASSERT_NOT_NULL(test, first);
	for (i = 0; a->mem == UNIQD_ARENA_CHUNK; i++) {
		p = uniqd_arena_alloc(a, 1000);
		KUNIT_ASSERT_NOT_NULL(test, p);
		if (a->mem == UNIQD_ARENA_CHUNK)
			prev = p;
	}
	KUNIT_EXPECT_EQ(test, a->mem, 2ULL * UNIQD_ARENA_CHUNK);
	/* A chunk holds 65 records of 1000: the loop's 65th started a new one. */
	KUNIT_EXPECT_EQ(test, i, 65U);
	KUNIT_EXPECT_TRUE(test, prev >= first && prev < first + UNIQD_ARENA_CHUNK);
	/* The retired chunk's last record is not the latest any more. */
	KUNIT_EXPECT_FALSE(test, uniqd_arena_unalloc(a, prev, 1000));
	KUNIT_EXPECT_TRUE(test, uniqd_arena_unalloc(a, p, 1000));
}

static struct kunit_case uniqd_arena_cases[] = {
	KUNIT_CASE(arena_alloc_aligned_disjoint),
	KUNIT_CASE(arena_unalloc_latest),
	KUNIT_CASE(arena_big_record),
	KUNIT_CASE(arena_chunk_rollover),
	{}
};

static struct kunit_suite uniqd_arena_suite = {
	.name = "uniqd_arena",
	.test_cases = uniqd_arena_cases,
};

kunit_test_suite(uniqd_arena_suite);
