// SPDX-License-Identifier: GPL-2.0
/*
 * uniqd: the per-pool append-only arena.
 *
 * Records are never freed one by one: a pool's arena is freed whole when the
 * pool is. Allocation takes a mutex and may sleep, so it is never called
 * under a spinlock. Memory is charged to the caller's memory cgroup.
 */
#include <linux/align.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "arena.h"

struct uniqd_chunk {
	struct uniqd_chunk *next;
	u32 size;			/* usable bytes in data[] */
	u32 used;			/* bytes handed out from data[] */
	u8 data[] __aligned(8);
};

void uniqd_arena_init(struct uniqd_arena *a)
{
	mutex_init(&a->lock);
	a->cur = NULL;
	a->full = NULL;
	a->mem = 0;
}

static void uniqd_chunks_free(struct uniqd_chunk *c)
{
	while (c) {
		struct uniqd_chunk *next = c->next;

		kvfree(c);
		c = next;
		cond_resched();
	}
}

/* Only when no reader can remain: the pool is being freed. */
void uniqd_arena_destroy(struct uniqd_arena *a)
{
	uniqd_chunks_free(a->cur);
	uniqd_chunks_free(a->full);
	a->cur = NULL;
	a->full = NULL;
	mutex_destroy(&a->lock);
}

/*
 * kmalloc() serves a large size with a power of two of pages: a record of
 * 64 KiB plus its headers would take 128 KiB. When that rounding wastes
 * more than 1/8, use vmalloc(), which rounds to a page.
 */
static void *uniqd_arena_mem(size_t bytes)
{
	if (bytes > PAGE_SIZE &&
	    (PAGE_SIZE << get_order(bytes)) - bytes > bytes / 8)
		return __vmalloc(bytes, GFP_KERNEL_ACCOUNT);
	return kvmalloc(bytes, GFP_KERNEL_ACCOUNT);
}

static struct uniqd_chunk *uniqd_chunk_new(struct uniqd_arena *a, size_t bytes)
{
	struct uniqd_chunk *c;

	lockdep_assert_held(&a->lock);
	c = uniqd_arena_mem(bytes);
	if (!c)
		return NULL;
	c->next = NULL;
	c->size = bytes - sizeof(*c);
	c->used = 0;
	a->mem += bytes;
	return c;
}

/*
 * Returns @size bytes, 8-byte aligned, that live as long as the arena, or
 * NULL. @size must be a multiple of 8.
 */
void *uniqd_arena_alloc(struct uniqd_arena *a, size_t size)
{
	struct uniqd_chunk *c;
	void *p;

	if (WARN_ON_ONCE(!size || !IS_ALIGNED(size, 8)))
		return NULL;

	mutex_lock(&a->lock);
	c = a->cur;
	if (c && c->size - c->used >= size) {
		p = c->data + c->used;
		c->used += size;
		goto out;
	}

	if (size > UNIQD_ARENA_BIG) {
		/* Its own allocation, kept off the bump chunk. */
		c = uniqd_chunk_new(a, struct_size(c, data, size));
		if (!c) {
			p = NULL;
			goto out;
		}
		c->used = size;
		c->next = a->full;
		a->full = c;
		p = c->data;
		goto out;
	}

	/* Retire the current chunk (its tail stays unused) and start one. */
	c = uniqd_chunk_new(a, UNIQD_ARENA_CHUNK);
	if (!c) {
		p = NULL;
		goto out;
	}
	if (a->cur) {
		a->cur->next = a->full;
		a->full = a->cur;
	}
	a->cur = c;
	p = c->data;
	c->used = size;
out:
	mutex_unlock(&a->lock);
	return p;
}

/*
 * Give back an allocation if it still is the latest one (of the current
 * chunk, or the latest record with an allocation of its own). Returns false
 * when it could not: the bytes stay used (and counted).
 */
bool uniqd_arena_unalloc(struct uniqd_arena *a, void *p, size_t size)
{
	struct uniqd_chunk *c;
	bool ret = false;

	mutex_lock(&a->lock);
	c = a->cur;
	if (c && c->used >= size && p == (void *)(c->data + c->used - size)) {
		c->used -= size;
		ret = true;
	} else if (a->full && a->full->data == p && a->full->used == size &&
		   size > UNIQD_ARENA_BIG) {
		/* The latest record that got an allocation of its own. */
		c = a->full;
		a->full = c->next;
		a->mem -= struct_size(c, data, c->size);
		kvfree(c);
		ret = true;
	}
	mutex_unlock(&a->lock);
	return ret;
}
