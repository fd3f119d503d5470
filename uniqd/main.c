// SPDX-License-Identifier: GPL-2.0
/*
 * uniqd: module load/unload and the /dev/uniqd misc device.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>

#include "uniqd.h"

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

static int __init uniqd_init(void)
{
	int ret;

	ret = misc_register(&uniqd_misc);
	if (ret) {
		pr_err("cannot register /dev/uniqd: %d\n", ret);
		return ret;
	}
	return 0;
}

static void __exit uniqd_exit(void)
{
	misc_deregister(&uniqd_misc);
}

module_init(uniqd_init);
module_exit(uniqd_exit);

MODULE_DESCRIPTION("uniqd: a shared interning service for compiler processes");
MODULE_AUTHOR("The uniqd developers");
MODULE_LICENSE("GPL");
