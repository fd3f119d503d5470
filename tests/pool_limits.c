// SPDX-License-Identifier: GPL-2.0
/*
 * Per-pool limits: max_entries, max_bytes (arena bytes) and max_classes give
 * EDQUOT, exactly at the limit even with racing processes, and the pool
 * stays fully usable afterwards.
 */
#define _GNU_SOURCE
#include <sys/mman.h>

#include "harness.h"
#include "uniqd_test.h"

static int pool_with(const char *name, __u64 max_bytes, __u64 max_entries,
		     __u32 max_classes, struct uniqd_attach *a)
{
	int fd = ut_open();

	memset(a, 0, sizeof(*a));
	a->name = U64P(name);
	a->name_len = strlen(name);
	a->max_bytes = max_bytes;
	a->max_entries = max_entries;
	a->max_classes = max_classes;
	if (ioctl(fd, UNIQD_IOC_ATTACH, a)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The pool still works: old keys intern, look up and resolve. */
static void check_usable(int fd, __u32 cls, const char *word, __u64 handle)
{
	char buf[128];
	__u32 len = 0, c = 0, status = 9;
	__u64 h = 0;

	CHECK_OK(ut_intern(fd, cls, word, strlen(word), &h, &status));
	CHECK(h == handle && status == 0, "intern %s", word);
	CHECK_OK(ut_lookup(fd, cls, word, strlen(word), &h, NULL));
	CHECK(h == handle, "lookup %s", word);
	CHECK_OK(ut_resolve(fd, handle, buf, sizeof(buf), &len, &c));
	CHECK(len == strlen(word) && !memcmp(buf, word, len) && c == cls,
	      "resolve %s", word);
}

struct race {
	int created[8];
	int failed[8];
};

/* @nproc processes add distinct keys until EDQUOT; the total created. */
static int race_to_limit(const char *pool, int nproc, int keylen)
{
	struct race *r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int p, total = 0;

	memset(r, 0, sizeof(*r));
	fflush(stdout);
	for (p = 0; p < nproc; p++) {
		if (fork() == 0) {
			int fd = ut_pool(pool, UNIQD_ATTACH_EXISTING);
			__u32 cls = ut_class(fd, "race");
			char key[256];
			int i;

			if (fd < 0 || !cls)
				_exit(1);
			for (i = 0; ; i++) {
				__u32 status;
				__u64 h;

				memset(key, 'k', sizeof(key));
				snprintf(key, sizeof(key), "%d-%d-", p, i);
				key[strlen(key)] = 'k';
				if (ut_intern(fd, cls, key, keylen, &h, &status)) {
					if (errno != EDQUOT)
						r->failed[p] = errno;
					break;
				}
				if (status & UNIQD_STATUS_NEW)
					r->created[p]++;
			}
			_exit(0);
		}
	}
	for (p = 0; p < nproc; p++)
		wait(NULL);
	for (p = 0; p < nproc; p++) {
		total += r->created[p];
		if (r->failed[p])
			total = -r->failed[p];
	}
	munmap(r, sizeof(*r));
	return total;
}

int main(void)
{
	struct uniqd_attach a;
	struct uniqd_stats st;
	__u32 cls = 0, cls2 = 0;
	__u64 h0 = 0, h;
	char word[64];
	int fd, i;

	th_init("pool_limits");

	th_case("max_entries") {
		fd = pool_with("lim-entries", 0, 10, 0, &a);
		CHECK(fd >= 0, "attach: %s", strerror(errno));
		CHECK(a.max_entries == 10, "max_entries %llu",
		      (unsigned long long)a.max_entries);
		CHECK(a.max_bytes == 1ULL << 30, "default max_bytes");
		cls = ut_class(fd, "c");
		cls2 = ut_class(fd, "d");
		for (i = 0; i < 10; i++) {
			snprintf(word, sizeof(word), "e%d", i);
			h = ut_s(fd, i < 5 ? cls : cls2, word);
			CHECK(h, "intern %d: %s", i, strerror(errno));
			if (i == 0)
				h0 = h;
		}
		CHECK_ERR(ut_intern(fd, cls, "one more", 8, &h, NULL), EDQUOT);
		CHECK_ERR(ut_intern(fd, cls2, "", 0, &h, NULL), EDQUOT);
		/* A LOOKUP miss is still ENOENT. */
		CHECK_ERR(ut_lookup(fd, cls, "one more", 8, &h, NULL), ENOENT);
		check_usable(fd, cls, "e0", h0);
		/* Classes are not entries. */
		CHECK(ut_class(fd, "more") == 3, "class");
		CHECK_OK(ut_stats(fd, &st));
		CHECK(st.entries == 10 && st.max_entries == 10, "entries %llu",
		      (unsigned long long)st.entries);
		/* A batch stops at the first key that does not fit. */
		{
			struct uniqd_key k[3];
			struct uniqd_batch b;

			memset(k, 0, sizeof(k));
			for (i = 0; i < 3; i++) {
				k[i].class_id = cls;
				k[i].data = U64P(i == 1 ? "new" : "e1");
				k[i].len = i == 1 ? 3 : 2;
			}
			memset(&b, 0, sizeof(b));
			b.keys = U64P(k);
			b.count = 3;
			b.key_size = sizeof(k[0]);
			CHECK_ERR(ioctl(fd, UNIQD_IOC_INTERN_BATCH, &b), EDQUOT);
			CHECK(b.done == 1, "done %u", b.done);
		}
		close(fd);
	}

	th_case("max_bytes counts arena bytes exactly") {
		char key[100];
		/* The class name's record, then five 100-byte records. */
		__u64 max = ut_rec_size(1) + 5 * ut_rec_size(100);

		fd = pool_with("lim-bytes", max, 0, 0, &a);
		CHECK(fd >= 0, "attach: %s", strerror(errno));
		CHECK(a.max_bytes == max, "max_bytes %llu",
		      (unsigned long long)a.max_bytes);
		CHECK(a.max_entries == 1ULL << 24, "default max_entries");
		cls = ut_class(fd, "c");
		CHECK(cls, "class: %s", strerror(errno));
		CHECK_OK(ut_stats(fd, &st));
		CHECK(st.arena_bytes == ut_rec_size(1), "arena %llu",
		      (unsigned long long)st.arena_bytes);
		for (i = 0; i < 5; i++) {
			memset(key, 'a' + i, sizeof(key));
			CHECK_OK(ut_intern(fd, cls, key, sizeof(key), &h, NULL));
			if (i == 0)
				h0 = h;
		}
		memset(key, 'z', sizeof(key));
		CHECK_ERR(ut_intern(fd, cls, key, sizeof(key), &h, NULL), EDQUOT);
		CHECK_ERR(ut_intern(fd, cls, "", 0, &h, NULL), EDQUOT);
		/* A new class needs arena bytes too. */
		CHECK_ERR(ut_class_full(fd, "x", 0, NULL, NULL), EDQUOT);
		CHECK_OK(ut_stats(fd, &st));
		CHECK(st.arena_bytes == max, "arena %llu of %llu",
		      (unsigned long long)st.arena_bytes,
		      (unsigned long long)max);
		CHECK(st.bytes == 500 && st.entries == 5, "bytes %llu",
		      (unsigned long long)st.bytes);
		memset(key, 'a', sizeof(key));
		CHECK_OK(ut_intern(fd, cls, key, sizeof(key), &h, NULL));
		CHECK(h == h0, "existing key");
		close(fd);
	}

	th_case("max_classes") {
		__u32 id;

		fd = pool_with("lim-classes", 0, 0, 3, &a);
		CHECK(fd >= 0, "attach: %s", strerror(errno));
		CHECK(a.max_classes == 3, "max_classes %u", a.max_classes);
		CHECK(ut_class(fd, "a") == 1 && ut_class(fd, "b") == 2 &&
		      ut_class(fd, "c") == 3, "three classes");
		CHECK_ERR(ut_class_full(fd, "d", 0, &id, NULL), EDQUOT);
		CHECK_ERR(ut_class_full(fd, "d", UNIQD_CLASS_EXISTING, &id, NULL),
			  ENOENT);
		CHECK(ut_class(fd, "b") == 2, "existing class");
		h = ut_s(fd, 3, "still works");
		CHECK(h, "intern: %s", strerror(errno));
		check_usable(fd, 3, "still works", h);
		CHECK_OK(ut_stats(fd, &st));
		CHECK(st.classes == 3 && st.max_classes == 3, "classes %u",
		      st.classes);
		close(fd);
	}

	th_case("racing processes never pass max_entries") {
		int created;

		fd = pool_with("lim-race-entries", 0, 500, 0, &a);
		CHECK(fd >= 0, "attach: %s", strerror(errno));
		created = race_to_limit("lim-race-entries", 4, 20);
		CHECK(created == 500, "created %d", created);
		CHECK_OK(ut_stats(fd, &st));
		CHECK(st.entries == 500, "entries %llu",
		      (unsigned long long)st.entries);
		close(fd);
	}

	th_case("racing processes never pass max_bytes") {
		__u64 max = ut_rec_size(4) + 300 * ut_rec_size(40) + 20;
		int created;

		fd = pool_with("lim-race-bytes", max, 0, 0, &a);
		CHECK(fd >= 0, "attach: %s", strerror(errno));
		created = race_to_limit("lim-race-bytes", 4, 40);
		CHECK(created == 300, "created %d", created);
		CHECK_OK(ut_stats(fd, &st));
		CHECK(st.arena_bytes <= max, "arena %llu > %llu",
		      (unsigned long long)st.arena_bytes,
		      (unsigned long long)max);
		CHECK(st.entries == 300, "entries %llu",
		      (unsigned long long)st.entries);
		close(fd);
	}

	th_case("limits above the module's maxima") {
		fd = pool_with("lim-big", (1ULL << 30) + 1, 0, 0, &a);
		CHECK(fd < 0 && errno == EINVAL, "max_bytes: %s", strerror(errno));
		fd = pool_with("lim-big", 0, (1ULL << 24) + 1, 0, &a);
		CHECK(fd < 0 && errno == EINVAL, "max_entries: %s", strerror(errno));
		fd = pool_with("lim-big", 0, 0, 4097, &a);
		CHECK(fd < 0 && errno == EINVAL, "max_classes: %s", strerror(errno));
		fd = pool_with("lim-big", ~0ULL, ~0ULL, ~0U, &a);
		CHECK(fd < 0 && errno == EINVAL, "all: %s", strerror(errno));
		/* The maxima themselves are fine. */
		fd = pool_with("lim-big", 1ULL << 30, 1ULL << 24, 4096, &a);
		CHECK(fd >= 0, "maxima: %s", strerror(errno));
		close(fd);
	}

	return th_finish();
}
