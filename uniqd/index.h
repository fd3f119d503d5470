/* SPDX-License-Identifier: GPL-2.0 */
/*
 * uniqd: the mapped index, the one table's slots (index.c, whose design
 * comment says how it stays a table). An entry whose probe window is full
 * is kernel-only: not in the mapped index but in its class's kernel-only
 * table (entry.c), until a growth places it again. One word for it, in
 * code and Documentation/; the uapi header keeps the name it published,
 * STATS.map_overflow.
 */
#ifndef UNIQD_INDEX_H
#define UNIQD_INDEX_H

#include <linux/types.h>

struct uniqd_map;
struct uniqd_stats;

/*
 * The index of one pool, in its struct uniqd_map: written under map->lock,
 * read without it (the array through header.index, under RCU).
 */
struct uniqd_index {
	u64 *slots;			/* the current index array, or NULL */
	pgoff_t slots_pg;		/* its first page */
	u32 log2;			/* of its slots */
	u64 indexed;			/* entries in it */
	/*
	 * Slot values of the kernel-only entries (every entry is either in
	 * the array or here), placed again by index growth.
	 */
	u64 *kernel_only;
	u32 nkernel_only;
	u32 kernel_only_cap;
	u64 bytes;			/* index arrays not given back */
};

/*
 * A growth of the index, built aside by uniqd_index_grow_begin() and then
 * published by uniqd_index_grow_end() or given back by
 * uniqd_index_grow_abort(), all under one hold of map->lock.
 */
struct uniqd_index_growth {
	u64 *slots;			/* the new array, not yet published */
	pgoff_t pg;			/* its first page */
	unsigned int pages;
	u32 log2;
	u32 kernel_only_before;		/* kernel-only entries before it */
	u64 kept;			/* entries it holds so far */
	/*
	 * Slot values (tag << 32 | idx) of the entries the current array
	 * holds that become kernel-only in the new one: the caller makes each
	 * findable in its class's kernel-only table before the growth is
	 * published.
	 */
	const u64 *kernel_only;
	u32 nkernel_only;
};

/* The entry a slot value names. */
static inline u32 uniqd_index_slot_idx(u64 v)
{
	return (u32)v;
}

void uniqd_index_destroy(struct uniqd_index *ix);
void uniqd_index_stats(struct uniqd_index *ix, struct uniqd_stats *st);
u64 uniqd_index_hash(struct uniqd_map *m, u32 class_id, const void *data,
		     u32 len);
u32 uniqd_index_find(struct uniqd_map *m, u64 hash, u32 class_id,
		     const void *data, u32 len, bool *full);
bool uniqd_index_grow_begin(struct uniqd_map *m, struct uniqd_index_growth *g);
void uniqd_index_grow_abort(struct uniqd_map *m, struct uniqd_index_growth *g,
			    int err);
void uniqd_index_grow_end(struct uniqd_map *m, struct uniqd_index_growth *g);
u64 *uniqd_index_reserve(struct uniqd_map *m, u64 hash);
void uniqd_index_set(struct uniqd_map *m, u64 *slot, u64 hash, u32 idx);
int uniqd_index_kernel_only_room(struct uniqd_map *m);
void uniqd_index_set_kernel_only(struct uniqd_map *m, u64 hash, u32 idx);

#endif /* UNIQD_INDEX_H */
