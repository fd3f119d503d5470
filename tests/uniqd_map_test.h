/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A reader of the mapped pool for the VM tests, written from
 * Documentation/userspace-api.rst ("The mapped pool") alone, apart from
 * libuniqd's, so that the tests check the ABI and not one implementation of
 * it against itself. UNIQD_MAP_VERSION 2: one index array per class, named
 * by classes[class_id]; a slot names its record (tag over offset / 8).
 */
#ifndef UNIQD_TESTS_UNIQD_MAP_TEST_H
#define UNIQD_TESTS_UNIQD_MAP_TEST_H

#include <sys/mman.h>

#include "uniqd_test.h"	/* and uniqd_maphash(), from the uapi header */

struct ut_map {
	const __u8 *base;
	size_t size;
	const struct uniqd_map_header *h;
};

#define UT_ACQ(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)

/* Map the pool of @fd whole, read-only; 0 or -1 with errno. */
static inline int ut_map(int fd, struct ut_map *m)
{
	long page = sysconf(_SC_PAGESIZE);
	const struct uniqd_map_header *h;
	void *p;

	memset(m, 0, sizeof(*m));
	h = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED)
		return -1;
	m->size = h->map_size;
	munmap((void *)h, page);
	p = mmap(NULL, m->size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -1;
	m->base = p;
	m->h = p;
	return 0;
}

static inline void ut_unmap(struct ut_map *m)
{
	if (m->base)
		munmap((void *)m->base, m->size);
	m->base = NULL;
}

/* Bytes a mapped record of @len content bytes takes: ALIGN(16 + len, 8). */
static inline __u64 ut_map_rec_bytes(__u32 len)
{
	return (sizeof(struct uniqd_map_rec) + (__u64)len + 7) & ~7ULL;
}

/* The record of entry @idx, or NULL if it is not published. */
static inline const struct uniqd_map_rec *ut_map_rec(const struct ut_map *m,
						     __u32 idx)
{
	const __u64 *e = (const __u64 *)(m->base + m->h->entries_off);
	__u64 off;

	if (!idx || idx >= UT_ACQ(&m->h->entries_end))
		return NULL;
	off = UT_ACQ(&e[idx]);
	return off ? (const struct uniqd_map_rec *)(m->base + off) : NULL;
}

/* classes[@cls]: the word naming class @cls's index array, or 0. */
static inline __u64 ut_map_class_word(const struct ut_map *m, __u32 cls)
{
	const __u64 *c = (const __u64 *)(m->base + m->h->classes_off);

	if (cls >= m->h->classes_cap || cls >= UT_ACQ(&m->h->classes_end))
		return 0;
	return UT_ACQ(&c[cls]);
}

/* The slots of the array index word @w names, its slot count in *@n. */
static inline const __u64 *ut_map_slots(const struct ut_map *m, __u64 w,
					__u64 *n)
{
	*n = w ? 1ULL << UNIQD_MAP_INDEX_LOG2(w) : 0;
	return w ? (const __u64 *)(m->base + UNIQD_MAP_INDEX_OFF(w)) : NULL;
}

/* The bytes of the array index word @w names (0 for no array). */
static inline __u64 ut_map_array_bytes(__u64 w)
{
	return w ? 8ULL << UNIQD_MAP_INDEX_LOG2(w) : 0;
}

/*
 * The record slot value @v names, or NULL when it names none: empty, or an
 * entry being placed (an offset below records_off), or outside the region.
 */
static inline const struct uniqd_map_rec *ut_map_slot_rec(const struct ut_map *m,
							  __u64 v)
{
	__u64 off = UNIQD_MAP_SLOT_OFF(v);

	if (!v || off < m->h->records_off ||
	    off + sizeof(struct uniqd_map_rec) > m->h->records_off + m->h->records_size)
		return NULL;
	return (const struct uniqd_map_rec *)(m->base + off);
}

/*
 * The handle of (@cls, @data) found through index word @w (the class's
 * classes[] word, current or held from before), or 0.
 */
static inline __u64 ut_map_find_in(const struct ut_map *m, __u64 w, __u32 cls,
				   const void *data, __u32 len)
{
	const __u64 *slots;
	__u64 h, n, home;
	__u32 tag;

	slots = ut_map_slots(m, w, &n);
	if (!slots)
		return 0;
	h = uniqd_maphash(m->h->hash_seed[0], m->h->hash_seed[1], cls, data,
			  len);
	tag = (__u32)(h >> UNIQD_MAP_TAG_SHIFT);
	home = h & (n - 1);
	for (__u32 i = 0; i < m->h->probe; i++) {
		__u64 v = UT_ACQ(&slots[(home + i) & (n - 1)]);
		const struct uniqd_map_rec *r;

		if (!v)
			return 0;
		if (UNIQD_MAP_SLOT_TAG(v) != tag)
			continue;
		r = ut_map_slot_rec(m, v);
		if (r && r->class_id == cls && r->len == len &&
		    UNIQD_MAP_SLOT_OFF(v) + ut_map_rec_bytes(len) <=
		    m->h->records_off + m->h->records_size &&
		    !memcmp(r->data, data, len))
			return m->h->handle_base | r->idx;
	}
	return 0;
}

/*
 * How many slots of the probe window of (@cls, @data) in index word @w's
 * array are taken (not 0). An entry not in the index must have found all
 * of them taken when it was placed (windows only fill).
 */
static inline __u32 ut_map_window_used(const struct ut_map *m, __u64 w, __u32 cls,
				       const void *data, __u32 len)
{
	const __u64 *slots;
	__u64 n, home;
	__u32 used = 0;

	slots = ut_map_slots(m, w, &n);
	if (!slots)
		return 0;
	home = uniqd_maphash(m->h->hash_seed[0], m->h->hash_seed[1], cls, data,
			     len) & (n - 1);
	for (__u32 i = 0; i < m->h->probe; i++)
		used += UT_ACQ(&slots[(home + i) & (n - 1)]) != 0;
	return used;
}

/* The handle of (@cls, @data) found through its class's current index, or 0. */
static inline __u64 ut_map_find(const struct ut_map *m, __u32 cls,
				const void *data, __u32 len)
{
	return ut_map_find_in(m, ut_map_class_word(m, cls), cls, data, len);
}

#endif /* UNIQD_TESTS_UNIQD_MAP_TEST_H */
