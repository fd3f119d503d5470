/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Run uniqdctl from a VM test and look at what it printed (the
 * test-support library: Documentation/testing.rst). UNIQDCTL is the
 * program run, /usr/bin/uniqdctl unless the test defines it.
 */
#ifndef UNIQD_TESTS_LIB_UT_CTL_H
#define UNIQD_TESTS_LIB_UT_CTL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ut_host.h"	/* ut_wait() */

#ifndef UNIQDCTL
#define UNIQDCTL "/usr/bin/uniqdctl"
#endif

/* One run of uniqdctl: its exit status and what it wrote. */
struct ut_run {
	int status;
	char out[65536];
	char err[4096];
};

/* What the file @fd holds, from its start, into @buf (NUL-ended); closes @fd. */
static inline void ut_read_fd(int fd, char *buf, size_t cap)
{
	ssize_t r;
	size_t n = 0;

	lseek(fd, 0, SEEK_SET);
	while (n + 1 < cap && (r = read(fd, buf + n, cap - 1 - n)) > 0)
		n += (size_t)r;
	buf[n] = '\0';
	close(fd);
}

/*
 * uniqdctl ARGS... (NULL-terminated) into @r, the command line and its
 * stderr echoed to stdout; its exit status, or -1.
 */
static inline int ut_ctl(struct ut_run *r, ...)
{
	const char *argv[16] = { "uniqdctl" };
	int out = memfd_create("out", 0), err = memfd_create("err", 0);
	int n = 1, st;
	va_list ap;
	pid_t pid;

	va_start(ap, r);
	while (n < 15 && (argv[n] = va_arg(ap, const char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	r->status = -1;
	r->out[0] = r->err[0] = '\0';
	if (out < 0 || err < 0)
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		dup2(out, 1);
		dup2(err, 2);
		execv(UNIQDCTL, (char *const *)argv);
		_exit(127);
	}
	st = pid < 0 ? -1 : ut_wait(pid);
	if (st < 0)
		return -1;
	ut_read_fd(out, r->out, sizeof(r->out));
	ut_read_fd(err, r->err, sizeof(r->err));
	r->status = st;
	printf("  $ uniqdctl");
	for (int i = 1; argv[i]; i++)
		printf(" %s", argv[i]);
	printf("  -> %d\n%s", r->status, r->err);
	return r->status;
}

/* @line is a whole line of @text. */
static inline bool ut_has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; (p = strstr(p, line)); p++)
		if ((p == text || p[-1] == '\n') && (p[n] == '\n' || !p[n]))
			return true;
	return false;
}

#endif /* UNIQD_TESTS_LIB_UT_CTL_H */
