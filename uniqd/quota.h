/* SPDX-License-Identifier: GPL-2.0 */
/*
 * uniqd: per-user quotas on what pools hold (bytes, entries, pools), charged
 * to the caller and to the owner of every user namespace above it.
 */
#ifndef UNIQD_QUOTA_H
#define UNIQD_QUOTA_H

#include <linux/list.h>
#include <linux/types.h>

struct uniqd_pool;
struct uniqd_user;

/*
 * What one pool charged one user: given back when the pool dies. On
 * pool->charges, under uniqd_quota_lock (quota.c), like every field here.
 */
struct uniqd_charge {
	struct list_head node;
	struct uniqd_user *user;
	u64 bytes;
	u64 entries;
	u32 pools;
};

int uniqd_quota_charge(struct uniqd_pool *pool, u64 bytes, u64 entries,
		       u32 pools);
void uniqd_quota_uncharge(struct uniqd_pool *pool, u64 bytes, u64 entries);
void uniqd_quota_release(struct uniqd_pool *pool);
bool uniqd_quota_idle(void);

#endif /* UNIQD_QUOTA_H */
