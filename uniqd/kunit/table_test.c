// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: table.c, the rhashtable with publish-before-visible that both
 * levels use (level 1: class names of a pool, level 2: contents of a class).
 * Hashes are chosen by the tests, so equal 64-bit hashes are exact.
 */
#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/lockdep.h>
#include <linux/log2.h>
#include <linux/rcupdate.h>
#include <linux/rhashtable.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include "table.h"
#include "uniqd_kunit.h"

#define UK_GOLDEN	0x9e3779b97f4a7c15ULL

/* A 64-bit hash of @x (splitmix64's finaliser): spreads over all buckets. */
static u64 uk_hash(u64 x)
{
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

void uk_table_settle(struct uniqd_table *t)
{
	struct rhashtable *ht = &t->ht;
	bool busy;

	for (;;) {
		flush_work(&ht->run_work);
		rcu_read_lock();
		busy = rcu_access_pointer(rcu_dereference(ht->tbl)->future_tbl) ||
		       work_pending(&ht->run_work);
		rcu_read_unlock();
		if (!busy)
			return;
		usleep_range(1000, 2000);
	}
}

u32 uk_table_expected_size(u32 count)
{
	u32 size = UNIQD_TABLE_MIN_SLOTS;

	while ((u64)count * 4 > (u64)size * 3)
		size *= 2;
	return size;
}

static void uk_table_destroy(void *t)
{
	uniqd_table_destroy(t);
}

/*
 * A test's record, kmalloc()ed as the module's are: the table frees those
 * it holds when destroyed, the test those it never inserted (the record
 * comes first, so that the table's kfree() frees the whole box).
 */
struct uk_box {
	struct uniqd_rec rec;
	struct list_head node;		/* in uk_tab.boxes */
	u8 data[];
};

/* A table and the records its test made. */
struct uk_tab {
	struct uniqd_table t;
	struct list_head boxes;
};

/*
 * Runs before the table is destroyed (KUnit runs actions last first): a
 * record never inserted was never published, and is the test's to free.
 */
static void uk_boxes_free(void *arg)
{
	struct uk_tab *tab = arg;
	struct uk_box *b, *next;

	list_for_each_entry_safe(b, next, &tab->boxes, node)
		if (!(b->rec.flags & UNIQD_REC_PUBLISHED))
			kfree(b);
}

static struct uniqd_table *uk_table_new(struct kunit *test)
{
	struct uk_tab *tab;

	tab = kunit_kzalloc(test, sizeof(*tab), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, tab);
	INIT_LIST_HEAD(&tab->boxes);
	KUNIT_ASSERT_EQ(test, uniqd_table_init(&tab->t), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, uk_table_destroy,
							&tab->t), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, uk_boxes_free,
							tab), 0);
	return &tab->t;
}

/* A record for table @t, freed with the test. */
static struct uniqd_rec *uk_rec(struct kunit *test, struct uniqd_table *t,
				u32 idx, const void *data, u32 len)
{
	struct uk_tab *tab = container_of(t, struct uk_tab, t);
	struct uk_box *b;

	b = kzalloc(struct_size(b, data, len), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, b);
	list_add(&b->node, &tab->boxes);
	b->rec.idx = idx;
	b->rec.len = len;
	memcpy(b->data, data, len);
	b->rec.data = b->data;
	return &b->rec;
}

static struct uniqd_rec *uk_rec_str(struct kunit *test, struct uniqd_table *t,
				    u32 idx, const char *s)
{
	return uk_rec(test, t, idx, s, strlen(s));
}

