/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by uniqd's KUnit suites (uniqd_kunit.ko).
 */
#ifndef UNIQD_KUNIT_H
#define UNIQD_KUNIT_H

#include <kunit/test.h>
#include <linux/types.h>

/* At most this many kthreads in one uk_run_threads(). */
#define UK_MAX_THREADS	8

/*
 * Run @fn(@i, @data) for i = 0..@n-1, each in its own kthread, all released
 * at once. Returns when every one has returned: 0, or the first non-zero
 * value one returned (or -errno if a kthread could not be created).
 */
int uk_run_threads(unsigned int n, int (*fn)(unsigned int i, void *data),
		   void *data);

struct uniqd_table;

/*
 * Wait until rhashtable's worker has no growth pending or running for @t
 * (no writer may run). Then its size is exactly uk_table_expected_size() of
 * its count: the worker doubles a table whose load is above 3/4.
 */
void uk_table_settle(struct uniqd_table *t);
u32 uk_table_expected_size(u32 count);

/* A small deterministic PRNG for the threads (xorshift64). */
static inline u64 uk_rand(u64 *state)
{
	u64 x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return x;
}

#endif /* UNIQD_KUNIT_H */
