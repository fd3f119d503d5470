// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the open-addressing table of table.c, the one both levels use
 * (level 1: class names of a pool, level 2: contents of a class). Hashes
 * are chosen by the tests, so collisions and probe wrap-around are exact.
 */
#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/lockdep.h>
#include <linux/log2.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#include "arena.h"
#include "table.h"
#include "uniqd_kunit.h"

#define UK_GOLDEN	0x9e3779b97f4a7c15ULL

/* A 64-bit hash of @x (splitmix64's finaliser): spreads over all slots. */
static u64 uk_hash(u64 x)
{
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static void uk_table_destroy(void *t)
{
	uniqd_table_destroy(t);
}

static struct uniqd_table *uk_table_new(struct kunit *test)
{
	struct uniqd_table *t;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	KUNIT_ASSERT_EQ(test, uniqd_table_init(t), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, uk_table_destroy, t),
			0);
	return t;
}

static struct uniqd_rec *uk_rec(struct kunit *test, u32 idx, const void *data,
				u32 len)
{
	struct uniqd_rec *rec;

	rec = kunit_kzalloc(test, UNIQD_REC_SIZE(len), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rec);
	rec->idx = idx;
	rec->len = len;
	memcpy(rec->data, data, len);
	return rec;
}

static struct uniqd_rec *uk_rec_str(struct kunit *test, u32 idx, const char *s)
{
	return uk_rec(test, idx, s, strlen(s));
}

static struct uniqd_rec *uk_find(struct uniqd_table *t, u64 hash,
				 const void *key, u32 len)
{
	struct uniqd_rec *rec;

	rcu_read_lock();
	rec = uniqd_table_find(t, hash, key, len);
	rcu_read_unlock();
	return rec;
}

static struct uniqd_rec *uk_find_rec(struct uniqd_table *t, u64 hash,
				     const struct uniqd_rec *like)
{
	return uk_find(t, hash, like->data, like->len);
}

static struct uniqd_rec *uk_insert(struct uniqd_table *t, u64 hash,
				   struct uniqd_rec *rec)
{
	return uniqd_table_insert(t, hash, rec, NULL, NULL);
}

/* Slots of the current array: the smallest size the 3/4 load allows. */
static u32 uk_expected_size(u32 used)
{
	u32 size = UNIQD_TABLE_MIN_SLOTS;

	while ((u64)used * 4 > (u64)size * 3)
		size *= 2;
	return size;
}

/* Count the occupied slots of the current array (no writer may run). */
static u32 uk_occupied(struct uniqd_table *t)
{
	struct uniqd_slots *s;
	u32 i, n = 0;

	rcu_read_lock();
	s = rcu_dereference(t->slots);
	for (i = 0; i <= s->mask; i++)
		n += !!READ_ONCE(s->slot[i].rec);
	rcu_read_unlock();
	return n;
}

/* The record in slot @i of the current array (no writer may run). */
static struct uniqd_rec *uk_slot(struct uniqd_table *t, u32 i)
{
	return rcu_dereference_protected(t->slots, true)->slot[i].rec;
}

static void table_empty(struct kunit *test)
{
	struct uniqd_table *t = uk_table_new(test);

	KUNIT_EXPECT_EQ(test, uniqd_table_size(t), UNIQD_TABLE_MIN_SLOTS);
	KUNIT_EXPECT_EQ(test, t->used, 0U);
	KUNIT_EXPECT_NULL(test, uk_find(t, 0, "", 0));
	KUNIT_EXPECT_NULL(test, uk_find(t, 1, "a", 1));
	KUNIT_EXPECT_NULL(test, uk_find(t, ~0ULL, "abc", 3));
	KUNIT_EXPECT_EQ(test, uk_occupied(t), 0U);
}

