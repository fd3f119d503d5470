// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libuniqd: the administrator's calls (UNIQD_FEAT_ADMIN), made on a file
 * of the device that attaches to no pool: POOLS lists the pools the caller
 * may see, REVOKE ends one (Documentation/admin.rst).
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

/* One command on a file of DEV of its own; -1 with the failure recorded. */
static int uq_admin_call(const char *dev, unsigned long req, void *arg,
			 enum uq_call call, uint64_t num)
{
	int fd = uq_open_device(dev), err;

	if (fd < 0)
		return -1;
	if (uq_sys_ioctl(fd, req, arg) < 0) {
		err = errno;
		uq_sys_close(fd);
		return uq_fail(call, err,
			       &(struct uq_failure){ .device = dev, .num = num });
	}
	uq_sys_close(fd);
	return 0;
}

int uniqd_pools(const char *device, uint32_t start_id,
		struct uniqd_pool_status *out, unsigned int count,
		uint32_t *next_id)
{
	const char *dev = uq_device(device);
	struct uniqd_pools p;

	if (!out || !count || count > UNIQD_POOLS_MAX || !next_id)
		return uq_fail(UQ_CALL_ARGS, EINVAL, NULL);
	memset(&p, 0, sizeof(p));
	p.pools = (uint64_t)(uintptr_t)out;
	p.count = count;
	p.info_size = sizeof(*out);
	p.start_id = start_id;
	if (uq_admin_call(dev, UNIQD_IOC_POOLS, &p, UQ_CALL_POOLS, 0))
		return -1;
	if (p.count > count)
		return uq_fail(UQ_CALL_POOLS, EPROTO, &(struct uq_failure){ .device = dev });
	*next_id = p.next_id;
	return (int)p.count;
}

int uniqd_revoke(const char *device, uint32_t pool_id)
{
	struct uniqd_revoke r = { .id = pool_id };

	return uq_admin_call(uq_device(device), UNIQD_IOC_REVOKE, &r,
			     UQ_CALL_REVOKE, pool_id);
}
