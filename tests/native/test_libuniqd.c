// SPDX-License-Identifier: GPL-2.0
/*
 * libuniqd against a fake /dev/uniqd, on the host: the library's own logic
 * (the per-thread cache, batching and restarts, the class slots, errors)
 * with every system call counted. This program defines uq_sys_open,
 * uq_sys_ioctl and uq_sys_close, so libuniqd.a's sys.o is never linked.
 *
 * The fake follows include/uapi/linux/uniqd.h; it is no model of the
 * module's tables. tests/lib_*.c run the same library against the module.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/uniqd.h>

#include "harness.h"
#include "libuniqd.h"

/* ---- the fake device ----------------------------------------------------- */

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
static atomic_ulong fk_calls[16];
static atomic_ulong fk_opens;

/* Knobs. */
static uint32_t fk_max_batch = UNIQD_BATCH_MAX;
static atomic_int fk_batch_eintr;	/* next N batch calls stop halfway, EINTR */
static uint64_t fk_max_entries = 1u << 24;
static const char *fk_private_pool = "private";

static uint64_t fk_hash(uint32_t cls, const void *p, uint32_t len)
{
	const uint8_t *b = p;
	uint64_t h = 1469598103934665603ULL ^ cls;

	for (uint32_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	return h;
}

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

	atomic_fetch_add(&fk_calls[_IOC_NR(req) & 15], 1);
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

static unsigned long calls(unsigned long req)
{
	return atomic_load(&fk_calls[_IOC_NR(req) & 15]);
}

static unsigned long pool_calls(void)
{
	unsigned long n = 0;

	for (int i = 1; i < 16; i++)
		n += atomic_load(&fk_calls[i]);
	return n;
}

/* ---- helpers -------------------------------------------------------------- */

/* The content of a handle, as the device knows it. */
static int handle_is(uniqd_pool *p, uint64_t h, uint32_t cls, const void *data,
		     size_t len)
{
	char buf[4096];
	uint32_t c = 0;
	ssize_t n = uniqd_resolve(p, h, buf, sizeof(buf), &c);

	return n == (ssize_t)len && c == cls && !memcmp(buf, data, len);
}

static void key_of(char *buf, size_t *len, unsigned int i, unsigned int salt)
{
	/* Lengths 0..300: inline, heap-cached and never-cached keys. */
	unsigned int l = (i * 7 + salt) % 301;

	for (unsigned int j = 0; j < l; j++)
		buf[j] = (char)('a' + (i * 31 + j * 17 + salt) % 26);
	if (l >= 8)
		snprintf(buf, 9, "%08x", i);
	*len = l;
}

/* ---- threads -------------------------------------------------------------- */

struct worker {
	pthread_t t;
	uniqd_pool *pool;
	uint32_t cls[3];
	unsigned int id, keys, rounds;
	unsigned long bad;
	char why[200];
};

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	char buf[512];
	size_t len;

	for (unsigned int r = 0; r < w->rounds; r++) {
		for (unsigned int k = 0; k < w->keys; k++) {
			/* Threads walk the same keys in different orders. */
			unsigned int i = (k * (2 * w->id + 1) + r * 13) % w->keys;
			uint32_t cls = w->cls[i % 3];
			uint64_t h;

			key_of(buf, &len, i, 0);
			if (r % 3 == 2) {
				struct uniqd_item it = { .data = buf, .len = len,
							 .class_id = cls };
				h = uniqd_intern_many(w->pool, &it, 1, 0) == 1 ? it.handle : 0;
			} else {
				h = uniqd_intern(w->pool, cls, buf, len);
			}
			if (!h || !handle_is(w->pool, h, cls, buf, len)) {
				if (!w->bad++)
					snprintf(w->why, sizeof(w->why),
						 "thread %u key %u: handle %#llx: %s", w->id, i,
						 (unsigned long long)h, uniqd_last_error());
			}
		}
	}
	return NULL;
}

struct class_racer {
	pthread_t t;
	uniqd_pool *pool;
	uint32_t got;
	pthread_barrier_t *bar;
};

