/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The stand-in pool of the native replays (layouts_replay.c, which includes
 * uniqdctl's layouts.c; symbols_replay.c, which includes symbols.c): the
 * libuniqd calls those checkers make, answered from a pool that lives in
 * this process, pool_intern(), which gives equal content one handle as a
 * uniqd pool does, and unhex() for the logs' contents. Include it after the checker, with RP_XREALLOC
 * defined as the checker's realloc-or-exit.
 *
 * Classes get ids from 1 in the order they are first named; with
 * rp_classes_fixed set, uniqd_class_n() only finds the ones added with
 * rp_class_add(), as the GCC plugin's fixed set of classes.
 */
#ifndef UNIQD_TESTS_NATIVE_REPLAY_POOL_H
#define UNIQD_TESTS_NATIVE_REPLAY_POOL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define HANDLE_BASE	(7ULL << 32)

struct entry {
	uint32_t class_id;
	size_t len;
	unsigned char *data;
};

static struct entry *pool_entries;
static size_t pool_n;
static char **class_names;	/* [0] unused */
static size_t nclasses = 1;
static bool rp_classes_fixed;

/* ---- a small u64 -> u64 hash map (open addressing) ------------------------ */

struct map {
	uint64_t *k, *v;
	size_t cap, n;
};

static void map_put(struct map *m, uint64_t k, uint64_t v);

static void map_grow(struct map *m)
{
	struct map b = { 0 };

	b.cap = m->cap ? 2 * m->cap : 1024;
	b.k = RP_XREALLOC(NULL, b.cap * sizeof(*b.k));
	b.v = RP_XREALLOC(NULL, b.cap * sizeof(*b.v));
	memset(b.k, 0, b.cap * sizeof(*b.k));
	memset(b.v, 0, b.cap * sizeof(*b.v));
	for (size_t i = 0; i < m->cap; i++)
		if (m->k[i])
			map_put(&b, m->k[i], m->v[i]);
	free(m->k);
	free(m->v);
	*m = b;
}

static void map_put(struct map *m, uint64_t k, uint64_t v)
{
	if (2 * (m->n + 1) > m->cap)
		map_grow(m);
	for (size_t i = (k * 0x9e3779b97f4a7c15ULL) >> 7 & (m->cap - 1);; i = (i + 1) & (m->cap - 1))
		if (!m->k[i] || m->k[i] == k) {
			m->n += !m->k[i];
			m->k[i] = k;
			m->v[i] = v;
			return;
		}
}

static uint64_t map_get(const struct map *m, uint64_t k)
{
	if (!m->cap)
		return 0;
	for (size_t i = (k * 0x9e3779b97f4a7c15ULL) >> 7 & (m->cap - 1); m->k[i];
	     i = (i + 1) & (m->cap - 1))
		if (m->k[i] == k)
			return m->v[i];
	return 0;
}

/* ---- the stand-in pool: the libuniqd calls the checkers make ------------- */

uniqd_pool *uniqd_open_ex(const char *device, const void *name, size_t name_len,
			  unsigned int flags, const struct uniqd_limits *limits)
{
	static int pool;

	(void)device, (void)name, (void)name_len, (void)flags, (void)limits;
	return (uniqd_pool *)&pool;
}

int uniqd_close(uniqd_pool *pool)
{
	(void)pool;
	return 0;
}

const char *uniqd_last_error(void)
{
	return "replayed pool";
}

/* Class @name, the next id. */
static uint32_t rp_class_add(const char *name, size_t len)
{
	class_names = RP_XREALLOC(class_names, (nclasses + 1) * sizeof(*class_names));
	class_names[nclasses] = strndup(name, len);
	return (uint32_t)nclasses++;
}

uint32_t uniqd_class_n(uniqd_pool *pool, const void *name, size_t len, unsigned int flags)
{
	(void)pool;
	for (uint32_t i = 1; i < nclasses; i++)
		if (strlen(class_names[i]) == len && !memcmp(class_names[i], name, len))
			return i;
	if (rp_classes_fixed || (flags & UNIQD_CLASS_FIND)) {
		errno = ENOENT;
		return 0;
	}
	return rp_class_add(name, len);
}

int uniqd_foreach(uniqd_pool *pool, uint32_t class_id, unsigned int flags,
		  uniqd_foreach_fn fn, void *arg)
{
	(void)pool, (void)flags;
	for (size_t i = 0; i < pool_n; i++) {
		int r;

		if (class_id && pool_entries[i].class_id != class_id)
			continue;
		r = fn(arg, HANDLE_BASE | (i + 1), pool_entries[i].class_id,
		       pool_entries[i].data, pool_entries[i].len);
		if (r)
			return r;
	}
	return 0;
}

void *uniqd_resolve_alloc(uniqd_pool *pool, uint64_t handle, size_t *len, uint32_t *class_id)
{
	size_t i = (size_t)(handle & 0xffffffff) - 1;
	char *s;

	(void)pool;
	if ((handle & ~0xffffffffULL) != HANDLE_BASE || i >= pool_n) {
		errno = ENOENT;
		return NULL;
	}
	s = RP_XREALLOC(NULL, pool_entries[i].len + 1);
	memcpy(s, pool_entries[i].data, pool_entries[i].len);
	s[pool_entries[i].len] = '\0';
	*len = pool_entries[i].len;
	if (class_id)
		*class_id = pool_entries[i].class_id;
	return s;
}

/* Content -> entry, by FNV-1a of (class, content). */
static struct map by_content;

static uint64_t content_hash(uint32_t class_id, const unsigned char *d, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ class_id;

	for (size_t i = 0; i < len; i++)
		h = (h ^ d[i]) * 0x100000001b3ULL;
	return h | 1;
}

/* The handle of (@class_id, @data), a new entry if the pool has none. */
static uint64_t pool_intern(uint32_t class_id, const unsigned char *data, size_t len)
{
	uint64_t h = content_hash(class_id, data, len);
	struct entry *e;

	/* Equal hashes chain by probing on h + 1, h + 2, ... */
	for (uint64_t k = h;; k++) {
		uint64_t i = map_get(&by_content, k);

		if (!i)
			break;
		e = &pool_entries[i - 1];
		if (e->class_id == class_id && e->len == len && !memcmp(e->data, data, len))
			return HANDLE_BASE | i;
		h = k + 1;
	}
	pool_entries = RP_XREALLOC(pool_entries, (pool_n + 1) * sizeof(*pool_entries));
	e = &pool_entries[pool_n++];
	e->class_id = class_id;
	e->len = len;
	e->data = RP_XREALLOC(NULL, len + 1);
	memcpy(e->data, data, len);
	map_put(&by_content, h, pool_n);
	return HANDLE_BASE | pool_n;
}

/* ---- reading a log ------------------------------------------------------ */

/* The @n hex digits at @s as bytes into @out; -1 if they are not. */
static int unhex(const char *s, size_t n, unsigned char *out)
{
	if (n % 2)
		return -1;
	for (size_t i = 0; i < n; i += 2) {
		unsigned int v;

		if (sscanf(s + i, "%2x", &v) != 1)
			return -1;
		out[i / 2] = (unsigned char)v;
	}
	return 0;
}

#endif /* UNIQD_TESTS_NATIVE_REPLAY_POOL_H */
