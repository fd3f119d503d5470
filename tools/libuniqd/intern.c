// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libuniqd: interning and lookup, single and batched, behind the calling
 * thread's cache (cache.h), and that cache's counters.
 *
 * A hit is inline in uniqd_intern(): one thread-local access (the cache
 * pointer in uq_tls), the hash and uq_cache_find(), with no call, lock,
 * atomic or system call. A miss goes on to the mapping, whose probe takes
 * the same hash, and the kernel (uq_intern_slow()). The thread's cache is
 * allocated on first use and freed when the thread exits (tls.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"

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
			c = uq_tls_cache(t);
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
			c = uq_tls_cache(t);
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
