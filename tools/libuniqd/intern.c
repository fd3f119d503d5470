// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libuniqd: interning and lookup, single and batched, behind a per-thread
 * cache.
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
 * Each thread owns its cache alone: a hit is one thread-local access (the
 * cache pointer in uq_tls), the hash and a few loads, all inline in
 * uniqd_intern(): no call, lock, atomic or system call. A miss goes on to
 * the mapping, whose probe takes the same hash, and the kernel
 * (uq_intern_slow()).
 * The cache is allocated on first use and freed by the pthread key
 * destructor of tls.c when the thread exits.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

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
	uint64_t hits, misses, evictions;
	bool grow;		/* thrashing: double at the end of uq_cache_put() */
	bool fixed;		/* could not grow: stay at this size */
};

static void uq_cache_clear(struct uq_cache *c)
{
	for (uint32_t i = 0; i < c->nslots; i++) {
		struct uq_slot *s = &c->slots[i];

		if (s->serial && s->len > UQ_INLINE_MAX)
			free(s->key.heap);
	}
	memset(c->slots, 0, (size_t)c->nslots * sizeof(*c->slots));
	c->used = 0;
	c->window_evictions = 0;
	c->window_calls = c->hits + c->misses;
}

void uq_cache_free(struct uq_cache *c)
{
	if (!c)
		return;
	uq_cache_clear(c);
	free(c->slots);
	free(c);
}

static struct uq_slot *uq_slots_new(uint32_t n)
{
	void *p;

	if (posix_memalign(&p, 64, (size_t)n * sizeof(struct uq_slot)))
		return NULL;
	memset(p, 0, (size_t)n * sizeof(struct uq_slot));
	return p;
}

/* T's cache, allocated on first use; NULL if impossible. */
static struct uq_cache *uq_cache_new(struct uq_tls *t)
{
	struct uq_cache *c;

	if (!uq_tls_register(t))
		return NULL;	/* without a destructor, the cache would leak */
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->slots = uq_slots_new(UQ_SLOTS_MIN);
	if (!c->slots) {
		free(c);
		return NULL;
	}
	c->nslots = UQ_SLOTS_MIN;
	c->shift = 64 - UQ_SET_BITS_MIN;
	t->cache = c;
	return c;
}

/* Native loads of possibly unaligned bytes, for comparing keys. */
static UQ_ALWAYS_INLINE uint64_t uq_rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static UQ_ALWAYS_INLINE uint32_t uq_rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* The first slot of the set HASH maps to. */
static UQ_ALWAYS_INLINE struct uq_slot *uq_cache_set(const struct uq_cache *c,
						     uint64_t hash)
{
	return &c->slots[(hash >> c->shift) << UQ_WAY_BITS];
}

/* The first 16 bytes of A and B, 8 <= LEN <= 16 of them, equal? */
static UQ_ALWAYS_INLINE bool uq_eq16(const uint8_t *a, const uint8_t *b,
				     uint32_t len)
{
	return !((uq_rd64(a) ^ uq_rd64(b)) |
		 (uq_rd64(a + len - 8) ^ uq_rd64(b + len - 8)));
}

/*
 * LEN bytes at A and B equal? A compiler's keys are short: up to 32 bytes
 * they are compared a word at a time, the words overlapping where LEN is
 * not a multiple of one, never reading outside either key.
 */
static UQ_ALWAYS_INLINE bool uq_key_eq(const uint8_t *a, const uint8_t *b,
				       uint32_t len)
{
	if (len >= 8) {
		if (len <= 16)
			return uq_eq16(a, b, len);
		if (len <= 32)
			return uq_eq16(a, b, 16) &&
			       uq_eq16(a + len - 16, b + len - 16, 16);
		return !memcmp(a, b, len);
	}
	if (len >= 4)
		return !((uq_rd32(a) ^ uq_rd32(b)) |
			 (uq_rd32(a + len - 4) ^ uq_rd32(b + len - 4)));
	/* Bytes 0, len / 2 and len - 1 are all of them. */
	return !len || (a[0] == b[0] && a[len >> 1] == b[len >> 1] &&
			a[len - 1] == b[len - 1]);
}

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

/*
 * Double the sets. Each old set splits into two by the next bit of the
 * hash, so every live slot finds a free way and none is lost. Failing to
 * allocate leaves the cache as it was, for good.
 */
