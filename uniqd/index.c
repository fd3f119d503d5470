// SPDX-License-Identifier: GPL-2.0
/*
 * uniqd: the mapped index, the one table by which both the kernel and every
 * process find an entry.
 *
 * An open-addressing array of 64-bit slots, (tag << 32 | idx), where tag is
 * the high half of the entry's uniqd_maphash() and also picks its home slot
 * (tag & (slots - 1)). An entry goes into the first empty slot of the
 * UNIQD_MAP_PROBE slots from its home. If all are taken it is kernel-only:
 * out of the index (counted in STATS.map_overflow, the name the ABI keeps)
 * and in its class's kernel-only table under the pool's secret key instead
 * (entry.c), until a growth places it again where its new window has room. So a reader probes
 * at most UNIQD_MAP_PROBE slots, and keys crafted to collide under the
 * public seed only send themselves to the kernel-only table, where they
 * cost a keyed BLAKE3 and a bounded chain.
 *
 * What makes it a table and not a cache: every entry is either in its
 * window of the current array, or that window is full (and the entry is in
 * the kernel-only table). Windows only fill, so a probe that meets an empty
 * slot is a miss; one that meets a full window asks the kernel-only table.
 * A growth keeps the rule: an entry of the old array that is kernel-only
 * in the new one gets its kernel-only record first, or the growth fails
 * and the old array stays.
 *
 * The array doubles when more than half full. The new one is built aside
 * from the old one's slots (a slot holds its tag, hence its home at any
 * size), then published as one word, header.index, with release: the
 * kernel reads the same word as processes do. Then the old array is given
 * back (uniqd_map_free()): a process that loaded the old word reads zeroes
 * there, empty slots, which only send it to the ioctl; a kernel reader
 * holds rcu_read_lock() from the word to its last slot, and one that finds
 * the old pages gone loads the word again, which is the new one by then.
 *
 * Writers hold map->lock; entries are placed after their handle resolves
 * (entries[idx] published), so a reader that finds a slot always finds its
 * record. Readers take no lock.
 */
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "index.h"
#include "map.h"
#include "trace.h"

/* uniqd_maphash() comes with the uapi header, under this condition. */
#ifndef __SIZEOF_INT128__
#error "the mapped index hash needs 128-bit integers"
#endif

/* The hash of the index, the one every process computes too. */
u64 uniqd_index_hash(struct uniqd_map *m, u32 class_id, const void *data,
		     u32 len)
{
	return uniqd_maphash(m->hdr->hash_seed[0], m->hdr->hash_seed[1],
			     class_id, data, len);
}

/*
 * The current array and its log2, as header.index says; NULL if none yet.
 * Under rcu_read_lock(): the array stays until the caller leaves it.
 */
static const u64 *uniqd_index_current(struct uniqd_map *m, u32 *log2)
{
	const u64 *slots;
	u64 w;

	RCU_LOCKDEP_WARN(!rcu_read_lock_held(), "uniqd index read without RCU");
	for (;;) {
		/* Pairs with the release in uniqd_index_grow_end(): slots whole. */
		w = smp_load_acquire(&m->hdr->index);
		if (!w)
			return NULL;
		*log2 = UNIQD_MAP_INDEX_LOG2(w);
		slots = xa_load(&m->pages, UNIQD_MAP_INDEX_OFF(w) >> PAGE_SHIFT);
		if (slots)
			return slots;
		/* Given back since: a newer word was published before. */
		cpu_relax();
	}
}

/*
 * The entry of class @class_id holding @data in the current array, or 0.
 * *@full says whether a miss is only the index's: its window had no empty
 * slot (or there is no array yet), so the entry may be in the kernel-only
 * table. No lock: a concurrent writer can only add what this misses.
 */
u32 uniqd_index_find(struct uniqd_map *m, u64 hash, u32 class_id,
		     const void *data, u32 len, bool *full)
{
	u32 tag = hash >> 32, log2 = 0, i, idx = 0;
	const u64 *slots;
	u64 mask;

	*full = true;
	rcu_read_lock();
	slots = uniqd_index_current(m, &log2);
	if (!slots)
		goto out;
	mask = (1ULL << log2) - 1;
	for (i = 0; i < UNIQD_MAP_PROBE; i++) {
		/* Pairs with uniqd_index_set(): entries[idx] is published. */
		u64 v = smp_load_acquire(&slots[(tag + i) & mask]);
		const struct uniqd_map_rec *r;

		if (!v) {
			*full = false;
			break;
		}
		if ((u32)(v >> 32) != tag)
			continue;
		/* Records are never freed: only the slots need RCU. */
		r = uniqd_map_entry(m, (u32)v);
		if (r && r->class_id == class_id && r->len == len &&
		    !memcmp(r->data, data, len)) {
			*full = false;
			idx = (u32)v;
			break;
		}
	}
out:
	rcu_read_unlock();
	return idx;
}

