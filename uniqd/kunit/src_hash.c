// SPDX-License-Identifier: GPL-2.0
/* The code under test, compiled into uniqd_kunit.ko as it is into uniqd.ko. */
#include "../hash.c"
