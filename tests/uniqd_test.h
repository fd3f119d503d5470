/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small wrappers around the uniqd ioctls for the VM tests. Each returns
 * what ioctl() returns (0, or -1 with errno set).
 */
#ifndef UNIQD_TESTS_UNIQD_TEST_H
#define UNIQD_TESTS_UNIQD_TEST_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/uniqd.h>

#include "blake3.h"	/* the module's BLAKE3, built for userspace */

#define U64P(p) ((__u64)(uintptr_t)(p))

static inline int ut_open(void)
{
	return open(UNIQD_DEVICE_PATH, O_RDWR | O_CLOEXEC);
}

static inline int ut_attach_full(int fd, const char *name, __u32 flags,
				 struct uniqd_attach *out)
{
	struct uniqd_attach a;

	if (!out)
		out = &a;
	memset(out, 0, sizeof(*out));
	out->name = U64P(name);
	out->name_len = strlen(name);
	out->flags = flags;
	return ioctl(fd, UNIQD_IOC_ATTACH, out);
}

static inline int ut_attach(int fd, const char *name, __u32 flags)
{
	return ut_attach_full(fd, name, flags, NULL);
}

/*
 * ATTACH_RESTORE of @name as pool @id (plus @flags) on a new file, as
 * uniqd_restore() does: the fd, or -1 with errno. @out (may be NULL) gets
 * the struct as the kernel left it.
 */
static inline int ut_attach_restore(const char *name, __u32 id, __u32 flags,
				    struct uniqd_attach *out)
{
	struct uniqd_attach a;
	int fd = ut_open(), e;

	if (!out)
		out = &a;
	memset(out, 0, sizeof(*out));
	out->name = U64P(name);
	out->name_len = strlen(name);
	out->flags = UNIQD_ATTACH_RESTORE | flags;
	out->pool_id = id;
	if (fd >= 0 && !ioctl(fd, UNIQD_IOC_ATTACH, out))
		return fd;
	e = errno;
	if (fd >= 0)
		close(fd);
	errno = e;
	return -1;
}

/* PUBLISH of the restoring pool on @fd, with @flags and @reserved as given. */
static inline int ut_publish(int fd, __u32 flags, __u32 reserved)
{
	struct uniqd_pool_publish p = { .flags = flags, .reserved = reserved };

	return ioctl(fd, UNIQD_IOC_PUBLISH, &p);
}