static struct uniqd_rec *uk_find(struct uniqd_table *t, u64 hash,
				 const void *key, u32 len)
{
	return uniqd_table_find(t, hash, key, len);
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

/*
 * Walk the table (no writer may run) and call @each on every record once;
 * return how many there are. A walk that meets a rehash (-EAGAIN) may see
 * records twice, so records are collected first and a walk that met one is
 * made again.
 */
static u32 uk_walk_count(struct kunit *test, struct uniqd_table *t,
			 void (*each)(struct uniqd_rec *rec, void *ctx),
			 void *ctx)
{
	u32 max = uniqd_table_count(t) + 1, n = 0, i;
	struct rhashtable_iter iter;
	struct uniqd_rec **recs, *rec;
	unsigned int tries;
	long err = 0;

	recs = kunit_kcalloc(test, max, sizeof(*recs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, recs);
	for (tries = 0; tries < 10; tries++) {
		uk_table_settle(t);
		n = 0;
		err = 0;
		rhashtable_walk_enter(&t->ht, &iter);
		rhashtable_walk_start(&iter);
		while ((rec = rhashtable_walk_next(&iter))) {
			if (IS_ERR(rec)) {
				err = PTR_ERR(rec);
				break;
			}
			if (n < max)
				recs[n] = rec;
			n++;
		}
		rhashtable_walk_stop(&iter);
		rhashtable_walk_exit(&iter);
		if (!err)
			break;
	}
	KUNIT_EXPECT_EQ_MSG(test, err, 0L, "walk");
	KUNIT_EXPECT_LT(test, n, max);
	for (i = 0; each && i < min(n, max); i++)
		each(recs[i], ctx);
	return n;
}

static void table_empty(struct kunit *test)
{
	struct uniqd_table *t = uk_table_new(test);

	KUNIT_EXPECT_EQ(test, uniqd_table_size(t), UNIQD_TABLE_MIN_SLOTS);
	KUNIT_EXPECT_EQ(test, uniqd_table_count(t), 0U);
	KUNIT_EXPECT_NULL(test, uk_find(t, 0, "", 0));
	KUNIT_EXPECT_NULL(test, uk_find(t, 1, "a", 1));
	KUNIT_EXPECT_NULL(test, uk_find(t, ~0ULL, "abc", 3));
	KUNIT_EXPECT_EQ(test, uk_walk_count(test, t, NULL, NULL), 0U);
}

/* A table that was zeroed and never initialised can be destroyed. */
static void table_destroy_uninitialised(struct kunit *test)
{
	struct uniqd_table *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, t);
	uniqd_table_destroy(t);
	KUNIT_EXPECT_NULL(test, rcu_access_pointer(t->ht.tbl));
}

static void table_insert_find(struct kunit *test)
{
	struct uniqd_table *t = uk_table_new(test);
	struct uniqd_rec *a = uk_rec_str(test, t, 1, "alpha");
	struct uniqd_rec *a2 = uk_rec_str(test, t, 2, "alpha");
	struct uniqd_rec *pre = uk_rec_str(test, t, 3, "alph");
	struct uniqd_rec *empty = uk_rec(test, t, 4, "", 0);
	struct uniqd_rec *bin = uk_rec(test, t, 5, "al\0ha", 5);
	const u64 h = 0x1234567890abcdefULL;

	KUNIT_EXPECT_PTR_EQ(test, uk_insert(t, h, a), a);
	/* The table filled in the hash and published the record. */
	KUNIT_EXPECT_EQ(test, a->hash, h);
	KUNIT_EXPECT_EQ(test, a->flags, (u32)UNIQD_REC_PUBLISHED);
	KUNIT_EXPECT_PTR_EQ(test, uk_find(t, h, "alpha", 5), a);
	/* Equal content: the record already there comes back, nothing added. */
	KUNIT_EXPECT_PTR_EQ(test, uk_insert(t, h, a2), a);
	KUNIT_EXPECT_EQ(test, uniqd_table_count(t), 1U);
	/* Another hash is another key, even for the same bytes. */
	KUNIT_EXPECT_NULL(test, uk_find(t, h + 1, "alpha", 5));
	KUNIT_EXPECT_NULL(test, uk_find(t, h ^ BIT_ULL(63), "alpha", 5));
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
	KUNIT_EXPECT_EQ(test, uniqd_table_count(t), 4U);
	KUNIT_EXPECT_EQ(test, uk_walk_count(test, t, NULL, NULL), 4U);
}

/*
 * Groups of records with one 64-bit hash and different content (lengths
 * vary, short keys are prefixes of longer ones): all found, none taken for
 * another. A group shares one bucket chain whatever the seed; rhashtable
 * refuses chains longer than RHT_ELASTICITY (16), which 64-bit keyed
 * hashes never come near, so groups here are of 5 (and few enough that
 * several rarely land in one bucket).
 */
static void table_colliding_hashes(struct kunit *test)
{
	const unsigned int groups = 10, per = 5, n = groups * per;
	struct uniqd_table *t = uk_table_new(test);
	struct uniqd_rec **rec;
	unsigned int i;
	char buf[32];

	rec = kunit_kcalloc(test, n, sizeof(*rec), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rec);
	for (i = 0; i < n; i++) {
		u64 h = uk_hash(i / per);

		if (i % 3 == 0) {
			memset(buf, 'x', i % per + 1);
			buf[i % per + 1] = '\0';
		} else {
			snprintf(buf, sizeof(buf), "key-%u", i);
		}
		rec[i] = uk_rec_str(test, t, i, buf);
		KUNIT_ASSERT_PTR_EQ(test, uk_insert(t, h, rec[i]), rec[i]);
	}
	for (i = 0; i < n; i++) {
		u64 h = uk_hash(i / per);

		KUNIT_EXPECT_PTR_EQ(test, uk_find_rec(t, h, rec[i]), rec[i]);
		/* The same bytes under a neighbour's hash are another key. */
		KUNIT_EXPECT_NULL(test, uk_find_rec(t, h ^ 1, rec[i]));
		KUNIT_EXPECT_PTR_EQ(test, uk_insert(t, h,
						    uk_rec(test, t, n + i, rec[i]->data,
							   rec[i]->len)),
				    rec[i]);
	}
	KUNIT_EXPECT_NULL(test, uk_find(t, uk_hash(0), "key-50", 6));
	KUNIT_EXPECT_NULL(test, uk_find(t, uk_hash(0), "xxxxxxxxxxxxx", 13));
	KUNIT_EXPECT_EQ(test, uniqd_table_count(t), n);
	KUNIT_EXPECT_EQ(test, uk_walk_count(test, t, NULL, NULL), n);
}

/*
 * Hashes that differ only in their high or only in their low 32 bits are
 * spread and told apart: the bucket hash folds all 64 bits.
 */
static void table_hash_halves(struct kunit *test)
{
	struct uniqd_table *t = uk_table_new(test);
	struct uniqd_rec *rec[128];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rec); i++) {
		u64 h = i < 64 ? (u64)i << 32 : i - 63;

		/* All the same bytes: only the hash tells them apart. */
		rec[i] = uk_rec_str(test, t, i, "same");
		KUNIT_ASSERT_PTR_EQ(test, uk_insert(t, h, rec[i]), rec[i]);
	}
	for (i = 0; i < ARRAY_SIZE(rec); i++) {
		u64 h = i < 64 ? (u64)i << 32 : i - 63;

		KUNIT_EXPECT_PTR_EQ(test, uk_find_rec(t, h, rec[i]), rec[i]);
	}
	KUNIT_EXPECT_EQ(test, uniqd_table_count(t), 128U);
}

