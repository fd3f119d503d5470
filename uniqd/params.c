// SPDX-License-Identifier: GPL-2.0
/*
 * uniqd: the module parameters and their bounds. Also compiled into
 * uniqd_kunit.ko, so that the code it tests reads the same parameters with
 * the same defaults.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/errno.h>
#include <linux/init.h>
#include <linux/moduleparam.h>
#include <linux/printk.h>

#include "blake3_shash.h"
#include "uniqd.h"

char *uniqd_blake3_impl_param = "auto";
module_param_named(blake3_impl, uniqd_blake3_impl_param, charp, 0444);
MODULE_PARM_DESC(blake3_impl,
		 "Best BLAKE3 implementation to register and use: auto (default), portable, sse41, avx2, avx512");

unsigned int uniqd_max_pools = 1024;
module_param_named(max_pools, uniqd_max_pools, uint, 0444);
MODULE_PARM_DESC(max_pools, "Pools that may exist at once (1..65536, default 1024)");

unsigned int uniqd_max_user_pools = 128;
module_param_named(max_user_pools, uniqd_max_user_pools, uint, 0444);
MODULE_PARM_DESC(max_user_pools,
		 "Pools one owner uid may have at once (1..max_pools, default 128)");

unsigned long long uniqd_max_pool_bytes = 1ULL << 30;
module_param_named(max_pool_bytes, uniqd_max_pool_bytes, ullong, 0444);
MODULE_PARM_DESC(max_pool_bytes,
		 "Largest and default max_bytes (arena bytes) of a pool (4096..2^40, default 1 GiB)");

unsigned long long uniqd_max_pool_entries = 1ULL << 24;
module_param_named(max_pool_entries, uniqd_max_pool_entries, ullong, 0444);
MODULE_PARM_DESC(max_pool_entries,
		 "Largest and default max_entries of a pool (1..2^25, default 2^24)");

unsigned int uniqd_max_pool_classes = 4096;
module_param_named(max_pool_classes, uniqd_max_pool_classes, uint, 0444);
MODULE_PARM_DESC(max_pool_classes,
		 "Largest and default max_classes of a pool (1..2^20, default 4096)");

unsigned int uniqd_max_key_len = 65536;
module_param_named(max_key_len, uniqd_max_key_len, uint, 0444);
MODULE_PARM_DESC(max_key_len, "Longest content of a key in bytes (1..2^20, default 65536)");

/*
 * The bounds keep every table far below rhashtable's 2^31 records (a table
 * of 2^25 entries has 2^26 buckets, 512 MiB) and every index in the 32 bits
 * a handle has for it.
 */
int __init uniqd_params_check(void)
{
	if (uniqd_max_pools < 1 || uniqd_max_pools > UNIQD_MAX_POOLS_LIMIT ||
	    uniqd_max_user_pools < 1 || uniqd_max_user_pools > uniqd_max_pools ||
	    uniqd_max_pool_bytes < UNIQD_MIN_BYTES_LIMIT ||
	    uniqd_max_pool_bytes > UNIQD_MAX_BYTES_LIMIT ||
	    uniqd_max_pool_entries < 1 ||
	    uniqd_max_pool_entries > UNIQD_MAX_ENTRIES_LIMIT ||
	    uniqd_max_pool_classes < 1 ||
	    uniqd_max_pool_classes > UNIQD_MAX_CLASSES_LIMIT ||
	    uniqd_max_key_len < 1 || uniqd_max_key_len > UNIQD_KEY_MAX) {
		pr_err("module parameter out of range\n");
		return -EINVAL;
	}
	return 0;
}
