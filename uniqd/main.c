// SPDX-License-Identifier: GPL-2.0
/*
 * uniqd: module load/unload, module parameters and the /dev/uniqd misc
 * device.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/algapi.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/slab.h>

#include "blake3_shash.h"
#include "keys.h"
#include "pool.h"
#include "uniqd.h"

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

static int uniqd_open(struct inode *inode, struct file *file)
{
	struct uniqd_file *uf;

	uf = kzalloc(sizeof(*uf), GFP_KERNEL_ACCOUNT);
	if (!uf)
		return -ENOMEM;
	mutex_init(&uf->attach_lock);
	file->private_data = uf;
	return 0;
}

static int uniqd_release(struct inode *inode, struct file *file)
{
	struct uniqd_file *uf = file->private_data;

	if (uf->pool)
		uniqd_pool_put(uf->pool);
	mutex_destroy(&uf->attach_lock);
	kfree(uf);
	return 0;
}

static const struct file_operations uniqd_fops = {
	.owner		= THIS_MODULE,
	.open		= uniqd_open,
	.release	= uniqd_release,
	.unlocked_ioctl	= uniqd_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};

/*
 * World-accessible: opening the device grants nothing by itself; every pool
 * is checked against its owner and mode at ATTACH.
 */
static struct miscdevice uniqd_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "uniqd",
	.fops	= &uniqd_fops,
	.mode	= 0666,
};

/*
 * The bounds keep every table far below rhashtable's 2^31 records (a table
 * of 2^25 entries has 2^26 buckets, 512 MiB) and every index in the 32 bits
 * a handle has for it.
 */
static int __init uniqd_check_params(void)
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

static int __init uniqd_init(void)
{
	int ret;

	ret = uniqd_check_params();
	if (ret)
		return ret;
	/* First: pools allocate "blake3" tfms from it. */
	ret = uniqd_blake3_shash_register();
	if (ret)
		return ret;
	uniqd_have_blake3_shash = true;
	ret = uniqd_keys_check();
	if (ret) {
		pr_err("no usable \"%s\" in the crypto API: %d\n",
		       UNIQD_HASH_ALG, ret);
		goto unregister;
	}
	ret = misc_register(&uniqd_misc);
	if (ret) {
		pr_err("cannot register /dev/uniqd: %d\n", ret);
		goto unregister;
	}
	return 0;
unregister:
	uniqd_blake3_shash_unregister();
	return ret;
}

static void __exit uniqd_exit(void)
{
	misc_deregister(&uniqd_misc);
	/* Last: no pool, hence no tfm, is left. */
	uniqd_blake3_shash_unregister();
}

module_init(uniqd_init);
module_exit(uniqd_exit);

MODULE_DESCRIPTION("uniqd: a shared interning service for compiler processes");
MODULE_AUTHOR("The uniqd developers");
MODULE_LICENSE("GPL");
/* A request for "blake3" (crypto_alloc_shash, AF_ALG) may load uniqd. */
MODULE_ALIAS_CRYPTO("blake3");
MODULE_ALIAS_CRYPTO("blake3-uniqd-generic");
