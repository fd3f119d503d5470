/* SPDX-License-Identifier: GPL-2.0 */
/*
 * uniqd: the per-pool append-only arena that holds every record.
 */
#ifndef UNIQD_ARENA_H
#define UNIQD_ARENA_H

#include <linux/mutex.h>
#include <linux/types.h>

/* Chunks are allocated whole; records are bump-allocated inside them. */
#define UNIQD_ARENA_CHUNK	(64 * 1024)
/* A record larger than this gets an allocation of its own. */
#define UNIQD_ARENA_BIG		(UNIQD_ARENA_CHUNK / 8)

struct uniqd_chunk;

struct uniqd_arena {
	/*
	 * Guards cur, full, mem and each chunk's used (asserted where a
	 * chunk is made); records handed out need no lock. May sleep.
	 */
	struct mutex lock;
	struct uniqd_chunk *cur;	/* the chunk being filled, or NULL */
	struct uniqd_chunk *full;	/* every other chunk, singly linked */
	u64 mem;			/* bytes of all chunks */
};

void uniqd_arena_init(struct uniqd_arena *a);
void uniqd_arena_destroy(struct uniqd_arena *a);
void *uniqd_arena_alloc(struct uniqd_arena *a, size_t size);
bool uniqd_arena_unalloc(struct uniqd_arena *a, void *p, size_t size);

#endif /* UNIQD_ARENA_H */
