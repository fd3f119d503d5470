/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * BLAKE3's constants, from the specification, for the files that run the
 * rounds (blake3.c and blake3_simd.h): static so that every lookup with a
 * constant index folds into the code.
 */
#ifndef UNIQD_BLAKE3_TABLES_H
#define UNIQD_BLAKE3_TABLES_H

/* The IV is the SHA-256 initial hash value. */
static const u32 b3_iv[8] = {
	0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
	0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
};

/*
 * Message word order of each of the seven rounds: row 0 is the identity and
 * each row is the previous one put through the specification's permutation
 * (2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8).
 */
static const u8 b3_schedule[7][16] = {
	{ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 },
	{ 2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8 },
	{ 3, 4, 10, 12, 13, 2, 7, 14, 6, 5, 9, 0, 11, 15, 8, 1 },
	{ 10, 7, 12, 9, 14, 3, 13, 15, 4, 0, 11, 2, 5, 8, 1, 6 },
	{ 12, 13, 9, 11, 15, 10, 14, 8, 7, 2, 5, 3, 0, 1, 6, 4 },
	{ 9, 14, 11, 5, 8, 12, 15, 1, 13, 3, 0, 10, 2, 6, 4, 7 },
	{ 11, 15, 5, 0, 1, 9, 8, 6, 14, 10, 2, 12, 3, 4, 7, 13 },
};

#endif /* UNIQD_BLAKE3_TABLES_H */
