// SPDX-License-Identifier: GPL-2.0
/*
 * uniqd: one hash table, used for class names (level 1) and for each class's
 * contents (level 2), on the kernel's rhashtable.
 *
 * Keys are variable length: the record's 64-bit keyed hash, its length and
 * its bytes. rhashtable's 32-bit bucket hash folds the 64-bit one with the
 * table's seed, so that a rehash with a new seed spreads a long chain.
 * rhashtable grows the table past 3/4 load in its worker and frees old
 * bucket arrays after a grace period; readers only hold rcu_read_lock().
 *
 * What rhashtable does not give is "publish before visible": a record's
 * index must resolve (its slot in an xarray filled) before any lookup can
 * hand the record out, and an insert that fails must leave nothing behind.
 * So writers of a table are serialised by t->lock, and under it insert the
 * record (rhashtable_lookup_get_insert_key()), publish it, then set
 * UNIQD_REC_PUBLISHED with release. A lookup that finds a record without
 * the flag has raced with that short section: it takes t->lock once, after
 * which the record is published. Records are never removed; each is a
 * kmalloc()ed object of its own, which the table frees when it is
 * destroyed.
 */
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/hash.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "table.h"

/* What a lookup is given: the hash and the bytes, not a record. */
struct uniqd_table_key {
	u64 hash;
	const void *data;
	u32 len;
};

/*
 * A failed insert (rhashtable could not allocate atomically, or its table is
 * over full while its worker grows it) is tried again this many times,
 * sleeping in between so that the worker can allocate in process context.
 */
#define UNIQD_TABLE_INSERT_TRIES	50

static u32 uniqd_table_fold(u64 hash, u32 seed)
{
	return hash_64(hash ^ seed, 32);
}

static u32 uniqd_table_hashfn(const void *data, u32 len, u32 seed)
{
	const struct uniqd_table_key *k = data;

	return uniqd_table_fold(k->hash, seed);
}

static u32 uniqd_table_obj_hashfn(const void *data, u32 len, u32 seed)
{
	const struct uniqd_rec *rec = data;

	return uniqd_table_fold(rec->hash, seed);
}

/* 0 when @obj holds the key. */
static int uniqd_table_cmpfn(struct rhashtable_compare_arg *arg,
			     const void *obj)
{
	const struct uniqd_table_key *k = arg->key;
	const struct uniqd_rec *rec = obj;

	return rec->hash != k->hash || rec->len != k->len ||
	       memcmp(rec->data, k->data, k->len);
}

static const struct rhashtable_params uniqd_table_params = {
	.head_offset = offsetof(struct uniqd_rec, node),
	.hashfn = uniqd_table_hashfn,
	.obj_hashfn = uniqd_table_obj_hashfn,
	.obj_cmpfn = uniqd_table_cmpfn,
	.min_size = UNIQD_TABLE_MIN_SLOTS,
};

int uniqd_table_init(struct uniqd_table *t)
{
	spin_lock_init(&t->lock);
	return rhashtable_init(&t->ht, &uniqd_table_params);
}

static void uniqd_table_free_rec(void *rec, void *arg)
{
	kfree(rec);
}

/*
 * Only when no reader and no writer can remain: frees the table and every
 * record in it. A table that was zeroed but never initialised is left
 * alone, so that teardown paths need not know.
 */
void uniqd_table_destroy(struct uniqd_table *t)
{
	if (rcu_access_pointer(t->ht.tbl))
		rhashtable_free_and_destroy(&t->ht, uniqd_table_free_rec, NULL);
	RCU_INIT_POINTER(t->ht.tbl, NULL);
}