static void table_insert_find(struct kunit *test)
{
	struct uniqd_table *t = uk_table_new(test);
	struct uniqd_rec *a = uk_rec_str(test, 1, "alpha");
	struct uniqd_rec *a2 = uk_rec_str(test, 2, "alpha");
	struct uniqd_rec *pre = uk_rec_str(test, 3, "alph");
	struct uniqd_rec *empty = uk_rec(test, 4, "", 0);
	struct uniqd_rec *bin = uk_rec(test, 5, "al\0ha", 5);
	const u64 h = 0x1234567890abcdefULL;

	KUNIT_EXPECT_PTR_EQ(test, uk_insert(t, h, a), a);
	KUNIT_EXPECT_PTR_EQ(test, uk_find(t, h, "alpha", 5), a);
	/* Equal content: the record already there comes back, nothing added. */
	KUNIT_EXPECT_PTR_EQ(test, uk_insert(t, h, a2), a);
	KUNIT_EXPECT_EQ(test, t->used, 1U);
	/* Another hash is another key, even for the same bytes. */
	KUNIT_EXPECT_NULL(test, uk_find(t, h + 1, "alpha", 5));
	/* A prefix, and a same-length key with other bytes, are not it. */
	KUNIT_EXPECT_NULL(test, uk_find(t, h, "alph", 4));
	KUNIT_EXPECT_NULL(test, uk_find(t, h, "alphA", 5));
	KUNIT_EXPECT_PTR_EQ(test, uk_insert(t, h, pre), pre);
	KUNIT_EXPECT_PTR_EQ(test, uk_insert(t, h, bin), bin);
	KUNIT_EXPECT_PTR_EQ(test, uk_insert(t, 0, empty), empty);
	KUNIT_EXPECT_PTR_EQ(test, uk_find(t, h, "alph", 4), pre);
	KUNIT_EXPECT_PTR_EQ(test, uk_find(t, h, "al\0ha", 5), bin);
	KUNIT_EXPECT_PTR_EQ(test, uk_find(t, h, "alpha", 5), a);
	KUNIT_EXPECT_PTR_EQ(test, uk_find(t, 0, "", 0), empty);
	KUNIT_EXPECT_EQ(test, t->used, 4U);
	KUNIT_EXPECT_EQ(test, uk_occupied(t), 4U);
}

/* Many records with one 64-bit hash and different content: all found. */
static void table_colliding_hashes(struct kunit *test)
{
	const u64 h = 0xfeedfacecafebeefULL;
	const unsigned int n = 300;
	struct uniqd_rec **rec;
	struct uniqd_table *t = uk_table_new(test);
	char buf[32];
	unsigned int i;

	rec = kunit_kcalloc(test, n, sizeof(*rec), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rec);
	for (i = 0; i < n; i++) {
		/* Lengths vary too, and short keys are prefixes of longer ones. */
		if (i % 3 == 0) {
			memset(buf, 'x', i % 31 + 1);
			buf[i % 31 + 1] = '\0';
		} else {
			snprintf(buf, sizeof(buf), "key-%u", i);
		}
		rec[i] = uk_rec_str(test, i, buf);
		if (uk_find_rec(t, h, rec[i])) {
			/* A run of 'x' already inserted: same content. */
			KUNIT_EXPECT_PTR_NE(test, uk_insert(t, h, rec[i]), rec[i]);
			rec[i] = NULL;
			continue;
		}
		KUNIT_ASSERT_PTR_EQ(test, uk_insert(t, h, rec[i]), rec[i]);
	}
	for (i = 0; i < n; i++) {
		if (!rec[i])
			continue;
		KUNIT_EXPECT_PTR_EQ(test, uk_find_rec(t, h, rec[i]), rec[i]);
		/* The colliding neighbours are never taken for it. */
		KUNIT_EXPECT_NULL(test, uk_find_rec(t, h ^ 1, rec[i]));
	}
	KUNIT_EXPECT_NULL(test, uk_find(t, h, "key-300", 7));
	KUNIT_EXPECT_NULL(test, uk_find(t, h, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
				    32));
	KUNIT_EXPECT_EQ(test, uk_occupied(t), t->used);
	KUNIT_EXPECT_EQ(test, uniqd_table_size(t), uk_expected_size(t->used));
}