/* A fresh fd attached to @name (created if absent), or -1. */
static inline int ut_pool(const char *name, __u32 flags)
{
	int fd = ut_open();

	if (fd < 0)
		return -1;
	if (ut_attach(fd, name, flags)) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

static inline int ut_class_full(int fd, const char *name, __u32 flags,
				__u32 *id, __u32 *status)
{
	struct uniqd_class c;
	int ret;

	memset(&c, 0, sizeof(c));
	c.name = U64P(name);
	c.name_len = strlen(name);
	c.flags = flags;
	ret = ioctl(fd, UNIQD_IOC_CLASS, &c);
	if (id)
		*id = ret ? 0 : c.class_id;
	if (status)
		*status = ret ? 0 : c.status;
	return ret;
}

/* The class id of @name (registered if needed), or 0. */
static inline __u32 ut_class(int fd, const char *name)
{
	__u32 id = 0;

	if (ut_class_full(fd, name, 0, &id, NULL))
		return 0;
	return id;
}

static inline int ut_key(int fd, unsigned long cmd, __u32 cls,
			 const void *data, __u32 len, __u64 *handle,
			 __u32 *status)
{
	struct uniqd_key k;
	int ret;

	memset(&k, 0, sizeof(k));
	k.class_id = cls;
	k.data = U64P(data);
	k.len = len;
	ret = ioctl(fd, cmd, &k);
	if (handle)
		*handle = ret ? 0 : k.handle;
	if (status)
		*status = ret ? 0 : k.status;
	return ret;
}

static inline int ut_intern(int fd, __u32 cls, const void *data, __u32 len,
			    __u64 *handle, __u32 *status)
{
	return ut_key(fd, UNIQD_IOC_INTERN, cls, data, len, handle, status);
}

static inline int ut_lookup(int fd, __u32 cls, const void *data, __u32 len,
			    __u64 *handle, __u32 *status)
{
	return ut_key(fd, UNIQD_IOC_LOOKUP, cls, data, len, handle, status);
}

/* INTERN a C string; the handle, or 0. */
static inline __u64 ut_s(int fd, __u32 cls, const char *s)
{
	__u64 h = 0;

	if (ut_intern(fd, cls, s, strlen(s), &h, NULL))
		return 0;
	return h;
}

static inline int ut_resolve(int fd, __u64 handle, void *buf, __u32 buf_len,
			     __u32 *len, __u32 *cls)
{
	struct uniqd_resolve r;
	int ret;

	memset(&r, 0, sizeof(r));
	r.handle = handle;
	r.buf = U64P(buf);
	r.buf_len = buf_len;
	ret = ioctl(fd, UNIQD_IOC_RESOLVE, &r);
	if (len)
		*len = r.len;
	if (cls)
		*cls = r.class_id;
	return ret;
}

static inline int ut_stats(int fd, struct uniqd_stats *st)
{
	memset(st, 0, sizeof(*st));
	return ioctl(fd, UNIQD_IOC_STATS, st);
}

/* Arena bytes of one record of @len bytes (see Documentation/userspace-api.rst). */
static inline __u64 ut_rec_size(__u64 len)
{
	return (32 + len + 7) & ~7ULL;
}

/*
 * Run @fn in a child with the given credentials (groups may be NULL);
 * returns the child's exit status, or -1.
 */
static inline int ut_run_as(uid_t uid, gid_t gid, int ngroups,
			    const gid_t *groups, int (*fn)(void *), void *arg)
{
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		if (setgroups(ngroups, groups) || setresgid(gid, gid, gid) ||
		    setresuid(uid, uid, uid))
			_exit(120);
		_exit(fn(arg));
	}
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A module parameter of the loaded uniqd, or -1. */
static inline long ut_param(const char *name)
{
	char path[128];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/uniqd/parameters/%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* Seconds on the monotonic clock. */
static inline double ut_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The number at the start of the file @path (cgroup counters), or -1. */
static inline long long ut_read_ll(const char *path)
{
	char buf[64] = "";
	long long v = -1;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -1;
	if (read(fd, buf, sizeof(buf) - 1) > 0)
		v = strtoll(buf, NULL, 10);
	close(fd);
	return v;
}

/* Write @s to the file @path (cgroup and sysfs knobs); 0 or -1. */
static inline int ut_write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

/*
 * Memory cgroups for the tests that measure or limit what a pool costs:
 * cgroup2 at UT_CG (mounted if it is not; *@mounted says so, may be NULL)
 * with the memory controller on for its children, and a child @name.
 */
#define UT_CG "/sys/fs/cgroup"

static inline int ut_memcg_make(const char *name, int *mounted)
{
	char path[128];

	mkdir(UT_CG, 0755);
	if (access(UT_CG "/cgroup.controllers", F_OK)) {
		if (mount("none", UT_CG, "cgroup2", 0, NULL))
			return -1;
		if (mounted)
			*mounted = 1;
	}
	if (ut_write_file(UT_CG "/cgroup.subtree_control", "+memory"))
		return -1;
	snprintf(path, sizeof(path), UT_CG "/%s", name);
	if (mkdir(path, 0755) && errno != EEXIST)
		return -1;
	snprintf(path, sizeof(path), UT_CG "/%s/memory.current", name);
	return access(path, F_OK);
}

/* Move the calling process into cgroup @name ("" for the root). */
static inline int ut_cgroup_join(const char *name)
{
	char path[128], pid[32];

	snprintf(path, sizeof(path), UT_CG "/%s%scgroup.procs", name, *name ? "/" : "");
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	return ut_write_file(path, pid);
}

/* What DIGEST must be: BLAKE3-256(le32(name len) || name || content). */
static inline void ut_expected_digest(const char *name, const void *data,
				      size_t len, __u8 out[UNIQD_DIGEST_SIZE])
{
	struct uniqd_blake3_hasher h;
	__u32 n = strlen(name);
	__u8 le[4] = { (__u8)n, (__u8)(n >> 8), (__u8)(n >> 16), (__u8)(n >> 24) };

	uniqd_blake3_init(&h);
	uniqd_blake3_update(&h, le, 4);
	uniqd_blake3_update(&h, name, n);
	uniqd_blake3_update(&h, data, len);
	uniqd_blake3_final(&h, out, UNIQD_DIGEST_SIZE);
}

/* Run busybox's rmmod on uniqd, its output discarded; its exit status. */
static inline int ut_rmmod(void)
{
	pid_t pid;
	int st, null;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		null = open("/dev/null", O_WRONLY);
		if (null >= 0) {
			dup2(null, 1);
			dup2(null, 2);
		}
		execl("/bin/busybox", "rmmod", "uniqd", (char *)NULL);
		execl("/bin/rmmod", "rmmod", "uniqd", (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* libuniqd was told not to map pools (UNIQD_NOMAP). */
static inline int ut_nomap(void)
{
	const char *env = getenv("UNIQD_NOMAP");

	return env && *env && strcmp(env, "0");
}

/*
 * Run this program again with UNIQD_NOMAP=1, so that a libuniqd test also
 * runs without the mapping; 0 if that run passed.
 */
static inline int ut_rerun_nomap(char **argv)
{
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	if (!pid) {
		setenv("UNIQD_NOMAP", "1", 1);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 1;
	return !WIFEXITED(st) || WEXITSTATUS(st);
}

#endif /* UNIQD_TESTS_UNIQD_TEST_H */