static void uq_cache_grow(struct uq_cache *c)
{
	uint32_t n = c->nslots * 2;
	struct uq_slot *slots = uq_slots_new(n);

	if (!slots) {
		c->fixed = true;
		return;
	}
	c->shift--;
	for (uint32_t i = 0; i < c->nslots; i++) {
		struct uq_slot *old = &c->slots[i], *set;
		uint32_t w = 0;

		if (!old->serial)
			continue;
		set = &slots[(old->hash >> c->shift) << UQ_WAY_BITS];
		while (set[w].serial)
			w++;
		set[w] = *old;
		set[w].pad = 0;
	}
	free(c->slots);
	c->slots = slots;
	c->nslots = n;
	c->window_evictions = 0;
	c->window_calls = c->hits + c->misses;
}

/* A slot was overwritten: is the cache too small for the working set? */
static void uq_cache_evicted(struct uq_cache *c)
{
	uint64_t calls = c->hits + c->misses;

	c->evictions++;
	if (++c->window_evictions < c->nslots / UQ_GROW_EVICT)
		return;
	if (calls - c->window_calls < (uint64_t)UQ_GROW_CALLS * c->nslots &&
	    c->nslots < UQ_SLOTS_MAX && !c->fixed)
		c->grow = true;
	c->window_calls = calls;	/* a new window */
	c->window_evictions = 0;
}

/*
 * Fill an empty way of the set, else replace the ways in turn (the set's
 * first slot keeps the turn in its pad field): a hit writes nothing.
 */
static void uq_cache_put(struct uq_cache *c, uint32_t serial, uint32_t class_id,
			 const void *data, uint32_t len, uint64_t hash,
			 uint64_t handle)
{
	struct uq_slot *set = uq_cache_set(c, hash), *s = NULL;
	uint8_t *old, *heap = NULL;

	if (len > UQ_HEAP_MAX)
		return;
	s = uq_cache_find(c, serial, class_id, data, len, hash);
	if (s) {		/* asked the kernel anyway (UNIQD_NOCACHE) */
		s->handle = handle;
		return;
	}
	for (uint32_t w = 0; w < UQ_WAYS && !s; w++)
		if (!set[w].serial)
			s = &set[w];
	if (!s) {
		s = &set[set[0].pad & (UQ_WAYS - 1)];
		set[0].pad = (set[0].pad + 1) & (UQ_WAYS - 1);
	}
	old = s->serial && s->len > UQ_INLINE_MAX ? s->key.heap : NULL;
	if (len > UQ_INLINE_MAX) {
		/* Every heap copy is UQ_HEAP_MAX bytes: reuse the old one. */
		heap = old ? old : malloc(UQ_HEAP_MAX);
		if (!heap)
			return;
		old = NULL;
	}
	free(old);
	if (!s->serial)
		c->used++;
	else
		uq_cache_evicted(c);
	if (heap) {
		memcpy(heap, data, len);
		s->key.heap = heap;
	} else if (len) {
		memcpy(s->key.bytes, data, len);
	}
	s->hash = hash;
	s->serial = serial;
	s->class_id = class_id;
	s->len = len;
	s->handle = handle;
	if (unlikely(c->grow)) {
		c->grow = false;
		uq_cache_grow(c);
	}
}

int uniqd_cache_stats(struct uniqd_cache_stats *st)
{
	struct uq_cache *c = uq_tls.cache;

	if (!st)
		return uq_fail(UQ_CALL_ARGS, EINVAL, NULL);
	memset(st, 0, sizeof(*st));
	if (c) {
		st->hits = c->hits;
		st->misses = c->misses;
		st->evictions = c->evictions;
		st->slots = c->nslots;
		st->used = c->used;
	}
	return 0;
}

void uniqd_cache_clear(void)
{
	struct uq_cache *c = uq_tls.cache;

	if (c)
		uq_cache_clear(c);
}

/* ---- single keys --------------------------------------------------------- */

/* The errno for a key longer than the ABI can carry: the module's. */
#define UQ_E_KEYLEN	EMSGSIZE

/*
 * Past the cache: the mapping, then the kernel. C is the thread's cache (or
 * NULL: none for this call) and HASH the key's uq_key_hash(), or 0 if the
 * cache did not need it; the answer goes into C. Out of line, so that
 * uniqd_intern()'s hit path stays small.
 */