/* Hashes whose slot is the last one: probes wrap to slot 0, across growth. */
static void table_probe_wraparound(struct kunit *test)
{
	struct uniqd_table *t = uk_table_new(test);
	struct uniqd_rec *rec[200];
	unsigned int i;
	char buf[16];

	for (i = 0; i < ARRAY_SIZE(rec); i++) {
		/* 20 records aim at the last slot of every size, the rest spread. */
		u64 h = i < 20 ? ~0ULL - i * BIT_ULL(40) : uk_hash(i);

		snprintf(buf, sizeof(buf), "w%u", i);
		rec[i] = uk_rec_str(test, i, buf);
		KUNIT_ASSERT_PTR_EQ(test, uk_insert(t, h, rec[i]), rec[i]);
		if (i == 19) {
			/* 63, then 0..18: the probes wrapped. */
			KUNIT_EXPECT_EQ(test, uniqd_table_size(t), 64U);
			KUNIT_EXPECT_NOT_NULL(test, uk_slot(t, 0));
			KUNIT_EXPECT_NOT_NULL(test, uk_slot(t, 18));
			KUNIT_EXPECT_NULL(test, uk_slot(t, 19));
		}
	}
	KUNIT_EXPECT_EQ(test, uniqd_table_size(t), 512U);
	for (i = 0; i < ARRAY_SIZE(rec); i++) {
		u64 h = i < 20 ? ~0ULL - i * BIT_ULL(40) : uk_hash(i);

		KUNIT_EXPECT_PTR_EQ(test, uk_find_rec(t, h, rec[i]), rec[i]);
	}
}

/*
 * Growth through every size from 64 to 8192 slots: after each insert the
 * size is exactly the smallest the 3/4 load allows, and at each doubling
 * every record inserted so far is still found (the same record).
 */
static void table_growth(struct kunit *test)
{
	const unsigned int n = 5000;
	struct uniqd_table *t = uk_table_new(test);
	struct uniqd_rec **rec;
	u32 size, last = UNIQD_TABLE_MIN_SLOTS, doublings = 0;
	unsigned int i, j;
	char buf[16];

	rec = kunit_kcalloc(test, n, sizeof(*rec), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rec);
	for (i = 0; i < n; i++) {
		snprintf(buf, sizeof(buf), "g%u", i);
		rec[i] = uk_rec_str(test, i, buf);
		KUNIT_ASSERT_PTR_EQ(test, uk_insert(t, uk_hash(i), rec[i]),
				    rec[i]);
		KUNIT_ASSERT_EQ(test, t->used, i + 1);
		size = uniqd_table_size(t);
		KUNIT_ASSERT_TRUE(test, is_power_of_2(size));
		KUNIT_ASSERT_EQ_MSG(test, size, uk_expected_size(i + 1),
				    "after %u inserts", i + 1);
		if (size == last)
			continue;
		KUNIT_EXPECT_EQ(test, size, 2 * last);
		last = size;
		doublings++;
		for (j = 0; j <= i; j++)
			KUNIT_ASSERT_PTR_EQ(test,
					    uk_find_rec(t, uk_hash(j), rec[j]),
					    rec[j]);
	}
	KUNIT_EXPECT_EQ(test, last, 8192U);
	KUNIT_EXPECT_EQ(test, doublings, 7U);
	KUNIT_EXPECT_EQ(test, uk_occupied(t), n);
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_PTR_EQ(test, uk_insert(t, uk_hash(i),
						    uk_rec(test, n + i, rec[i]->data,
							   rec[i]->len)),
				    rec[i]);
	KUNIT_EXPECT_EQ(test, t->used, n);
}

struct uk_publish {
	struct kunit *test;
	struct uniqd_table *t;
	u64 hash;
	int calls;
	int ret;
};

static int uk_publish(void *ctx, struct uniqd_rec *rec)
{
	struct uk_publish *p = ctx;

	p->calls++;
	/* Under the writers' lock, right before the record is visible. */
	lockdep_assert_held(&p->t->lock);
	KUNIT_EXPECT_NULL(p->test, uk_find_rec(p->t, p->hash, rec));
	return p->ret;
}

