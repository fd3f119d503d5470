/* SPDX-License-Identifier: GPL-2.0 */
/*
 * uniqd: the open-addressing hash table used for both levels (class names
 * per pool, contents per class). Readers only take rcu_read_lock(); writers
 * take the table's spinlock. Entries are never deleted.
 */
#ifndef UNIQD_TABLE_H
#define UNIQD_TABLE_H

#include <linux/align.h>
#include <linux/bits.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/types.h>

/*
 * A record: written completely before it is published, never changed after.
 * In a class's table, idx is the entry's index in the pool's entries xarray
 * and class_id its class; in the pool's class-name table, idx is the class
 * id and class_id is 0.
 */
struct uniqd_rec {
	u32 idx;
	u32 class_id;
	u32 len;
	u32 flags;		/* zero */
	u8 data[] __aligned(8);
};

/* Arena bytes of a record holding @len bytes. */
#define UNIQD_REC_SIZE(len)	ALIGN(sizeof(struct uniqd_rec) + (size_t)(len), 8)

struct uniqd_slot {
	u64 hash;
	struct uniqd_rec *rec;	/* NULL: empty; set once with release */
};

/*
 * One generation of the slot array. The header is a separate small object
 * so that the array itself is an exact power of two in bytes.
 */
struct uniqd_slots {
	u32 mask;		/* slots - 1; slots is a power of two */
	struct rcu_head rcu;
	struct uniqd_slot *slot;
};

struct uniqd_table {
	spinlock_t lock;	/* writers */
	u32 used;		/* occupied slots, under lock */
	struct uniqd_slots __rcu *slots;
};

#define UNIQD_TABLE_MIN_SLOTS	64U
/* The largest slot array: 2^26 slots of 16 bytes (1 GiB). */
#define UNIQD_TABLE_MAX_SLOTS	BIT(26)

typedef int (*uniqd_publish_fn)(void *ctx, struct uniqd_rec *rec);

int uniqd_table_init(struct uniqd_table *t);
void uniqd_table_destroy(struct uniqd_table *t);
struct uniqd_rec *uniqd_table_find(struct uniqd_table *t, u64 hash,
				   const void *key, u32 len);
struct uniqd_rec *uniqd_table_insert(struct uniqd_table *t, u64 hash,
				     struct uniqd_rec *rec,
				     uniqd_publish_fn publish, void *ctx);
u32 uniqd_table_size(struct uniqd_table *t);

/* Memory of a table of @slots slots, header included. */
static inline u64 uniqd_table_bytes(u32 slots)
{
	return (u64)slots * sizeof(struct uniqd_slot) +
	       sizeof(struct uniqd_slots);
}

#endif /* UNIQD_TABLE_H */
