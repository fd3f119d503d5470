// SPDX-License-Identifier: GPL-2.0
/*
 * STAND-IN for libuniqd 1.2's uniqd_foreach() (see foreach_standin.h):
 * walks the mapped pool only, by the layout Documentation/userspace-api.rst
 * documents ("The mapped pool"). Weak, so that the library's own wins
 * wherever both are linked; delete this file when it is merged.
 */
#include <errno.h>

#include <linux/uniqd.h>

#include "foreach_standin.h"

__attribute__((weak))
int uniqd_foreach(uniqd_pool *pool, uint32_t class_id, unsigned int flags,
		  uniqd_foreach_fn fn, void *arg)
{
	const struct uniqd_map_header *h;
	struct uniqd_map_info mi;
	const unsigned char *base;
	const uint64_t *entries;
	uint64_t end;

	if (flags || !fn) {
		errno = EINVAL;
		return -1;
	}
	if (uniqd_map_info(pool, &mi))
		return -1;
	if (!mi.addr) {
		errno = EOPNOTSUPP;
		return -1;
	}
	base = mi.addr;
	h = mi.addr;
	entries = (const uint64_t *)(base + h->entries_off);
	end = __atomic_load_n(&h->entries_end, __ATOMIC_ACQUIRE);
	if (end > h->entries_cap)
		end = h->entries_cap;
	for (uint64_t idx = 1; idx < end; idx++) {
		uint64_t off = __atomic_load_n(&entries[idx], __ATOMIC_ACQUIRE);
		const struct uniqd_map_rec *rec;
		int r;

		if (!off || off + sizeof(*rec) > mi.size)
			continue;	/* not published yet */
		rec = (const struct uniqd_map_rec *)(base + off);
		if (class_id && rec->class_id != class_id)
			continue;
		if (off + sizeof(*rec) + rec->len > mi.size)
			continue;
		r = fn(arg, h->handle_base | idx, rec->class_id, rec->data, rec->len);
		if (r)
			return r;
	}
	return 0;
}
