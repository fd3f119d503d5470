/* SPDX-License-Identifier: GPL-2.0 */
/*
 * BLAKE3 implementations: the portable C of blake3.c and, on x86-64, SIMD
 * versions of the same two primitives built from blake3_simd.h with
 * per-file compiler flags (SSE4.1, AVX2, AVX-512F/VL). blake3.c calls them
 * through struct uniqd_blake3_impl; blake3_impl.c picks one from the CPU's
 * features and wraps every SIMD call in an FPU section in the kernel.
 * See Documentation/blake3.rst.
 */
#ifndef UNIQD_BLAKE3_IMPL_H
#define UNIQD_BLAKE3_IMPL_H

#include "blake3.h"

/* Domain separation flags, from the specification. */
#define B3_CHUNK_START		(1U << 0)
#define B3_CHUNK_END		(1U << 1)
#define B3_PARENT		(1U << 2)
#define B3_ROOT			(1U << 3)
#define B3_KEYED_HASH		(1U << 4)
#define B3_DERIVE_KEY_CONTEXT	(1U << 5)
#define B3_DERIVE_KEY_MATERIAL	(1U << 6)

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

/* Most lanes any implementation has (AVX-512: 16 x 32-bit words). */
#define UNIQD_BLAKE3_MAX_LANES	16

/**
 * struct uniqd_blake3_job - one node to compress in a lane
 * @in: the node's input: up to one chunk of message bytes, or the 64
 *	bytes of a parent's two child CVs
 * @key: 8 key words, the CV the node starts from
 * @counter: chunk counter (0 for parents)
 * @len: bytes at @in, 0..UNIQD_BLAKE3_CHUNK_LEN; 0 is one empty block
 * @flags: flags of every block
 * @flags_start: added to the first block's flags (CHUNK_START for chunks)
 * @flags_end: added to the last block's flags (CHUNK_END, ROOT)
 *
 * The result is the first 32 bytes of the last block's compression, in
 * little-endian order: the node's CV, or its 32-byte hash if @flags_end
 * has ROOT. Jobs of different lengths may share a call.
 */
struct uniqd_blake3_job {
	const u8 *in;
	const u32 *key;
	u64 counter;
	u32 len;
	u32 flags;
	u32 flags_start;
	u32 flags_end;
};

/**
 * struct uniqd_blake3_impl - one implementation
 * @name: "portable", "sse41", "avx2", "avx512"
 * @lanes: jobs that @hash_many runs at once
 * @simd: needs the FPU (kernel: kernel_fpu_begin() and a usable FPU)
 * @compress: the compression function: 16 output words; @out must not
 *	overlap @cv or @m
 * @hash_many: up to @lanes jobs; out[i] is the result of jobs[i]
 */
struct uniqd_blake3_impl {
	const char *name;
	unsigned int lanes;
	bool simd;
	void (*compress)(u32 out[16], const u32 cv[8], const u32 m[16],
			 u64 counter, u32 block_len, u32 flags);
	void (*hash_many)(const struct uniqd_blake3_job *jobs, unsigned int n,
			  u8 (*out)[UNIQD_BLAKE3_OUT_LEN]);
};

/* blake3.c: the portable implementation, the reference for the others. */
extern const struct uniqd_blake3_impl uniqd_blake3_portable;
void uniqd_blake3_compress_portable(u32 out[16], const u32 cv[8],
				    const u32 m[16], u64 counter,
				    u32 block_len, u32 flags);
void uniqd_blake3_hash_many_portable(const struct uniqd_blake3_job *jobs,
				     unsigned int n,
				     u8 (*out)[UNIQD_BLAKE3_OUT_LEN]);

/* blake3_simd.h instantiated by blake3_{sse41,avx2,avx512}.c */
#define UNIQD_BLAKE3_SIMD_DECLARE(isa)					\
	void uniqd_blake3_compress_##isa(u32 out[16], const u32 cv[8],	\
					 const u32 m[16], u64 counter,	\
					 u32 block_len, u32 flags);	\
	void uniqd_blake3_hash_many_##isa(const struct uniqd_blake3_job *jobs,\
					  unsigned int n,		\
					  u8 (*out)[UNIQD_BLAKE3_OUT_LEN])

#ifdef CONFIG_X86_64
#define UNIQD_BLAKE3_X86 1
#elif !defined(__KERNEL__) && defined(__x86_64__)
#define UNIQD_BLAKE3_X86 1
#endif

#ifdef UNIQD_BLAKE3_X86
UNIQD_BLAKE3_SIMD_DECLARE(sse41);
UNIQD_BLAKE3_SIMD_DECLARE(avx2);
UNIQD_BLAKE3_SIMD_DECLARE(avx512);
#endif

/* blake3_impl.c */
const struct uniqd_blake3_impl *uniqd_blake3_impl_find(const char *name);
bool uniqd_blake3_impl_usable(const struct uniqd_blake3_impl *impl);
const struct uniqd_blake3_impl *uniqd_blake3_impl_best(void);
const struct uniqd_blake3_impl *uniqd_blake3_impl_default(void);
int uniqd_blake3_impl_force(const char *name);
const struct uniqd_blake3_impl *uniqd_blake3_impl_nth(unsigned int i);
bool uniqd_blake3_simd_begin(const struct uniqd_blake3_impl *impl);
void uniqd_blake3_simd_end(void);

#endif /* UNIQD_BLAKE3_IMPL_H */
