// SPDX-License-Identifier: GPL-2.0
/*
 * Isolation between users: root interns secrets into a private pool; a
 * process of uid 1000 (gid 1000, no groups) can neither attach to it
 * (EACCES with every flag) nor get anything out of its handles: used on an
 * unattached file they get EBADFD, on the uid 1000 process's own pool and
 * on a pool shared by both EXDEV, forged into its own pool's id space they
 * resolve to its own entries or ENOENT; a sweep of every pool id and index
 * nearby, with RESOLVE and DIGEST, never returns a secret (nor its digest).
 * Handles of a pool that is gone stay dead for pools created after it.
 *
 * The other way round, a name taken by another user first: root does not
 * join it by accident (EACCES without UNIQD_ATTACH_OVERRIDE, EPERM with
 * UNIQD_ATTACH_OWNED); asked to, it attaches, and ATTACH says whose it is
 * (owner_uid, no CREATED).
 */
#define _GNU_SOURCE
#include <sys/mman.h>

#include "harness.h"
#include "uniqd_test.h"

#include "blake3.h"	/* the module's BLAKE3, built for userspace */

#define NSECRET	200
#define NOWN	200
#define USER	1000

struct shared {
	__u64 secret[NSECRET];		/* root's handles */
	__u64 shared_h;			/* a handle of the shared pool */
	__u8 secret_digest[NSECRET][32];
	__u32 own_id;			/* pool id of uid 1000's pool */
	__u64 own_entries;
	/* what uid 1000 saw */
	__u64 attach_denied, ebadfd, exdev, enoent, own_hits, swept, leaks;
	__u64 unexpected;
	char why[256];
};

static struct shared *sh;

static int secret_of(int i, char *buf)
{
	return snprintf(buf, 512, "SECRET %03d: the password of account %d is %08x%s",
			i, i, (unsigned int)(i * 2654435761U), i % 5 ? "" :
			" and a longer tail that keeps going past the stack buffer of the module ............................................................................................................................................................................................................................");
}

