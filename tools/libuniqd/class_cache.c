// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libuniqd: a pool handle's cache of class names, so that uniqd_class() and
 * the slow path of UNIQD_CLASS() ask the kernel once per name: an open
 * addressing table (power of two, at most 3/4 full) of the names it has
 * registered or found, shared by the handle's threads under its mutex.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* A registered class name the pool has seen (the UNIQD_CLASS slow path). */
struct uq_class_name {
	uint64_t hash;
	uint32_t id;
	uint32_t len;
	char *name;
};

int uq_class_cache_init(struct uq_class_cache *cc)
{
	memset(cc, 0, sizeof(*cc));
	return pthread_mutex_init(&cc->lock, NULL) ? ENOMEM : 0;
}

void uq_class_cache_destroy(struct uq_class_cache *cc)
{
	for (uint32_t i = 0; i < cc->cap; i++)
		free(cc->tab[i].name);
	free(cc->tab);
	pthread_mutex_destroy(&cc->lock);
}

static struct uq_class_name *uq_class_slot(struct uq_class_name *tab,
					   uint32_t cap, uint64_t hash,
					   const void *name, uint32_t len)
{
	for (uint32_t i = (uint32_t)hash & (cap - 1);; i = (i + 1) & (cap - 1)) {
		struct uq_class_name *c = &tab[i];

		if (!c->name)
			return c;
		if (c->hash == hash && c->len == len && !memcmp(c->name, name, len))
			return c;
	}
}

uint32_t uq_class_cache_get(struct uq_class_cache *cc, uint64_t hash,
			    const void *name, uint32_t len)
{
	uint32_t id = 0;

	pthread_mutex_lock(&cc->lock);
	if (cc->cap)
		id = uq_class_slot(cc->tab, cc->cap, hash, name, len)->id;
	pthread_mutex_unlock(&cc->lock);
	return id;
}

/* Called with cc->lock held. */
static void uq_class_put_locked(struct uq_class_cache *cc, uint64_t hash,
				const void *name, uint32_t len, uint32_t id)
{
	struct uq_class_name *c;

	if (4 * (cc->count + 1) > 3 * cc->cap) {
		uint32_t cap = cc->cap ? 2 * cc->cap : 64;
		struct uq_class_name *tab = calloc(cap, sizeof(*tab));

		if (!tab)
			return;
		for (uint32_t i = 0; i < cc->cap; i++) {
			struct uq_class_name *o = &cc->tab[i];

			if (o->name)
				*uq_class_slot(tab, cap, o->hash, o->name, o->len) = *o;
		}
		free(cc->tab);
		cc->tab = tab;
		cc->cap = cap;
	}
	c = uq_class_slot(cc->tab, cc->cap, hash, name, len);
	if (c->name)
		return;
	c->name = malloc(len ? len : 1);
	if (!c->name)
		return;
	memcpy(c->name, name, len);
	c->hash = hash;
	c->len = len;
	c->id = id;
	cc->count++;
}

void uq_class_cache_put(struct uq_class_cache *cc, uint64_t hash,
			const void *name, uint32_t len, uint32_t id)
{
	pthread_mutex_lock(&cc->lock);
	uq_class_put_locked(cc, hash, name, len, id);
	pthread_mutex_unlock(&cc->lock);
}
