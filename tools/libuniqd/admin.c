// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libuniqd: the administrator's calls (UNIQD_FEAT_ADMIN), made on a file
 * of the device that attaches to no pool: POOLS lists the pools the caller
 * may see, REVOKE ends one (Documentation/admin.rst).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>

#include "internal.h"

/* The device opened for one call; -1 with the failure recorded. */
static int uq_admin_open(const char *dev)
{
	int fd = uq_sys_open(dev, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		uq_fail(UQ_CALL_OPEN_DEVICE, errno, &(struct uq_failure){ .device = dev });
	return fd;
}

int uniqd_pools(const char *device, uint32_t start_id,
		struct uniqd_pool_status *out, unsigned int count,
		uint32_t *next_id)
{
	const char *dev = uq_device(device);
	struct uniqd_pools p;
	int fd, err;

	if (!out || !count || count > UNIQD_POOLS_MAX || !next_id)
		return uq_fail(UQ_CALL_ARGS, EINVAL, NULL);
	fd = uq_admin_open(dev);
	if (fd < 0)
		return -1;
	memset(&p, 0, sizeof(p));
	p.pools = (uint64_t)(uintptr_t)out;
	p.count = count;
	p.info_size = sizeof(*out);
	p.start_id = start_id;
	if (uq_sys_ioctl(fd, UNIQD_IOC_POOLS, &p) < 0) {
		err = errno;
		uq_sys_close(fd);
		return uq_fail(UQ_CALL_POOLS, err, &(struct uq_failure){ .device = dev });
	}
	uq_sys_close(fd);
	if (p.count > count)
		return uq_fail(UQ_CALL_POOLS, EPROTO, &(struct uq_failure){ .device = dev });
	*next_id = p.next_id;
	return (int)p.count;
}

int uniqd_revoke(const char *device, uint32_t pool_id)
{
	const char *dev = uq_device(device);
	struct uniqd_revoke r = { .id = pool_id };
	int fd, err;

	fd = uq_admin_open(dev);
	if (fd < 0)
		return -1;
	if (uq_sys_ioctl(fd, UNIQD_IOC_REVOKE, &r) < 0) {
		err = errno;
		uq_sys_close(fd);
		return uq_fail(UQ_CALL_REVOKE, err,
			       &(struct uq_failure){ .device = dev, .num = pool_id });
	}
	uq_sys_close(fd);
	return 0;
}
