// SPDX-License-Identifier: GPL-2.0
/*
 * The benchmarks' uniqd set-up (over tests/lib/ut_ioctl.h): see ubench.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include "ubench.h"

/* ---- uniqd ioctls ------------------------------------------------------ */

int ub_uniqd_open(const char *pool)
{
	int fd = ut_open();

	if (fd < 0)
		ub_die("open %s: %s", UNIQD_DEVICE_PATH, strerror(errno));
	if (ut_attach(fd, pool, 0))
		ub_die("attach %s: %s", pool, strerror(errno));
	return fd;
}

uint32_t ub_uniqd_class(int fd, const char *name)
{
	__u32 id;

	if (ut_class_full(fd, name, 0, &id, NULL))
		ub_die("class %s: %s", name, strerror(errno));
	return id;
}

void ub_uniqd_intern_all(int fd, uint32_t cls, const struct ub_keys *k,
			 uint32_t n)
{
	struct uniqd_key batch[256];
	uint32_t i, j, len;

	for (i = 0; i < n; i += 256) {
		uint32_t m = n - i < 256 ? n - i : 256;

		memset(batch, 0, sizeof(batch));
		for (j = 0; j < m; j++) {
			batch[j].class_id = cls;
			batch[j].data = (uintptr_t)ub_key(k, i + j, &len);
			batch[j].len = len;
		}
		if (ut_batch(fd, batch, m))
			ub_die("INTERN_BATCH: %s", strerror(errno));
	}
}
