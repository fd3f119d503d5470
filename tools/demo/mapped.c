// SPDX-License-Identifier: GPL-2.0
/*
 * uniqd demo, part two: the pool mapped read-only into every process.
 *
 * One "compiler" process interns the identifiers of a header; three more
 * start later and meet the same identifiers for the first time, through
 * libuniqd as any caller would. Two find every one of them in the mapping,
 * without a system call; the third runs with UNIQD_NOMAP=1 and asks the
 * kernel each time. The kernel's own counters (STATS hits) show who asked.
 * Every process must get the same handle for every identifier.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "libuniqd.h"
#include <linux/uniqd.h>

#define NWORDS	2000
#define NPROC	4
#define POOL	"demo-mapped"

struct result {
	uint64_t handle[NPROC][NWORDS];
	uint64_t mapped[NPROC], asked[NPROC], kernel_hits[NPROC];
	uint64_t kernel_only;	/* entries the mapped index has no slot for */
	int failed[NPROC];
	int done;		/* the others are done: the first may close */
};

static void word(int i, char *buf, size_t n)
{
	static const char *const stems[] = { "size", "node", "list", "lock",
					     "page", "inode", "dev", "buf" };

	snprintf(buf, n, "%s_%s%d", stems[i % 8], i & 1 ? "get_" : "", i);
}

static uint64_t kernel_hits(uniqd_pool *p)
{
	struct uniqd_pool_stats st;

	return uniqd_stats(p, &st) ? 0 : st.hits;
}

/* Process @p: intern every word (p == 0) or look each up once. */
static void compiler(int p, struct result *r)
{
	uniqd_pool *pool;
	uint32_t cls;
	uint64_t before;
	char w[64];

	if (p == NPROC - 1)
		setenv("UNIQD_NOMAP", "1", 1);
	pool = uniqd_open(POOL, 0);
	cls = pool ? uniqd_class(pool, "ident") : 0;
	if (!cls) {
		r->failed[p] = 1;
		fprintf(stderr, "P%d: %s\n", p, uniqd_last_error());
		return;
	}
	before = kernel_hits(pool);
	for (int i = 0; i < NWORDS; i++) {
		unsigned int st = 0;

		word(i, w, sizeof(w));
		r->handle[p][i] = uniqd_intern_ex(pool, cls, w, strlen(w), 0, &st);
		if (st & UNIQD_MAPPED)
			r->mapped[p]++;
		else
			r->asked[p]++;
	}
	/* STATS itself is a system call; the counters exclude it. */
	r->kernel_hits[p] = kernel_hits(pool) - before;
	/*
	 * An entry whose probe window was full stays out of the mapped index
	 * (the kernel's table still finds it): STATS counts them. With a
	 * random per-pool seed, 2000 entries leave out none most runs, now
	 * and then one.
	 */
	if (p == 0) {
		struct uniqd_stats kst;

		if (!ioctl(uniqd_fd(pool), UNIQD_IOC_STATS, &kst))
			r->kernel_only = kst.map_overflow;
		else
			r->failed[p] = 1;
	}
	/* The first process keeps the pool alive until the others are done. */
	if (p == 0)
		while (!__atomic_load_n(&r->done, __ATOMIC_ACQUIRE))
			usleep(1000);
	uniqd_close(pool);
}

int main(void)
{
	struct result *r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	uint64_t saved = 0, lookups = 0;
	int agree = 0;
	pid_t first;

	th_init("demo-mapped");
	first = fork();
	if (!first) {
		compiler(0, r);
		_exit(0);
	}
	/* The others start once the first has interned everything. */
	while (!r->handle[0][NWORDS - 1] && !r->failed[0])
		usleep(1000);
	for (int p = 1; p < NPROC; p++) {
		pid_t pid = fork();

		if (!pid) {
			compiler(p, r);
			_exit(0);
		}
		waitpid(pid, NULL, 0);
	}
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	waitpid(first, NULL, 0);

	printf("\nuniqd demo: the pool \"%s\" mapped read-only into every process\n\n",
	       POOL);
	for (int p = 0; p < NPROC; p++) {
		printf("  P%d %-28s %5llu found in the mapping, %5llu asked the kernel "
		       "(kernel counted %llu hits)\n", p,
		       p == 0 ? "interns 2000 identifiers:" :
		       p == NPROC - 1 ? "meets them, UNIQD_NOMAP=1:" :
		       "meets them for the first time:",
		       (unsigned long long)r->mapped[p],
		       (unsigned long long)r->asked[p],
		       (unsigned long long)r->kernel_hits[p]);
		if (p && p < NPROC - 1) {
			saved += r->mapped[p];
			lookups += NWORDS;
		}
	}
	for (int i = 0; i < NWORDS; i++) {
		int same = r->handle[0][i] != 0;

		for (int p = 1; p < NPROC; p++)
			same &= r->handle[p][i] == r->handle[0][i];
		agree += same;
	}
	if (r->kernel_only)
		printf("  (%llu of the %d identifiers have no slot in the mapped index: a full\n"
		       "   probe window; each meeting of those asks the kernel)\n",
		       (unsigned long long)r->kernel_only, NWORDS);
	printf("\n  system calls the mapping saved P1 and P2: %llu of %llu lookups; "
	       "all %d processes agree on %d of %d handles\n\n",
	       (unsigned long long)saved, (unsigned long long)lookups, NPROC,
	       agree, NWORDS);

	th_case("every process got the same handle for every identifier") {
		CHECK(agree == NWORDS, "%d of %d agree", agree, NWORDS);
	}
	th_case("first meetings were answered by the mapping, not the kernel") {
		/* All but the entries the index left out, which ask the kernel. */
		CHECK(!r->failed[0] && r->kernel_only < 8, "kernel-only %llu",
		      (unsigned long long)r->kernel_only);
		for (int p = 1; p < NPROC - 1; p++)
			CHECK(r->mapped[p] == NWORDS - r->kernel_only &&
			      r->kernel_hits[p] == r->kernel_only,
			      "P%d: %llu mapped, kernel hits %llu, left out of the index %llu",
			      p, (unsigned long long)r->mapped[p],
			      (unsigned long long)r->kernel_hits[p],
			      (unsigned long long)r->kernel_only);
	}
	th_case("without the mapping every first meeting asks the kernel") {
		CHECK(r->asked[NPROC - 1] == NWORDS &&
		      r->kernel_hits[NPROC - 1] == NWORDS, "asked %llu, hits %llu",
		      (unsigned long long)r->asked[NPROC - 1],
		      (unsigned long long)r->kernel_hits[NPROC - 1]);
	}
	return th_finish();
}
