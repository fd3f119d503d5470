// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libuniqd: the system calls. Kept alone in this object file so that a test
 * linking libuniqd.a can define every uq_sys_* function itself (a fake
 * /dev/uniqd) and the archive member is then never pulled in.
 */
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

int uq_sys_open(const char *path, int flags)
{
	return open(path, flags);
}

int uq_sys_ioctl(int fd, unsigned long request, void *arg)
{
	return ioctl(fd, request, arg);
}

int uq_sys_close(int fd)
{
	return close(fd);
}

void *uq_sys_mmap(size_t len, int fd)
{
	return mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
}

int uq_sys_munmap(const void *addr, size_t len)
{
	return munmap((void *)addr, len);
}
