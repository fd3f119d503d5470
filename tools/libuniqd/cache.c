// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libuniqd: the per-thread cache of handles, what a miss and a thread's exit
 * need of it: make, fill, grow, empty and free (cache.h has its geometry,
 * why a hit is never wrong or stale, and the inline lookup).
 */
#include <stdlib.h>
#include <string.h>

#include "cache.h"

void uq_cache_clear(struct uq_cache *c)
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

struct uq_cache *uq_cache_new(void)
{
	struct uq_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->slots = uq_slots_new(UQ_SLOTS_MIN);
	if (!c->slots) {
		free(c);
		return NULL;
	}
	c->nslots = UQ_SLOTS_MIN;
	c->shift = 64 - UQ_SET_BITS_MIN;
	return c;
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
void uq_cache_put(struct uq_cache *c, uint32_t serial, uint32_t class_id,
		  const void *data, uint32_t len, uint64_t hash, uint64_t handle)
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