/*
 * Growth from 64 to 8192 buckets: at each step, once rhashtable's worker
 * has settled, the size is the smallest that keeps the load at most 3/4,
 * and every record inserted so far is still found (the same record).
 */
static void table_growth(struct kunit *test)
{
	const unsigned int n = 5000, step = 250;
	struct uniqd_table *t = uk_table_new(test);
	struct uniqd_rec **rec;
	u32 size, last = UNIQD_TABLE_MIN_SLOTS, doublings = 0;
	unsigned int i, j;
	char buf[16];

	rec = kunit_kcalloc(test, n, sizeof(*rec), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rec);
	for (i = 0; i < n; i++) {
		snprintf(buf, sizeof(buf), "g%u", i);
		rec[i] = uk_rec_str(test, t, i, buf);
		KUNIT_ASSERT_PTR_EQ(test, uk_insert(t, uk_hash(i), rec[i]),
				    rec[i]);
		KUNIT_ASSERT_EQ(test, uniqd_table_count(t), i + 1);
		if ((i + 1) % step)
			continue;
		uk_table_settle(t);
		size = uniqd_table_size(t);
		KUNIT_ASSERT_TRUE(test, is_power_of_2(size));
		KUNIT_ASSERT_EQ_MSG(test, size, uk_table_expected_size(i + 1),
				    "after %u inserts", i + 1);
		for (j = 0; j <= i; j++)
			KUNIT_ASSERT_PTR_EQ(test,
					    uk_find_rec(t, uk_hash(j), rec[j]),
					    rec[j]);
		for (; last < size; last *= 2)
			doublings++;
	}
	KUNIT_EXPECT_EQ(test, last, 8192U);
	KUNIT_EXPECT_EQ(test, doublings, 7U);
	KUNIT_EXPECT_EQ(test, uk_walk_count(test, t, NULL, NULL), n);
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_PTR_EQ(test, uk_insert(t, uk_hash(i),
						    uk_rec(test, t, n + i, rec[i]->data,
							   rec[i]->len)),
				    rec[i]);
	KUNIT_EXPECT_EQ(test, uniqd_table_count(t), n);
}

