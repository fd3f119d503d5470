/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Userspace stand-ins for the few kernel helpers that blake3.c uses, so the
 * very same blake3.c builds into the native tests and tools. Only included
 * when __KERNEL__ is not defined; the kernel build uses the real headers.
 */
#ifndef UNIQD_BLAKE3_COMPAT_H
#define UNIQD_BLAKE3_COMPAT_H

#ifdef __KERNEL__
#error "blake3_compat.h is for userspace builds only"
#endif

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/cdefs.h>	/* __always_inline */

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;

#define B3_COMPAT_ATTR(x) __attribute__((x))
#ifndef noinline
#define noinline B3_COMPAT_ATTR(__noinline__)
#endif
#ifndef likely
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#endif

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif
#ifndef __aligned
#define __aligned(x) B3_COMPAT_ATTR(__aligned__(x))
#endif

static inline u32 ror32(u32 word, unsigned int shift)
{
	return (word >> (shift & 31)) | (word << ((-shift) & 31));
}

static inline unsigned int hweight64(u64 w)
{
	return (unsigned int)__builtin_popcountll(w);
}

/* memset() that the optimiser may not drop, like the kernel's. */
static inline void memzero_explicit(void *s, size_t count)
{
	memset(s, 0, count);
	__asm__ __volatile__("" : : "r"(s) : "memory");
}

#endif /* UNIQD_BLAKE3_COMPAT_H */
