/* SPDX-License-Identifier: GPL-2.0 */
/*
 * uniqd_bench: in-kernel benchmarks of uniqd's building blocks. Every result
 * is one kernel log line "UBENCH <kind> key=value ..." with raw counts
 * (iterations, nanoseconds); tools/bench/report.py turns them into ratios.
 */
#ifndef UNIQD_BENCH_H
#define UNIQD_BENCH_H

#include <linux/ktime.h>
#include <linux/printk.h>
#include <linux/types.h>

/* No pr_fmt in this module: the lines start with "UBENCH " for the parser. */
#define UB_OUT(fmt, ...) pr_info("UBENCH " fmt "\n", ##__VA_ARGS__)

extern unsigned int ub_rounds;
extern unsigned int ub_hash_ms;
extern unsigned int ub_nkeys;
extern unsigned int ub_hot;

int ub_hash_run(void);
int ub_table_run(void);
int ub_keyhash_run(void);

/* xorshift64*: deterministic keys, the same in every run. */
static inline u64 ub_rand(u64 *s)
{
	u64 x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static inline u64 ub_now(void)
{
	return ktime_get_ns();
}

#endif /* UNIQD_BENCH_H */
