// SPDX-License-Identifier: GPL-2.0
/*
 * The administrator's view (UNIQD_FEAT_ADMIN): POOLS lists every pool to
 * CAP_SYS_ADMIN and only the visible ones to a user, with owner, entries,
 * attached files and mappings, page by page; REVOKE by the owner or an
 * administrator frees the name at once and gives the attached files EIDRM
 * (their mappings stay readable) until the last one closes; hostile
 * arguments get their errnos.
 */
#define _GNU_SOURCE
#include <sys/fsuid.h>
#include <sys/mman.h>

#include "harness.h"
#include "uniqd_test.h"

#define NPOOLS	64

static struct uniqd_pool_status st[UNIQD_POOLS_MAX];

static int pools(int fd, __u32 start, __u32 count, __u32 size, void *buf,
		 __u32 *next)
{
	struct uniqd_pools p = {
		.pools = U64P(buf), .count = count, .info_size = size,
		.start_id = start,
	};

	if (ioctl(fd, UNIQD_IOC_POOLS, &p))
		return -1;
	if (next)
		*next = p.next_id;
	return p.count;
}

/* The status of pool @id from a full listing, or NULL. */
static const struct uniqd_pool_status *find(int fd, __u32 id)
{
	int n = pools(fd, 1, UNIQD_POOLS_MAX, sizeof(st[0]), st, NULL), i;

	for (i = 0; i < n; i++)
		if (st[i].id == id)
			return &st[i];
	return NULL;
}

static int do_revoke(int fd, __u32 id)
{
	struct uniqd_revoke r = { .id = id };

	return ioctl(fd, UNIQD_IOC_REVOKE, &r);
}

/* A pool whose owner is @uid (root sets its fsuid for the ATTACH). */
static int pool_of(uid_t uid, const char *name, __u32 flags, __u32 *id)
{
	int fd;
	__u64 h = 0;

	setfsuid(uid);
	fd = ut_pool(name, UNIQD_ATTACH_NEW | flags);
	setfsuid(0);
	if (fd < 0)
		return -1;
	/* The id is the upper half of every handle. */
	if (ut_intern(fd, ut_class(fd, "c"), name, strlen(name), &h, NULL)) {
		close(fd);
		return -1;
	}
	*id = h >> 32;
	return fd;
}

static __u32 g_id;

static int user_sees(void *arg)
{
	int fd = ut_open(), n;
	const struct uniqd_pool_status *s;

	(void)arg;
	n = pools(fd, 1, UNIQD_POOLS_MAX, sizeof(st[0]), st, NULL);
	if (n < 0)
		return 10;
	s = find(fd, g_id);
	return s ? 1 : 0;
}

static int user_revokes(void *arg)
{
	int fd = ut_open();

	(void)arg;
	if (!do_revoke(fd, g_id))
		return 0;
	return errno == EPERM ? 1 : 10;
}

