// SPDX-License-Identifier: GPL-2.0
/*
 * uniqd_bench: runs the benchmarks selected by run= at insmod, prints the
 * results to the kernel log and stays loaded doing nothing (rmmod it).
 *
 *   insmod uniqd_bench.ko run=hash,table nkeys=1000000 rounds=3 hash_ms=100
 *
 * hash   crypto_shash_digest() throughput of "blake3" (uniqd.ko must be
 *        loaded), "sha256", "blake2b-256" and their generic C drivers.
 * table  uniqd's table (uniqd/table.c, compiled in: rhashtable with
 *        publish-before-visible) against plain rhashtable and against the
 *        open-addressing table it replaced, on the same keys and hashes.
 * keyhash  what hashing one short key costs: uniqd's crypto API call, the
 *        same BLAKE3 called directly (uniqd/blake3.c, compiled in), SipHash.
 *
 * Never part of pass/fail: it measures, it does not judge.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/rcupdate.h>
#include <linux/string.h>
#include <linux/utsname.h>

#include "bench.h"

static char *run = "hash,table";
module_param(run, charp, 0444);
MODULE_PARM_DESC(run, "comma-separated benchmarks: hash, keyhash, table");

unsigned int ub_rounds = 3;
module_param_named(rounds, ub_rounds, uint, 0444);
MODULE_PARM_DESC(rounds, "repetitions of each measurement (the best is kept by the report)");

unsigned int ub_hash_ms = 100;
module_param_named(hash_ms, ub_hash_ms, uint, 0444);
MODULE_PARM_DESC(hash_ms, "milliseconds per hash measurement");

unsigned int ub_nkeys = 1000000;
module_param_named(nkeys, ub_nkeys, uint, 0444);
MODULE_PARM_DESC(nkeys, "keys in the table benchmark");

unsigned int ub_hot = 1024;
module_param_named(hot, ub_hot, uint, 0444);
MODULE_PARM_DESC(hot, "keys in the hot (cache-resident) lookup set");

static bool ub_selected(const char *name)
{
	size_t n = strlen(name);
	const char *p = run;

	while (p && *p) {
		if (!strncmp(p, name, n) && (p[n] == ',' || !p[n]))
			return true;
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return false;
}

static int __init ub_init(void)
{
	int ret = 0, err;

	if (!ub_rounds || !ub_hash_ms || ub_nkeys < 1024 || !ub_hot ||
	    ub_hot > ub_nkeys)
		return -EINVAL;
	UB_OUT("start kernel=%s run=%s rounds=%u", init_utsname()->release,
	       run, ub_rounds);
	if (ub_selected("hash")) {
		err = ub_hash_run();
		UB_OUT("done hash status=%d", err);
		ret = ret ?: err;
	}
	if (ub_selected("keyhash")) {
		err = ub_keyhash_run();
		UB_OUT("done keyhash status=%d", err);
		ret = ret ?: err;
	}
	if (ub_selected("table")) {
		err = ub_table_run();
		UB_OUT("done table status=%d", err);
		ret = ret ?: err;
	}
	/* bench_oa_table.c frees old slot arrays with call_rcu() into this module. */
	rcu_barrier();
	UB_OUT("end status=%d", ret);
	return 0;
}

static void __exit ub_exit(void)
{
	rcu_barrier();
}

module_init(ub_init);
module_exit(ub_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("uniqd in-kernel benchmarks (hash throughput, tables)");
