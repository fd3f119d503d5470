// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libuniqd: the system calls. Kept alone in this object file so that a test
 * linking libuniqd.a can define uq_sys_open/uq_sys_ioctl/uq_sys_close itself
 * (a fake /dev/uniqd) and the archive member is then never pulled in.
 */
#include <fcntl.h>
#include <sys/ioctl.h>
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
