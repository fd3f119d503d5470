// SPDX-License-Identifier: GPL-2.0
/*
 * The fake /dev/uniqd of the native tests (uniqd_fake.h). One mutex guards
 * it all: it counts calls, it does not measure the module.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <linux/uniqd.h>

#include "uniqd_fake.h"

struct fk_entry {
	struct fk_entry *next;
	uint64_t hash;
	uint32_t cls, len;
	uint64_t handle;
	uint8_t *data;
};

#define FK_BUCKETS 65536
#define FK_POOLS 32
#define FK_FILES 256

struct fk_pool {
	int live;
	char name[256];
	uint32_t name_len;
	uint32_t index;
	uint32_t attached;
	struct fk_entry **buckets;
	struct fk_entry **by_index;
	uint64_t count, cap;
	char *classes[1024];
	uint32_t class_len[1024];
	uint64_t class_entries[1024];
	uint32_t nclasses;
	uint64_t hits, misses, bytes;
};

static pthread_mutex_t fk_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fk_pool fk_pools[FK_POOLS];
static struct fk_pool *fk_files[FK_FILES];	/* fd - 1000 -> pool */
static int fk_file_open[FK_FILES];
static atomic_ulong fk_ncalls[16];
static atomic_ulong fk_opens;
static atomic_int fk_batch_eintr;	/* next N batch calls stop halfway, EINTR */

uint32_t fk_max_batch = UNIQD_BATCH_MAX;
uint64_t fk_max_entries = 1u << 24;
const char *fk_private_pool = "private";
int fk_map;

