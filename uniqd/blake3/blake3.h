/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * BLAKE3 for uniqd: hash, keyed_hash and derive_key modes with extendable
 * output, written from the BLAKE3 specification. The same blake3.c builds
 * in the kernel and, through blake3_compat.h, in userspace.
 *
 * Streaming state is bounded: struct uniqd_blake3_hasher keeps at most
 * UNIQD_BLAKE3_STREAM_DEPTH subtree chaining values, which is enough for
 * UNIQD_BLAKE3_STREAM_MAX_LEN bytes fed through uniqd_blake3_update();
 * beyond that update() fails with -EOVERFLOW and the hasher stays unusable.
 * uniqd_blake3_finup() and the one-shot helpers lend the hasher a larger
 * chaining-value stack on their own stack frame and accept anything up to
 * UNIQD_BLAKE3_FINUP_MAX_LEN bytes in total. See Documentation/blake3.rst.
 */
#ifndef UNIQD_BLAKE3_H
#define UNIQD_BLAKE3_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include "blake3_compat.h"
#endif

#define UNIQD_BLAKE3_OUT_LEN		32
#define UNIQD_BLAKE3_KEY_LEN		32
#define UNIQD_BLAKE3_BLOCK_LEN		64
#define UNIQD_BLAKE3_CHUNK_LEN		1024

/*
 * Number of chaining values the streaming state holds. Absorbing chunk
 * number t (counting from 1) needs popcount(t) of them, so a depth of d
 * covers every input of up to 2^(d + 1) - 1 chunks: the last chunk stays
 * in the chunk state and never needs a slot. The kernel default of 7 keeps
 * the state at exactly 360 bytes (HASH_MAX_DESCSIZE allows 360 beyond
 * struct shash_desc) and allows 255 chunks = 261120 bytes of streaming;
 * userspace defaults to 54, which covers the 2^64-byte maximum input.
 */
#define UNIQD_BLAKE3_KERNEL_STREAM_DEPTH	7
#ifndef UNIQD_BLAKE3_STREAM_DEPTH
#ifdef __KERNEL__
#define UNIQD_BLAKE3_STREAM_DEPTH	UNIQD_BLAKE3_KERNEL_STREAM_DEPTH
#else
#define UNIQD_BLAKE3_STREAM_DEPTH	54
#endif
#endif

/*
 * Total chaining-value depth available to uniqd_blake3_finup(), which adds
 * UNIQD_BLAKE3_FINUP_DEPTH - UNIQD_BLAKE3_STREAM_DEPTH slots on its own
 * stack frame (17 * 32 = 544 bytes in the kernel). 24 covers 2^25 - 1
 * chunks (just under 32 GiB), so a shash finup of any unsigned int length
 * after a full streaming state is always in range.
 */
#define UNIQD_BLAKE3_KERNEL_FINUP_DEPTH	24
#ifndef UNIQD_BLAKE3_FINUP_DEPTH
#ifdef __KERNEL__
#define UNIQD_BLAKE3_FINUP_DEPTH	UNIQD_BLAKE3_KERNEL_FINUP_DEPTH
#else
#define UNIQD_BLAKE3_FINUP_DEPTH	54
#endif
#endif

#if UNIQD_BLAKE3_STREAM_DEPTH < 1 || UNIQD_BLAKE3_FINUP_DEPTH > 54 || \
	UNIQD_BLAKE3_FINUP_DEPTH - UNIQD_BLAKE3_STREAM_DEPTH < 0
#error "need 1 <= UNIQD_BLAKE3_STREAM_DEPTH <= UNIQD_BLAKE3_FINUP_DEPTH <= 54"
#endif

/* (2^(depth + 1) - 1) chunks; depth 54 covers all 2^64 - 1 bytes. */
#define UNIQD_BLAKE3_DEPTH_MAX_LEN(depth)				\
	((depth) >= 54 ? ~0ULL :					\
	 ((1ULL << ((depth) + 1)) - 1) * UNIQD_BLAKE3_CHUNK_LEN)
#define UNIQD_BLAKE3_STREAM_MAX_LEN					\
	UNIQD_BLAKE3_DEPTH_MAX_LEN(UNIQD_BLAKE3_STREAM_DEPTH)