static void table_publish(struct kunit *test)
{
	struct uniqd_table *t = uk_table_new(test);
	struct uk_publish p = { .test = test, .t = t, .hash = 42 };
	struct uniqd_rec *a = uk_rec_str(test, 1, "published");
	struct uniqd_rec *a2 = uk_rec_str(test, 2, "published");
	struct uniqd_rec *b = uk_rec_str(test, 3, "refused");
	struct uniqd_rec *got;

	KUNIT_EXPECT_PTR_EQ(test, uniqd_table_insert(t, 42, a, uk_publish, &p), a);
	KUNIT_EXPECT_EQ(test, p.calls, 1);
	KUNIT_EXPECT_PTR_EQ(test, uk_find_rec(t, 42, a), a);

	/* A duplicate is never published. */
	KUNIT_EXPECT_PTR_EQ(test, uniqd_table_insert(t, 42, a2, uk_publish, &p),
			    a);
	KUNIT_EXPECT_EQ(test, p.calls, 1);

	/* A refusal is returned and leaves the table as it was. */
	p.ret = -ENOSPC;
	got = uniqd_table_insert(t, 42, b, uk_publish, &p);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(got), -ENOSPC);
	KUNIT_EXPECT_EQ(test, p.calls, 2);
	KUNIT_EXPECT_NULL(test, uk_find_rec(t, 42, b));
	KUNIT_EXPECT_EQ(test, t->used, 1U);
	KUNIT_EXPECT_EQ(test, uk_occupied(t), 1U);

	p.ret = 0;
	KUNIT_EXPECT_PTR_EQ(test, uniqd_table_insert(t, 42, b, uk_publish, &p), b);
	KUNIT_EXPECT_PTR_EQ(test, uk_find_rec(t, 42, b), b);
	KUNIT_EXPECT_EQ(test, t->used, 2U);
}

/* A refusal on the insert that grew the table: grown, nothing added. */
static void table_publish_error_on_growth(struct kunit *test)
{
	struct uniqd_table *t = uk_table_new(test);
	struct uk_publish p = { .test = test, .t = t };
	struct uniqd_rec *rec[49], *got;
	unsigned int i;
	char buf[16];

	for (i = 0; i < ARRAY_SIZE(rec); i++) {
		snprintf(buf, sizeof(buf), "e%u", i);
		rec[i] = uk_rec_str(test, i, buf);
	}
	for (i = 0; i < 48; i++)
		KUNIT_ASSERT_PTR_EQ(test, uk_insert(t, uk_hash(i), rec[i]),
				    rec[i]);
	KUNIT_ASSERT_EQ(test, uniqd_table_size(t), 64U);

	p.hash = uk_hash(48);
	p.ret = -EDQUOT;
	got = uniqd_table_insert(t, p.hash, rec[48], uk_publish, &p);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(got), -EDQUOT);
	KUNIT_EXPECT_EQ(test, uniqd_table_size(t), 128U);
	KUNIT_EXPECT_EQ(test, t->used, 48U);
	KUNIT_EXPECT_EQ(test, uk_occupied(t), 48U);
	for (i = 0; i < 48; i++)
		KUNIT_EXPECT_PTR_EQ(test, uk_find_rec(t, uk_hash(i), rec[i]),
				    rec[i]);
	KUNIT_EXPECT_NULL(test, uk_find_rec(t, p.hash, rec[48]));

	p.ret = 0;
	KUNIT_EXPECT_PTR_EQ(test, uniqd_table_insert(t, p.hash, rec[48],
						     uk_publish, &p), rec[48]);
	KUNIT_EXPECT_EQ(test, t->used, 49U);
}

/*
 * Concurrency: inserter kthreads insert the same keys (records from an
 * arena, as the module does) in different orders while reader kthreads
 * look them up, across every growth from 64 to 4096 slots. Groups of four
 * keys share one 64-bit hash. Every key must end up in the table exactly
 * once, every insert of it must return that one record, and a key once in
 * the table must never be missed by a later lookup.
 */
