// SPDX-License-Identifier: GPL-2.0
/*
 * The in-process interner of the benchmarks: see ubench.h.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include "blake3.h"
#include "ubench.h"

/* ---- the in-process interner -------------------------------------------- */

struct ub_rec {
	uint32_t idx;
	uint32_t cls;
	uint32_t len;
	uint32_t flags;
	uint8_t data[];
};

struct ub_slot {
	uint64_t hash;
	struct ub_rec *rec;
};

struct ub_ltable {
	struct ub_slot *slot;
	uint32_t mask;
	uint32_t used;
};

#define UB_MAX_CLASSES	16
#define UB_CHUNK	65536

struct ub_interner {
	enum ub_hash_kind kind;
	uint8_t key[32];
	struct ub_ltable t[UB_MAX_CLASSES];
	uint8_t *chunk;
	size_t chunk_used;
	uint64_t entries, bytes;
};

struct ub_interner *ub_interner_new(enum ub_hash_kind kind)
{
	struct ub_interner *t = calloc(1, sizeof(*t));
	uint64_t s = 0x9e3779b97f4a7c15ULL ^ (uint64_t)getpid();
	unsigned int i;

	if (!t)
		ub_die("out of memory");
	t->kind = kind;
	for (i = 0; i < sizeof(t->key); i++)
		t->key[i] = (uint8_t)ub_rand(&s);
	return t;
}

void ub_interner_free(struct ub_interner *t)
{
	/* Chunks are leaked on purpose: the programs exit right after. */
	unsigned int i;

	for (i = 0; i < UB_MAX_CLASSES; i++)
		free(t->t[i].slot);
	free(t);
}

static uint64_t ub_local_hash(struct ub_interner *t, const void *data,
			      uint32_t len)
{
	uint8_t out[8];
	uint64_t h;

	if (t->kind == UB_HASH_FAST)
		return uniqd_maphash(0x5bd1e9955bd1e995ULL, 0, 0, data, len);
	uniqd_blake3_hash(t->key, data, len, out, sizeof(out));
	memcpy(&h, out, sizeof(h));
	return h;
}

static void ub_ltable_grow(struct ub_ltable *lt)
{
	uint32_t n = lt->slot ? (lt->mask + 1) * 2 : 64, i;
	struct ub_slot *ns = calloc(n, sizeof(*ns));

	if (!ns)
		ub_die("out of memory");
	for (i = 0; lt->slot && i <= lt->mask; i++) {
		struct ub_slot *s = &lt->slot[i];
		uint32_t j;

		if (!s->rec)
			continue;
		for (j = (uint32_t)s->hash & (n - 1); ns[j].rec; j = (j + 1) & (n - 1))
			;
		ns[j] = *s;
	}
	free(lt->slot);
	lt->slot = ns;
	lt->mask = n - 1;
}

uint64_t ub_intern_local(struct ub_interner *t, uint32_t cls, const void *data,
			 uint32_t len, bool *created)
{
	struct ub_ltable *lt = &t->t[cls % UB_MAX_CLASSES];
	uint64_t h = ub_local_hash(t, data, len);
	size_t size = (sizeof(struct ub_rec) + len + 7) & ~(size_t)7;
	struct ub_rec *rec;
	uint32_t i;

	*created = false;
	if (!lt->slot)
		ub_ltable_grow(lt);
	for (i = (uint32_t)h & lt->mask; lt->slot[i].rec; i = (i + 1) & lt->mask) {
		rec = lt->slot[i].rec;
		if (lt->slot[i].hash == h && rec->len == len &&
		    !memcmp(rec->data, data, len))
			return rec->idx;
	}
	if ((uint64_t)(lt->used + 1) * 4 > (uint64_t)(lt->mask + 1) * 3) {
		ub_ltable_grow(lt);
		for (i = (uint32_t)h & lt->mask; lt->slot[i].rec; i = (i + 1) & lt->mask)
			;
	}
	if (!t->chunk || t->chunk_used + size > UB_CHUNK) {
		t->chunk = malloc(size > UB_CHUNK ? size : UB_CHUNK);
		if (!t->chunk)
			ub_die("out of memory");
		t->chunk_used = 0;
	}
	rec = (struct ub_rec *)(t->chunk + t->chunk_used);
	t->chunk_used += size;
	rec->idx = (uint32_t)++t->entries;
	rec->cls = cls;
	rec->len = len;
	rec->flags = 0;
	memcpy(rec->data, data, len);
	t->bytes += len;
	lt->slot[i].hash = h;
	lt->slot[i].rec = rec;
	lt->used++;
	*created = true;
	return rec->idx;
}

uint64_t ub_interner_entries(const struct ub_interner *t)
{
	return t->entries;
}

uint64_t ub_interner_bytes(const struct ub_interner *t)
{
	return t->bytes;
}