struct uk_publish {
	struct kunit *test;
	struct uniqd_table *t;
	int calls;
	struct uniqd_rec *last;
};

static void uk_publish(void *ctx, struct uniqd_rec *rec)
{
	struct uk_publish *p = ctx;

	p->calls++;
	p->last = rec;
	/* Under the writers' lock, after the insert, before the flag. */
	lockdep_assert_held(&p->t->lock);
	KUNIT_EXPECT_EQ(p->test, READ_ONCE(rec->flags), 0U);
	KUNIT_EXPECT_EQ(p->test, uniqd_table_count(p->t), (u32)p->calls);
}

static void table_publish(struct kunit *test)
{
	struct uniqd_table *t = uk_table_new(test);
	struct uk_publish p = { .test = test, .t = t };
	struct uniqd_rec *a = uk_rec_str(test, t, 1, "published");
	struct uniqd_rec *a2 = uk_rec_str(test, t, 2, "published");
	struct uniqd_rec *b = uk_rec_str(test, t, 3, "other");

	KUNIT_EXPECT_PTR_EQ(test, uniqd_table_insert(t, 42, a, uk_publish, &p), a);
	KUNIT_EXPECT_EQ(test, p.calls, 1);
	KUNIT_EXPECT_PTR_EQ(test, p.last, a);
	KUNIT_EXPECT_PTR_EQ(test, uk_find_rec(t, 42, a), a);

	/* A duplicate is never published, nor touched beyond hash and flags. */
	KUNIT_EXPECT_PTR_EQ(test, uniqd_table_insert(t, 42, a2, uk_publish, &p),
			    a);
	KUNIT_EXPECT_EQ(test, p.calls, 1);
	KUNIT_EXPECT_EQ(test, a2->flags, 0U);

	KUNIT_EXPECT_PTR_EQ(test, uniqd_table_insert(t, 42, b, uk_publish, &p), b);
	KUNIT_EXPECT_EQ(test, p.calls, 2);
	KUNIT_EXPECT_PTR_EQ(test, uk_find_rec(t, 42, b), b);
}

/*
 * A lookup that finds a record inserted but not yet published waits until
 * it is published. The publisher (thread 0) waits for the reader (thread 1)
 * to run, inserts, and in its publish callback holds the table's lock until
 * the reader has started its lookup, then 20 ms more; the reader's lookup
 * must not return before the callback did. With one CPU the reader cannot start in time and the race is not
 * exercised (said in the log); the debug kernel's guest has two.
 */