int main(void)
{
	const struct uniqd_pool_status *s;
	int fd, fb, fs, fd2, n, i, many[NPOOLS];
	__u32 ida, idb, ids, next, seen;
	struct uniqd_stats stats;
	__u8 big[2 * 4096];
	char name[32];
	__u64 h;
	void *m;

	th_init("pool_admin");
	fd = pool_of(0, "adm-a", 0, &ida);
	fb = pool_of(1000, "adm-b", 0, &idb);
	fs = pool_of(1000, "adm-shared", UNIQD_ATTACH_SHARE_ALL, &ids);

	th_case("setup") {
		CHECK(fd >= 0 && fb >= 0 && fs >= 0, "pools: %s", strerror(errno));
	}

	th_case("root sees every pool, with its owner, files and mappings") {
		m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fb, 0);
		CHECK(m != MAP_FAILED, "mmap: %s", strerror(errno));
		fd2 = ut_pool("adm-b", UNIQD_ATTACH_EXISTING | UNIQD_ATTACH_OVERRIDE);
		CHECK(fd2 >= 0, "second file: %s", strerror(errno));
		s = find(fd, idb);
		CHECK(s, "adm-b not listed");
		if (s) {
			CHECK(s->owner_uid == 1000 && s->mode == 0, "owner %u mode %u",
			      s->owner_uid, s->mode);
			CHECK(s->entries == 1 && s->bytes == 5, "entries %llu bytes %llu",
			      (unsigned long long)s->entries,
			      (unsigned long long)s->bytes);
			CHECK(s->attached == 2 && s->mapped == 1, "attached %u mapped %u",
			      s->attached, s->mapped);
			CHECK(s->name_len == 5 && !memcmp(s->name, "adm-b", 5) &&
			      !s->flags, "name or flags");
			CHECK(s->arena_bytes && s->map_bytes, "no memory counted");
		}
		close(fd2);
		munmap(m, 4096);
		s = find(fd, idb);
		CHECK(s && s->attached == 1 && s->mapped == 0, "after close");
		CHECK(find(fd, ida) && find(fd, ids), "adm-a or adm-shared missing");
	}

	th_case("a user sees what it may attach, not others' private pools") {
		g_id = idb;
		CHECK(ut_run_as(1001, 1001, 0, NULL, user_sees, NULL) == 0,
		      "uid 1001 sees uid 1000's private pool");
		CHECK(ut_run_as(1000, 1000, 0, NULL, user_sees, NULL) == 1,
		      "the owner does not see its pool");
		g_id = ids;
		CHECK(ut_run_as(1001, 1001, 0, NULL, user_sees, NULL) == 1,
		      "uid 1001 does not see a share-all pool");
	}

	th_case("pages: count 1 at a time, every pool once") {
		for (i = 0; i < NPOOLS; i++) {
			snprintf(name, sizeof(name), "adm-many-%d", i);
			many[i] = ut_pool(name, UNIQD_ATTACH_NEW);
		}
		seen = 0;
		next = 1;
		do {
			n = pools(fd, next, 1, sizeof(st[0]), st, &next);
			CHECK(n == 1 || (n == 0 && !next), "page: %d, %s", n,
			      strerror(errno));
			if (n != 1)
				break;
			if (!strncmp((char *)st[0].name, "adm-many-", 9))
				seen++;
		} while (next);
		CHECK(seen == NPOOLS, "%u of %d pools seen", seen, NPOOLS);
		for (i = 0; i < NPOOLS; i++)
			close(many[i]);
	}

	th_case("hostile POOLS arguments") {
		CHECK_ERR(pools(fd, 1, 0, sizeof(st[0]), st, NULL), EINVAL);
		CHECK_ERR(pools(fd, 1, UNIQD_POOLS_MAX + 1, sizeof(st[0]), st, NULL),
			  EINVAL);
		CHECK_ERR(pools(fd, 1, 1, sizeof(st[0]) - 1, st, NULL), EINVAL);
		CHECK_ERR(pools(fd, 1, 1, 4097, big, NULL), E2BIG);
		CHECK_ERR(pools(fd, 1, 4, sizeof(st[0]), (void *)8, NULL), EFAULT);
		/* A larger element: the tail is zeroed. */
		memset(big, 0xaa, sizeof(big));
		n = pools(fd, ida, 1, 4096, big, NULL);
		CHECK(n == 1, "4096-byte element: %d %s", n, strerror(errno));
		for (i = sizeof(st[0]); i < 4096; i++)
			if (big[i])
				break;
		CHECK(i == 4096, "byte %d of the tail not zeroed", i);
		CHECK(!memcmp(big, &ida, 4), "the element is not adm-a");
	}

	th_case("hostile REVOKE arguments") {
		struct uniqd_revoke r = { .id = idb, .reserved = 1 };

		CHECK_ERR(ioctl(fd, UNIQD_IOC_REVOKE, &r), EINVAL);
		CHECK_ERR(do_revoke(fd, 0), ENOENT);
		CHECK_ERR(do_revoke(fd, 0xfffffff0), ENOENT);
		g_id = idb;
		CHECK(ut_run_as(1001, 1001, 0, NULL, user_revokes, NULL) == 1,
		      "uid 1001 revoked uid 1000's pool");
		CHECK(find(fd, idb) && !(find(fd, idb)->flags & UNIQD_POOL_REVOKED),
		      "revoked after all");
	}

	th_case("the owner revokes: EIDRM, the mapping stays, the name is free") {
		m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fb, 0);
		CHECK(m != MAP_FAILED, "mmap: %s", strerror(errno));
		g_id = idb;
		CHECK(ut_run_as(1000, 1000, 0, NULL, user_revokes, NULL) == 0,
		      "the owner could not revoke");
		CHECK_ERR(ut_intern(fb, 1, "x", 1, &h, NULL), EIDRM);
		CHECK_ERR(ut_stats(fb, &stats), EIDRM);
		CHECK(mmap(NULL, 4096, PROT_READ, MAP_SHARED, fb, 0) == MAP_FAILED &&
		      errno == EIDRM, "mmap of a revoked pool: %s", strerror(errno));
		if (m != MAP_FAILED)
			CHECK(((struct uniqd_map_header *)m)->magic == UNIQD_MAP_MAGIC &&
			      ((struct uniqd_map_header *)m)->version == UNIQD_MAP_VERSION,
			      "the mapping is gone");
		s = find(fd, idb);
		CHECK(s && (s->flags & UNIQD_POOL_REVOKED), "not listed as revoked");
		/* Revoking again changes nothing. */
		CHECK_OK(do_revoke(fd, idb));
		/* The name makes a new pool now. */
		setfsuid(1000);
		fd2 = ut_pool("adm-b", UNIQD_ATTACH_NEW);
		setfsuid(0);
		CHECK(fd2 >= 0, "adm-b again: %s", strerror(errno));
		CHECK_OK(ut_intern(fd2, ut_class(fd2, "c"), "y", 1, &h, NULL));
		CHECK((h >> 32) != idb, "the new pool has the old id");
		close(fd2);
		if (m != MAP_FAILED)
			munmap(m, 4096);
		close(fb);
		CHECK(!find(fd, idb), "the revoked pool outlived its last file");
	}

	th_case("root revokes another user's pool") {
		CHECK_OK(do_revoke(fd, ids));
		CHECK_ERR(ut_intern(fs, 1, "x", 1, &h, NULL), EIDRM);
		close(fs);
		CHECK(!find(fd, ids), "still listed");
	}

	close(fd);
	return th_finish();
}
