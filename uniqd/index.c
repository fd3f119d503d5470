// SPDX-License-Identifier: GPL-2.0
/*
 * uniqd: the mapped index, the one table by which both the kernel and every
 * process find an entry.
 *
 * An open-addressing array of 64-bit slots, (tag << 32 | idx), where tag is
 * the high half of the entry's uniqd_maphash() and also picks its home slot
 * (tag & (slots - 1)). An entry goes into the first empty slot of the
 * UNIQD_MAP_PROBE slots from its home. If all are taken it stays out of the
 * index (counted in STATS.map_overflow) and goes into its class's
 * kernel-only table under the pool's secret key instead (entry.c), until a
 * growth places it again where its new window has room. So a reader probes
 * at most UNIQD_MAP_PROBE slots, and keys crafted to collide under the
 * public seed only send themselves to the kernel-only table, where they
 * cost a keyed BLAKE3 and a bounded chain.
 *
 * What makes it a table and not a cache: every entry is either in its
 * window of the current array, or that window is full (and the entry is in
 * the kernel-only table). Windows only fill, so a probe that meets an empty
 * slot is a miss; one that meets a full window asks the kernel-only table.
 * A growth keeps the rule: an entry of the old array that the new one
 * leaves out gets its kernel-only record first, or the growth fails and
 * the old array stays.
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
 * Room in the list of entries left out for one more. The list must hold
 * every one of them: a growth places them again, and an entry it missed
 * would sit in neither the new array nor a full window, so a probe that
 * meets an empty slot would wrongly call it absent. So room is made before
 * an entry is left out, and a failure (-ENOMEM) leaves nothing out.
 */
int uniqd_index_spill_room(struct uniqd_map *m)
{
	struct uniqd_index *ix = &m->index;
	u64 *spill;
	u32 cap;

	lockdep_assert_held(&m->lock);
	if (ix->nspill < ix->spill_cap)
		return 0;
	cap = max(2 * ix->spill_cap, 16U);
	spill = kvmalloc_array(cap, sizeof(*spill), GFP_KERNEL_ACCOUNT);
	if (!spill)
		return -ENOMEM;
	if (ix->spill)
		memcpy(spill, ix->spill, ix->nspill * sizeof(*spill));
	kvfree(ix->spill);
	ix->spill = spill;
	ix->spill_cap = cap;
	return 0;
}

/* Remember @v, left out by a full window; uniqd_index_spill_room() first. */
static void uniqd_index_spill(struct uniqd_map *m, u64 v)
{
	struct uniqd_index *ix = &m->index;

	lockdep_assert_held(&m->lock);
	if (WARN_ON_ONCE(ix->nspill >= ix->spill_cap))
		return;
	ix->spill[ix->nspill++] = v;
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
 * and g->out the entries the current array holds that it leaves out, which
 * the caller makes findable in their kernel-only tables before calling
 * uniqd_index_grow_end() (or, if it cannot, uniqd_index_grow_abort()).
 * False if no growth is due, or if it failed (the index region or memory is
 * exhausted, or the list of entries left out cannot grow): the current
 * array stays in use.
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
	g->spilled = ix->nspill;
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
		ret = uniqd_index_spill_room(m);
		if (ret) {
			uniqd_index_grow_abort(m, g, ret);
			return false;
		}
		uniqd_index_spill(m, v);
	}
	/* Appended to the list of entries left out, which it keeps until then. */
	g->out = ix->spill + g->spilled;
	g->nout = ix->nspill - g->spilled;
	return true;

fail:
	trace_uniqd_index_grow(uniqd_index_pool_id(m),
			       ix->slots ? ix->log2 : 0, g->log2, ix->indexed,
			       ret);
	return false;
}

/*
 * The growth @g is not published, for the caller's reason @err: the list
 * of entries left out forgets what it added (the current array holds
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
	ix->nspill = g->spilled;
	ix->bytes -= sizeof(u64) << g->log2;
	WRITE_ONCE(m->index_next, g->pg);
	uniqd_map_free(m, g->pg, g->pages);
	trace_uniqd_index_grow(uniqd_index_pool_id(m),
			       ix->slots ? ix->log2 : 0, g->log2, ix->indexed,
			       err);
}

/*
 * Publish the growth @g, whose entries left out (g->out) are findable in
 * the kernel-only tables: the entries left out before are placed where
 * their new windows have room (the others stay on the list), the new array
 * is published and the current one given back.
 */
void uniqd_index_grow_end(struct uniqd_map *m, struct uniqd_index_growth *g)
{
	struct uniqd_index *ix = &m->index;
	u32 j, left = 0, old = ix->slots ? ix->log2 : 0;
	pgoff_t old_pg = ix->slots_pg;
	u64 *s, bytes;

	lockdep_assert_held(&m->lock);
	for (j = 0; j < g->spilled; j++) {
		u64 v = ix->spill[j];

		s = uniqd_index_window(g->slots, g->log2, v >> 32);
		if (s) {
			*s = v;
			g->kept++;
		} else {
			ix->spill[left++] = v;
		}
		if (!(j & 1023))
			cond_resched();
	}
	for (j = g->spilled; j < ix->nspill; j++)
		ix->spill[left++] = ix->spill[j];
	ix->nspill = left;
	/* indexed + overflow is every entry, before and after. */
	ix->overflow -= g->kept - ix->indexed;
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
 * uniqd_index_left_out()). The caller grew the index first, if it was due
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
 * Entry @idx stays out of the index: counted, and tried again on growth
 * (uniqd_index_spill_room() made room for it).
 */
void uniqd_index_left_out(struct uniqd_map *m, u64 hash, u32 idx)
{
	lockdep_assert_held(&m->lock);
	m->index.overflow++;
	uniqd_index_spill(m, (hash & ~0xffffffffULL) | idx);
}

void uniqd_index_stats(struct uniqd_index *ix, struct uniqd_stats *st)
{
	st->map_indexed = ix->indexed;
	st->map_overflow = ix->overflow;
	st->index_slots = ix->slots ? 1ULL << ix->log2 : 0;
	st->index_bytes = ix->bytes;
	/* The list of entries to place again is kernel memory too. */
	st->kernel_bytes += (u64)ix->spill_cap * sizeof(*ix->spill);
}

void uniqd_index_destroy(struct uniqd_index *ix)
{
	kvfree(ix->spill);
}
