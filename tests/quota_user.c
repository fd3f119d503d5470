// SPDX-License-Identifier: GPL-2.0
/*
 * Per-user quotas (max_user_bytes, max_user_entries, max_user_pools): a
 * user whose calls filled its quota gets EDQUOT while other users keep
 * working; the caller pays for what it adds to a shared pool; a process in
 * a child user namespace is charged to the namespace's owner too; every
 * charge is given back when its pool dies (the user gets its whole quota
 * again, and the module WARNs if a user's counters are not back to 0 when
 * its last pool goes). The quotas are changed at runtime through sysfs and
 * restored at the end.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/fsuid.h>

#include "harness.h"
#include "uniqd_test.h"

#define PARAM_DIR "/sys/module/uniqd/parameters/"

static char saved_bytes[64], saved_entries[64], saved_pools[64];

static int param_read(const char *name, char *buf, size_t n)
{
	char path[128];
	ssize_t r;
	int fd;

	snprintf(path, sizeof(path), PARAM_DIR "%s", name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	r = read(fd, buf, n - 1);
	close(fd);
	if (r <= 0)
		return -1;
	buf[r] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int param_set(const char *name, const char *v)
{
	char path[128];

	snprintf(path, sizeof(path), PARAM_DIR "%s", name);
	return ut_write_file(path, v);
}

static int param_set_u(const char *name, unsigned long long v)
{
	char s[32];

	snprintf(s, sizeof(s), "%llu", v);
	return param_set(name, s);
}

static void restore(void)
{
	param_set("max_user_bytes", saved_bytes);
	param_set("max_user_entries", saved_entries);
	param_set("max_user_pools", saved_pools);
}

/* Intern "<tag>.<i>" (padded to @len bytes) for i = 0.. until an error: how many. */
static int fill(int fd, __u32 cls, const char *tag, unsigned int len,
		int max, int *err)
{
	char buf[4096];
	int i;

	*err = 0;
	for (i = 0; i < max; i++) {
		__u64 h;

		memset(buf, 'x', sizeof(buf));
		snprintf(buf, sizeof(buf), "%s.%d", tag, i);
		if (len < 16)
			len = strlen(buf);
		if (ut_intern(fd, cls, buf, len, &h, NULL)) {
			*err = errno;
			break;
		}
	}
	return i;
}

/* A pool created as fsuid @uid (so owned by and charged to @uid). */
static int pool_as(uid_t uid, const char *name, __u32 flags)
{
	int fd;

	setfsuid(uid);
	fd = ut_pool(name, flags);
	setfsuid(0);
	return fd;
}

/* fill() as fsuid @uid: what it adds is charged to @uid. */
static int fill_as(uid_t uid, int fd, const char *tag, unsigned int len,
		   int max, int *err)
{
	int n;

	setfsuid(uid);
	n = fill(fd, 1, tag, len, max, err);
	setfsuid(0);
	return n;
}

static int class_as(uid_t uid, int fd)
{
	__u32 c;

	setfsuid(uid);
	c = ut_class(fd, "c");
	setfsuid(0);
	return c == 1 ? 0 : -1;
}

/*
 * In a new user namespace owned by root whose uid 0 is kuid 3000: create a
 * pool and intern until EDQUOT. Exit status: the entries created (< 199),
 * 199 if the pool could not be created (EDQUOT), 200+ on a setup failure.
 */
static int in_userns(int go_fd, int done_fd)
{
	int fd, n, err;
	char c;

	if (unshare(CLONE_NEWUSER))
		return 200;
	if (write(done_fd, "u", 1) != 1)
		return 201;
	/* The parent writes our maps, then says go. */
	if (read(go_fd, &c, 1) != 1 || c != 'g')
		return 202;
	if (setresgid(0, 0, 0) || setresuid(0, 0, 0))
		return 203;
	fd = ut_pool("q-userns", UNIQD_ATTACH_NEW);
	if (fd < 0)
		return errno == EDQUOT ? 199 : 204;
	if (ut_class(fd, "c") != 1)
		return 205;
	n = fill(fd, 1, "ns", 0, 190, &err);
	if (err != EDQUOT)
		return 206;
	close(fd);
	return n;
}

static int write_map(pid_t pid, const char *file, const char *map)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, file);
	return ut_write_file(path, map);
}

