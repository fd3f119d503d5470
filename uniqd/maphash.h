/* SPDX-License-Identifier: GPL-2.0 OR LGPL-2.1-or-later */
/*
 * uniqd: the hash of the mapped index, one source for the kernel (which
 * fills the index) and libuniqd (which probes it).
 *
 * It is keyed by the pool's public hash_seed (struct uniqd_map_header), so
 * every attached process can compute it: it only spreads entries over
 * slots, it guards nothing. A reader confirms every hit by comparing class,
 * length and bytes with the immutable mapped record, and an attacker who
 * collides keys on purpose only pushes them out of the probe window, back to
 * the ioctl (Documentation/design.rst, "The mapped index"). That is why it
 * is a cheap multiply-mix hash (128-bit products, 16 bytes a step, in the
 * style of wyhash) rather than keyed BLAKE3: about 2-5 ns for a short key
 * natively against about 90 ns (Documentation/benchmarks.rst).
 *
 * The function is part of the ABI: userspace-api.rst spells it out for
 * callers that do not use libuniqd. Changing it needs a new
 * UNIQD_MAP_VERSION.
 */
#ifndef UNIQD_MAPHASH_H
#define UNIQD_MAPHASH_H

#include <linux/types.h>

#ifndef __SIZEOF_INT128__
#error "the mapped index hash needs 64x64->128-bit multiplication"
#endif

#define UNIQD_MH_C0 0x2d358dccaa6c78a5ULL
#define UNIQD_MH_C1 0x8bb84b93962eacc9ULL
#define UNIQD_MH_C2 0x4b33a62ed433d4a3ULL
#define UNIQD_MH_C3 0x4d5a2da51de1aa47ULL

/* Little-endian loads of possibly unaligned bytes. */
static inline __u64 uniqd_mh_rd64(const __u8 *p)
{
	return (__u64)p[0] | (__u64)p[1] << 8 | (__u64)p[2] << 16 |
	       (__u64)p[3] << 24 | (__u64)p[4] << 32 | (__u64)p[5] << 40 |
	       (__u64)p[6] << 48 | (__u64)p[7] << 56;
}

static inline __u64 uniqd_mh_rd32(const __u8 *p)
{
	return (__u64)p[0] | (__u64)p[1] << 8 | (__u64)p[2] << 16 |
	       (__u64)p[3] << 24;
}

/* Both halves of a * b, xored. */
static inline __u64 uniqd_mh_mix(__u64 a, __u64 b)
{
	unsigned __int128 r = (unsigned __int128)a * b;

	return (__u64)r ^ (__u64)(r >> 64);
}

/*
 * The index hash of (class_id, @len bytes at @data) under the pool's
 * @seed. Its high 32 bits are the slot tag (never 0: see below), which also
 * picks the home slot. @seed0 and @seed1 are header.hash_seed[0] and [1].
 */
static inline __u64 uniqd_maphash(__u64 seed0, __u64 seed1, __u32 class_id,
				  const void *data, __u32 len)
{
	const __u8 *p = (const __u8 *)data;
	__u64 s = seed0 ^ uniqd_mh_mix(seed1 ^ UNIQD_MH_C0,
					 (__u64)class_id ^ UNIQD_MH_C1);
	__u64 a, b, h;
	__u32 i = len;

	if (len <= 16) {
		if (len >= 4) {
			__u32 q = (len >> 3) << 2;

			a = uniqd_mh_rd32(p) << 32 | uniqd_mh_rd32(p + q);
			b = uniqd_mh_rd32(p + len - 4) << 32 |
			    uniqd_mh_rd32(p + len - 4 - q);
		} else if (len) {
			a = (__u64)p[0] << 16 | (__u64)p[len >> 1] << 8 |
			    p[len - 1];
			b = 0;
		} else {
			a = 0;
			b = 0;
		}
	} else {
		if (i > 48) {
			__u64 s1 = s, s2 = s;

			do {
				s = uniqd_mh_mix(uniqd_mh_rd64(p) ^ UNIQD_MH_C1,
						 uniqd_mh_rd64(p + 8) ^ s);
				s1 = uniqd_mh_mix(uniqd_mh_rd64(p + 16) ^ UNIQD_MH_C2,
						  uniqd_mh_rd64(p + 24) ^ s1);
				s2 = uniqd_mh_mix(uniqd_mh_rd64(p + 32) ^ UNIQD_MH_C3,
						  uniqd_mh_rd64(p + 40) ^ s2);
				p += 48;
				i -= 48;
			} while (i > 48);
			s ^= s1 ^ s2;
		}
		while (i > 16) {
			s = uniqd_mh_mix(uniqd_mh_rd64(p) ^ UNIQD_MH_C1,
					 uniqd_mh_rd64(p + 8) ^ s);
			p += 16;
			i -= 16;
		}
		a = uniqd_mh_rd64(p + i - 16);
		b = uniqd_mh_rd64(p + i - 8);
	}
	h = uniqd_mh_mix(a ^ UNIQD_MH_C1 ^ len, b ^ s);
	h = uniqd_mh_mix(h ^ UNIQD_MH_C0, s ^ UNIQD_MH_C2);
	/* A tag of 0 would read as an empty slot's. */
	if (!(h >> 32))
		h |= 1ULL << 32;
	return h;
}

#endif /* UNIQD_MAPHASH_H */