static uint64_t __attribute__((noinline))
uq_intern_slow(uniqd_pool *pool, struct uq_tls *t, struct uq_cache *c,
	       uint32_t class_id, const void *data, size_t len, uint64_t hash,
	       unsigned int flags, unsigned int *status)
{
	bool lookup = flags & UNIQD_NOCREATE;
	enum uq_call call = lookup ? UQ_CALL_LOOKUP : UQ_CALL_INTERN;
	struct uniqd_key k;

	/* Content any process interned is in the mapping: no system call. */
	if (pool->map.base && !(flags & UNIQD_NOCACHE)) {
		uint64_t h;

		if (!hash)
			hash = uq_key_hash(pool, class_id, data, len);
		h = uq_map_find(pool, t, class_id, data, len, hash);

		if (h) {
			if (status)
				*status = UNIQD_MAPPED;
			if (c)
				uq_cache_put(c, pool->head.serial_, class_id, data,
					     (uint32_t)len, hash, h);
			return h;
		}
	}

	memset(&k, 0, sizeof(k));
	k.class_id = class_id;
	k.data = (uintptr_t)data;
	k.len = (uint32_t)len;
	if (uq_ioctl(pool, lookup ? UNIQD_IOC_LOOKUP : UNIQD_IOC_INTERN, &k) < 0) {
		int err = errno;

		if (lookup && err == ENOENT && status)
			*status = UNIQD_ABSENT;
		uq_fail(call, err, &(struct uq_failure){
			.pool = pool, .num = class_id,
			.limit = err == EMSGSIZE ? pool->max_key_len : 0 });
		return 0;
	}
	if (unlikely(!k.handle)) {	/* the ABI promises non-zero */
		uq_fail(call, EPROTO, &(struct uq_failure){ .pool = pool, .num = class_id });
		return 0;
	}
	if (status && (k.status & UNIQD_STATUS_NEW))
		*status = UNIQD_CREATED;
	if (c)
		uq_cache_put(c, pool->head.serial_, class_id, data, (uint32_t)len,
			     hash, k.handle);
	return k.handle;
}

uint64_t uniqd_intern_ex(uniqd_pool *pool, uint32_t class_id,
			 const void *data, size_t len, unsigned int flags,
			 unsigned int *status)
{
	enum uq_call call = flags & UNIQD_NOCREATE ? UQ_CALL_LOOKUP : UQ_CALL_INTERN;
	struct uq_tls *t = &uq_tls;	/* the call's one thread-local access */
	struct uq_cache *c = NULL;
	uint64_t hash = 0;

	if (status)
		*status = 0;
	if (unlikely(!pool || (flags & ~(UNIQD_NOCREATE | UNIQD_NOCACHE)) ||
		     (!data && len))) {
		uq_fail(call, EINVAL, &(struct uq_failure){ .pool = pool, .num = class_id });
		return 0;
	}
	if (unlikely(len > UINT32_MAX)) {
		uq_fail(call, UQ_E_KEYLEN, &(struct uq_failure){
			.pool = pool, .num = class_id, .limit = pool->max_key_len });
		return 0;
	}
	if (likely(!pool->nocache && len <= UQ_HEAP_MAX)) {
		c = t->cache;
		if (unlikely(!c))
			c = uq_cache_new(t);
		if (likely(c)) {
			hash = uq_key_hash(pool, class_id, data, len);
			if (!(flags & UNIQD_NOCACHE)) {
				struct uq_slot *s = uq_cache_find(c, pool->head.serial_,
								  class_id, data,
								  (uint32_t)len, hash);
				if (s) {
					c->hits++;
					if (status)
						*status = UNIQD_CACHED;
					return s->handle;
				}
			}
			c->misses++;
		}
	}
	return uq_intern_slow(pool, t, c, class_id, data, len, hash, flags, status);
}

/*
 * The hot path: a hit of the thread's cache, with nothing called. What the
 * cache cannot answer goes on with its hash (uq_intern_slow()); anything
 * unusual (no cache yet, a bad argument, a key too long to cache) takes
 * uniqd_intern_ex(), which checks and reports it.
 */
uint64_t uniqd_intern(uniqd_pool *pool, uint32_t class_id, const void *data,
		      size_t len)
{
	struct uq_tls *t = &uq_tls;
	struct uq_cache *c = t->cache;
	struct uq_slot *s;
	uint64_t hash;

	if (unlikely(!c || !pool || pool->nocache || len > UQ_HEAP_MAX ||
		     (!data && len)))
		return uniqd_intern_ex(pool, class_id, data, len, 0, NULL);
	hash = uq_key_hash(pool, class_id, data, len);
	s = uq_cache_find(c, pool->head.serial_, class_id, data, (uint32_t)len,
			  hash);
	if (likely(s)) {
		c->hits++;
		return s->handle;
	}
	c->misses++;
	return uq_intern_slow(pool, t, c, class_id, data, len, hash, 0, NULL);
}

