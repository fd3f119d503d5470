/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libuniqd: the per-thread cache of handles (cache.c), and its lookup,
 * inline here so that a hit in uniqd_intern() calls nothing.
 *
 * The cache is 4-way set-associative, one cache line a slot, indexed by the
 * top bits of the key's one hash, uq_key_hash(): the mapped index's hash of
 * (class id, content), made once and reused by the probe of the mapping. A
 * slot keeps the full hash, the pool serial, the class id, the length, the
 * content itself (inline up to UQ_INLINE_MAX bytes, in a malloc()ed copy of
 * UQ_HEAP_MAX bytes up to that; longer keys are never cached) and the
 * handle. A hit compares all of them, the content byte for byte: a hash
 * match alone never returns a handle.
 *
 * Its size: it starts with 4096 slots (256 KiB) and doubles, up to 16384
 * slots (1 MiB), while it thrashes: when 1/UQ_GROW_EVICT of its slots are
 * evicted within UQ_GROW_CALLS calls per slot (uq_cache_evicted()). A
 * compiler unit meets about 4000 distinct keys (Documentation/benchmarks.rst,
 * "A parallel build"), which 4096 slots in 4-way sets cannot hold: 88 % hits
 * there, 99 % with 16384 slots. A program with a small working set keeps
 * 256 KiB. With the heap copies of 33-256-byte keys, a thread's cache never
 * holds more than 1 MiB + 16384 * 256 B = 5 MiB.
 *
 * Why a cached handle never goes stale: the kernel never reuses a handle
 * during a pool's life and the pool lives at least as long as our attached
 * file descriptor; the pool serial is unique per uniqd_open() in the process,
 * so after uniqd_close() no slot can match again (the dead slots are simply
 * overwritten later). An empty slot has serial 0, which no pool has, so it
 * never matches either.
 *
 * Each thread owns its cache alone (the pointer in struct uq_tls): a hit is
 * one thread-local access, the hash and a few loads, with no call, lock,
 * atomic or system call. This file knows nothing of threads: tls.c
 * allocates a thread's cache on first use (uq_tls_cache()) and frees it
 * when the thread exits; intern.c asks it.
 */
#ifndef LIBUNIQD_CACHE_H
#define LIBUNIQD_CACHE_H

#include "internal.h"
#include "key_eq.h"

#define UQ_WAY_BITS	2
#define UQ_WAYS		(1U << UQ_WAY_BITS)
/* Sets: 2^UQ_SET_BITS_MIN at first, at most 2^UQ_SET_BITS_MAX. */
#ifndef UQ_SET_BITS_MIN
#define UQ_SET_BITS_MIN	10
#endif
#ifndef UQ_SET_BITS_MAX
#define UQ_SET_BITS_MAX	12
#endif
#define UQ_SLOTS_MIN	(1U << (UQ_SET_BITS_MIN + UQ_WAY_BITS))
#define UQ_SLOTS_MAX	(1U << (UQ_SET_BITS_MAX + UQ_WAY_BITS))
/*
 * Grow when slots / UQ_GROW_EVICT evictions come within UQ_GROW_CALLS *
 * slots calls (hits and misses): more than one call in 40 evicts. 1000 keys
 * interned over and over in the worst order (cyclic) evict one call in 50
 * to 60 from 4096 slots: they stay there.
 */
#define UQ_GROW_EVICT	10
#define UQ_GROW_CALLS	4
#define UQ_INLINE_MAX	32
/* Longer keys are never cached. */
#define UQ_HEAP_MAX	256

_Static_assert(UQ_SET_BITS_MIN >= 1 && UQ_SET_BITS_MIN <= UQ_SET_BITS_MAX &&
	       UQ_SET_BITS_MAX <= 20, "cache geometry");

struct uq_slot {
	uint64_t hash;
	uint64_t handle;
	uint32_t serial;	/* 0: empty */
	uint32_t class_id;
	uint32_t len;
	uint32_t pad;		/* the set's first slot: the replacement turn */
	union {
		uint8_t bytes[UQ_INLINE_MAX];
		uint8_t *heap;	/* len > UQ_INLINE_MAX */
	} key;
};
_Static_assert(sizeof(struct uq_slot) == 64, "one cache line a slot");

struct uq_cache {
	struct uq_slot *slots;	/* nslots, 64-byte aligned */
	uint32_t shift;		/* 64 - log2(sets): a set is hash >> shift */
	uint32_t nslots;
	uint32_t used;
	uint32_t window_evictions;	/* since window_calls */
	uint64_t window_calls;		/* hits + misses when the window opened */
	uint64_t hits, misses, evictions;	/* counted by the callers */
	bool grow;		/* thrashing: double at the end of uq_cache_put() */
	bool fixed;		/* could not grow: stay at this size */
};

/* An empty cache of UQ_SLOTS_MIN slots; NULL without memory. */
struct uq_cache *uq_cache_new(void) UQ_HIDDEN;
/* Free C and its heap copies (NULL: nothing). */
void uq_cache_free(struct uq_cache *c) UQ_HIDDEN;
/* Empty C, keeping its size and counters (uniqd_cache_clear()). */
void uq_cache_clear(struct uq_cache *c) UQ_HIDDEN;
/*
 * Remember HANDLE for (SERIAL, CLASS_ID, DATA, LEN) whose uq_key_hash() is
 * HASH; a key longer than UQ_HEAP_MAX is not cached. Out of line: only
 * misses call it.
 */
void uq_cache_put(struct uq_cache *c, uint32_t serial, uint32_t class_id,
		  const void *data, uint32_t len, uint64_t hash,
		  uint64_t handle) UQ_HIDDEN;

/* The first slot of the set HASH maps to. */
static UQ_ALWAYS_INLINE struct uq_slot *uq_cache_set(const struct uq_cache *c,
						     uint64_t hash)
{
	return &c->slots[(hash >> c->shift) << UQ_WAY_BITS];
}

/* The slot that holds (SERIAL, CLASS_ID, DATA, LEN) of hash HASH, or NULL. */
static UQ_ALWAYS_INLINE struct uq_slot *
uq_cache_find(const struct uq_cache *c, uint32_t serial, uint32_t class_id,
	      const void *data, uint32_t len, uint64_t hash)
{
	struct uq_slot *set = uq_cache_set(c, hash);

	for (uint32_t w = 0; w < UQ_WAYS; w++) {
		struct uq_slot *s = &set[w];

		/* serial is never 0, so an empty slot fails here. */
		if (s->hash != hash || s->serial != serial ||
		    s->class_id != class_id || s->len != len)
			continue;
		if (!uq_key_eq(len > UQ_INLINE_MAX ? s->key.heap : s->key.bytes,
			       data, len))
			continue;
		return s;
	}
	return NULL;
}

#endif /* LIBUNIQD_CACHE_H */