/* The published record holding the key, or NULL. Takes RCU itself. */
struct uniqd_rec *uniqd_table_find(struct uniqd_table *t, u64 hash,
				   const void *key, u32 len)
{
	struct uniqd_table_key k = { .hash = hash, .data = key, .len = len };
	struct uniqd_rec *rec;

	rec = rhashtable_lookup_fast(&t->ht, &k, uniqd_table_params);
	/* Pairs with the release in uniqd_table_insert(). */
	if (!rec || (smp_load_acquire(&rec->flags) & UNIQD_REC_PUBLISHED))
		return rec;
	/*
	 * Its inserter holds t->lock from the insert until it has published
	 * it: once we have had the lock, it is published.
	 */
	spin_lock(&t->lock);
	spin_unlock(&t->lock);
	return rec;
}

/*
 * Insert @rec (complete: idx, class_id, len, data; its hash is @hash)
 * unless an equal record is there, comparing others with @key, the bytes
 * rec->data will hold once @publish has run (the same pointer when they
 * are there already). Returns the record that is in the table now: @rec if
 * it was inserted, the equal one found otherwise, or ERR_PTR(-ENOMEM).
 * @publish, when not NULL, runs under t->lock after the insert, which can
 * then no longer fail, and before any lookup can return @rec. The table
 * owns an inserted record; one that is not inserted is untouched and stays
 * the caller's.
 */
struct uniqd_rec *uniqd_table_insert_key(struct uniqd_table *t, u64 hash,
					 struct uniqd_rec *rec, const void *key,
					 uniqd_publish_fn publish, void *ctx)
{
	struct uniqd_table_key k = {
		.hash = hash, .data = key, .len = rec->len
	};
	struct uniqd_rec *got;
	unsigned int tries = 0;

	rec->hash = hash;
	rec->flags = 0;
	for (;;) {
		spin_lock(&t->lock);
		/*
		 * An equal record is looked for first, under RCU: the insert
		 * below compares inside rhashtable's bucket lock, which 6.12
		 * holds with interrupts off, and an equal record would be
		 * compared there whole (up to max_key_len bytes). Writers
		 * hold t->lock, so the insert then meets none.
		 */
		got = rhashtable_lookup_fast(&t->ht, &k, uniqd_table_params);
		if (got) {
			spin_unlock(&t->lock);
			/* Published before its inserter let go of t->lock. */
			return got;
		}
		got = rhashtable_lookup_get_insert_key(&t->ht, &k, &rec->node,
						       uniqd_table_params);
		if (!got) {
			if (publish)
				publish(ctx, rec);
			/* Pairs with the acquire in uniqd_table_find(). */
			smp_store_release(&rec->flags, UNIQD_REC_PUBLISHED);
			spin_unlock(&t->lock);
			return rec;
		}
		spin_unlock(&t->lock);
		/* Its inserter published it before it let go of t->lock. */
		if (!IS_ERR(got))
			return got;
		/* -ENOMEM, -EBUSY; -E2BIG (2^31 records) is out of reach. */
		if (++tries >= UNIQD_TABLE_INSERT_TRIES ||
		    fatal_signal_pending(current))
			return ERR_PTR(-ENOMEM);
		if (tries == 1)
			cond_resched();
		else
			usleep_range(1000, 2000);
	}
}

/* The number of records. */
u32 uniqd_table_count(struct uniqd_table *t)
{
	return atomic_read(&t->ht.nelems);
}

/*
 * The buckets of the newest array. While rhashtable's worker is behind, an
 * insert into an over-full table attaches a bigger one (future_tbl) and
 * ht.tbl still points at the old one until the rehash is done.
 */
u32 uniqd_table_size(struct uniqd_table *t)
{
	const struct bucket_table *tbl, *next;
	u32 size;

	rcu_read_lock();
	tbl = rcu_dereference(t->ht.tbl);
	while ((next = rcu_dereference(tbl->future_tbl)))
		tbl = next;
	size = tbl->size;
	rcu_read_unlock();
	return size;
}

/* Memory of a bucket array of @slots buckets, header included. */
u64 uniqd_table_bytes(u32 slots)
{
	return (u64)slots * sizeof(struct rhash_lock_head *) +
	       sizeof(struct bucket_table);
}
