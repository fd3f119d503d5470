/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Little-endian fields of the formats the tools write (snapshots, the
 * farm's cluster records, the GCC plugin's gcc.use records): one home for
 * their byte order, header-only so C and C++ tools share it without
 * linking libuniqd. Not installed: libuniqd.h is the only public header.
 */
#ifndef UNIQD_LE_H
#define UNIQD_LE_H

#include <stdint.h>

static inline void uq_le_put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void uq_le_put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint32_t uq_le_get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint64_t uq_le_get64(const uint8_t *p)
{
	return (uint64_t)uq_le_get32(p) | (uint64_t)uq_le_get32(p + 4) << 32;
}

#endif /* UNIQD_LE_H */