/* The first empty slot of @tag's window in @slots (2^@log2), or NULL. */
static u64 *uniqd_index_window(u64 *slots, u32 log2, u32 tag)
{
	u64 mask = (1ULL << log2) - 1;
	u32 i;

	for (i = 0; i < UNIQD_MAP_PROBE; i++) {
		u64 *s = &slots[(tag + i) & mask];

		if (!*s)
			return s;
	}
	return NULL;
}

/*
 * Room in the list of kernel-only entries for one more. The list must hold
 * every one of them: a growth places them again, and an entry it missed
 * would sit in neither the new array nor a full window, so a probe that
 * meets an empty slot would wrongly call it absent. So room is made before
 * an entry becomes kernel-only, and a failure (-ENOMEM) makes none so.
 */
int uniqd_index_kernel_only_room(struct uniqd_map *m)
{
	struct uniqd_index *ix = &m->index;
	u64 *list;
	u32 cap;

	lockdep_assert_held(&m->lock);
	if (ix->nkernel_only < ix->kernel_only_cap)
		return 0;
	cap = max(2 * ix->kernel_only_cap, 16U);
	list = kvmalloc_array(cap, sizeof(*list), GFP_KERNEL_ACCOUNT);
	if (!list)
		return -ENOMEM;
	if (ix->kernel_only)
		memcpy(list, ix->kernel_only, ix->nkernel_only * sizeof(*list));
	kvfree(ix->kernel_only);
	ix->kernel_only = list;
	ix->kernel_only_cap = cap;
	return 0;
}

/* Remember @v, kernel-only: uniqd_index_kernel_only_room() first. */
static void uniqd_index_kernel_only_add(struct uniqd_map *m, u64 v)
{
	struct uniqd_index *ix = &m->index;

	lockdep_assert_held(&m->lock);
	if (WARN_ON_ONCE(ix->nkernel_only >= ix->kernel_only_cap))
		return;
	ix->kernel_only[ix->nkernel_only++] = v;
}

/* The pool's id, for the trace events. */
static u32 uniqd_index_pool_id(struct uniqd_map *m)
{
	return m->hdr->handle_base >> 32;
}

/*
 * Build aside the array that one more entry needs, if it needs one: the
 * first, or, when the current one would be more than half full, one twice
 * its size, from the index region, filled with the current array's entries
 * that their windows in it have room for. True if built: *@g then says it,
 * and g->kernel_only the entries the current array holds that become
 * kernel-only in it, which the caller makes findable in their kernel-only
 * tables before calling uniqd_index_grow_end() (or, if it cannot,
 * uniqd_index_grow_abort()). False if no growth is due, or if it failed
 * (the index region or memory is exhausted, or the list of kernel-only
 * entries cannot grow): the current array stays in use.
 */
bool uniqd_index_grow_begin(struct uniqd_map *m, struct uniqd_index_growth *g)
{
	struct uniqd_index *ix = &m->index;
	u64 *s, i, bytes;
	int ret;

	lockdep_assert_held(&m->lock);
	if (!ix->slots)
		g->log2 = UNIQD_MAP_INDEX_MIN_LOG2;
	else if ((ix->indexed + 1) * 2 > 1ULL << ix->log2)
		g->log2 = ix->log2 + 1;
	else
		return false;
	bytes = sizeof(u64) << g->log2;
	g->pages = DIV_ROUND_UP(bytes, PAGE_SIZE);
	g->pg = m->index_next;
	g->kernel_only_before = ix->nkernel_only;
	g->kept = 0;
	ret = -ENOSPC;
	if (g->pages > m->index_pg + m->index_pages - g->pg)
		goto fail;
	/* map.c's allocator: pages entered in m->pages, kernel-contiguous. */
	ret = -ENOMEM;
	g->slots = uniqd_map_alloc(m, g->pg, g->pages);
	if (!g->slots)
		goto fail;
	/* Faults map the pages below index_next, and zero pages once freed. */
	WRITE_ONCE(m->index_next, m->index_next + g->pages);
	ix->bytes += bytes;
	for (i = 0; ix->slots && i < 1ULL << ix->log2; i++) {
		u64 v = ix->slots[i];

		if (!(i & 1023))
			cond_resched();
		if (!v)
			continue;
		s = uniqd_index_window(g->slots, g->log2, v >> 32);
		if (s) {
			*s = v;
			g->kept++;
			continue;
		}
		ret = uniqd_index_kernel_only_room(m);
		if (ret) {
			uniqd_index_grow_abort(m, g, ret);
			return false;
		}
		uniqd_index_kernel_only_add(m, v);
	}
	/* Appended to the list of kernel-only entries: there until the end. */
	g->kernel_only = ix->kernel_only + g->kernel_only_before;
	g->nkernel_only = ix->nkernel_only - g->kernel_only_before;
	return true;

fail:
	trace_uniqd_index_grow(uniqd_index_pool_id(m),
			       ix->slots ? ix->log2 : 0, g->log2, ix->indexed,
			       ret);
	return false;
}

