/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal declarations shared by the uniqd module's files.
 */
#ifndef UNIQD_UNIQD_H
#define UNIQD_UNIQD_H

#include <linux/types.h>
#include <uapi/linux/uniqd.h>

struct uniqd_pool;

/* Per open file: the pool it is attached to (set once by ATTACH). */
struct uniqd_file {
	struct uniqd_pool *pool;	/* published with smp_store_release() */
	struct mutex attach_lock;	/* serialises ATTACH on this file */
};

long uniqd_ioctl(struct file *file, unsigned int cmd, unsigned long arg);

#endif /* UNIQD_UNIQD_H */
