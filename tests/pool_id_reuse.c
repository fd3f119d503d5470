// SPDX-License-Identifier: GPL-2.0
/*
 * A handle names one content while any holder can still present it: a
 * freed pool's id, and so its handles, never comes back before the id
 * counter has gone all the way round. RESTORE takes the id a snapshot's
 * handles carry, so without privilege it may take only an id the counter
 * has not reached in this round, or one its own uid restored before, and
 * it never moves the counter (userspace-api.rst, "Pool ids").
 */
#define _GNU_SOURCE
#include "harness.h"
#include "uniqd_test.h"

#define USER_A	1000
#define USER_B	1001

/* A new pool @name of the caller's: its id (0 on failure), fd in *@fdp. */
static __u32 new_pool(const char *name, int *fdp)
{
	struct uniqd_attach a;
	int fd = ut_open();

	*fdp = -1;
	if (fd < 0 || ut_attach_full(fd, name, UNIQD_ATTACH_NEW, &a)) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	*fdp = fd;
	return a.pool_id;
}

/* The id the next new pool gets, by making one: it is then freed. */
static __u32 peek_next(void)
{
	int fd;
	__u32 id = new_pool("idreuse-peek", &fd);

	if (fd >= 0)
		close(fd);
	return id ? id + 1 : 0;
}

/* RESTORE of @id as the caller, closed at once: 0 or errno. */
static int restore_close(const char *name, __u32 id)
{
	int fd = ut_attach_restore(name, id, 0, NULL);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* The case, as uid 1000: pool a's handle never names b's content. */
static int stale_handle_case(void *arg)
{
	char buf[64];
	__u64 h, hb;
	__u32 ida, idb, cls;
	int fd, e;

	(void)arg;
	ida = new_pool("idreuse-a", &fd);
	if (!ida)
		return 10;
	cls = ut_class(fd, "c");
	h = ut_s(fd, cls, "alpha-secret");
	if (!h || h >> 32 != ida)
		return 11;
	close(fd);
	/*
	 * Unpublished, closed at once: the counter must not move. (EPERM if
	 * another uid's restore keeps the id already: the same for the test.)
	 */
	e = restore_close("idreuse-max", 0xffffffffU);
	if (e && e != EPERM)
		return 12;
	idb = new_pool("idreuse-b", &fd);
	if (!idb)
		return 13;
	if (idb == ida)
		return 14;
	cls = ut_class(fd, "c");
	hb = ut_s(fd, cls, "beta-other");
	if (!hb)
		return 15;
	/* a's handle is of another pool to b: EXDEV, never b's content. */
	if (!ut_resolve(fd, h, buf, sizeof(buf), NULL, NULL))
		return 16;
	if (errno != EXDEV)
		return 17;
	close(fd);
	/* The id counter did not wrap: b's id follows a's. */
	return idb > ida ? 0 : 18;
}

struct as_arg {
	const char *name;
	__u32 id;
};

static int restore_as(void *arg)
{
	const struct as_arg *a = arg;

	return restore_close(a->name, a->id);
}

/* RESTORE of @id as @uid: 0 or the errno (or a status >= 100). */
static int restore_as_uid(uid_t uid, const char *name, __u32 id)
{
	struct as_arg a = { name, id };

	return ut_run_as(uid, uid, 0, NULL, restore_as, &a);
}

int main(void)
{
	__u32 next, freed, id;
	int fd, st;

	th_init("pool_id_reuse");
	if (access(UNIQD_DEVICE_PATH, R_OK | W_OK)) {
		th_skip("all", "no /dev/uniqd");
		return th_finish();
	}

	th_case("a RESTORE of 0xffffffff does not bring back a freed pool's id") {
		st = ut_run_as(USER_A, USER_A, 0, NULL, stale_handle_case, NULL);
		CHECK(st == 0, "uid %d: step %d", USER_A, st);
	}

	th_case("an unprivileged RESTORE of any freed id is refused (EPERM)") {
		freed = new_pool("idreuse-freed", &fd);
		CHECK(freed != 0, "new pool: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		/* Behind the counter: a pool had it and died. */
		st = restore_as_uid(USER_A, "idreuse-freed", freed);
		CHECK(st == EPERM, "restore of freed id %u: %d (%s)", freed,
		      st, st < 100 ? strerror(st) : "status");
		/* Nor did the attempt move the counter past anything. */
		next = peek_next();
		CHECK(next == freed + 2, "next id %u after %u", next, freed);
	}

	th_case("a kept id is never handed out by the counter") {
		next = peek_next();
		/* The next id, restored by uid 1000 and closed at once. */
		st = restore_as_uid(USER_A, "idreuse-kept", next);
		CHECK(st == 0, "restore of %u: %d", next, st);
		id = new_pool("idreuse-after", &fd);
		CHECK(id != 0 && id != next, "new pool got %u (kept %u)", id,
		      next);
		CHECK(id == next + 1, "new pool got %u, want %u", id, next + 1);
		if (fd >= 0)
			close(fd);
		/* Another uid may not take it; its own uid may, again. */
		st = restore_as_uid(USER_B, "idreuse-kept", next);
		CHECK(st == EPERM, "uid %d restore of kept %u: %d", USER_B,
		      next, st);
		st = restore_as_uid(USER_A, "idreuse-kept", next);
		CHECK(st == 0, "uid %d restore of its own %u: %d", USER_A,
		      next, st);
	}

	th_case("ids far ahead, restored and freed, never come back early") {
		static const __u32 far[] = { 0xfffffffeU, 0x80000000U,
					     0x40000001U };
		__u32 first = peek_next(), got;
		unsigned int i;

		for (i = 0; i < sizeof(far) / sizeof(far[0]); i++) {
			st = restore_as_uid(USER_A, "idreuse-far", far[i]);
			CHECK(st == 0, "restore of %#x: %d", far[i], st);
		}
		/* The counter goes on from where it was: no wrap. */
		got = new_pool("idreuse-far-after", &fd);
		CHECK(got == first, "new pool got %u, want %u", got, first);
		if (fd >= 0)
			close(fd);
	}

	th_case("root may RESTORE a freed id (snapshots of this boot)") {
		freed = new_pool("idreuse-root", &fd);
		CHECK(freed != 0, "new pool: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		st = restore_close("idreuse-root", freed);
		CHECK(st == 0, "root restore of %u: %s", freed, strerror(st));
	}
	return th_finish();
}
