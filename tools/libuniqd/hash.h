/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libuniqd: the 64-bit hash of the per-thread cache and the class table.
 *
 * It only has to spread keys over cache slots: every hit is confirmed by
 * comparing the stored content, so a collision costs a miss, never a wrong
 * handle. A multiply-mix hash in the style of wyhash (128-bit products,
 * 16 bytes per step) is about ten times cheaper than BLAKE3 on the short
 * keys a compiler interns (see Documentation/libuniqd.rst, "the cache");
 * to try another, change uq_hash() alone.
 */
#ifndef LIBUNIQD_HASH_H
#define LIBUNIQD_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define UQ_H0 0x2d358dccaa6c78a5ULL
#define UQ_H1 0x8bb84b93962eacc9ULL
#define UQ_H2 0x4b33a62ed433d4a3ULL
#define UQ_H3 0x4d5a2da51de1aa47ULL

static inline uint64_t uq_rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static inline uint64_t uq_rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static inline void uq_mum(uint64_t *a, uint64_t *b)
{
	unsigned __int128 r = (unsigned __int128)*a * *b;

	*a = (uint64_t)r;
	*b = (uint64_t)(r >> 64);
}

static inline uint64_t uq_mix(uint64_t a, uint64_t b)
{
	uq_mum(&a, &b);
	return a ^ b;
}

/*
 * libuniqd defines UQ_HASH_INLINE to force uq_hash() into its cache's hit
 * path (internal.h); other users let the compiler choose.
 */
#ifndef UQ_HASH_INLINE
#define UQ_HASH_INLINE inline
#endif

static UQ_HASH_INLINE uint64_t uq_hash(const void *data, size_t len,
				       uint64_t seed)
{
	const uint8_t *p = (const uint8_t *)data;	/* also C++ */
	uint64_t a, b;

	seed ^= uq_mix(seed ^ UQ_H0, UQ_H1);
	if (__builtin_expect(len <= 16, 1)) {
		if (len >= 4) {
			size_t q = (len >> 3) << 2;

			a = (uq_rd32(p) << 32) | uq_rd32(p + q);
			b = (uq_rd32(p + len - 4) << 32) | uq_rd32(p + len - 4 - q);
		} else if (len > 0) {
			a = ((uint64_t)p[0] << 16) | ((uint64_t)p[len >> 1] << 8) |
			    p[len - 1];
			b = 0;
		} else {
			a = b = 0;
		}
	} else {
		size_t i = len;

		if (__builtin_expect(i > 48, 0)) {
			uint64_t s1 = seed, s2 = seed;

			do {
				seed = uq_mix(uq_rd64(p) ^ UQ_H1, uq_rd64(p + 8) ^ seed);
				s1 = uq_mix(uq_rd64(p + 16) ^ UQ_H2, uq_rd64(p + 24) ^ s1);
				s2 = uq_mix(uq_rd64(p + 32) ^ UQ_H3, uq_rd64(p + 40) ^ s2);
				p += 48;
				i -= 48;
			} while (i > 48);
			seed ^= s1 ^ s2;
		}
		while (i > 16) {
			seed = uq_mix(uq_rd64(p) ^ UQ_H1, uq_rd64(p + 8) ^ seed);
			p += 16;
			i -= 16;
		}
		a = uq_rd64(p + i - 16);
		b = uq_rd64(p + i - 8);
	}
	a ^= UQ_H1;
	b ^= seed;
	uq_mum(&a, &b);
	return uq_mix(a ^ UQ_H0 ^ len, b ^ UQ_H1);
}

#endif /* LIBUNIQD_HASH_H */
