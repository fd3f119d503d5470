// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * BLAKE3 with AVX2: 8 lanes. Compiled with the instruction set's -m flags
 * (Kbuild, mk/b3sum.mk); called only after the CPU was checked for them,
 * and in the kernel only inside kernel_fpu_begin()/end() (blake3_impl.c).
 */
#ifdef __KERNEL__
#include <linux/string.h>
#endif

#define B3_ISA		avx2
#define B3_LANES	8
#include "blake3_simd.h"
