/* SPDX-License-Identifier: GPL-2.0 OR MIT */
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

/* Most lanes any implementation has (AVX-512: 16 x 32-bit words). */
#define UNIQD_BLAKE3_MAX_LANES	16

/**
 * struct uniqd_blake3_job - one node to compress in a lane
 * @in: the node's input: up to one chunk of message bytes, or the 64
 *	bytes of a parent's two child CVs
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
 * @hash_many: up to @lanes jobs, all starting from the CV @key (the key
 *	words); the 32 bytes at @out + 32 * i are the result of jobs[i]
 */
struct uniqd_blake3_impl {
	const char *name;
	unsigned int lanes;
	bool simd;
	void (*compress)(u32 out[16], const u32 cv[8], const u32 m[16],
			 u64 counter, u32 block_len, u32 flags);
	void (*hash_many)(const struct uniqd_blake3_job *jobs, unsigned int n,
			  const u32 key[8], u8 *out);
};

/* blake3.c: the portable implementation, the reference for the others. */
extern const struct uniqd_blake3_impl uniqd_blake3_portable;
void uniqd_blake3_compress_portable(u32 out[16], const u32 cv[8],
				    const u32 m[16], u64 counter,
				    u32 block_len, u32 flags);
void uniqd_blake3_hash_many_portable(const struct uniqd_blake3_job *jobs,
				     unsigned int n, const u32 key[8], u8 *out);

/* blake3_simd.h instantiated by blake3_{sse41,avx2,avx512}.c */
#define UNIQD_BLAKE3_SIMD_DECLARE(isa)					\
	void uniqd_blake3_compress_##isa(u32 out[16], const u32 cv[8],	\
					 const u32 m[16], u64 counter,	\
					 u32 block_len, u32 flags);	\
	void uniqd_blake3_hash_many_##isa(const struct uniqd_blake3_job *jobs,\
					  unsigned int n,		\
					  const u32 key[8], u8 *out)

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