#define UNIQD_BLAKE3_FINUP_MAX_LEN					\
	UNIQD_BLAKE3_DEPTH_MAX_LEN(UNIQD_BLAKE3_FINUP_DEPTH)

/**
 * struct uniqd_blake3_hasher - incremental BLAKE3 state
 * @key: key words (the IV in hash mode, the context key in derive_key mode)
 * @cv: chaining value of the chunk being absorbed
 * @block: last, not yet compressed block of that chunk
 * @cv_stack: chaining values of completed subtrees, largest first; the
 *	number in use is popcount(@chunk_counter)
 * @chunk_counter: index of the chunk being absorbed = completed chunks
 * @block_len: bytes in @block (0..64)
 * @blocks_done: blocks of the current chunk already compressed (0..15)
 * @flags: mode flag of the hasher (0, KEYED_HASH or DERIVE_KEY_MATERIAL)
 * @status: 0, or why the hasher is unusable until it is initialised again
 *
 * Plain data, no pointers: it may be copied (the crypto API's export and
 * import do exactly that) and holds key material, so wipe it after use.
 */
struct uniqd_blake3_hasher {
	u32 key[8];
	u32 cv[8];
	u8 block[UNIQD_BLAKE3_BLOCK_LEN];
	u32 cv_stack[UNIQD_BLAKE3_STREAM_DEPTH][8];
#if UNIQD_BLAKE3_FINUP_DEPTH < 31
	u32 chunk_counter;
#else
	u64 chunk_counter;
#endif
	u8 block_len;
	u8 blocks_done;
	u8 flags;
	u8 status;
};

/*
 * An implementation (struct in blake3_impl.h): the functions without one
 * use uniqd_blake3_impl_default(), the best the CPU has unless forced.
 */
struct uniqd_blake3_impl;

void uniqd_blake3_init(struct uniqd_blake3_hasher *h);
void uniqd_blake3_init_keyed(struct uniqd_blake3_hasher *h,
			     const u8 key[UNIQD_BLAKE3_KEY_LEN]);
int uniqd_blake3_init_derive_key(struct uniqd_blake3_hasher *h,
				 const void *context, size_t context_len);

int uniqd_blake3_update(struct uniqd_blake3_hasher *h, const void *data,
			size_t len);

int uniqd_blake3_final(const struct uniqd_blake3_hasher *h, u8 *out,
		       size_t out_len);
int uniqd_blake3_final_seek(const struct uniqd_blake3_hasher *h, u64 offset,
			    u8 *out, size_t out_len);

int uniqd_blake3_finup(struct uniqd_blake3_hasher *h, const void *data,
		       size_t len, u8 *out, size_t out_len);
int uniqd_blake3_finup_seek(struct uniqd_blake3_hasher *h, const void *data,
			    size_t len, u64 offset, u8 *out, size_t out_len);

int uniqd_blake3_hash(const u8 *key, const void *data, size_t len, u8 *out,
		      size_t out_len);
int uniqd_blake3_derive_key(const void *context, size_t context_len,
			    const void *material, size_t len, u8 *out,
			    size_t out_len);

int uniqd_blake3_update_impl(const struct uniqd_blake3_impl *impl,
			     struct uniqd_blake3_hasher *h, const void *data,
			     size_t len);
int uniqd_blake3_final_seek_impl(const struct uniqd_blake3_impl *impl,
				 const struct uniqd_blake3_hasher *h,
				 u64 offset, u8 *out, size_t out_len);
int uniqd_blake3_finup_seek_impl(const struct uniqd_blake3_impl *impl,
				 struct uniqd_blake3_hasher *h,
				 const void *data, size_t len, u64 offset,
				 u8 *out, size_t out_len);
int uniqd_blake3_update_ext(const struct uniqd_blake3_impl *impl,
			    struct uniqd_blake3_hasher *h, u32 *ext,
			    unsigned int ext_slots, const void *data,
			    size_t len);
int uniqd_blake3_final_ext(const struct uniqd_blake3_impl *impl,
			   const struct uniqd_blake3_hasher *h, u32 *ext,
			   u8 *out, size_t out_len);
int uniqd_blake3_hash_many(const struct uniqd_blake3_impl *impl,
			   const u8 *key, const void *const *in,
			   const size_t *len, size_t n, u8 *out);

#endif /* UNIQD_BLAKE3_H */
