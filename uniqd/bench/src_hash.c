// SPDX-License-Identifier: GPL-2.0
/* The code measured, compiled into uniqd_bench.ko as it is into uniqd.ko. */
#include "../hash.c"
