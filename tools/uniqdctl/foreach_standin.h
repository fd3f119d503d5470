/* SPDX-License-Identifier: GPL-2.0 */
/*
 * STAND-IN until libuniqd 1.2's uniqd_foreach() (branch i19-lib) is merged:
 * the contract's declaration, so that layouts.c is written against it.
 * Delete this header, foreach_standin.c and their #include in layouts.c
 * once <libuniqd.h> declares uniqd_foreach().
 */
#ifndef UNIQDCTL_FOREACH_STANDIN_H
#define UNIQDCTL_FOREACH_STANDIN_H

#include <stddef.h>
#include <stdint.h>

#include "libuniqd.h"

typedef int (*uniqd_foreach_fn)(void *arg, uint64_t handle, uint32_t class_id,
				const void *data, size_t len);
int uniqd_foreach(uniqd_pool *pool, uint32_t class_id, unsigned int flags,
		  uniqd_foreach_fn fn, void *arg);

#endif /* UNIQDCTL_FOREACH_STANDIN_H */
