/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libuniqd: comparing a key with a stored one, inline, where a hit is
 * decided: the per-thread cache (cache.h) and the mapped probe (map.c).
 */
#ifndef LIBUNIQD_KEY_EQ_H
#define LIBUNIQD_KEY_EQ_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"

/* Native loads of possibly unaligned bytes, for comparing keys. */
static UQ_ALWAYS_INLINE uint64_t uq_rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static UQ_ALWAYS_INLINE uint32_t uq_rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* The first 16 bytes of A and B, 8 <= LEN <= 16 of them, equal? */
static UQ_ALWAYS_INLINE bool uq_eq16(const uint8_t *a, const uint8_t *b,
				     uint32_t len)
{
	return !((uq_rd64(a) ^ uq_rd64(b)) |
		 (uq_rd64(a + len - 8) ^ uq_rd64(b + len - 8)));
}

/*
 * LEN bytes at A and B equal? A compiler's keys are short: up to 32 bytes
 * they are compared a word at a time, the words overlapping where LEN is
 * not a multiple of one, never reading outside either key.
 */
static UQ_ALWAYS_INLINE bool uq_key_eq(const uint8_t *a, const uint8_t *b,
				       uint32_t len)
{
	if (len >= 8) {
		if (len <= 16)
			return uq_eq16(a, b, len);
		if (len <= 32)
			return uq_eq16(a, b, 16) &&
			       uq_eq16(a + len - 16, b + len - 16, 16);
		return !memcmp(a, b, len);
	}
	if (len >= 4)
		return !((uq_rd32(a) ^ uq_rd32(b)) |
			 (uq_rd32(a + len - 4) ^ uq_rd32(b + len - 4)));
	/* Bytes 0, len / 2 and len - 1 are all of them. */
	return !len || (a[0] == b[0] && a[len >> 1] == b[len >> 1] &&
			a[len - 1] == b[len - 1]);
}

#endif /* LIBUNIQD_KEY_EQ_H */
