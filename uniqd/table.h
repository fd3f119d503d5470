/* SPDX-License-Identifier: GPL-2.0 */
/*
 * uniqd: the kernel-only hash table (class names per pool, and per class
 * its kernel-only entries, not in the mapped index): the kernel's
 * rhashtable, keyed by the record's 64-bit keyed-BLAKE3 hash and its bytes,
 * with one addition: a record becomes visible to lookups only once it is
 * published (see table.c). Readers only take rcu_read_lock(); writers take
 * the table's spinlock. Records are never removed.
 */
#ifndef UNIQD_TABLE_H
#define UNIQD_TABLE_H

#include <linux/align.h>
#include <linux/rhashtable.h>
#include <linux/spinlock.h>
#include <linux/types.h>

/*
 * A record: the kernel's own view of a class name or of a kernel-only
 * entry (entry.c), never mapped. Its content (hash, idx,
 * class_id, len, data) is written completely before it is inserted and
 * never changed after; node is rhashtable's link and flags only ever gains
 * UNIQD_REC_PUBLISHED. In a class's table, idx is the entry's index (the
 * low half of its handle), class_id its class, and data points at the
 * content in the entry's mapped record (map.c); in the pool's class-name
 * table, idx is the class id, class_id is 0 and data points right after
 * the record.
 */
struct uniqd_rec {
	struct rhash_head node;
	u64 hash;		/* table key: the first 64 bits of keyed BLAKE3 */
	u32 idx;
	u32 class_id;
	u32 len;
	u32 flags;		/* UNIQD_REC_*; 0 when inserted */
	const u8 *data;
};

/* Set with release once the record's index resolves: lookups may return it. */
#define UNIQD_REC_PUBLISHED	BIT(0)

/*
 * What a class name or an entry of @len bytes counts against max_bytes
 * (the ABI's unit, STATS.arena_bytes; the memory behind it is in STATS
 * map_bytes and kernel_bytes).
 */
#define UNIQD_REC_SIZE(len)	ALIGN(32 + (size_t)(len), 8)

struct uniqd_table {
	/*
	 * Writers: insert and publish, under it. A reader takes and drops it
	 * only to wait out a publication, with nothing taken in between. A
	 * spinlock: nothing under it sleeps or allocates but atomically, and
	 * no path holds two tables' locks. Under it: rhashtable's bucket lock
	 * and the publish hook (for the class names, an xa_store() into
	 * pool->classes). Where it nests: design.rst, "Locking", the one
	 * place the lock order is written.
	 */
	spinlock_t lock;
	struct rhashtable ht;
};

/* Buckets of a new table; rhashtable doubles them past 3/4 load. */
#define UNIQD_TABLE_MIN_SLOTS	64U

/*
 * Makes an inserted record's index resolve. Runs under the table's spinlock
 * right before the record can be returned by a lookup; must not sleep and
 * cannot fail (it fills a slot reserved beforehand).
 */
typedef void (*uniqd_publish_fn)(void *ctx, struct uniqd_rec *rec);

int uniqd_table_init(struct uniqd_table *t);
void uniqd_table_destroy(struct uniqd_table *t);
struct uniqd_rec *uniqd_table_find(struct uniqd_table *t, u64 hash,
				   const void *key, u32 len);
struct uniqd_rec *uniqd_table_insert_key(struct uniqd_table *t, u64 hash,
					 struct uniqd_rec *rec, const void *key,
					 uniqd_publish_fn publish, void *ctx);

/* The common case: rec->data holds the bytes already. */
static inline struct uniqd_rec *uniqd_table_insert(struct uniqd_table *t,
						   u64 hash,
						   struct uniqd_rec *rec,
						   uniqd_publish_fn publish,
						   void *ctx)
{
	return uniqd_table_insert_key(t, hash, rec, rec->data, publish, ctx);
}
u32 uniqd_table_count(struct uniqd_table *t);
u32 uniqd_table_size(struct uniqd_table *t);
u64 uniqd_table_bytes(u32 slots);

#endif /* UNIQD_TABLE_H */
