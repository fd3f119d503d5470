// SPDX-License-Identifier: GPL-2.0
/*
 * The README's example (tools/libuniqd/example/example.c), built as its
 * users build it: against a staged `make install` with
 * `pkg-config --static --cflags --libs libuniqd` (mk/install.mk). It runs
 * here from /usr/bin/libuniqd-example, twice and at once, and must agree.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "libuniqd.h"

#define EXAMPLE "/usr/bin/libuniqd-example"

/* Run the example; its exit status, its first output line in LINE. */
static int run(char *line, size_t size)
{
	FILE *f = popen(EXAMPLE " 2>&1", "r");
	int st;

	line[0] = '\0';
	if (!f)
		return -1;
	if (!fgets(line, (int)size, f))
		line[0] = '\0';
	st = pclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(void)
{
	char one[256], two[256];
	unsigned long long a = 0, b = 0;
	uniqd_pool *p;

	th_init("lib-example");
	th_case("runs") {
		CHECK(access(EXAMPLE, X_OK) == 0, "%s is missing (make userspace builds it)",
		      EXAMPLE);
		CHECK(run(one, sizeof(one)) == 0, "exit status; output: %s", one);
		CHECK(sscanf(one, "i32: %llx %llx", &a, &b) == 2 && a && a == b, "%s", one);
	}

	/* While we hold the pool, a second run gets the same handle. */
	p = uniqd_open("example", UNIQD_OPEN_NEW);
	th_case("agrees with another process") {
		uint64_t h;

		CHECK(p != NULL, "%s", uniqd_last_error());
		h = uniqd_intern_str(p, UNIQD_CLASS(p, "builtin.integer"), "i32");
		CHECK(run(two, sizeof(two)) == 0, "%s", two);
		CHECK(sscanf(two, "i32: %llx %llx", &a, &b) == 2 && a == h && b == h,
		      "%s; here %#llx", two, (unsigned long long)h);
	}
	uniqd_close(p);
	return th_finish();
}
