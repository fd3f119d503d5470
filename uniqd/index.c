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
 * table under the pool's secret key is the authority. So a reader probes at
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
#include <linux/mm.h>
#include <linux/string.h>

#include "map.h"
#include "maphash.h"
#include "trace.h"

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
 * A new array of 2^@log2 slots from the index region, filled from the
 * current one, and published. Fails (the old array stays in use) when the
 * region or memory is exhausted.
 */
static int uniqd_index_grow(struct uniqd_map *m, u32 log2)
{
	u64 bytes = sizeof(u64) << log2;
	unsigned int n = DIV_ROUND_UP(bytes, PAGE_SIZE);
	u32 id = m->hdr->handle_base >> 32, old = m->slots ? m->log2 : 0;
	u64 *slots, i, kept = 0;
	pgoff_t pg = m->index_next;
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
	if (m->slots) {
		for (i = 0; i < 1ULL << m->log2; i++) {
			u64 v = m->slots[i];

			if (!v)
				continue;
			if (uniqd_index_place(slots, log2, v))
				kept++;
			else
				m->overflow++;
		}
		m->indexed = kept;
	}
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

	mutex_lock(&m->lock);
	if (!m->slots)
		uniqd_index_grow(m, UNIQD_MAP_INDEX_MIN_LOG2);
	else if ((m->indexed + 1) * 2 > 1ULL << m->log2)
		uniqd_index_grow(m, m->log2 + 1);
	if (m->slots &&
	    uniqd_index_place(m->slots, m->log2, (h & ~0xffffffffULL) | idx))
		m->indexed++;
	else
		m->overflow++;
	mutex_unlock(&m->lock);
}
