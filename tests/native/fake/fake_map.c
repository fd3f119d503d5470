// SPDX-License-Identifier: GPL-2.0
/*
 * The fake device's mapped pool (fake_map.h): the layout of
 * include/uapi/linux/uniqd.h, written by the module's rules. The caller
 * serialises the writers; readers (libuniqd) take no lock, so every word
 * they follow is published with release after what it covers.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fake_map.h"

/* uniqd/map.h: the first index array, 2^10 slots. */
#define FK_INDEX_MIN_LOG2	10U

static struct uniqd_map_header *fk_hdr(const struct fk_mapping *m)
{
	return (struct uniqd_map_header *)m->base;
}

static uint64_t fk_round(uint64_t n, uint64_t to)
{
	return (n + to - 1) & ~(to - 1);
}

int fk_mapping_new(struct fk_mapping *m, const struct fk_geometry *g)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), slots = 1;
	struct uniqd_map_header *h;
	uint64_t entries_off = page, index_off, index_size, records_off;

	/* Every index array in turn, up to twice the entries' slots. */
	while (slots < 2 * g->entries)
		slots <<= 1;
	index_size = g->index ? fk_round(2 * slots * sizeof(uint64_t), page) : page;
	index_off = entries_off + fk_round(g->entries * sizeof(uint64_t), page);
	records_off = index_off + index_size;
	memset(m, 0, sizeof(*m));
	m->size = records_off + fk_round(g->records, page);
	m->base = mmap(NULL, m->size, PROT_READ | PROT_WRITE,
		       (g->shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS |
		       MAP_NORESERVE, -1, 0);
	if (m->base == MAP_FAILED) {
		m->base = NULL;
		return -ENOMEM;
	}
	m->index = g->index;
	h = fk_hdr(m);
	h->magic = UNIQD_MAP_MAGIC;
	h->version = UNIQD_MAP_VERSION;
	h->header_size = sizeof(*h);
	h->page_size = (uint32_t)page;
	h->probe = UNIQD_MAP_PROBE;
	h->map_size = m->size;
	h->handle_base = g->handle_base;
	h->hash_seed[0] = g->seed[0];
	h->hash_seed[1] = g->seed[1];
	h->entries_off = entries_off;
	h->entries_cap = g->entries;
	h->index_off = index_off;
	h->index_size = index_size;
	h->records_off = records_off;
	h->records_size = fk_round(g->records, page);
	h->records_end = records_off;
	m->rec_end = records_off;
	return 0;
}

void fk_mapping_free(struct fk_mapping *m)
{
	if (m->base)
		munmap(m->base, m->size);
	memset(m, 0, sizeof(*m));
}

const struct uniqd_map_rec *fk_mapping_rec(const struct fk_mapping *m,
					   uint64_t idx)
{
	const uint64_t *entries = (const uint64_t *)(m->base + fk_hdr(m)->entries_off);

	return (const struct uniqd_map_rec *)(m->base + entries[idx]);
}

uint64_t fk_mapping_cap(const struct fk_mapping *m)
{
	return fk_hdr(m)->entries_cap;
}

uint64_t fk_mapping_index_slots(const struct fk_mapping *m)
{
	uint64_t w = fk_hdr(m)->index;

	return w ? 1ULL << UNIQD_MAP_INDEX_LOG2(w) : 0;
}

/* Place slot value @v (tag << 32 | idx) in its window; 0 if it is full. */
static int fk_index_place(uint64_t *slots, uint32_t log2, uint64_t v)
{
	uint64_t mask = (1ULL << log2) - 1;

	for (uint32_t i = 0; i < UNIQD_MAP_PROBE; i++) {
		uint64_t *s = &slots[((v >> 32) + i) & mask];

		if (!*s) {
			__atomic_store_n(s, v, __ATOMIC_RELEASE);
			return 1;
		}
	}
	return 0;
}

static uint64_t fk_index_value(const struct fk_mapping *m, uint64_t idx)
{
	const struct uniqd_map_header *h = fk_hdr(m);
	const struct uniqd_map_rec *r = fk_mapping_rec(m, idx);
	uint64_t mh = uniqd_maphash(h->hash_seed[0], h->hash_seed[1],
				    r->class_id, r->data, r->len);

	return (mh >> 32) << 32 | idx;
}

/*
 * A new array of 2^@log2 slots after the ones before it, every entry so
 * far (1 .. @last) placed in it, then published: index.c's growth, which
 * also gives the entries the old window left out another chance. If the
 * index region has no room, the current array stays: 0.
 */
static int fk_index_grow(struct fk_mapping *m, uint32_t log2, uint64_t last)
{
	struct uniqd_map_header *h = fk_hdr(m);
	uint64_t bytes = sizeof(uint64_t) << log2;
	uint64_t off = h->index_off + m->index_used;
	uint64_t *slots = (uint64_t *)(m->base + off);

	if (m->index_used + bytes > h->index_size)
		return 0;
	m->index_used += fk_round(bytes, h->page_size);
	m->indexed = m->overflow = 0;
	for (uint64_t i = 1; i <= last; i++) {
		if (fk_index_place(slots, log2, fk_index_value(m, i)))
			m->indexed++;
		else
			m->overflow++;
	}
	__atomic_store_n(&h->index, off | log2, __ATOMIC_RELEASE);
	return 1;
}

int fk_mapping_add(struct fk_mapping *m, uint64_t idx, uint32_t cls,
		   const void *data, uint32_t len)
{
	struct uniqd_map_header *h = fk_hdr(m);
	uint64_t *entries = (uint64_t *)(m->base + h->entries_off);
	uint64_t size = fk_round(sizeof(struct uniqd_map_rec) + len, 8);
	uint64_t per_page = h->page_size / sizeof(uint64_t);
	uint32_t log2 = UNIQD_MAP_INDEX_LOG2(h->index);
	struct uniqd_map_rec *r;

	if (idx >= h->entries_cap ||
	    m->rec_end + size > h->records_off + h->records_size)
		return -EDQUOT;
	/* entries_end covers whole pages of entries[], as the module's. */
	if (idx >= h->entries_end)
		__atomic_store_n(&h->entries_end, (idx / per_page + 1) * per_page,
				 __ATOMIC_RELEASE);
	r = (struct uniqd_map_rec *)(m->base + m->rec_end);
	r->class_id = cls;
	r->len = len;
	memcpy(r->data, data, len);
	__atomic_store_n(&entries[idx], m->rec_end, __ATOMIC_RELEASE);
	m->rec_end += size;
	__atomic_store_n(&h->records_end, m->rec_end, __ATOMIC_RELEASE);
	if (!m->index)
		return 0;
	/* The index doubles before it would be more than half full. */
	if ((!h->index || (m->indexed + 1) * 2 > 1ULL << log2) &&
	    fk_index_grow(m, h->index ? log2 + 1 : FK_INDEX_MIN_LOG2, idx))
		return 0;	/* entry idx placed with the others */
	if (h->index && fk_index_place((uint64_t *)(m->base + UNIQD_MAP_INDEX_OFF(h->index)),
				       UNIQD_MAP_INDEX_LOG2(h->index), fk_index_value(m, idx)))
		m->indexed++;
	else
		m->overflow++;
	return 0;
}
