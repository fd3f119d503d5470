// SPDX-License-Identifier: GPL-2.0
/*
 * uniqd: ioctl decoding. Every command is described once in uniqd_ioctls[];
 * the generic code checks direction and size, copies the struct in with
 * copy_struct_from_user() (so larger structs from newer userspace work while
 * their unknown tail is zero) and copies it back out.
 */
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/uaccess.h>

#include "uniqd.h"

union uniqd_ioctl_arg {
	struct uniqd_version version;
	struct uniqd_attach attach;
	struct uniqd_class class;
	struct uniqd_key key;
	struct uniqd_batch batch;
	struct uniqd_resolve resolve;
	struct uniqd_digest digest;
	struct uniqd_class_info class_info;
	struct uniqd_stats stats;
};

struct uniqd_ioctl_desc {
	unsigned int cmd;	/* the command with this ABI's struct size */
	unsigned int min_size;	/* the first published size of the struct */
	bool copy_out_on_error;	/* the struct carries results even on error */
	int (*fn)(struct uniqd_file *uf, void *arg);
};

static int uniqd_ioc_version(struct uniqd_file *uf, void *arg)
{
	struct uniqd_version *v = arg;

	v->abi_version = UNIQD_ABI_VERSION;
	v->max_key_len = UNIQD_KEY_MAX;
	v->features = 0;
	v->max_pool_name = UNIQD_POOL_NAME_MAX;
	v->max_class_name = UNIQD_CLASS_NAME_MAX;
	v->max_batch = UNIQD_BATCH_MAX;
	v->reserved = 0;
	return 0;
}

#define UNIQD_IOCTL(_cmd, _fn, _out_on_err)				\
	[_IOC_NR(_cmd)] = {						\
		.cmd = _cmd, .min_size = _IOC_SIZE(_cmd),		\
		.copy_out_on_error = _out_on_err, .fn = _fn,		\
	}

static const struct uniqd_ioctl_desc uniqd_ioctls[] = {
	UNIQD_IOCTL(UNIQD_IOC_VERSION, uniqd_ioc_version, false),
};

long uniqd_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct uniqd_file *uf = file->private_data;
	const struct uniqd_ioctl_desc *desc;
	void __user *uarg = (void __user *)arg;
	union uniqd_ioctl_arg karg;
	unsigned int nr = _IOC_NR(cmd);
	unsigned int usize = _IOC_SIZE(cmd);
	unsigned int ksize;
	int ret;

	if (_IOC_TYPE(cmd) != UNIQD_IOC_MAGIC || nr >= ARRAY_SIZE(uniqd_ioctls))
		return -ENOTTY;
	desc = &uniqd_ioctls[nr];
	if (!desc->fn || _IOC_DIR(cmd) != _IOC_DIR(desc->cmd))
		return -ENOTTY;
	/* Older, shorter structs than the first published one never existed. */
	if (usize < desc->min_size)
		return -EINVAL;

	ksize = _IOC_SIZE(desc->cmd);
	if (_IOC_DIR(cmd) & _IOC_WRITE) {
		ret = copy_struct_from_user(&karg, ksize, uarg, usize);
		if (ret)
			return ret;
	} else {
		memset(&karg, 0, ksize);
	}

	ret = desc->fn(uf, &karg);

	if ((_IOC_DIR(cmd) & _IOC_READ) && (!ret || desc->copy_out_on_error)) {
		if (copy_to_user(uarg, &karg, min(usize, ksize)))
			return -EFAULT;
	}
	return ret;
}