#define UK_CONC_KEYS		2400
#define UK_CONC_INSERTERS	3
#define UK_CONC_READERS		1

struct uk_conc {
	struct uniqd_table t;
	struct uniqd_arena arena;
	struct uniqd_rec *winner[UK_CONC_KEYS];	/* the record of each key */
	atomic_t inserted[UK_CONC_KEYS];	/* inserts that added their record */
	atomic_t inserters_left;
	atomic_t errors;
	atomic_long_t hits, misses;
	char why[96];
};

static u64 uk_conc_hash(u32 k)
{
	return (u64)(k / 4 + 1) * UK_GOLDEN;
}

static u32 uk_conc_key(u32 k, u8 *buf)
{
	u32 len = 8 + k % 37, i;

	memcpy(buf, &k, sizeof(k));
	memset(buf + 4, 0xa5, 4);
	for (i = 8; i < len; i++)
		buf[i] = (u8)(k * 7 + i);
	return len;
}

static bool uk_conc_match(const struct uniqd_rec *rec, u32 k)
{
	u8 buf[64];
	u32 len = uk_conc_key(k, buf);

	return rec->len == len && !memcmp(rec->data, buf, len) &&
	       rec->idx == k;
}

static void uk_conc_error(struct uk_conc *c, const char *what, u32 k)
{
	if (atomic_inc_return(&c->errors) == 1)
		snprintf(c->why, sizeof(c->why), "%s (key %u)", what, k);
}

static int uk_conc_insert(struct uk_conc *c, unsigned int id)
{
	u32 step = id == 1 ? UK_CONC_KEYS - 1 : 1;	/* one goes backwards */
	u32 k = id * UK_CONC_KEYS / UK_CONC_INSERTERS, j;
	u8 buf[64];

	for (j = 0; j < UK_CONC_KEYS; j++, k = (k + step) % UK_CONC_KEYS) {
		u32 len = uk_conc_key(k, buf);
		size_t size = UNIQD_REC_SIZE(len);
		struct uniqd_rec *rec, *got, *old;

		rec = uniqd_arena_alloc(&c->arena, size);
		if (!rec) {
			uk_conc_error(c, "arena alloc", k);
			break;
		}
		rec->idx = k;
		rec->class_id = 1;
		rec->len = len;
		rec->flags = 0;
		memcpy(rec->data, buf, len);
		got = uniqd_table_insert(&c->t, uk_conc_hash(k), rec, NULL, NULL);
		if (IS_ERR(got)) {
			uk_conc_error(c, "insert failed", k);
			break;
		}
		if (got == rec)
			atomic_inc(&c->inserted[k]);
		else
			uniqd_arena_unalloc(&c->arena, rec, size);
		if (!uk_conc_match(got, k))
			uk_conc_error(c, "insert returned another key", k);
		old = cmpxchg(&c->winner[k], NULL, got);
		if (old && old != got)
			uk_conc_error(c, "two records for one key", k);
		if (uk_find(&c->t, uk_conc_hash(k), buf, len) != got)
			uk_conc_error(c, "inserted key not found", k);
		if (j % 64 == 0)
			cond_resched();
	}
	atomic_dec(&c->inserters_left);
	return 0;
}

static int uk_conc_read(struct uk_conc *c, unsigned int id)
{
	u64 rnd = 0x2545f4914f6cdd1dULL + id;
	unsigned long n = 0;
	u8 buf[64];

	while (atomic_read(&c->inserters_left) > 0) {
		u32 k = uk_rand(&rnd) % UK_CONC_KEYS, len = uk_conc_key(k, buf);
		/* Pairs with cmpxchg(): once set, the key is in the table. */
		struct uniqd_rec *known = smp_load_acquire(&c->winner[k]);
		struct uniqd_rec *rec;

		rcu_read_lock();
		rec = uniqd_table_find(&c->t, uk_conc_hash(k), buf, len);
		if (rec && !uk_conc_match(rec, k))
			uk_conc_error(c, "lookup returned another key", k);
		rcu_read_unlock();
		if (known && rec != known)
			uk_conc_error(c, "a key in the table was missed", k);
		if (rec)
			atomic_long_inc(&c->hits);
		else
			atomic_long_inc(&c->misses);
		if (++n % 64 == 0)
			cond_resched();
	}
	return 0;
}