/* The child's status: the entries it could create in its namespace. */
static int run_in_userns(void)
{
	int go[2], up[2], st;
	pid_t pid;
	char c;

	if (pipe(go) || pipe(up))
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		close(go[1]);
		close(up[0]);
		_exit(in_userns(go[0], up[1]));
	}
	close(go[0]);
	close(up[1]);
	if (read(up[0], &c, 1) == 1 &&
	    !write_map(pid, "uid_map", "0 3000 1") &&
	    !write_map(pid, "gid_map", "0 3000 1"))
		(void)!write(go[1], "g", 1);
	close(go[1]);
	close(up[0]);
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(void)
{
	int fa, fb, fc, fd, n, err, rc;
	char v[64];

	th_init("quota_user");
	if (param_read("max_user_bytes", saved_bytes, sizeof(saved_bytes)) ||
	    param_read("max_user_entries", saved_entries, sizeof(saved_entries)) ||
	    param_read("max_user_pools", saved_pools, sizeof(saved_pools))) {
		th_case("the quota parameters exist") {
			CHECK(0, "cannot read %s", PARAM_DIR "max_user_*");
		}
		return th_finish();
	}

	th_case("the quotas are writable and validated") {
		CHECK(param_set("max_user_entries", "0") == -1 && errno == EINVAL,
		      "0 accepted: %s", strerror(errno));
		CHECK(param_set("max_user_entries", "lots") == -1, "text accepted");
		CHECK(param_set("max_user_bytes", "4095") == -1, "4095 bytes accepted");
		CHECK(param_set("max_user_bytes", "1099511627777") == -1,
		      "2^40 + 1 bytes accepted");
		CHECK(param_set("max_user_pools", "0") == -1, "0 pools accepted");
		CHECK(param_read("max_user_entries", v, sizeof(v)) == 0 &&
		      !strcmp(v, saved_entries), "changed to %s", v);
		CHECK_OK(param_set("max_user_entries", "1000"));
		CHECK(param_read("max_user_entries", v, sizeof(v)) == 0 &&
		      !strcmp(v, "1000"), "reads %s", v);
		CHECK_OK(param_set("max_user_entries", saved_entries));
	}

	th_case("entries: a full user gets EDQUOT, another keeps working") {
		CHECK_OK(param_set_u("max_user_entries", 40));
		fa = pool_as(1000, "q-a", UNIQD_ATTACH_NEW | UNIQD_ATTACH_SHARE_ALL);
		CHECK(fa >= 0, "pool of 1000: %s", strerror(errno));
		CHECK_OK(class_as(1000, fa));
		n = fill_as(1000, fa, "a", 0, 100, &err);
		CHECK(n == 40 && err == EDQUOT, "uid 1000: %d entries, then %s", n,
		      strerror(err));
		/* What exists is still found; LOOKUP costs nothing. */
		n = fill_as(1000, fa, "a", 0, 40, &err);
		CHECK(n == 40 && !err, "existing keys: %d, %s", n, strerror(err));
		/* uid 1001 pays for what it adds, in 1000's shared pool too. */
		n = fill_as(1001, fa, "b-in-a", 0, 10, &err);
		CHECK(n == 10 && !err, "uid 1001 in 1000's pool: %d, %s", n,
		      strerror(err));
		fb = pool_as(1001, "q-b", UNIQD_ATTACH_NEW);
		CHECK(fb >= 0, "pool of 1001: %s", strerror(errno));
		CHECK_OK(class_as(1001, fb));
		n = fill_as(1001, fb, "b", 0, 100, &err);
		CHECK(n == 30 && err == EDQUOT, "uid 1001: %d entries, then %s", n,
		      strerror(err));
		/* Root is a user like any other, and has used nothing yet. */
		fc = ut_pool("q-c", UNIQD_ATTACH_NEW);
		CHECK(fc >= 0 && ut_class(fc, "c") == 1, "root's pool");
		n = fill(fc, 1, "c", 0, 100, &err);
		CHECK(n == 40 && err == EDQUOT, "root: %d entries, then %s", n,
		      strerror(err));
		close(fc);
		close(fb);
		/* 1001's 10 entries in q-a stay charged while q-a lives. */
		fb = pool_as(1001, "q-b", UNIQD_ATTACH_NEW);
		CHECK(fb >= 0 && !class_as(1001, fb), "pool of 1001 again");
		n = fill_as(1001, fb, "b", 0, 100, &err);
		CHECK(n == 30 && err == EDQUOT, "uid 1001 with q-a alive: %d", n);
		close(fb);
		close(fa);
		/* q-a is gone: both have their whole quota back. */
		fa = pool_as(1000, "q-a", UNIQD_ATTACH_NEW);
		CHECK(fa >= 0 && !class_as(1000, fa), "pool of 1000 again");
		n = fill_as(1000, fa, "a", 0, 100, &err);
		CHECK(n == 40 && err == EDQUOT, "uid 1000 after: %d", n);
		close(fa);
		fb = pool_as(1001, "q-b", UNIQD_ATTACH_NEW);
		CHECK(fb >= 0 && !class_as(1001, fb), "pool of 1001 again");
		n = fill_as(1001, fb, "b", 0, 100, &err);
		CHECK(n == 40 && err == EDQUOT, "uid 1001 after: %d", n);
		close(fb);
		CHECK_OK(param_set("max_user_entries", saved_entries));
	}

	th_case("entries: exact with the user's other files open, and a lowered quota holds at once") {
		int fd;

		CHECK_OK(param_set_u("max_user_entries", 1000));
		fa = pool_as(1000, "q-a", UNIQD_ATTACH_NEW);
		CHECK(fa >= 0 && !class_as(1000, fa), "pool of 1000");
		n = fill_as(1000, fa, "a", 0, 1, &err);
		CHECK(n == 1 && !err, "one key: %d, %s", n, strerror(err));
		/* Another file of the same user: refused only at the quota. */
		fd = pool_as(1000, "q-d", UNIQD_ATTACH_NEW);
		CHECK(fd >= 0 && !class_as(1000, fd), "second pool of 1000");
		n = fill_as(1000, fd, "d", 0, 2000, &err);
		CHECK(n == 999 && err == EDQUOT, "beside it: %d entries, then %s",
		      n, strerror(err));
		n = fill_as(1000, fa, "a", 0, 2000, &err);
		CHECK(n == 1 && err == EDQUOT, "the first file: %d, then %s", n,
		      strerror(err));
		close(fd);
		n = fill_as(1000, fa, "a", 0, 2000, &err);
		CHECK(n == 1000 && err == EDQUOT, "the second closed: %d, then %s",
		      n, strerror(err));
		close(fa);
		/* Lowered below what the user holds: refused from the next key. */
		fa = pool_as(1000, "q-a", UNIQD_ATTACH_NEW);
		CHECK(fa >= 0 && !class_as(1000, fa), "pool of 1000 again");
		n = fill_as(1000, fa, "a", 0, 2, &err);
		CHECK(n == 2 && !err, "two keys: %d, %s", n, strerror(err));
		CHECK_OK(param_set_u("max_user_entries", 1));
		n = fill_as(1000, fa, "n", 0, 10, &err);
		CHECK(n == 0 && err == EDQUOT, "lowered to 1: %d, then %s", n,
		      strerror(err));
		CHECK_OK(param_set_u("max_user_entries", 3));
		n = fill_as(1000, fa, "n", 0, 10, &err);
		CHECK(n == 1 && err == EDQUOT, "raised to 3: %d, then %s", n,
		      strerror(err));
		close(fa);
		CHECK_OK(param_set("max_user_entries", saved_entries));
	}

	th_case("bytes: a full user gets EDQUOT, another keeps working") {
		/* The class name's record, then 7 records of 1000 bytes. */
		__u64 quota = ut_rec_size(1) + 7 * ut_rec_size(1000) + 100;

		CHECK_OK(param_set_u("max_user_bytes", quota));
		fa = pool_as(1000, "q-a", UNIQD_ATTACH_NEW);
		CHECK(fa >= 0 && !class_as(1000, fa), "pool of 1000");
		n = fill_as(1000, fa, "big", 1000, 100, &err);
		CHECK(n == 7 && err == EDQUOT, "uid 1000: %d keys, then %s", n,
		      strerror(err));
		/* Small keys still fit in what is left. */
		n = fill_as(1000, fa, "s", 0, 100, &err);
		CHECK(n >= 1 && err == EDQUOT, "uid 1000 small: %d, %s", n,
		      strerror(err));
		fb = pool_as(1001, "q-b", UNIQD_ATTACH_NEW);
		CHECK(fb >= 0 && !class_as(1001, fb), "pool of 1001");
		n = fill_as(1001, fb, "big", 1000, 100, &err);
		CHECK(n == 7 && err == EDQUOT, "uid 1001: %d keys, then %s", n,
		      strerror(err));
		close(fa);
		close(fb);
		fa = pool_as(1000, "q-a", UNIQD_ATTACH_NEW);
		CHECK(fa >= 0 && !class_as(1000, fa), "pool of 1000 again");
		n = fill_as(1000, fa, "big", 1000, 100, &err);
		CHECK(n == 7 && err == EDQUOT, "uid 1000 after: %d", n);
		close(fa);
		CHECK_OK(param_set("max_user_bytes", saved_bytes));
	}

	th_case("pools: max_user_pools per user, at runtime") {
		CHECK_OK(param_set_u("max_user_pools", 2));
		fa = pool_as(1000, "q-p1", UNIQD_ATTACH_NEW);
		fb = pool_as(1000, "q-p2", UNIQD_ATTACH_NEW);
		CHECK(fa >= 0 && fb >= 0, "two pools: %s", strerror(errno));
		fc = pool_as(1000, "q-p3", UNIQD_ATTACH_NEW);
		CHECK(fc < 0 && errno == EDQUOT, "third: %d %s", fc, strerror(errno));
		/* Attaching to an existing pool costs no pool. */
		fc = pool_as(1000, "q-p1", UNIQD_ATTACH_EXISTING);
		CHECK(fc >= 0, "attach existing: %s", strerror(errno));
		close(fc);
		fc = pool_as(1001, "q-p3", UNIQD_ATTACH_NEW);
		CHECK(fc >= 0, "uid 1001: %s", strerror(errno));
		close(fc);
		close(fa);
		fa = pool_as(1000, "q-p3", UNIQD_ATTACH_NEW);
		CHECK(fa >= 0, "after a close: %s", strerror(errno));
		close(fa);
		close(fb);
		CHECK_OK(param_set("max_user_pools", saved_pools));
	}

	/* The debug test kernel is built without user namespaces. */
	if (access("/proc/self/ns/user", F_OK))
		th_skip("a child user namespace is charged to its owner too",
			"this kernel has no user namespaces (CONFIG_USER_NS off, as in the debug test kernel)");
	else th_case("a child user namespace is charged to its owner too") {
		CHECK_OK(param_set_u("max_user_entries", 40));
		/* Root (kuid 0) uses 30 of its 40. */
		fc = ut_pool("q-root", UNIQD_ATTACH_NEW);
		CHECK(fc >= 0 && ut_class(fc, "c") == 1, "root's pool");
		n = fill(fc, 1, "r", 0, 30, &err);
		CHECK(n == 30 && !err, "root: %d, %s", n, strerror(err));
		/* kuid 3000 in root's namespace: 10 more, then root is full. */
		rc = run_in_userns();
		CHECK(rc == 10, "in the namespace: %d entries (200+: setup)", rc);
		/* kuid 3000 itself, outside, has its whole quota. */
		fa = pool_as(3000, "q-3000", UNIQD_ATTACH_NEW);
		CHECK(fa >= 0 && !class_as(3000, fa), "pool of 3000");
		n = fill_as(3000, fa, "x", 0, 100, &err);
		CHECK(n == 40 && err == EDQUOT, "uid 3000 outside: %d", n);
		close(fa);
		/* uid 1000 never noticed. */
		fa = pool_as(1000, "q-a", UNIQD_ATTACH_NEW);
		CHECK(fa >= 0 && !class_as(1000, fa), "pool of 1000");
		n = fill_as(1000, fa, "a", 0, 100, &err);
		CHECK(n == 40 && err == EDQUOT, "uid 1000: %d", n);
		close(fa);
		/* The namespace's pool died with its child: root got 10 back. */
		n = fill(fc, 1, "r2", 0, 100, &err);
		CHECK(n == 10 && err == EDQUOT, "root after: %d, %s", n,
		      strerror(err));
		close(fc);
		/* And with q-root gone, the namespace gets all 40. */
		rc = run_in_userns();
		CHECK(rc == 40, "in the namespace, root idle: %d", rc);
		/* Pools too: root's one pool leaves the namespace none. */
		CHECK_OK(param_set_u("max_user_pools", 1));
		fc = ut_pool("q-root", UNIQD_ATTACH_NEW);
		CHECK(fc >= 0, "root's pool: %s", strerror(errno));
		rc = run_in_userns();
		CHECK(rc == 199, "a pool in the namespace, root's quota full: %d", rc);
		close(fc);
		rc = run_in_userns();
		CHECK(rc == 40, "a pool in the namespace, root idle: %d", rc);
		CHECK_OK(param_set("max_user_pools", saved_pools));
		CHECK_OK(param_set("max_user_entries", saved_entries));
	}

	th_case("everything is given back: each user has its whole quota") {
		CHECK_OK(param_set_u("max_user_entries", 25));
		CHECK_OK(param_set_u("max_user_pools", 1));
		for (uid_t u = 0; u <= 3000; u += 1000) {
			char name[32];

			snprintf(name, sizeof(name), "q-end-%u", u);
			fd = pool_as(u, name, UNIQD_ATTACH_NEW);
			CHECK(fd >= 0 && !class_as(u, fd), "uid %u: pool: %s", u,
			      strerror(errno));
			n = fill_as(u, fd, "e", 0, 100, &err);
			CHECK(n == 25 && err == EDQUOT, "uid %u: %d entries", u, n);
			close(fd);
		}
	}

	restore();
	/* The saved values are back. */
	th_case("the quotas are restored") {
		CHECK(param_read("max_user_entries", v, sizeof(v)) == 0 &&
		      !strcmp(v, saved_entries), "max_user_entries %s", v);
	}
	return th_finish();
}