struct uk_race {
	struct uniqd_table *t;
	struct uniqd_rec *rec;
	atomic_t reader_running, in_publish, reader_started, published;
	struct uniqd_rec *found;
	int found_published;
	bool raced;
};

static void uk_race_publish(void *ctx, struct uniqd_rec *rec)
{
	struct uk_race *r = ctx;
	unsigned int ms;

	atomic_set(&r->in_publish, 1);
	for (ms = 0; ms < 200 && !atomic_read(&r->reader_started); ms++)
		mdelay(1);
	r->raced = atomic_read(&r->reader_started);
	/* Long enough for the reader to reach the lock. */
	mdelay(20);
	atomic_set(&r->published, 1);
}

static int uk_race_thread(unsigned int i, void *data)
{
	struct uk_race *r = data;
	unsigned long deadline = jiffies + 2 * HZ;
	unsigned int n = 0;

	if (i == 0) {
		while (!atomic_read(&r->reader_running) &&
		       time_before(jiffies, deadline))
			usleep_range(100, 200);
		if (uniqd_table_insert(r->t, 7, r->rec, uk_race_publish, r) !=
		    r->rec)
			return -EIO;
		return 0;
	}
	/* Running before the publisher starts; then wait for its callback. */
	atomic_set(&r->reader_running, 1);
	while (!atomic_read(&r->in_publish) && time_before(jiffies, deadline)) {
		cpu_relax();
		if (!(++n % 1024))
			cond_resched();
	}
	atomic_set(&r->reader_started, 1);
	r->found = uniqd_table_find(r->t, 7, r->rec->data, r->rec->len);
	r->found_published = atomic_read(&r->published);
	return 0;
}

static void table_publish_race(struct kunit *test)
{
	struct uk_race *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, r);
	r->t = uk_table_new(test);
	r->rec = uk_rec_str(test, r->t, 1, "raced");
	KUNIT_ASSERT_EQ(test, uk_run_threads(2, uk_race_thread, r), 0);
	kunit_info(test, "reader started during publish: %s\n",
		   r->raced ? "yes" : "no (one CPU?)");
	/* Either it found nothing (looked before the insert) or waited. */
	if (r->found) {
		KUNIT_EXPECT_PTR_EQ(test, r->found, r->rec);
		KUNIT_EXPECT_EQ(test, r->found_published, 1);
	}
	KUNIT_EXPECT_PTR_EQ(test, uk_find_rec(r->t, 7, r->rec), r->rec);
}

/*
 * Concurrency: inserter kthreads insert the same keys (kmalloc()ed
 * records, as the module's) in different orders while reader kthreads
 * look them up, across every growth from 64 to 4096 buckets. Groups of four
 * keys share one 64-bit hash. Every key must end up in the table exactly
 * once, every insert of it must return that one record, a key once in the
 * table must never be missed by a later lookup, and no lookup may return a
 * record before its publish callback has run.
 */
#define UK_CONC_KEYS		2400
#define UK_CONC_INSERTERS	3
#define UK_CONC_READERS		1