/*
 * The growth @g is not published, for the caller's reason @err: the list
 * of kernel-only entries forgets what it added (the current array holds
 * those), and the new array goes back and its offsets are taken again,
 * index_next first (uniqd_map_free()), so that a growth that fails burns
 * neither memory nor room in the index region, however often it is tried
 * again.
 */
void uniqd_index_grow_abort(struct uniqd_map *m, struct uniqd_index_growth *g,
			    int err)
{
	struct uniqd_index *ix = &m->index;

	lockdep_assert_held(&m->lock);
	ix->nkernel_only = g->kernel_only_before;
	ix->bytes -= sizeof(u64) << g->log2;
	WRITE_ONCE(m->index_next, g->pg);
	uniqd_map_free(m, g->pg, g->pages);
	trace_uniqd_index_grow(uniqd_index_pool_id(m),
			       ix->slots ? ix->log2 : 0, g->log2, ix->indexed,
			       err);
}

/*
 * Publish the growth @g, whose new kernel-only entries (g->kernel_only) are
 * findable in the kernel-only tables: the kernel-only entries from before
 * are placed where their new windows have room (the others stay on the
 * list), the new array is published and the current one given back.
 */
void uniqd_index_grow_end(struct uniqd_map *m, struct uniqd_index_growth *g)
{
	struct uniqd_index *ix = &m->index;
	u32 j, still = 0, old = ix->slots ? ix->log2 : 0;
	pgoff_t old_pg = ix->slots_pg;
	u64 *s, bytes;

	lockdep_assert_held(&m->lock);
	for (j = 0; j < g->kernel_only_before; j++) {
		u64 v = ix->kernel_only[j];

		s = uniqd_index_window(g->slots, g->log2, v >> 32);
		if (s) {
			*s = v;
			g->kept++;
		} else {
			ix->kernel_only[still++] = v;
		}
		if (!(j & 1023))
			cond_resched();
	}
	for (j = g->kernel_only_before; j < ix->nkernel_only; j++)
		ix->kernel_only[still++] = ix->kernel_only[j];
	ix->nkernel_only = still;
	/* indexed + nkernel_only is every entry, before and after. */
	ix->indexed = g->kept;
	ix->slots = g->slots;
	ix->slots_pg = g->pg;
	ix->log2 = g->log2;
	/* The new slots are written: readers may take the new array. */
	smp_store_release(&m->hdr->index, (u64)g->pg << PAGE_SHIFT | g->log2);
	if (old) {
		bytes = sizeof(u64) << old;
		uniqd_map_free(m, old_pg, DIV_ROUND_UP(bytes, PAGE_SIZE));
		ix->bytes -= bytes;
	}
	trace_uniqd_index_grow(uniqd_index_pool_id(m), old, g->log2,
			       ix->indexed, 0);
}

/*
 * Where a new entry of index hash @hash goes in the current array: its
 * slot, or NULL if its window is full or there is no array (then the
 * caller makes it findable in the kernel-only table and calls
 * uniqd_index_set_kernel_only()). The caller grew the index first, if it was due
 * (uniqd_index_grow_begin()).
 */
u64 *uniqd_index_reserve(struct uniqd_map *m, u64 hash)
{
	struct uniqd_index *ix = &m->index;

	lockdep_assert_held(&m->lock);
	if (!ix->slots)
		return NULL;
	return uniqd_index_window(ix->slots, ix->log2, hash >> 32);
}

/* Fill the reserved @slot with entry @idx, whose entries[idx] is published. */
void uniqd_index_set(struct uniqd_map *m, u64 *slot, u64 hash, u32 idx)
{
	lockdep_assert_held(&m->lock);
	/* Pairs with readers' acquire of the slot. */
	smp_store_release(slot, (hash & ~0xffffffffULL) | idx);
	m->index.indexed++;
}

/*
 * Entry @idx is kernel-only: listed, and tried again on growth
 * (uniqd_index_kernel_only_room() made room for it).
 */
void uniqd_index_set_kernel_only(struct uniqd_map *m, u64 hash, u32 idx)
{
	lockdep_assert_held(&m->lock);
	uniqd_index_kernel_only_add(m, (hash & ~0xffffffffULL) | idx);
}

void uniqd_index_stats(struct uniqd_index *ix, struct uniqd_stats *st)
{
	st->map_indexed = ix->indexed;
	/* The ABI's name for the kernel-only entries. */
	st->map_overflow = ix->nkernel_only;
	st->index_slots = ix->slots ? 1ULL << ix->log2 : 0;
	st->index_bytes = ix->bytes;
	/* The list of kernel-only entries is kernel memory too. */
	st->kernel_bytes += (u64)ix->kernel_only_cap * sizeof(*ix->kernel_only);
}

void uniqd_index_destroy(struct uniqd_index *ix)
{
	kvfree(ix->kernel_only);
}
