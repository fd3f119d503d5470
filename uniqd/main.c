// SPDX-License-Identifier: GPL-2.0
/*
 * uniqd: module load/unload and the /dev/uniqd misc device.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/algapi.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>

#include "blake3/blake3_ahash.h"
#include "blake3/blake3_shash.h"
#include "hash.h"
#include "map.h"
#include "pool.h"
#include "quota.h"
#include "trace.h"
#include "uniqd.h"

static int uniqd_open(struct inode *inode, struct file *file)
{
	struct uniqd_file *uf;

	uf = kzalloc(sizeof(*uf), GFP_KERNEL_ACCOUNT);
	if (!uf)
		return -ENOMEM;
	mutex_init(&uf->attach_lock);
	uf->file = file;
	file->private_data = uf;
	return 0;
}

static int uniqd_release(struct inode *inode, struct file *file)
{
	struct uniqd_file *uf = file->private_data;

	if (uf->pool) {
		trace_uniqd_detach(uf->pool->id);
		/* What it paid ahead goes back before the pool can die. */
		uniqd_credit_close(&uf->credit);
		uniqd_pool_put(uf->pool);
	}
	mutex_destroy(&uf->attach_lock);
	kfree(uf);
	return 0;
}

/* The file's part of mmap(): its pool; the pool's map does the rest. */
static int uniqd_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct uniqd_pool *pool = uniqd_file_pool(file->private_data);

	if (IS_ERR(pool))
		return PTR_ERR(pool);
	return uniqd_map_mmap(&pool->map, vma);
}

static const struct file_operations uniqd_fops = {
	.owner		= THIS_MODULE,
	.open		= uniqd_open,
	.release	= uniqd_release,
	.unlocked_ioctl	= uniqd_ioctl,
	.mmap		= uniqd_mmap,
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

static int __init uniqd_init(void)
{
	int ret;

	ret = uniqd_params_check();
	if (ret)
		return ret;
	ret = uniqd_map_wq_init();
	if (ret)
		return ret;
	/* First: pools allocate "blake3" tfms from it. */
	ret = uniqd_blake3_shash_register();
	if (ret)
		goto exit_wq;
	ret = uniqd_blake3_ahash_register();
	if (ret)
		goto unregister_shash;
	ret = uniqd_hash_check();
	if (ret) {
		pr_err("no usable \"%s\" in the crypto API: %d\n",
		       UNIQD_HASH_ALG, ret);
		goto unregister_ahash;
	}
	ret = misc_register(&uniqd_misc);
	if (ret) {
		pr_err("cannot register /dev/uniqd: %d\n", ret);
		goto unregister_ahash;
	}
	return 0;
unregister_ahash:
	uniqd_blake3_ahash_unregister();
unregister_shash:
	uniqd_blake3_shash_unregister();
exit_wq:
	uniqd_map_wq_exit();
	return ret;
}

static void __exit uniqd_exit(void)
{
	misc_deregister(&uniqd_misc);
	/* Index arrays given back are freed before the module goes. */
	uniqd_map_wq_exit();
	uniqd_pools_exit();
	/* Every pool gave back what it charged: no user is left. */
	WARN_ON(!uniqd_quota_idle());
	/* Last: no pool, hence no tfm, is left. */
	uniqd_blake3_ahash_unregister();
	uniqd_blake3_shash_unregister();
}

module_init(uniqd_init);
module_exit(uniqd_exit);

MODULE_DESCRIPTION("uniqd: a shared interning service for compiler processes");
MODULE_AUTHOR("The uniqd developers");
MODULE_LICENSE("GPL");
MODULE_VERSION(UNIQD_VERSION);
/*
 * No MODULE_ALIAS_CRYPTO(): a crypto alias lets any user who binds an
 * AF_ALG socket to "blake3" load uniqd and get a /dev/uniqd the
 * administrator never loaded. The administrator loads it (modules-load.d);
 * its "blake3" is there for AF_ALG from then on.
 */
