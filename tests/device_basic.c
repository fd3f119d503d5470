// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/uniqd exists, answers VERSION, and rejects what it does not know.
 */
#include <fcntl.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/uniqd.h>

#include "harness.h"

int main(void)
{
	struct uniqd_version v;
	int fd;

	th_init("device");
	fd = open(UNIQD_DEVICE_PATH, O_RDWR | O_CLOEXEC);

	th_case("open") {
		CHECK(fd >= 0, "open %s: %s", UNIQD_DEVICE_PATH, strerror(errno));
	}
	if (fd < 0)
		return th_finish();

	th_case("version") {
		memset(&v, 0xa5, sizeof(v));
		CHECK_OK(ioctl(fd, UNIQD_IOC_VERSION, &v));
		CHECK(v.abi_version == UNIQD_ABI_VERSION, "abi %u", v.abi_version);
		CHECK(v.max_key_len > 0 && v.max_key_len <= UNIQD_KEY_MAX,
		      "max_key_len %u", v.max_key_len);
		CHECK(v.max_pool_name == UNIQD_POOL_NAME_MAX, "%u", v.max_pool_name);
		CHECK(v.max_class_name == UNIQD_CLASS_NAME_MAX, "%u", v.max_class_name);
		CHECK(v.reserved == 0, "reserved %u", v.reserved);
	}

	th_case("unknown ioctl gets ENOTTY") {
		CHECK_ERR(ioctl(fd, _IO(UNIQD_IOC_MAGIC, 0x7f)), ENOTTY);
		CHECK_ERR(ioctl(fd, _IOR('x', 0x00, struct uniqd_version), &v), ENOTTY);
		/* The right number with the wrong direction is another command. */
		CHECK_ERR(ioctl(fd, _IOW(UNIQD_IOC_MAGIC, 0x00, struct uniqd_version), &v), ENOTTY);
	}

	th_case("struct sizes") {
		/* Shorter than the first published size: never existed. */
		CHECK_ERR(ioctl(fd, _IOR(UNIQD_IOC_MAGIC, 0x00, __u32), &v), EINVAL);
		/*
		 * Longer (a newer userspace): accepted when the tail is zero, and
		 * the tail is left alone, so an unknown field reads 0; output-only
		 * as VERSION is, a non-zero tail is still E2BIG.
		 */
		struct { struct uniqd_version v; __u64 more; } big;
		memset(&big, 0, sizeof(big));
		CHECK_OK(ioctl(fd, _IOR(UNIQD_IOC_MAGIC, 0x00, big), &big));
		CHECK(big.v.abi_version == UNIQD_ABI_VERSION, "abi %u", big.v.abi_version);
		CHECK(big.more == 0, "tail overwritten");
		big.more = 0x1234;
		CHECK_ERR(ioctl(fd, _IOR(UNIQD_IOC_MAGIC, 0x00, big), &big), E2BIG);
		CHECK(big.more == 0x1234, "tail overwritten");
	}

	th_case("bad pointers get EFAULT") {
		CHECK_ERR(ioctl(fd, UNIQD_IOC_VERSION, NULL), EFAULT);
		CHECK_ERR(ioctl(fd, UNIQD_IOC_VERSION, (void *)1), EFAULT);
		void *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		CHECK(ro != MAP_FAILED, "mmap");
		CHECK_ERR(ioctl(fd, UNIQD_IOC_VERSION, ro), EFAULT);
		/* A kernel address is never user memory. */
		CHECK_ERR(ioctl(fd, UNIQD_IOC_VERSION, (void *)0xffffffff81000000UL), EFAULT);
		munmap(ro, 4096);
	}

	close(fd);
	return th_finish();
}