static int own_of(int i, char *buf)
{
	return snprintf(buf, 64, "user %d key %d", USER, i);
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fail(const char *fmt, ...)
{
	va_list ap;

	if (!sh->unexpected++) {
		va_start(ap, fmt);
		vsnprintf(sh->why, sizeof(sh->why), fmt, ap);
		va_end(ap);
	}
}

/* Is this a secret (they all start so), or a secret's digest? */
static int is_secret(const void *buf, __u32 len)
{
	return len >= 6 && !memcmp(buf, "SECRET", 6);
}

static int cmp_digest(const void *a, const void *b)
{
	return memcmp(a, b, 32);
}

static int is_secret_digest(const __u8 d[32])
{
	return bsearch(d, sh->secret_digest, NSECRET, 32, cmp_digest) != NULL;
}

/* Every way in to a handle, on @fd; counts what comes back. */
static void probe(int fd, __u64 h, int want_errno)
{
	struct uniqd_digest d;
	char buf[512];
	__u32 len = 0, cls = 0;
	int r, e;

	errno = 0;
	r = ut_resolve(fd, h, buf, sizeof(buf), &len, &cls);
	e = r ? errno : 0;
	if (!r && is_secret(buf, len))
		sh->leaks++;
	if (want_errno && e != want_errno)
		fail("RESOLVE %llx: %s, want %s", (unsigned long long)h,
		     r ? strerror(e) : "success", strerror(want_errno));
	e == EXDEV ? sh->exdev++ : e == ENOENT ? sh->enoent++ : e == EBADFD ? sh->ebadfd++ : 0;
	/* Length only: must not tell a secret's length either. */
	r = ut_resolve(fd, h, NULL, 0, &len, &cls);
	if (want_errno && (!r || errno != want_errno))
		fail("RESOLVE %llx (length only): %s", (unsigned long long)h,
		     r ? strerror(errno) : "success");
	memset(&d, 0, sizeof(d));
	d.handle = h;
	r = ioctl(fd, UNIQD_IOC_DIGEST, &d);
	if (!r && is_secret_digest(d.digest))
		sh->leaks++;
	if (want_errno && (!r || errno != want_errno))
		fail("DIGEST %llx: %s", (unsigned long long)h,
		     r ? strerror(errno) : "success");
}

/* uid 1000's side. */
static int as_user(void *unused)
{
	static const __u32 flags[] = {
		0, UNIQD_ATTACH_EXISTING, UNIQD_ATTACH_SHARE_ALL,
		UNIQD_ATTACH_SHARE_GROUP, UNIQD_ATTACH_SHARE_ALL | UNIQD_ATTACH_EXISTING,
		UNIQD_ATTACH_SHARE_ALL | UNIQD_ATTACH_SHARE_GROUP,
	};
	char buf[512], name[64];
	__u32 len, cls, i, own_cls, secret_cls, p;
	__u64 h, own[NOWN];
	int fd, own_fd, shared_fd, j;

	(void)unused;
	if (getuid() != USER || geteuid() != USER)
		return 2;
	/* Attaching: refused whatever the flags. */
	fd = ut_open();
	if (fd < 0)
		return 3;
	for (j = 0; j < (int)(sizeof(flags) / sizeof(flags[0])); j++) {
		if (!ut_attach(fd, "iso-private", flags[j]))
			fail("ATTACH with flags %#x succeeded", flags[j]);
		else if (errno != EACCES)
			fail("ATTACH with flags %#x: %s", flags[j], strerror(errno));
		else
			sh->attach_denied++;
	}
	if (!ut_attach(fd, "iso-private", UNIQD_ATTACH_NEW) || errno != EEXIST)
		fail("ATTACH NEW: %s", strerror(errno));
	/* The refused file is still unattached: handles get EBADFD. */
	for (i = 0; i < NSECRET; i++)
		probe(fd, sh->secret[i], EBADFD);

	/* Its own pool: the same class name, contents of its own. */
	own_fd = ut_pool("iso-user", UNIQD_ATTACH_NEW);
	if (own_fd < 0)
		return 4;
	secret_cls = ut_class(own_fd, "secret");
	own_cls = ut_class(own_fd, "mine");
	if (secret_cls != 1 || own_cls != 2)
		return 5;
	for (i = 0; i < NOWN; i++) {
		len = own_of(i, buf);
		if (ut_intern(own_fd, i % 2 ? own_cls : secret_cls, buf, len, &own[i], NULL))
			return 6;
	}
	sh->own_id = own[0] >> 32;
	/* Root's handles on its own pool: EXDEV, never the content. */
	for (i = 0; i < NSECRET; i++)
		probe(own_fd, sh->secret[i], EXDEV);
	/* Forged into its own pool's ids: its own entries, or nothing. */
	for (i = 0; i < NSECRET; i++) {
		h = (__u64)sh->own_id << 32 | (__u32)sh->secret[i];
		if (!ut_resolve(own_fd, h, buf, sizeof(buf), &len, &cls)) {
			if (is_secret(buf, len))
				sh->leaks++;
			if (len < 5 || memcmp(buf, "user ", 5))
				fail("forged %llx resolves to something not its own",
				     (unsigned long long)h);
			sh->own_hits++;
		} else if (errno != ENOENT) {
			fail("forged %llx: %s", (unsigned long long)h, strerror(errno));
		}
	}
	/* Secret content looked up in its own pool: not there. */
	for (i = 0; i < NSECRET; i++) {
		len = secret_of(i, buf);
		if (!ut_lookup(own_fd, secret_cls, buf, len, &h, NULL) || errno != ENOENT)
			fail("LOOKUP of a secret in its own pool: %s", strerror(errno));
	}
	/* The pool shared by both: root's private handles are EXDEV there. */
	shared_fd = ut_pool("iso-shared", UNIQD_ATTACH_EXISTING);
	if (shared_fd < 0)
		return 7;
	for (i = 0; i < NSECRET; i++)
		probe(shared_fd, sh->secret[i], EXDEV);
	/* A sweep of the neighbourhood: every pool id, low indices. */
	for (p = 0; p <= (sh->secret[0] >> 32) + 8 || p <= sh->own_id + 8; p++) {
		for (i = 0; i < NSECRET + 16; i += 1 + (p % 3)) {
			h = (__u64)p << 32 | i;
			sh->swept++;
			probe(own_fd, h, p == sh->own_id ? 0 : EXDEV);
			probe(shared_fd, h, 0);
		}
	}
	/* Its own classes only. */
	for (i = 1; i <= 8; i++) {
		struct uniqd_class_info ci;

		memset(&ci, 0, sizeof(ci));
		ci.class_id = i;
		ci.name = U64P(name);
		ci.name_buf_len = sizeof(name);
		if (!ioctl(own_fd, UNIQD_IOC_CLASS_INFO, &ci)) {
			if (i > 2)
				fail("class %u exists in its pool", i);
		} else if (errno != EBADSLT) {
			fail("CLASS_INFO %u: %s", i, strerror(errno));
		}
	}
	{
		struct uniqd_stats st;

		if (ut_stats(own_fd, &st) || st.entries != NOWN || st.attached != 1)
			fail("its STATS: entries %llu attached %u",
			     (unsigned long long)st.entries, st.attached);
		sh->own_entries = st.entries;
	}
	close(shared_fd);
	close(own_fd);
	close(fd);
	return 0;
}

/* After root's pool is gone: a new pool of uid 1000, the old handles. */
static int as_user_gone(void *unused)
{
	char buf[512];
	__u32 i, len, cls;
	__u64 h;
	int fd = ut_pool("iso-user-2", UNIQD_ATTACH_NEW);

	(void)unused;
	if (fd < 0 || ut_class(fd, "secret") != 1)
		return 3;
	for (i = 0; i < NOWN; i++) {
		len = own_of(i, buf);
		if (ut_intern(fd, 1, buf, len, &h, NULL))
			return 4;
	}
	sh->own_id = h >> 32;
	for (i = 0; i < NSECRET; i++) {
		probe(fd, sh->secret[i], EXDEV);
		h = (__u64)sh->own_id << 32 | (__u32)sh->secret[i];
		if (!ut_resolve(fd, h, buf, sizeof(buf), &len, &cls) && is_secret(buf, len))
			sh->leaks++;
	}
	close(fd);
	return 0;
}

/* uid 1000 takes a name first. */
static int squat(void *unused)
{
	int fd = ut_pool("iso-squat", UNIQD_ATTACH_NEW);

	(void)unused;
	if (fd < 0)
		return 1;
	/* Leave the file open in a child that waits: keep the pool alive. */
	if (!fork()) {
		char x;

		if (read(0, &x, 1) < 0)
			_exit(0);
		_exit(0);
	}
	return 0;
}

int main(void)
{
	char buf[512];
	struct uniqd_attach a;
	__u32 cls, len;
	int fd, shared_fd, rc, i, p[2];
	__u64 old_secret;

	th_init("isolation_uid");
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	fd = ut_pool("iso-private", UNIQD_ATTACH_NEW);
	shared_fd = ut_pool("iso-shared", UNIQD_ATTACH_NEW | UNIQD_ATTACH_SHARE_ALL);

	th_case("root's private pool holds secrets") {
		CHECK(sh != MAP_FAILED, "mmap");
		CHECK(fd >= 0 && shared_fd >= 0, "attach: %s", strerror(errno));
		cls = ut_class(fd, "secret");
		CHECK(cls == 1, "class");
		for (i = 0; i < NSECRET; i++) {
			len = secret_of(i, buf);
			CHECK_OK(ut_intern(fd, cls, buf, len, &sh->secret[i], NULL));
			ut_expected_digest("secret", buf, len, sh->secret_digest[i]);
		}
		CHECK(ut_class(shared_fd, "secret") == 1, "shared class");
		sh->shared_h = ut_s(shared_fd, 1, "nothing secret");
		CHECK(sh->shared_h, "shared intern");
		qsort(sh->secret_digest, NSECRET, 32, cmp_digest);
	}

	th_case("uid 1000 can neither attach nor use root's handles") {
		rc = ut_run_as(USER, USER, 0, NULL, as_user, NULL);
		CHECK(rc == 0, "uid 1000 process: status %d", rc);
		CHECK(!sh->unexpected, "%llu unexpected results, first: %s",
		      (unsigned long long)sh->unexpected, sh->why);
		CHECK(!sh->leaks, "%llu secrets or digests leaked",
		      (unsigned long long)sh->leaks);
		CHECK(sh->attach_denied == 6, "%llu attaches denied",
		      (unsigned long long)sh->attach_denied);
		CHECK(sh->own_id && sh->own_id != sh->secret[0] >> 32, "pool ids %u, %llu",
		      sh->own_id, (unsigned long long)(sh->secret[0] >> 32));
		printf("# isolation_uid: %llu attaches refused; %llu EBADFD, %llu EXDEV, %llu ENOENT; "
		       "%llu forged handles hit its own entries; %llu handles swept; %llu leaks\n",
		       (unsigned long long)sh->attach_denied, (unsigned long long)sh->ebadfd,
		       (unsigned long long)sh->exdev, (unsigned long long)sh->enoent,
		       (unsigned long long)sh->own_hits, (unsigned long long)sh->swept,
		       (unsigned long long)sh->leaks);
	}

	th_case("root's secrets are untouched") {
		char want[512];
		__u32 gl, gc;

		for (i = 0; i < NSECRET; i++) {
			len = secret_of(i, want);
			CHECK_OK(ut_resolve(fd, sh->secret[i], buf, sizeof(buf), &gl, &gc));
			CHECK(gl == len && !memcmp(buf, want, len), "secret %d", i);
		}
	}

	th_case("a gone pool's handles stay dead for pools made after it") {
		old_secret = sh->secret[0];
		close(fd);
		sh->unexpected = sh->leaks = 0;
		sh->own_id = 0;
		/* uid 1000 makes a new pool: a new id; the old handles: EXDEV. */
		rc = ut_run_as(USER, USER, 0, NULL, as_user_gone, NULL);
		CHECK(rc == 0, "uid 1000 process: status %d", rc);
		CHECK(!sh->unexpected && !sh->leaks, "%s", sh->why);
		CHECK(sh->own_id != old_secret >> 32, "pool id %u reused", sh->own_id);
		/* The private pool is gone: attaching creates (as root). */
		fd = ut_open();
		CHECK_OK(ut_attach_full(fd, "iso-private", 0, &a));
		CHECK(a.status == UNIQD_ATTACH_CREATED, "status %u", a.status);
		CHECK(ut_class(fd, "secret") == 1, "class");
		CHECK_ERR(ut_resolve(fd, old_secret, buf, sizeof(buf), &len, &cls), EXDEV);
		close(fd);
	}

	th_case("a name another user took first: ATTACH says whose it is") {
		CHECK_OK(pipe(p));
		rc = -1;
		if (!fork()) {
			/* The squatter's waiting child reads our pipe: stdin. */
			dup2(p[0], 0);
			close(p[1]);
			_exit(ut_run_as(USER, USER, 0, NULL, squat, NULL));
		}
		close(p[0]);
		wait(&rc);
		CHECK(WIFEXITED(rc) && !WEXITSTATUS(rc), "squatter: %#x", rc);
		fd = ut_open();
		CHECK_ERR(ut_attach(fd, "iso-squat", UNIQD_ATTACH_NEW), EEXIST);
		CHECK_ERR(ut_attach(fd, "iso-squat", 0), EACCES);
		CHECK_ERR(ut_attach(fd, "iso-squat", UNIQD_ATTACH_OWNED |
				    UNIQD_ATTACH_OVERRIDE), EPERM);
		CHECK_OK(ut_attach_full(fd, "iso-squat", UNIQD_ATTACH_OVERRIDE, &a));
		CHECK(a.owner_uid == USER && !(a.status & UNIQD_ATTACH_CREATED) && a.mode == 0,
		      "owner %u status %u mode %u", a.owner_uid, a.status, a.mode);
		close(fd);
		close(p[1]);	/* the squatter's child exits, the pool goes */
	}

	close(shared_fd);
	return th_finish();
}