static uint64_t fk_hash(uint32_t cls, const void *p, uint32_t len)
{
	const uint8_t *b = p;
	uint64_t h = 1469598103934665603ULL ^ cls;

	for (uint32_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	return h;
}

/* libuniqd's internal.h declares them hidden; here they are plain. */
int uq_sys_open(const char *path, int flags);
int uq_sys_ioctl(int fd, unsigned long request, void *arg);
int uq_sys_close(int fd);

int uq_sys_open(const char *path, int flags)
{
	(void)flags;
	if (strcmp(path, UNIQD_DEVICE_PATH)) {
		errno = ENOENT;
		return -1;
	}
	pthread_mutex_lock(&fk_lock);
	for (int i = 0; i < FK_FILES; i++) {
		if (!fk_file_open[i]) {
			fk_file_open[i] = 1;
			fk_files[i] = NULL;
			pthread_mutex_unlock(&fk_lock);
			atomic_fetch_add(&fk_opens, 1);
			return 1000 + i;
		}
	}
	pthread_mutex_unlock(&fk_lock);
	errno = EMFILE;
	return -1;
}

static void fk_pool_free(struct fk_pool *p)
{
	for (uint64_t i = 0; i < p->count; i++) {
		free(p->by_index[i]->data);
		free(p->by_index[i]);
	}
	for (uint32_t i = 0; i < p->nclasses; i++)
		free(p->classes[i]);
	free(p->buckets);
	free(p->by_index);
	memset(p, 0, sizeof(*p));
}

int uq_sys_close(int fd)
{
	int i = fd - 1000;

	pthread_mutex_lock(&fk_lock);
	if (i < 0 || i >= FK_FILES || !fk_file_open[i]) {
		pthread_mutex_unlock(&fk_lock);
		errno = EBADF;
		return -1;
	}
	if (fk_files[i] && --fk_files[i]->attached == 0)
		fk_pool_free(fk_files[i]);
	fk_files[i] = NULL;
	fk_file_open[i] = 0;
	pthread_mutex_unlock(&fk_lock);
	return 0;
}

/* Called with fk_lock held. */
static int fk_key(struct fk_pool *p, struct uniqd_key *k, int create)
{
	uint64_t h;
	struct fk_entry *e;

	if (k->flags)
		return -EINVAL;
	if (!k->class_id || k->class_id > p->nclasses)
		return -EBADSLT;
	if (k->len > UNIQD_KEY_MAX)
		return -EMSGSIZE;
	h = fk_hash(k->class_id, (void *)(uintptr_t)k->data, k->len);
	for (e = p->buckets[h % FK_BUCKETS]; e; e = e->next) {
		if (e->hash == h && e->cls == k->class_id && e->len == k->len &&
		    !memcmp(e->data, (void *)(uintptr_t)k->data, k->len)) {
			p->hits++;
			k->handle = e->handle;
			k->status = 0;
			return 0;
		}
	}
	p->misses++;
	if (!create)
		return -ENOENT;
	if (p->count >= fk_max_entries)
		return -EDQUOT;
	if (p->count == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 1024;
		p->by_index = realloc(p->by_index, p->cap * sizeof(*p->by_index));
	}
	e = calloc(1, sizeof(*e));
	e->hash = h;
	e->cls = k->class_id;
	e->len = k->len;
	e->data = malloc(k->len ? k->len : 1);
	memcpy(e->data, (void *)(uintptr_t)k->data, k->len);
	e->handle = (uint64_t)(p->index + 1) << 40 | (p->count + 1);
	e->next = p->buckets[h % FK_BUCKETS];
	p->buckets[h % FK_BUCKETS] = e;
	p->by_index[p->count++] = e;
	p->bytes += k->len;
	p->class_entries[k->class_id - 1]++;
	k->handle = e->handle;
	k->status = UNIQD_STATUS_NEW;
	return 0;
}

static struct fk_entry *fk_handle(struct fk_pool *p, uint64_t h)
{
	uint64_t i = h & ((1ULL << 40) - 1);

	if (h >> 40 != p->index + 1 || i == 0 || i > p->count)
		return NULL;
	return p->by_index[i - 1];
}

static int fk_ioctl(int fi, unsigned long req, void *arg)
{
	struct fk_pool *p = fk_files[fi];

	atomic_fetch_add(&fk_ncalls[_IOC_NR(req) & 15], 1);
	if (req == UNIQD_IOC_VERSION) {
		struct uniqd_version *v = arg;

		memset(v, 0, sizeof(*v));
		v->abi_version = UNIQD_ABI_VERSION;
		v->max_key_len = UNIQD_KEY_MAX;
		v->features = UNIQD_FEAT_POOLS | UNIQD_FEAT_BATCH |
			      UNIQD_FEAT_RESOLVE | UNIQD_FEAT_STATS;
		v->max_pool_name = UNIQD_POOL_NAME_MAX;
		v->max_class_name = UNIQD_CLASS_NAME_MAX;
		v->max_batch = fk_max_batch;
		return 0;
	}
	if (req == UNIQD_IOC_ATTACH) {
		struct uniqd_attach *a = arg;
		struct fk_pool *free_p = NULL;

		if (p)
			return -EBUSY;
		if (!a->name_len || a->name_len > 255 || (a->flags & ~UNIQD_ATTACH_FLAGS))
			return -EINVAL;
		if (a->name_len == strlen(fk_private_pool) &&
		    !memcmp((void *)(uintptr_t)a->name, fk_private_pool, a->name_len)) {
			a->owner_uid = 4242;
			return -EACCES;
		}
		for (int i = 0; i < FK_POOLS; i++) {
			struct fk_pool *q = &fk_pools[i];

			if (!q->live) {
				if (!free_p)
					free_p = q;
				continue;
			}
			if (q->name_len == a->name_len &&
			    !memcmp(q->name, (void *)(uintptr_t)a->name, a->name_len)) {
				if (a->flags & UNIQD_ATTACH_NEW)
					return -EEXIST;
				p = q;
				a->status = 0;
				break;
			}
		}
		if (!p) {
			if (a->flags & UNIQD_ATTACH_EXISTING)
				return -ENOENT;
			if (!free_p)
				return -ENOSPC;
			p = free_p;
			memset(p, 0, sizeof(*p));
			p->live = 1;
			p->index = (uint32_t)(p - fk_pools) + 100 * (uint32_t)atomic_load(&fk_opens);
			memcpy(p->name, (void *)(uintptr_t)a->name, a->name_len);
			p->name_len = a->name_len;
			p->buckets = calloc(FK_BUCKETS, sizeof(*p->buckets));
			a->status = UNIQD_ATTACH_CREATED;
		}
		p->attached++;
		fk_files[fi] = p;
		a->max_bytes = 1ULL << 30;
		a->max_entries = fk_max_entries;
		a->max_classes = 1024;
		a->owner_uid = 0;
		a->mode = 0;
		return 0;
	}
	if (!p)
		return -ENOTCONN;
	switch (req) {
	case UNIQD_IOC_CLASS: {
		struct uniqd_class *c = arg;
		const char *name = (void *)(uintptr_t)c->name;

		if (!c->name_len || c->name_len > 255 || (c->flags & ~UNIQD_CLASS_EXISTING))
			return -EINVAL;
		for (uint32_t i = 0; i < p->nclasses; i++) {
			if (p->class_len[i] == c->name_len &&
			    !memcmp(p->classes[i], name, c->name_len)) {
				c->class_id = i + 1;
				c->status = 0;
				return 0;
			}
		}
		if (c->flags & UNIQD_CLASS_EXISTING)
			return -ENOENT;
		if (p->nclasses == 1024)
			return -EDQUOT;
		p->classes[p->nclasses] = malloc(c->name_len);
		memcpy(p->classes[p->nclasses], name, c->name_len);
		p->class_len[p->nclasses] = c->name_len;
		c->class_id = ++p->nclasses;
		c->status = UNIQD_STATUS_NEW;
		return 0;
	}
	case UNIQD_IOC_INTERN:
		return fk_key(p, arg, 1);
	case UNIQD_IOC_LOOKUP:
		return fk_key(p, arg, 0);
	case UNIQD_IOC_INTERN_BATCH: {
		struct uniqd_batch *b = arg;
		struct uniqd_key *keys = (void *)(uintptr_t)b->keys;
		uint32_t stop = b->count;

		if (b->count > fk_max_batch || b->key_size != sizeof(struct uniqd_key) ||
		    (b->flags & ~UNIQD_BATCH_LOOKUP) || b->reserved || b->done > b->count)
			return -EINVAL;
		if (atomic_load(&fk_batch_eintr) > 0 && b->count - b->done > 1) {
			atomic_fetch_sub(&fk_batch_eintr, 1);
			stop = b->done + (b->count - b->done) / 2;
		}
		b->created = 0;
		for (; b->done < stop; b->done++) {
			int r = fk_key(p, &keys[b->done], !(b->flags & UNIQD_BATCH_LOOKUP));

			if (r)
				return r;
			if (keys[b->done].status & UNIQD_STATUS_NEW)
				b->created++;
		}
		return stop < b->count ? -EINTR : 0;
	}
	case UNIQD_IOC_RESOLVE: {
		struct uniqd_resolve *r = arg;
		struct fk_entry *e = fk_handle(p, r->handle);

		if (r->reserved)
			return -EINVAL;
		if (!e)
			return -ENOENT;
		r->len = e->len;
		r->class_id = e->cls;
		if (r->buf_len == 0)
			return 0;
		if (r->buf_len < e->len)
			return -ERANGE;
		memcpy((void *)(uintptr_t)r->buf, e->data, e->len);
		return 0;
	}
	case UNIQD_IOC_DIGEST: {
		struct uniqd_digest *d = arg;
		struct fk_entry *e = fk_handle(p, d->handle);

		if (!e)
			return -ENOENT;
		memset(d->digest, 0, sizeof(d->digest));
		memcpy(d->digest, &e->hash, 8);
		return 0;
	}
	case UNIQD_IOC_STATS: {
		struct uniqd_stats *s = arg;

		memset(s, 0, sizeof(*s));
		s->entries = p->count;
		s->bytes = p->bytes;
		s->hits = p->hits;
		s->misses = p->misses;
		s->classes = p->nclasses;
		s->max_classes = 1024;
		s->max_entries = fk_max_entries;
		s->attached = p->attached;
		return 0;
	}
	case UNIQD_IOC_CLASS_INFO: {
		struct uniqd_class_info *ci = arg;

		if (!ci->class_id || ci->class_id > p->nclasses)
			return -EBADSLT;
		ci->name_len = p->class_len[ci->class_id - 1];
		ci->entries = p->class_entries[ci->class_id - 1];
		if (ci->name) {
			if (ci->name_buf_len < ci->name_len)
				return -ERANGE;
			memcpy((void *)(uintptr_t)ci->name, p->classes[ci->class_id - 1],
			       ci->name_len);
		}
		return 0;
	}
	}
	return -ENOTTY;
}

int uq_sys_ioctl(int fd, unsigned long req, void *arg)
{
	int fi = fd - 1000, r;

	pthread_mutex_lock(&fk_lock);
	if (fi < 0 || fi >= FK_FILES || !fk_file_open[fi]) {
		pthread_mutex_unlock(&fk_lock);
		errno = EBADF;
		return -1;
	}
	r = fk_ioctl(fi, req, arg);
	pthread_mutex_unlock(&fk_lock);
	if (r < 0) {
		errno = -r;
		return -1;
	}
	return 0;
}

void fk_batch_eintr_set(int n)
{
	atomic_store(&fk_batch_eintr, n);
}

int fk_batch_eintr_left(void)
{
	return atomic_load(&fk_batch_eintr);
}

unsigned long fk_calls(unsigned long req)
{
	return atomic_load(&fk_ncalls[_IOC_NR(req) & 15]);
}

unsigned long fk_pool_calls(void)
{
	unsigned long n = 0;

	for (int i = 1; i < 16; i++)
		n += atomic_load(&fk_ncalls[i]);
	return n;
}

int fk_files_open(void)
{
	int n = 0;

	pthread_mutex_lock(&fk_lock);
	for (int i = 0; i < FK_FILES; i++)
		n += fk_file_open[i];
	pthread_mutex_unlock(&fk_lock);
	return n;
}
