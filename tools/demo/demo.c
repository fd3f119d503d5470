// SPDX-License-Identifier: GPL-2.0
/* Placeholder demo until the pool ioctls exist: prints the ABI version. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/uniqd.h>

int main(void)
{
	struct uniqd_version v;
	int fd = open(UNIQD_DEVICE_PATH, O_RDWR);

	if (fd < 0 || ioctl(fd, UNIQD_IOC_VERSION, &v)) {
		perror("uniqd");
		return 1;
	}
	printf("uniqd ABI %u, features %#llx\n", v.abi_version,
	       (unsigned long long)v.features);
	return 0;
}