static int uk_conc_thread(unsigned int i, void *data)
{
	if (i < UK_CONC_INSERTERS)
		return uk_conc_insert(data, i);
	return uk_conc_read(data, i - UK_CONC_INSERTERS);
}

static void uk_conc_free(void *data)
{
	struct uk_conc *c = data;

	uniqd_table_destroy(&c->t);
	uniqd_arena_destroy(&c->arena);
	kvfree(c);
}

static void table_concurrent(struct kunit *test)
{
	struct uniqd_slots *s;
	struct uk_conc *c;
	u32 *count, i, k;
	u8 buf[64];

	c = kvzalloc(sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c);
	uniqd_arena_init(&c->arena);
	if (uniqd_table_init(&c->t)) {
		uniqd_arena_destroy(&c->arena);
		kvfree(c);
		KUNIT_FAIL_AND_ABORT(test, "uniqd_table_init");
	}
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, uk_conc_free, c), 0);
	atomic_set(&c->inserters_left, UK_CONC_INSERTERS);

	KUNIT_ASSERT_EQ(test, uk_run_threads(UK_CONC_INSERTERS + UK_CONC_READERS,
					     uk_conc_thread, c), 0);
	KUNIT_ASSERT_EQ_MSG(test, atomic_read(&c->errors), 0, "first: %s",
			    c->why);
	kunit_info(test, "readers: %ld hits, %ld misses\n",
		   atomic_long_read(&c->hits), atomic_long_read(&c->misses));

	KUNIT_EXPECT_EQ(test, c->t.used, (u32)UK_CONC_KEYS);
	KUNIT_EXPECT_EQ(test, uniqd_table_size(&c->t),
			uk_expected_size(UK_CONC_KEYS));
	for (k = 0; k < UK_CONC_KEYS; k++) {
		u32 len = uk_conc_key(k, buf);

		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&c->inserted[k]), 1,
				    "key %u", k);
		KUNIT_EXPECT_PTR_EQ(test, uk_find(&c->t, uk_conc_hash(k), buf, len),
				    c->winner[k]);
	}
	/* Every slot holds a different key: no key is in the table twice. */
	count = kunit_kcalloc(test, UK_CONC_KEYS, sizeof(*count), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, count);
	s = rcu_dereference_protected(c->t.slots, true);
	for (i = 0; i <= s->mask; i++) {
		struct uniqd_rec *rec = s->slot[i].rec;

		if (!rec)
			continue;
		KUNIT_ASSERT_LT(test, rec->idx, (u32)UK_CONC_KEYS);
		KUNIT_EXPECT_EQ(test, s->slot[i].hash, uk_conc_hash(rec->idx));
		count[rec->idx]++;
	}
	for (k = 0; k < UK_CONC_KEYS; k++)
		KUNIT_EXPECT_EQ_MSG(test, count[k], 1U, "key %u", k);
}

static struct kunit_case uniqd_table_cases[] = {
	KUNIT_CASE(table_empty),
	KUNIT_CASE(table_insert_find),
	KUNIT_CASE(table_colliding_hashes),
	KUNIT_CASE(table_probe_wraparound),
	KUNIT_CASE(table_growth),
	KUNIT_CASE(table_publish),
	KUNIT_CASE(table_publish_error_on_growth),
	KUNIT_CASE(table_concurrent),
	{}
};

static struct kunit_suite uniqd_table_suite = {
	.name = "uniqd_table",
	.test_cases = uniqd_table_cases,
};

kunit_test_suite(uniqd_table_suite);
