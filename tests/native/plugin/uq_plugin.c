// SPDX-License-Identifier: GPL-2.0
/*
 * A shared object shaped like a GCC plugin that uses uniqd: libuniqd.a
 * linked in (-fPIC objects) and kept inside (-Wl,--exclude-libs,ALL), the
 * object then dlopen()ed by a program that has never heard of libuniqd
 * (tests/native/test_dlopen.c). It exports one symbol: the calls the test
 * makes, taken from its own copy of the library.
 */
#include "libuniqd.h"
#include "uq_plugin.h"

static const struct uqp_api uqp = {
	.open_ex = uniqd_open_ex,
	.close = uniqd_close,
	.last_error = uniqd_last_error,
	.errname = uniqd_errname,
	.strerror = uniqd_strerror,
};

const struct uqp_api *uqp_api(void)
{
	return &uqp;
}
