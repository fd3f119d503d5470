/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test reporting shared by every uniqd userspace test (native and in the VM).
 *
 * A test program is a list of cases:
 *
 *	int main(void)
 *	{
 *		th_init("suite");
 *		th_case("does a thing") {
 *			CHECK(x == 1, "x is %d", x);
 *		}
 *		return th_finish();
 *	}
 *
 * Each case reports one line, "ok suite.case" or "not ok suite.case: why",
 * on stdout and, when UNIQD_RESULTS names a file (the VM's result port or a
 * host file), appended there too. The runners count only those lines, so a
 * program that crashes before reporting shows up as a missing "exit" line.
 */
#ifndef UNIQD_TESTS_HARNESS_H
#define UNIQD_TESTS_HARNESS_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *th_suite_name = "unnamed";
static const char *th_case_name;
static FILE *th_results;
static int th_case_failed, th_checks_failed_shown;
static unsigned int th_passed, th_failed, th_skipped;
static char th_first_why[512];

static inline void th_emit(const char *line)
{
	fputs(line, stdout);
	fflush(stdout);
	if (th_results) {
		fputs(line, th_results);
		fflush(th_results);
	}
}

static inline void th_init(const char *suite)
{
	const char *path = getenv("UNIQD_RESULTS");

	th_suite_name = suite;
	if (path && *path) {
		th_results = fopen(path, "a");
		if (!th_results)
			fprintf(stderr, "th: cannot open %s: %s\n", path,
				strerror(errno));
	}
}

static inline int th_begin(const char *name)
{
	th_case_name = name;
	th_case_failed = 0;
	th_checks_failed_shown = 0;
	th_first_why[0] = '\0';
	return 1;
}

static inline int th_end(void)
{
	char line[768];

	if (th_case_failed) {
		snprintf(line, sizeof(line), "not ok %s.%s: %s\n",
			 th_suite_name, th_case_name, th_first_why);
		th_failed++;
	} else {
		snprintf(line, sizeof(line), "ok %s.%s\n", th_suite_name,
			 th_case_name);
		th_passed++;
	}
	th_emit(line);
	return 0;
}

/* Report a case that cannot run here; say why (and never to hide a missing install). */
static inline void th_skip(const char *name, const char *why)
{
	char line[768];

	snprintf(line, sizeof(line), "skip %s.%s: %s\n", th_suite_name, name,
		 why);
	th_skipped++;
	th_emit(line);
}

static inline void th_fail_at(const char *file, int lineno, const char *expr,
			      const char *fmt, ...)
{
	char msg[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!th_case_failed)
		snprintf(th_first_why, sizeof(th_first_why), "%s:%d: %s (%s)",
			 file, lineno, expr, msg);
	th_case_failed = 1;
	/* Show the first few failures of a case in full, then stay quiet. */
	if (th_checks_failed_shown++ < 5)
		fprintf(stdout, "  FAIL %s:%d: %s: %s\n", file, lineno, expr,
			msg);
}

/* th_case("name") { ... }: the block runs once and reports one line. */
#define th_case(name) \
	for (int th_once_ = th_begin(name); th_once_; th_once_ = th_end())

#define CHECK(cond, ...)                                                   \
	do {                                                               \
		if (!(cond))                                               \
			th_fail_at(__FILE__, __LINE__, #cond, __VA_ARGS__); \
	} while (0)

/* CHECK_ERR(expr, E): expr must return -1 with errno == E. */
#define CHECK_ERR(expr, e)                                                  \
	do {                                                                \
		errno = 0;                                                  \
		long th_r_ = (long)(expr);                                  \
		int th_e_ = errno;                                          \
		if (th_r_ != -1 || th_e_ != (e))                            \
			th_fail_at(__FILE__, __LINE__, #expr,               \
				   "want -1/%s, got %ld/%s", strerror(e),   \
				   th_r_, th_r_ == -1 ? strerror(th_e_) : "-"); \
	} while (0)

/* CHECK_OK(expr): expr must return 0 (or any non-negative value). */
#define CHECK_OK(expr)                                                       \
	do {                                                                 \
		errno = 0;                                                   \
		long th_r_ = (long)(expr);                                   \
		if (th_r_ < 0)                                               \
			th_fail_at(__FILE__, __LINE__, #expr, "errno %s",    \
				   strerror(errno));                         \
	} while (0)

/* Returns the exit status: 0 only when every case passed. */
static inline int th_finish(void)
{
	printf("# %s: %u passed, %u failed, %u skipped\n", th_suite_name,
	       th_passed, th_failed, th_skipped);
	fflush(stdout);
	if (th_results)
		fclose(th_results);
	return th_failed ? 1 : 0;
}

#endif /* UNIQD_TESTS_HARNESS_H */
