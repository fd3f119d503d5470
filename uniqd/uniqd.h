/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal declarations shared by the uniqd module's files.
 */
#ifndef UNIQD_UNIQD_H
#define UNIQD_UNIQD_H

#include <linux/bits.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <uapi/linux/uniqd.h>

#include "map.h"
#include "quota.h"

struct file;
struct uniqd_pool;

/* Per open file: the pool it is attached to (set once by ATTACH). */
struct uniqd_file {
	/*
	 * Set once, by ATTACH under attach_lock, with smp_store_release();
	 * every other command reads it with smp_load_acquire() and no lock.
	 */
	struct uniqd_pool *pool;
	/*
	 * Serialises ATTACH, guards the store. The outermost lock
	 * (design.rst, "Locking", the one place the lock order is written).
	 */
	struct mutex attach_lock;
	/* Its f_mapping becomes the pool's at ATTACH (uniqd_map_mapping()). */
	struct file *file;
	/* Quota paid ahead for its new entries: opened at ATTACH (quota.h). */
	struct uniqd_credit credit;
};

/* Module parameters (params.c), read-only after load... */
extern unsigned int uniqd_max_pools;
extern unsigned long long uniqd_max_pool_bytes;
extern unsigned long long uniqd_max_pool_entries;
extern unsigned int uniqd_max_pool_classes;
extern unsigned int uniqd_max_key_len;
/* ...but for the per-user quotas: 0644, read them with READ_ONCE(). */
extern unsigned int uniqd_max_user_pools;
extern unsigned long long uniqd_max_user_bytes;
extern unsigned long long uniqd_max_user_entries;

/* Hard bounds on the module parameters (see params.c for why). */
#define UNIQD_MAX_POOLS_LIMIT		65536U
#define UNIQD_MAX_ENTRIES_LIMIT		BIT_ULL(25)
#define UNIQD_MAX_CLASSES_LIMIT		BIT(20)
#define UNIQD_MAX_BYTES_LIMIT		BIT_ULL(40)
#define UNIQD_MIN_BYTES_LIMIT		4096ULL
#define UNIQD_MAX_USER_ENTRIES_LIMIT	BIT_ULL(32)

/*
 * An unknown class id gets -EBADSLT ("invalid slot"): it is never a miss
 * (-ENOENT belongs to LOOKUP and RESOLVE) and always a caller bug.
 */
#define UNIQD_ENOCLASS	EBADSLT

/* 0 if every module parameter is within its bounds, else -EINVAL. */
int uniqd_params_check(void);

long uniqd_ioctl(struct file *file, unsigned int cmd, unsigned long arg);
int uniqd_intern(struct uniqd_pool *pool, struct uniqd_credit *cr,
		 struct uniqd_key *k, bool create);

#endif /* UNIQD_UNIQD_H */
