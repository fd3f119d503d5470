/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a VM test includes: the test-support library (tests/lib/: the raw
 * ioctl wrappers in ut_ioctl.h, the host helpers in ut_host.h) and the
 * DIGEST every test can check against.
 */
#ifndef UNIQD_TESTS_UNIQD_TEST_H
#define UNIQD_TESTS_UNIQD_TEST_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "lib/ut_host.h"
#include "lib/ut_ioctl.h"

#include "blake3.h"	/* the module's BLAKE3, built for userspace */

/* What DIGEST must be: BLAKE3-256(le32(name len) || name || content). */
static inline void ut_expected_digest(const char *name, const void *data,
				      size_t len, __u8 out[UNIQD_DIGEST_SIZE])
{
	struct uniqd_blake3_hasher h;
	__u32 n = strlen(name);
	__u8 le[4] = { (__u8)n, (__u8)(n >> 8), (__u8)(n >> 16), (__u8)(n >> 24) };

	uniqd_blake3_init(&h);
	uniqd_blake3_update(&h, le, 4);
	uniqd_blake3_update(&h, name, n);
	uniqd_blake3_update(&h, data, len);
	uniqd_blake3_final(&h, out, UNIQD_DIGEST_SIZE);
}

#endif /* UNIQD_TESTS_UNIQD_TEST_H */
