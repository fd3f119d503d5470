/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host helpers for the VM tests and the benchmarks (Documentation/testing.rst):
 * child processes (credentials, waiting), module parameters, reading and
 * writing sysfs and cgroup files, memory cgroups, rmmod, the UNIQD_NOMAP
 * re-run, the clock, a shell command. Nothing here speaks to /dev/uniqd: that is
 * ut_ioctl.h. Header-only, and C++-clean for tests/lib_hpp.cc.
 */
#ifndef UNIQD_TESTS_LIB_UT_HOST_H
#define UNIQD_TESTS_LIB_UT_HOST_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*
 * Run the shell command made of @fmt and its arguments (system()): its
 * exit status, or 128 when the shell did not exit.
 */
static inline int __attribute__((format(printf, 1, 2))) ut_sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/*
 * Wait for the child @pid: its exit status, 128 + the signal that killed
 * it, or -1.
 */
static inline int ut_wait(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/*
 * Run @fn in a child with the given credentials (groups may be NULL);
 * returns the child's exit status, or -1.
 */
static inline int ut_run_as(uid_t uid, gid_t gid, int ngroups,
			    const gid_t *groups, int (*fn)(void *), void *arg)
{
	pid_t pid;

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
	return ut_wait(pid);
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

/*
 * Read at most @cap - 1 bytes of the file @path into @buf, NUL-terminated:
 * the bytes read, or -1 if it cannot be opened.
 */
static inline long ut_read_file(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	size_t n;

	buf[0] = '\0';
	if (!f)
		return -1;
	n = fread(buf, 1, cap - 1, f);
	fclose(f);
	buf[n] = '\0';
	return (long)n;
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

/* Run busybox's rmmod on uniqd, its output discarded; its exit status. */
static inline int ut_rmmod(void)
{
	pid_t pid;
	int null;

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
	return ut_wait(pid);
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

	fflush(stdout);
	pid = fork();
	if (!pid) {
		setenv("UNIQD_NOMAP", "1", 1);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	if (pid < 0)
		return 1;
	return ut_wait(pid) != 0;
}

#endif /* UNIQD_TESTS_LIB_UT_HOST_H */