uint64_t uniqd_intern_str(uniqd_pool *pool, uint32_t class_id, const char *s)
{
	if (!s) {
		uq_fail(UQ_CALL_INTERN, EINVAL, &(struct uq_failure){ .pool = pool });
		return 0;
	}
	return uniqd_intern_ex(pool, class_id, s, strlen(s), 0, NULL);
}

uint64_t uniqd_lookup(uniqd_pool *pool, uint32_t class_id, const void *data,
		      size_t len)
{
	return uniqd_intern_ex(pool, class_id, data, len, UNIQD_NOCREATE, NULL);
}

/* ---- batches ------------------------------------------------------------- */

/* Keys per kernel call: on the stack, so bounded below UNIQD_BATCH_MAX. */
#define UQ_CHUNK 256
/* Slots of the per-chunk table of keys already gathered (a power of 2). */
#define UQ_SEEN (2 * UQ_CHUNK)

/*
 * Items of a chunk that repeat a key gathered earlier in the same chunk
 * take that key's answer: items[i + dup_item[d]] repeats keys[dup_of[d]].
 * Fill those before position @limit (relative to the chunk), whose first
 * occurrence has its answer by then.
 */
static void uq_fill_dups(struct uniqd_item *items, const uint32_t *map,
			 const uint32_t *dup_item, const uint32_t *dup_of,
			 uint32_t ndup, size_t limit)
{
	for (uint32_t d = 0; d < ndup; d++) {
		struct uniqd_item *it = &items[dup_item[d]];
		const struct uniqd_item *first = &items[map[dup_of[d]]];

		if (dup_item[d] >= limit)
			continue;
		it->handle = first->handle;
		it->status = first->handle ? UNIQD_CACHED : UNIQD_ABSENT;
	}
}

