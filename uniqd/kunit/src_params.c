// SPDX-License-Identifier: GPL-2.0
/* The module parameters, compiled into uniqd_kunit.ko as into uniqd.ko. */
#include "../params.c"
