/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A reader of the mapped pool for the VM tests, written from
 * Documentation/userspace-api.rst ("The mapped pool") alone, apart from
 * libuniqd's, so that the tests check the ABI and not one implementation of
 * it against itself.
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

/* The handle of (@cls, @data) found through index word @w, or 0. */
static inline __u64 ut_map_find_in(const struct ut_map *m, __u64 w, __u32 cls,
				   const void *data, __u32 len)
{
	const __u64 *slots;
	__u64 h, mask;
	__u32 tag;

	if (!w)
		return 0;
	slots = (const __u64 *)(m->base + UNIQD_MAP_INDEX_OFF(w));
	mask = (1ULL << UNIQD_MAP_INDEX_LOG2(w)) - 1;
	h = uniqd_maphash(m->h->hash_seed[0], m->h->hash_seed[1], cls, data,
			  len);
	tag = h >> 32;
	for (__u32 i = 0; i < m->h->probe; i++) {
		__u64 v = UT_ACQ(&slots[(tag + i) & mask]);
		const struct uniqd_map_rec *r;

		if (!v)
			return 0;
		if ((__u32)(v >> 32) != tag)
			continue;
		r = ut_map_rec(m, (__u32)v);
		if (r && r->class_id == cls && r->len == len &&
		    !memcmp(r->data, data, len))
			return m->h->handle_base | (__u32)v;
	}
	return 0;
}

/*
 * How many slots of the probe window of (@cls, @data) in index word @w's
 * array are taken. An entry not in the index must have found all of them
 * taken when it was placed (windows only fill).
 */
static inline __u32 ut_map_window_used(const struct ut_map *m, __u64 w, __u32 cls,
				       const void *data, __u32 len)
{
	const __u64 *slots;
	__u64 mask;
	__u32 tag, used = 0;

	if (!w)
		return 0;
	slots = (const __u64 *)(m->base + UNIQD_MAP_INDEX_OFF(w));
	mask = (1ULL << UNIQD_MAP_INDEX_LOG2(w)) - 1;
	tag = uniqd_maphash(m->h->hash_seed[0], m->h->hash_seed[1], cls, data, len) >> 32;
	for (__u32 i = 0; i < m->h->probe; i++)
		used += UT_ACQ(&slots[(tag + i) & mask]) != 0;
	return used;
}

/* The handle of (@cls, @data) found through the current index, or 0. */
static inline __u64 ut_map_find(const struct ut_map *m, __u32 cls,
				const void *data, __u32 len)
{
	return ut_map_find_in(m, UT_ACQ(&m->h->index), cls, data, len);
}

#endif /* UNIQD_TESTS_UNIQD_MAP_TEST_H */
