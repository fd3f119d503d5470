// SPDX-License-Identifier: GPL-2.0
/*
 * uniqd: the mapped index, by which processes find an entry's handle in the
 * mapping without a system call.
 *
 * An open-addressing array of 64-bit slots, (tag << 32 | idx), where tag is
 * the high half of the entry's uniqd_maphash() and also picks its home slot
 * (tag & (slots - 1)). An entry goes into the first empty slot of the
 * UNIQD_MAP_PROBE slots from its home; if all are taken it stays out of
 * the index (counted in STATS.map_overflow) and is found by the ioctl, whose
 * table under the pool's secret key is the authority, until the index grows:
 * a growth places such entries again where their new window has room. So a reader probes at
 * most UNIQD_MAP_PROBE slots, and keys crafted to collide under the public
 * seed only send themselves back to the kernel.
 *
 * The array doubles when more than half full. The new one is built aside
 * from the old one's slots (a slot holds its tag, hence its home at any
 * size), then published as one word, header.index, with release. The old
 * array stays mapped and unchanged until the pool is freed: a reader that
 * loaded the old word still probes a consistent array, which can only miss
 * what came since, and a miss only costs the ioctl.
 *
 * Writers are serialised by map->lock; entries are added after their
 * handle resolves (entries[idx] published), so a reader that finds a slot
 * always finds its record.
 */
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "map.h"
#include "trace.h"

/* uniqd_maphash() comes with the uapi header, under this condition. */
#ifndef __SIZEOF_INT128__
#error "the mapped index hash needs 128-bit integers"
#endif

/* Put @v into @slots (2^@log2 of them); false if its window is full. */
static bool uniqd_index_place(u64 *slots, u32 log2, u64 v)
{
	u64 mask = (1ULL << log2) - 1;
	u32 home = v >> 32, i;

	for (i = 0; i < UNIQD_MAP_PROBE; i++) {
		u64 *s = &slots[(home + i) & mask];

		if (!*s) {
			/* Pairs with readers' acquire of the slot. */
			smp_store_release(s, v);
			return true;
		}
	}
	return false;
}

/*
 * Remember @v, left out by a full window, to place it again when the index
 * grows. If even the list cannot grow (-ENOMEM) the entry stays out for
 * good; the ioctl still finds it.
 */
static void uniqd_index_spill(struct uniqd_map *m, u64 v)
{
	u64 *spill;
	u32 cap;

	lockdep_assert_held(&m->lock);
	if (m->nspill == m->spill_cap) {
		cap = max(2 * m->spill_cap, 16U);
		spill = kvmalloc_array(cap, sizeof(*spill), GFP_KERNEL_ACCOUNT);
		if (!spill)
			return;
		if (m->spill)
			memcpy(spill, m->spill, m->nspill * sizeof(*spill));
		kvfree(m->spill);
		m->spill = spill;
		m->spill_cap = cap;
	}
	m->spill[m->nspill++] = v;
}

/*
 * A new array of 2^@log2 slots from the index region, filled from the
 * current one and from the entries full windows left out so far (each
 * placed again if its window in the new array has room), and published.
 * Fails (the old array stays in use) when the region or memory is
 * exhausted.
 */
static int uniqd_index_grow(struct uniqd_map *m, u32 log2)
{
	u64 bytes = sizeof(u64) << log2;
	unsigned int n = DIV_ROUND_UP(bytes, PAGE_SIZE);
	u32 id = m->hdr->handle_base >> 32, old = m->slots ? m->log2 : 0;
	u64 *slots, i, kept = 0;
	pgoff_t pg = m->index_next;
	u32 j, left = 0;
	int ret = -ENOSPC;

	lockdep_assert_held(&m->lock);
	if (n > m->index_pg + m->index_pages - pg)
		goto out;
	/* map.c's allocator: pages entered in m->pages, kernel-contiguous. */
	ret = -ENOMEM;
	slots = uniqd_map_alloc(m, pg, n);
	if (!slots)
		goto out;
	m->index_next += n;
	m->index_bytes += bytes;
	for (i = 0; m->slots && i < 1ULL << m->log2; i++) {
		u64 v = m->slots[i];

		if (v && uniqd_index_place(slots, log2, v))
			kept++;
		else if (v)
			uniqd_index_spill(m, v);
		if (!(i & 1023))
			cond_resched();
	}
	for (j = 0; j < m->nspill; j++) {
		u64 v = m->spill[j];

		if (uniqd_index_place(slots, log2, v))
			kept++;
		else
			m->spill[left++] = v;
		if (!(j & 1023))
			cond_resched();
	}
	m->nspill = left;
	/* indexed + overflow is every entry, before and after. */
	m->overflow -= kept - m->indexed;
	m->indexed = kept;
	m->slots = slots;
	m->log2 = log2;
	/* The new slots are written: readers may take the new array. */
	smp_store_release(&m->hdr->index, (u64)pg << PAGE_SHIFT | log2);
	ret = 0;
out:
	trace_uniqd_index_grow(id, old, log2, m->indexed, ret);
	return ret;
}

/* Add entry @idx, whose entries[idx] is published, to the mapped index. */
void uniqd_map_index_add(struct uniqd_map *m, u32 class_id, const void *data,
			 u32 len, u32 idx)
{
	u64 h = uniqd_maphash(m->hdr->hash_seed[0], m->hdr->hash_seed[1],
			      class_id, data, len);
	u64 v = (h & ~0xffffffffULL) | idx;

	mutex_lock(&m->lock);
	if (!m->slots)
		uniqd_index_grow(m, UNIQD_MAP_INDEX_MIN_LOG2);
	else if ((m->indexed + 1) * 2 > 1ULL << m->log2)
		uniqd_index_grow(m, m->log2 + 1);
	if (m->slots && uniqd_index_place(m->slots, m->log2, v)) {
		m->indexed++;
	} else {
		m->overflow++;
		uniqd_index_spill(m, v);
	}
	mutex_unlock(&m->lock);
}