struct uk_conc {
	struct uniqd_table t;
	struct uniqd_rec *winner[UK_CONC_KEYS];	/* the record of each key */
	struct uniqd_rec *published[UK_CONC_KEYS];	/* by the callback */
	atomic_t inserted[UK_CONC_KEYS];	/* inserts that added their record */
	atomic_t seen[UK_CONC_KEYS];		/* times the walk saw the key */
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

static void uk_conc_publish(void *ctx, struct uniqd_rec *rec)
{
	struct uk_conc *c = ctx;

	WRITE_ONCE(c->published[rec->idx], rec);
}

static int uk_conc_insert(struct uk_conc *c, unsigned int id)
{
	u32 step = id == 1 ? UK_CONC_KEYS - 1 : 1;	/* one goes backwards */
	u32 k = id * UK_CONC_KEYS / UK_CONC_INSERTERS, j;
	u8 buf[64];

	for (j = 0; j < UK_CONC_KEYS; j++, k = (k + step) % UK_CONC_KEYS) {
		u32 len = uk_conc_key(k, buf);
		size_t size = sizeof(struct uniqd_rec) + len;
		struct uniqd_rec *rec, *got, *old;

		rec = kmalloc(size, GFP_KERNEL);
		if (!rec) {
			uk_conc_error(c, "record alloc", k);
			break;
		}
		rec->idx = k;
		rec->class_id = 1;
		rec->len = len;
		memcpy(rec + 1, buf, len);
		rec->data = (const u8 *)(rec + 1);
		got = uniqd_table_insert(&c->t, uk_conc_hash(k), rec,
					 uk_conc_publish, c);
		if (IS_ERR(got)) {
			kfree(rec);
			uk_conc_error(c, "insert failed", k);
			break;
		}
		/* The table owns what it holds; a loser stays ours. */
		if (got == rec)
			atomic_inc(&c->inserted[k]);
		else
			kfree(rec);
		if (!uk_conc_match(got, k))
			uk_conc_error(c, "insert returned another key", k);
		if (READ_ONCE(c->published[k]) != got)
			uk_conc_error(c, "insert returned an unpublished record", k);
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

		rec = uniqd_table_find(&c->t, uk_conc_hash(k), buf, len);
		if (rec && !uk_conc_match(rec, k))
			uk_conc_error(c, "lookup returned another key", k);
		if (rec && READ_ONCE(c->published[k]) != rec)
			uk_conc_error(c, "lookup returned an unpublished record", k);
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
	kvfree(c);
}

static void uk_conc_seen(struct uniqd_rec *rec, void *ctx)
{
	struct uk_conc *c = ctx;

	if (rec->idx < UK_CONC_KEYS && rec->hash == uk_conc_hash(rec->idx))
		atomic_inc(&c->seen[rec->idx]);
}

static void table_concurrent(struct kunit *test)
{
	struct uk_conc *c;
	u32 k;
	u8 buf[64];

	c = kvzalloc(sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c);
	if (uniqd_table_init(&c->t)) {
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

	KUNIT_EXPECT_EQ(test, uniqd_table_count(&c->t), (u32)UK_CONC_KEYS);
	uk_table_settle(&c->t);
	KUNIT_EXPECT_EQ(test, uniqd_table_size(&c->t),
			uk_table_expected_size(UK_CONC_KEYS));
	for (k = 0; k < UK_CONC_KEYS; k++) {
		u32 len = uk_conc_key(k, buf);

		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&c->inserted[k]), 1,
				    "key %u", k);
		KUNIT_EXPECT_PTR_EQ(test, uk_find(&c->t, uk_conc_hash(k), buf, len),
				    c->winner[k]);
	}
	/* Every record in the table is a different key: none is in twice. */
	KUNIT_EXPECT_EQ(test, uk_walk_count(test, &c->t, uk_conc_seen, c),
			(u32)UK_CONC_KEYS);
	for (k = 0; k < UK_CONC_KEYS; k++)
		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&c->seen[k]), 1, "key %u",
				    k);
}

static struct kunit_case uniqd_table_cases[] = {
	KUNIT_CASE(table_empty),
	KUNIT_CASE(table_destroy_uninitialised),
	KUNIT_CASE(table_insert_find),
	KUNIT_CASE(table_colliding_hashes),
	KUNIT_CASE(table_hash_halves),
	KUNIT_CASE(table_growth),
	KUNIT_CASE(table_publish),
	KUNIT_CASE(table_publish_race),
	KUNIT_CASE(table_concurrent),
	{}
};

static struct kunit_suite uniqd_table_suite = {
	.name = "uniqd_table",
	.test_cases = uniqd_table_cases,
};

kunit_test_suite(uniqd_table_suite);
