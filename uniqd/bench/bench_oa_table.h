/* SPDX-License-Identifier: GPL-2.0 */
/*
 * uniqd_bench: the open-addressing table uniqd used before rhashtable
 * (struct uniqd_rec then had this 16-byte header), kept for the table
 * benchmark. Readers only take rcu_read_lock(); writers take the table's
 * spinlock. Entries are never deleted.
 */
#ifndef UB_OA_TABLE_H
#define UB_OA_TABLE_H

#include <linux/align.h>
#include <linux/bits.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/types.h>

/* A record: written completely before it is published, never changed after. */
struct ub_oa_rec {
	u32 idx;
	u32 class_id;
	u32 len;
	u32 flags;		/* zero */
	u8 data[] __aligned(8);
};

/* Arena bytes of a record holding @len bytes. */
#define UB_OA_REC_SIZE(len)	ALIGN(sizeof(struct ub_oa_rec) + (size_t)(len), 8)

struct ub_oa_slot {
	u64 hash;
	struct ub_oa_rec *rec;	/* NULL: empty; set once with release */
};

/*
 * One generation of the slot array. The header is a separate small object
 * so that the array itself is an exact power of two in bytes.
 */
struct ub_oa_slots {
	u32 mask;		/* slots - 1; slots is a power of two */
	struct rcu_head rcu;
	struct ub_oa_slot *slot;
};

struct ub_oa_table {
	spinlock_t lock;	/* writers */
	u32 used;		/* occupied slots, under lock */
	struct ub_oa_slots __rcu *slots;
};

#define UB_OA_TABLE_MIN_SLOTS	64U
/* The largest slot array: 2^26 slots of 16 bytes (1 GiB). */
#define UB_OA_TABLE_MAX_SLOTS	BIT(26)

typedef int (*ub_oa_publish_fn)(void *ctx, struct ub_oa_rec *rec);

int ub_oa_table_init(struct ub_oa_table *t);
void ub_oa_table_destroy(struct ub_oa_table *t);
struct ub_oa_rec *ub_oa_table_find(struct ub_oa_table *t, u64 hash,
				   const void *key, u32 len);
struct ub_oa_rec *ub_oa_table_insert(struct ub_oa_table *t, u64 hash,
				     struct ub_oa_rec *rec,
				     ub_oa_publish_fn publish, void *ctx);
u32 ub_oa_table_size(struct ub_oa_table *t);

/* Memory of a table of @slots slots, header included. */
static inline u64 ub_oa_table_bytes(u32 slots)
{
	return (u64)slots * sizeof(struct ub_oa_slot) +
	       sizeof(struct ub_oa_slots);
}

#endif /* UB_OA_TABLE_H */
