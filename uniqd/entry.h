/* SPDX-License-Identifier: GPL-2.0 */
/*
 * uniqd: entries, stored once in the mapping and found through the one
 * table (entry.c, index.c).
 */
#ifndef UNIQD_ENTRY_H
#define UNIQD_ENTRY_H

#include <linux/types.h>

struct uniqd_kclass;
struct uniqd_map_rec;
struct uniqd_pool;

int uniqd_intern(struct uniqd_pool *pool, struct uniqd_kclass *cls,
		 const void __user *udata, u32 len, bool create,
		 u64 *handle, bool *created);
const struct uniqd_map_rec *uniqd_resolve(struct uniqd_pool *pool, u64 handle);

#endif /* UNIQD_ENTRY_H */
