// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libuniqd: interning and lookup, single and batched, behind a per-thread
 * cache.
 *
 * The cache is 4-way set-associative: 1024 sets of 4 slots, one cache line
 * a slot (256 KiB), indexed by the top bits of a 64-bit hash of (pool
 * serial, class id, content). A slot keeps the full hash, the pool serial,
 * the class id, the length, the content itself (inline up to UQ_INLINE_MAX
 * bytes, in a malloc()ed copy of UQ_HEAP_MAX bytes up to that; longer keys
 * are never cached) and the handle. A hit compares all of them, the content
 * with memcmp(): a hash match alone never returns a handle. So a thread's
 * cache never holds more than 256 KiB + 4096 * 256 B = 1.25 MiB.
 *
 * Measured on the host (Documentation/libuniqd.rst): a hit costs 10-15 ns;
 * with 1000 keys in use (cyclic order, the worst) 4% miss, where a
 * direct-mapped cache of 2048 slots missed 40%.
 *
 * Why a cached handle never goes stale: the kernel never reuses a handle
 * during a pool's life and the pool lives at least as long as our attached
 * file descriptor; the pool serial is unique per uniqd_open() in the process,
 * so after uniqd_close() no slot can match again (the dead slots are simply
 * overwritten later).
 *
 * Each thread owns its cache alone: a hit is one thread-local load (the
 * cache pointer in uq_tls), a few loads, one memcmp() and no lock, atomic
 * or system call. The cache is allocated on first use and freed by the
 * pthread key destructor of tls.c when the thread exits.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#ifndef UQ_WAY_BITS
#define UQ_WAY_BITS	2
#endif
#ifndef UQ_SET_BITS
#define UQ_SET_BITS	10
#endif
#define UQ_WAYS		(1U << UQ_WAY_BITS)
#define UQ_CACHE_SLOTS	(1U << (UQ_SET_BITS + UQ_WAY_BITS))
#define UQ_INLINE_MAX	32
#define UQ_HEAP_MAX	256

struct uq_slot {
	uint64_t hash;
	uint64_t handle;	/* 0: empty */
	uint32_t serial;
	uint32_t class_id;
	uint32_t len;
	uint32_t pad;
	union {
		uint8_t bytes[UQ_INLINE_MAX];
		uint8_t *heap;	/* len > UQ_INLINE_MAX */
	} key;
};
_Static_assert(sizeof(struct uq_slot) == 64, "one cache line a slot");

struct uq_cache {
	struct uq_slot slots[UQ_CACHE_SLOTS];
	uint64_t hits, misses, evictions;
	uint32_t used;
};

static void uq_cache_clear(struct uq_cache *c)
{
	for (uint32_t i = 0; i < UQ_CACHE_SLOTS; i++) {
		struct uq_slot *s = &c->slots[i];

		if (s->handle && s->len > UQ_INLINE_MAX)
			free(s->key.heap);
		memset(s, 0, sizeof(*s));
	}
	c->used = 0;
}

void uq_cache_free(struct uq_cache *c)
{
	if (!c)
		return;
	uq_cache_clear(c);
	free(c);
}

/* T's cache, allocated on first use; NULL if impossible. */
static struct uq_cache *uq_cache_new(struct uq_tls *t)
{
	struct uq_cache *c;

	if (!uq_tls_register(t))
		return NULL;	/* without a destructor, the cache would leak */
	if (posix_memalign((void **)&c, 64, sizeof(*c)))
		return NULL;
	memset(c, 0, sizeof(*c));
	t->cache = c;
	return c;
}

/* The first slot of the set KEY's hash maps to. */
static inline struct uq_slot *uq_cache_set(struct uq_cache *c, uint64_t hash)
{
	return &c->slots[(hash >> (64 - UQ_SET_BITS)) << UQ_WAY_BITS];
}

static inline struct uq_slot *uq_cache_find(struct uq_cache *c, uint32_t serial,
					    uint32_t class_id, const void *data,
					    uint32_t len, uint64_t hash)
{
	struct uq_slot *set = uq_cache_set(c, hash);

	for (uint32_t w = 0; w < UQ_WAYS; w++) {
		struct uq_slot *s = &set[w];

		if (s->hash != hash || s->serial != serial ||
		    s->class_id != class_id || s->len != len || !s->handle)
			continue;
		if (len && memcmp(len > UQ_INLINE_MAX ? s->key.heap : s->key.bytes,
				  data, len))
			continue;
		return s;
	}
	return NULL;
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
		if (!set[w].handle)
			s = &set[w];
	if (!s) {
		s = &set[set[0].pad & (UQ_WAYS - 1)];
		set[0].pad = (set[0].pad + 1) & (UQ_WAYS - 1);
	}
	old = s->handle && s->len > UQ_INLINE_MAX ? s->key.heap : NULL;
	if (len > UQ_INLINE_MAX) {
		/* Every heap copy is UQ_HEAP_MAX bytes: reuse the old one. */
		heap = old ? old : malloc(UQ_HEAP_MAX);
		if (!heap)
			return;
		old = NULL;
	}
	free(old);
	if (!s->handle)
		c->used++;
	else
		c->evictions++;
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
		st->slots = UQ_CACHE_SLOTS;
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

uint64_t uniqd_intern_ex(uniqd_pool *pool, uint32_t class_id,
			 const void *data, size_t len, unsigned int flags,
			 unsigned int *status)
{
	bool lookup = flags & UNIQD_NOCREATE;
	enum uq_call call = lookup ? UQ_CALL_LOOKUP : UQ_CALL_INTERN;
	struct uq_tls *t = &uq_tls;	/* the call's one thread-local access */
	struct uq_cache *c = NULL;
	struct uniqd_key k;
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

	/* Content any process interned is in the mapping: no system call. */
	if (pool->map.base && !(flags & UNIQD_NOCACHE)) {
		uint64_t h = uq_map_find(pool, t, class_id, data, len);

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

uint64_t uniqd_intern(uniqd_pool *pool, uint32_t class_id, const void *data,
		      size_t len)
{
	return uniqd_intern_ex(pool, class_id, data, len, 0, NULL);
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
				uint64_t h = uq_map_find(pool, t, it->class_id,
							 it->data, it->len);

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