size_t uniqd_intern_many(uniqd_pool *pool, struct uniqd_item *items,
			 size_t count, unsigned int flags)
{
	bool lookup = flags & UNIQD_NOCREATE;
	bool use_cache = !(flags & UNIQD_NOCACHE);
	struct uniqd_key keys[UQ_CHUNK];
	uint64_t hashes[UQ_CHUNK];
	uint32_t map[UQ_CHUNK], dup_item[UQ_CHUNK], dup_of[UQ_CHUNK];
	uint16_t seen[UQ_SEEN];
	struct uq_tls *t = &uq_tls;
	struct uq_cache *c = NULL;
	uint32_t chunk;
	size_t i = 0;

	if (!pool || (!items && count) ||
	    (flags & ~(UNIQD_NOCREATE | UNIQD_NOCACHE))) {
		uq_fail(UQ_CALL_BATCH, EINVAL, &(struct uq_failure){ .pool = pool });
		return 0;
	}
	chunk = pool->max_batch < UQ_CHUNK ? pool->max_batch : UQ_CHUNK;
	if (!pool->nocache) {
		c = t->cache;
		if (!c)
			c = uq_cache_new(t);
	}

	while (i < count) {
		struct uniqd_batch b;
		uint32_t n = 0, ndup = 0;
		size_t j;

		/*
		 * Answer what the cache knows; gather the rest for the kernel,
		 * each distinct key once: the cache learns a chunk's keys only
		 * when the chunk returns, so a key repeated within it would
		 * otherwise go to the kernel every time.
		 */
		if (c && use_cache)
			memset(seen, 0, sizeof(seen));
		for (j = i; j < count && n < chunk && ndup < UQ_CHUNK; j++) {
			struct uniqd_item *it = &items[j];
			uint32_t slot = 0;
			uint64_t hash = 0;
			bool fresh = false;

			it->status = 0;
			it->handle = 0;
			if (unlikely(it->len > UINT32_MAX || (!it->data && it->len))) {
				if (n)
					break;	/* send what we have, then fail here */
				uq_fail(UQ_CALL_BATCH, it->data ? UQ_E_KEYLEN : EINVAL,
					&(struct uq_failure){ .pool = pool,
						.num = it->class_id,
						.limit = pool->max_key_len });
				return j;
			}
			if (c && it->len <= UQ_HEAP_MAX) {
				hash = uq_key_hash(pool, it->class_id, it->data, it->len);
				if (use_cache) {
					struct uq_slot *s = uq_cache_find(c,
						pool->head.serial_, it->class_id,
						it->data, (uint32_t)it->len, hash);
					if (s) {
						c->hits++;
						it->handle = s->handle;
						it->status = UNIQD_CACHED;
						continue;
					}
					slot = (uint32_t)hash & (UQ_SEEN - 1);
					while (seen[slot]) {
						uint32_t k = seen[slot] - 1u;

						if (hashes[k] == hash &&
						    keys[k].class_id == it->class_id &&
						    keys[k].len == it->len &&
						    !memcmp((const void *)(uintptr_t)keys[k].data,
							    it->data, it->len))
							break;
						slot = (slot + 1) & (UQ_SEEN - 1);
					}
					if (seen[slot]) {
						c->hits++;
						dup_item[ndup] = (uint32_t)(j - i);
						dup_of[ndup++] = seen[slot] - 1u;
						continue;
					}
					fresh = true;
				}
				c->misses++;
			}
			if (pool->map.base && use_cache) {
				uint64_t h;

				if (!hash)
					hash = uq_key_hash(pool, it->class_id,
							   it->data, it->len);
				h = uq_map_find(pool, t, it->class_id, it->data,
						it->len, hash);

				if (h) {
					it->handle = h;
					it->status = UNIQD_MAPPED;
					if (c && it->len <= UQ_HEAP_MAX)
						uq_cache_put(c, pool->head.serial_,
							     it->class_id, it->data,
							     (uint32_t)it->len, hash, h);
					continue;
				}
			}
			/* Remembered only once it goes to the kernel as keys[n]. */
			if (fresh)
				seen[slot] = (uint16_t)(n + 1);
			memset(&keys[n], 0, sizeof(keys[n]));
			keys[n].class_id = it->class_id;
			keys[n].data = (uintptr_t)it->data;
			keys[n].len = (uint32_t)it->len;
			hashes[n] = hash;
			map[n] = (uint32_t)(j - i);
			n++;
		}

		memset(&b, 0, sizeof(b));
		b.keys = (uintptr_t)keys;
		b.count = n;
		b.key_size = sizeof(struct uniqd_key);
		b.flags = lookup ? UNIQD_BATCH_LOOKUP : 0;
		while (b.done < n) {
			int err;

			if (uq_ioctl(pool, UNIQD_IOC_INTERN_BATCH, &b) == 0) {
				if (b.done != n) {	/* the ABI says all of them */
					err = EPROTO;
					goto fail;
				}
				break;
			}
			err = errno;
			if (b.done >= n)	/* nonsense from the kernel */
				err = EPROTO;
			else if (lookup && err == ENOENT) {
				/* An absent key is an answer, not a failure. */
				keys[b.done].handle = 0;
				b.done++;
				continue;
			}
fail:
			for (uint32_t k = 0; k < b.done && k < n; k++) {
				struct uniqd_item *it = &items[i + map[k]];

				it->handle = keys[k].handle;
				it->status = keys[k].status & UNIQD_STATUS_NEW ?
					     UNIQD_CREATED : 0;
			}
			if (b.done >= n)
				b.done = n - 1;
			uq_fill_dups(items + i, map, dup_item, dup_of, ndup,
				     map[b.done]);
			uq_fail(UQ_CALL_BATCH, err, &(struct uq_failure){
				.pool = pool, .num = keys[b.done].class_id,
				.limit = err == EMSGSIZE ? pool->max_key_len : 0 });
			return i + map[b.done];
		}

		for (uint32_t k = 0; k < n; k++) {
			struct uniqd_item *it = &items[i + map[k]];

			it->handle = keys[k].handle;
			if (!keys[k].handle) {
				if (!lookup) {	/* the ABI promises non-zero */
					uq_fill_dups(items + i, map, dup_item,
						     dup_of, ndup, map[k]);
					uq_fail(UQ_CALL_BATCH, EPROTO,
						&(struct uq_failure){ .pool = pool });
					return i + map[k];
				}
				it->status = UNIQD_ABSENT;
				continue;
			}
			it->status = keys[k].status & UNIQD_STATUS_NEW ?
				     UNIQD_CREATED : 0;
			if (c && it->len <= UQ_HEAP_MAX)
				uq_cache_put(c, pool->head.serial_, it->class_id,
					     it->data, (uint32_t)it->len, hashes[k],
					     keys[k].handle);
		}
		uq_fill_dups(items + i, map, dup_item, dup_of, ndup, j - i);
		i = j;
	}
	return count;
}