static uint32_t class_site(uniqd_pool *p)
{
	return UNIQD_CLASS(p, "race.class");
}

static void *class_race(void *arg)
{
	struct class_racer *r = arg;

	pthread_barrier_wait(r->bar);
	r->got = class_site(r->pool);
	return NULL;
}

/* One call site used with several pools. */
static uint32_t site_integer(uniqd_pool *p)
{
	return UNIQD_CLASS(p, "builtin.integer");
}

int main(void)
{
	uniqd_pool *p, *q;
	uint32_t ci, cf;
	uint64_t h1, h2;

	th_init("libuniqd-fake");

	p = uniqd_open("native", 0);
	th_case("open") {
		struct uniqd_pool_info info;

		CHECK(p != NULL, "%s", uniqd_last_error());
		if (p) {
			CHECK(uniqd_pool_info(p, &info) == 0, "info");
			CHECK(info.created == 1, "created %u", info.created);
			CHECK(info.name_len == 6 && !strcmp(info.name, "native"), "%s", info.name);
			CHECK(info.device.abi_version == UNIQD_ABI_VERSION, "abi");
			CHECK(uniqd_fd(p) >= 1000, "fd %d", uniqd_fd(p));
		}
	}
	if (!p)
		return th_finish();

	th_case("classes") {
		unsigned long before;

		ci = uniqd_class(p, "builtin.integer");
		cf = uniqd_class(p, "builtin.float");
		CHECK(ci && cf && ci != cf, "%u %u", ci, cf);
		before = calls(UNIQD_IOC_CLASS);
		CHECK(uniqd_class(p, "builtin.integer") == ci, "again");
		CHECK(calls(UNIQD_IOC_CLASS) == before, "a known name made a system call");
		CHECK(uniqd_class_n(p, "builtin.float", 13, UNIQD_CLASS_FIND) == cf, "find");
		CHECK(uniqd_class_n(p, "nope", 4, UNIQD_CLASS_FIND) == 0 && errno == ENOENT,
		      "find absent: errno %d", errno);
		CHECK(strstr(uniqd_last_error(), "find class 'nope' in pool 'native'") != NULL,
		      "%s", uniqd_last_error());
		CHECK(uniqd_class_n(p, "", 0, 0) == 0 && errno == EINVAL, "empty name");
		CHECK(uniqd_class(p, NULL) == 0 && errno == EINVAL, "NULL name");
	}

	th_case("intern is stable and separates classes") {
		h1 = uniqd_intern(p, ci, "i32", 3);
		h2 = uniqd_intern(p, cf, "i32", 3);
		CHECK(h1 && h2 && h1 != h2, "%llx %llx", (unsigned long long)h1,
		      (unsigned long long)h2);
		CHECK(uniqd_intern_str(p, ci, "i32") == h1, "str");
		CHECK(uniqd_intern(p, ci, "i64", 3) != h1, "content");
		CHECK(uniqd_intern(p, ci, "i32", 2) != h1, "length");
		CHECK(uniqd_intern(p, ci, "", 0) != 0, "empty key");
		CHECK(uniqd_intern(p, ci, NULL, 0) == uniqd_intern(p, ci, "", 0), "NULL empty");
		CHECK(handle_is(p, h1, ci, "i32", 3), "resolve");
	}

	th_case("a cache hit makes no system call") {
		unsigned long before;
		unsigned int st = 99;
		struct uniqd_cache_stats cs0, cs1;
		uint64_t h;

		uniqd_cache_stats(&cs0);
		before = pool_calls();
		for (int i = 0; i < 1000; i++)
			CHECK(uniqd_intern(p, ci, "i32", 3) == h1, "i %d", i);
		h = uniqd_intern_ex(p, ci, "i32", 3, 0, &st);
		CHECK(h == h1 && st == UNIQD_CACHED, "status %u", st);
		CHECK(uniqd_lookup(p, ci, "i32", 3) == h1, "lookup");
		CHECK(pool_calls() == before, "%lu system calls", pool_calls() - before);
		uniqd_cache_stats(&cs1);
		CHECK(cs1.hits - cs0.hits == 1002, "hits %llu",
		      (unsigned long long)(cs1.hits - cs0.hits));
		CHECK(cs1.slots > 0 && cs1.used > 0, "slots %u used %u", cs1.slots, cs1.used);

		h = uniqd_intern_ex(p, ci, "i32", 3, UNIQD_NOCACHE, &st);
		CHECK(h == h1 && st == 0, "nocache: status %u", st);
		CHECK(pool_calls() == before + 1, "nocache went to the kernel");
		h = uniqd_intern_ex(p, ci, "fresh", 5, 0, &st);
		CHECK(h && st == UNIQD_CREATED, "fresh: status %u", st);
	}

	th_case("long keys") {
		static char big[UNIQD_KEY_MAX + 1];
		unsigned long before;

		for (size_t len = 30; len < 40; len++) {
			memset(big, 'x', len);
			big[len - 1] = 'y';
			h2 = uniqd_intern(p, ci, big, len);
			CHECK(h2 && handle_is(p, h2, ci, big, len), "len %zu", len);
			before = pool_calls();
			CHECK(uniqd_intern(p, ci, big, len) == h2, "len %zu again", len);
			CHECK(pool_calls() == before, "len %zu not cached", len);
		}
		memset(big, 'z', 257);
		h2 = uniqd_intern(p, ci, big, 257);
		before = pool_calls();
		CHECK(uniqd_intern(p, ci, big, 257) == h2, "257");
		CHECK(pool_calls() == before + 1, "a 257-byte key is never cached");
		memset(big, 'q', sizeof(big));
		h2 = uniqd_intern(p, ci, big, UNIQD_KEY_MAX);
		CHECK(h2 != 0, "max key: %s", uniqd_last_error());
		CHECK(uniqd_intern(p, ci, big, UNIQD_KEY_MAX + 1) == 0 && errno == EMSGSIZE,
		      "too long: errno %d", errno);
		CHECK(uniqd_intern(p, ci, big, (size_t)UINT32_MAX + 2) == 0 && errno == EMSGSIZE,
		      "beyond 32 bits: errno %d", errno);
	}

	th_case("lookup") {
		unsigned int st = 0;

		CHECK(uniqd_lookup(p, ci, "absent", 6) == 0 && errno == ENOENT, "absent");
		CHECK(strstr(uniqd_last_error(), "not interned") != NULL, "%s",
		      uniqd_last_error());
		CHECK(uniqd_intern_ex(p, ci, "absent", 6, UNIQD_NOCREATE, &st) == 0 &&
		      st == UNIQD_ABSENT, "status %u", st);
		/* A miss is never cached. */
		h2 = uniqd_intern(p, ci, "absent", 6);
		CHECK(uniqd_lookup(p, ci, "absent", 6) == h2, "present now");
		CHECK(uniqd_intern(p, 999, "x", 1) == 0 && errno == EBADSLT, "bad class");
		CHECK(strstr(uniqd_last_error(), "class 999 is not registered") != NULL,
		      "%s", uniqd_last_error());
	}

	th_case("resolve") {
		char small[2], *s;
		size_t len = 0;
		uint32_t c = 0;

		CHECK(uniqd_resolve(p, h1, small, sizeof(small), &c) == 3, "short buffer");
		CHECK(uniqd_resolve(p, h1, NULL, 0, &c) == 3 && c == ci, "length only");
		s = uniqd_resolve_alloc(p, h1, &len, &c);
		CHECK(s && len == 3 && !strcmp(s, "i32") && c == ci, "alloc");
		free(s);
		s = uniqd_resolve_alloc(p, uniqd_intern(p, ci, (char[600]){ 0 }, 600), &len, NULL);
		CHECK(s && len == 600, "alloc long");
		free(s);
		CHECK(uniqd_resolve(p, 12345, small, sizeof(small), NULL) == -1 &&
		      errno == ENOENT, "bad handle");
		CHECK(strstr(uniqd_last_error(), "resolve handle 0x3039 in pool 'native'") != NULL,
		      "%s", uniqd_last_error());
	}

	th_case("stats, class info, digest") {
		struct uniqd_pool_stats st;
		struct uniqd_class_desc d;
		uint8_t dg[UNIQD_DIGEST_SIZE];

		CHECK(uniqd_stats(p, &st) == 0 && st.entries > 0 && st.classes == 2,
		      "entries %llu classes %u", (unsigned long long)st.entries, st.classes);
		CHECK(uniqd_class_info(p, cf, &d) == 0 && d.class_id == cf &&
		      d.name_len == 13 && !strcmp(d.name, "builtin.float") && d.entries == 1,
		      "%s %llu", d.name, (unsigned long long)d.entries);
		CHECK(uniqd_class_info(p, 77, &d) == -1 && errno == EBADSLT, "bad id");
		CHECK(uniqd_digest(p, h1, dg) == 0, "digest");
	}

	th_case("batch") {
		enum { N = 1000 };
		static struct uniqd_item it[N];
		static char keys[N][16];
		unsigned long before;
		uniqd_pool *pb;
		size_t n;

		for (int i = 0; i < N; i++) {
			snprintf(keys[i], sizeof(keys[i]), "b%d", i % 700);	/* duplicates */
			it[i] = (struct uniqd_item){ .data = keys[i], .len = strlen(keys[i]),
						     .class_id = i % 2 ? ci : cf };
		}
		/* A device batch below the library's own chunk (read at open). */
		fk_max_batch = 100;
		pb = uniqd_open("native", 0);
		CHECK(pb != NULL, "open");
		if (!pb)
			break;
		before = calls(UNIQD_IOC_INTERN_BATCH);
		n = uniqd_intern_many(pb, it, N, 0);
		CHECK(n == N, "done %zu: %s", n, uniqd_last_error());
		/* Without the duplicates the cache caught: 1000 keys / 100 a call. */
		CHECK(calls(UNIQD_IOC_INTERN_BATCH) - before <= 10, "%lu calls",
		      calls(UNIQD_IOC_INTERN_BATCH) - before);
		for (int i = 0; i < N; i++) {
			CHECK(it[i].handle && handle_is(p, it[i].handle, it[i].class_id,
							keys[i], strlen(keys[i])), "item %d", i);
			CHECK(it[i].handle == uniqd_intern(p, it[i].class_id, keys[i],
							   strlen(keys[i])), "item %d single", i);
		}
		CHECK(it[0].status == UNIQD_CREATED, "first is new: %u", it[0].status);
		CHECK(it[700 + 2].status == UNIQD_CACHED || it[702].status == 0,
		      "duplicate: %u", it[702].status);

		/*
		 * Mostly cached now (p's single interns above share the thread's
		 * direct-mapped cache, so some of pb's slots were taken): only
		 * the misses go to the kernel, in batches.
		 */
		before = pool_calls();
		CHECK(uniqd_intern_many(pb, it, N, 0) == N, "again");
		CHECK(pool_calls() - before <= 10, "%lu calls", pool_calls() - before);
		for (int i = 0; i < N; i++)
			CHECK(it[i].handle == uniqd_intern(p, it[i].class_id, keys[i],
							   strlen(keys[i])), "again: item %d", i);

		/* Interrupted calls go on where they stopped. */
		uniqd_cache_clear();
		atomic_store(&fk_batch_eintr, 3);
		for (int i = 0; i < N; i++)
			it[i].handle = 0;
		CHECK(uniqd_intern_many(pb, it, N, UNIQD_NOCACHE) == N, "EINTR");
		for (int i = 0; i < N; i++)
			CHECK(handle_is(p, it[i].handle, it[i].class_id, keys[i],
					strlen(keys[i])), "EINTR item %d", i);
		CHECK(atomic_load(&fk_batch_eintr) == 0, "restarts not exercised");
		uniqd_close(pb);
		fk_max_batch = UNIQD_BATCH_MAX;

		/* Lookup: absent keys are answers. */
		it[3].data = "never-interned";
		it[3].len = 14;
		CHECK(uniqd_intern_many(p, it, 10, UNIQD_NOCREATE | UNIQD_NOCACHE) == 10,
		      "lookup: %s", uniqd_last_error());
		CHECK(it[3].handle == 0 && it[3].status == UNIQD_ABSENT, "absent %u",
		      it[3].status);
		CHECK(it[4].handle != 0 && it[4].status == 0, "present");

		/* A failing key: the count says which. */
		it[5].class_id = 555;
		n = uniqd_intern_many(p, it, 10, UNIQD_NOCACHE);
		CHECK(n == 5 && errno == EBADSLT, "n %zu errno %d", n, errno);
		CHECK(it[4].handle != 0, "items before the failure are complete");
		CHECK(strstr(uniqd_last_error(), "class 555") != NULL, "%s",
		      uniqd_last_error());
		CHECK(uniqd_intern_many(p, it, 0, 0) == 0, "empty batch");
	}

	th_case("handles of one pool never answer for another") {
		uint64_t a, b;
		uint32_t qi;

		q = uniqd_open("other", 0);
		CHECK(q != NULL, "%s", uniqd_last_error());
		if (q) {
			/* The same class id, the same content, another pool. */
			qi = uniqd_class(q, "builtin.integer");
			CHECK(qi == ci, "ids are dense per pool: %u %u", qi, ci);
			a = uniqd_intern(p, ci, "shared", 6);
			b = uniqd_intern(q, qi, "shared", 6);
			CHECK(a && b && a != b, "%llx %llx", (unsigned long long)a,
			      (unsigned long long)b);
			CHECK(handle_is(q, b, qi, "shared", 6), "q resolves b");
			/* Close and reopen: the new handle must not see old slots. */
			uniqd_close(q);
			q = uniqd_open("other", 0);
			CHECK(q && uniqd_pool_info(q, &(struct uniqd_pool_info){ 0 }) == 0, "reopen");
			if (q) {
				qi = uniqd_class(q, "builtin.integer");
				b = uniqd_intern(q, qi, "shared", 6);
				CHECK(handle_is(q, b, qi, "shared", 6), "fresh pool resolves %llx",
				      (unsigned long long)b);
			}
		}
	}

	th_case("UNIQD_CLASS caches per pool") {
		unsigned long before = calls(UNIQD_IOC_CLASS);
		uint32_t a, b;

		a = site_integer(p);
		CHECK(a == ci, "%u %u", a, ci);
		CHECK(calls(UNIQD_IOC_CLASS) == before, "known: no system call");
		if (q) {
			uint32_t qf = uniqd_class(q, "q.first");	/* shifts q's ids */
			uint32_t qi2;

			(void)qf;
			qi2 = uniqd_class(q, "q.second");
			b = site_integer(q);
			CHECK(b == uniqd_class(q, "builtin.integer"), "q: %u", b);
			CHECK(site_integer(p) == ci, "back to p");
			CHECK(site_integer(q) == b, "back to q");
			CHECK(qi2 != 0, "q.second");
		}
		for (int i = 0; i < 100; i++)
			site_integer(p);
		CHECK(site_integer(NULL) == 0 && errno == EINVAL, "NULL pool");
	}

	th_case("UNIQD_CLASS first use from racing threads") {
		enum { T = 8 };
		struct class_racer r[T];
		pthread_barrier_t bar;
		uint32_t want;

		pthread_barrier_init(&bar, NULL, T);
		for (int i = 0; i < T; i++) {
			r[i] = (struct class_racer){ .pool = p, .bar = &bar };
			pthread_create(&r[i].t, NULL, class_race, &r[i]);
		}
		for (int i = 0; i < T; i++)
			pthread_join(r[i].t, NULL);
		want = uniqd_class(p, "race.class");
		for (int i = 0; i < T; i++)
			CHECK(r[i].got == want, "thread %d: %u want %u", i, r[i].got, want);
		pthread_barrier_destroy(&bar);
	}

	th_case("many threads, overlapping keys, every handle resolved") {
		enum { T = 8 };
		struct worker w[T];
		uint32_t cls[3] = { ci, cf, uniqd_class(p, "t.third") };

		for (int i = 0; i < T; i++) {
			w[i] = (struct worker){ .pool = p, .id = (unsigned int)i,
						.keys = 3000, .rounds = 4 };
			memcpy(w[i].cls, cls, sizeof(cls));
			pthread_create(&w[i].t, NULL, worker_run, &w[i]);
		}
		for (int i = 0; i < T; i++) {
			pthread_join(w[i].t, NULL);
			CHECK(w[i].bad == 0, "%lu bad: %s", w[i].bad, w[i].why);
		}
		/* Every thread agreed with every other: one entry per key. */
		for (unsigned int k = 0; k < 3000; k++) {
			char buf[512];
			size_t len;

			key_of(buf, &len, k, 0);
			CHECK(uniqd_lookup(p, cls[k % 3], buf, len) != 0, "key %u", k);
		}
	}

	th_case("errors name the call, the pool and what to do") {
		uniqd_pool *x = uniqd_open("private", 0);
		const char *e = uniqd_last_error();

		CHECK(x == NULL && errno == EACCES, "errno %d", errno);
		CHECK(!strncmp(e, "attach to pool 'private': Permission denied (EACCES): "
			       "the pool belongs to another user (you are uid ", 93),
		      "%s", e);
		CHECK(strstr(e, "ask its owner to create it shared (uniqdctl --share-group") != NULL,
		      "%s", e);
		x = uniqd_open("absent", UNIQD_OPEN_EXISTING);
		CHECK(x == NULL && errno == ENOENT, "existing");
		CHECK(strstr(uniqd_last_error(), "no pool of that name") != NULL, "%s",
		      uniqd_last_error());
		x = uniqd_open_ex("/dev/nonexistent", "x", 1, 0, NULL);
		CHECK(x == NULL && errno == ENOENT, "device");
		CHECK(strstr(uniqd_last_error(), "open /dev/nonexistent: No such file") &&
		      strstr(uniqd_last_error(), "modprobe uniqd"), "%s", uniqd_last_error());
		x = uniqd_open_ex(NULL, "a\x01'b", 4, 0xff00, NULL);
		CHECK(x == NULL && errno == EINVAL, "flags");
		CHECK(strstr(uniqd_last_error(), "'a\\x01\\'b'") != NULL, "%s",
		      uniqd_last_error());
		CHECK(!strcmp(uniqd_errname(EBADSLT), "EBADSLT"), "errname");
		CHECK(!strcmp(uniqd_errname(4000), "E4000"), "errname unknown");
		CHECK(uniqd_strerror(ENOSPC) != NULL, "strerror");
		CHECK(!strcmp(uniqd_version(), LIBUNIQD_VERSION_STRING), "version");
	}

	th_case("UNIQD_NOCACHE in the environment") {
		uniqd_pool *x;
		unsigned long before;

		setenv("UNIQD_NOCACHE", "1", 1);
		x = uniqd_open("native", 0);
		unsetenv("UNIQD_NOCACHE");
		CHECK(x != NULL, "open");
		if (x) {
			uint32_t c = uniqd_class(x, "builtin.integer");

			uniqd_intern(x, c, "i32", 3);
			before = pool_calls();
			CHECK(uniqd_intern(x, c, "i32", 3) == h1, "same pool, same handle");
			CHECK(pool_calls() == before + 1, "no cache");
			uniqd_close(x);
		}
	}

	th_case("close") {
		CHECK(uniqd_close(q) == 0, "q");
		CHECK(uniqd_close(p) == 0, "p");
		CHECK(uniqd_close(NULL) == 0, "NULL");
		for (int i = 0; i < FK_FILES; i++)
			CHECK(!fk_file_open[i], "fd %d left open", 1000 + i);
	}
	return th_finish();
}
