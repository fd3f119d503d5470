// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * BLAKE3, written from the specification ("BLAKE3: one function, fast
 * everywhere", J. O'Connor, J.-P. Aumasson, S. Neves, Z. Wilcox-O'Hearn,
 * 2020): portable C, no allocation, the same file for the kernel module and
 * for userspace (through blake3_compat.h).
 *
 * The input is split into 1 KiB chunks; each chunk is compressed block by
 * block into a chaining value (CV), and CVs are merged pairwise into a
 * left-balanced binary tree whose root is compressed once more, with the
 * ROOT flag, for every 64 bytes of output.
 *
 * Tree bookkeeping follows the specification's incremental algorithm: after
 * chunk number t (counting from 1) is complete, its CV is merged with the
 * top of the CV stack once for every trailing zero bit of t and then pushed,
 * so the stack always holds popcount(t) CVs, one per complete subtree. A
 * completed chunk is only merged once more input shows it is not the last
 * one, because the last chunk (and, if it is alone, the root) needs
 * different flags. With room for d CVs any t up to 2^(d + 1) - 2 fits, so
 * d slots absorb up to 2^(d + 1) - 1 chunks; update() checks the length up
 * front and never writes past the stack. finup() borrows extra slots on its
 * own stack frame for the remaining input and then folds the whole stack.
 */
#ifdef __KERNEL__
#include <linux/bitops.h>
#include <linux/errno.h>
#include <linux/string.h>
#endif

#include "blake3_impl.h"
#include "blake3_tables.h"

#define B3_BLOCK_LEN		UNIQD_BLAKE3_BLOCK_LEN
#define B3_CHUNK_LEN		UNIQD_BLAKE3_CHUNK_LEN
#define B3_BLOCKS_PER_CHUNK	(B3_CHUNK_LEN / B3_BLOCK_LEN)
#define B3_CV_BYTES		32

/* Values of uniqd_blake3_hasher.status */
#define B3_STATUS_OVERFLOW	1	/* update() went past the bound */
#define B3_STATUS_SPENT		2	/* consumed by finup() */

/* Extra CV slots that finup() keeps on its stack frame (at least one). */
#if UNIQD_BLAKE3_FINUP_DEPTH - UNIQD_BLAKE3_STREAM_DEPTH > 0
#define B3_EXT_DEPTH	(UNIQD_BLAKE3_FINUP_DEPTH - UNIQD_BLAKE3_STREAM_DEPTH)
#else
#define B3_EXT_DEPTH	1
#endif

/*
 * Everything needed to compress a node once more: the root node's output
 * block i is this compression with counter i and the ROOT flag added.
 */
struct b3_node {
	u32 cv[8];
	u32 m[16];
	u64 counter;
	u32 block_len;
	u32 flags;
};

/* The quarter-round on state words a, b, c, d with message words x, y. */
#define B3_G(v, a, b, c, d, x, y)					\
	do {								\
		v[a] = v[a] + v[b] + (x);				\
		v[d] = ror32(v[d] ^ v[a], 16);				\
		v[c] = v[c] + v[d];					\
		v[b] = ror32(v[b] ^ v[c], 12);				\
		v[a] = v[a] + v[b] + (y);				\
		v[d] = ror32(v[d] ^ v[a], 8);				\
		v[c] = v[c] + v[d];					\
		v[b] = ror32(v[b] ^ v[c], 7);				\
	} while (0)

/*
 * Round r: columns, then diagonals. Macros rather than functions so the
 * schedule lookups are constants whatever the compiler decides to inline.
 */
#define B3_ROUND(v, m, r)						\
	do {								\
		const u8 *s_ = b3_schedule[r];				\
									\
		B3_G(v, 0, 4, 8, 12, m[s_[0]], m[s_[1]]);		\
		B3_G(v, 1, 5, 9, 13, m[s_[2]], m[s_[3]]);		\
		B3_G(v, 2, 6, 10, 14, m[s_[4]], m[s_[5]]);		\
		B3_G(v, 3, 7, 11, 15, m[s_[6]], m[s_[7]]);		\
		B3_G(v, 0, 5, 10, 15, m[s_[8]], m[s_[9]]);		\
		B3_G(v, 1, 6, 11, 12, m[s_[10]], m[s_[11]]);		\
		B3_G(v, 2, 7, 8, 13, m[s_[12]], m[s_[13]]);		\
		B3_G(v, 3, 4, 9, 14, m[s_[14]], m[s_[15]]);		\
	} while (0)

/*
 * The compression function. All 16 output words are produced: the first
 * eight are the new chaining value, all 16 are root output. @out must not
 * overlap @cv or @m.
 */
void uniqd_blake3_compress_portable(u32 out[16], const u32 cv[8],
				    const u32 m[16], u64 counter,
				    u32 block_len, u32 flags)
{
	u32 v[16];
	unsigned int i;

	for (i = 0; i < 8; i++)
		v[i] = cv[i];
	for (i = 0; i < 4; i++)
		v[i + 8] = b3_iv[i];
	v[12] = (u32)counter;
	v[13] = (u32)(counter >> 32);
	v[14] = block_len;
	v[15] = flags;

	B3_ROUND(v, m, 0);
	B3_ROUND(v, m, 1);
	B3_ROUND(v, m, 2);
	B3_ROUND(v, m, 3);
	B3_ROUND(v, m, 4);
	B3_ROUND(v, m, 5);
	B3_ROUND(v, m, 6);

	for (i = 0; i < 8; i++) {
		out[i] = v[i] ^ v[i + 8];
		out[i + 8] = v[i + 8] ^ cv[i];
	}
}

/*
 * Little-endian words at any alignment, spelled out byte by byte so that the
 * same code serves the kernel (where <asm/unaligned.h> of 6.1 became
 * <linux/unaligned.h> in 6.12) and userspace; compilers turn each into a
 * single load or store on little-endian machines.
 */
static u32 b3_get_le32(const u8 *p)
{
	return (u32)p[0] | (u32)p[1] << 8 | (u32)p[2] << 16 | (u32)p[3] << 24;
}

static void b3_put_le32(u8 *p, u32 v)
{
	p[0] = (u8)v;
	p[1] = (u8)(v >> 8);
	p[2] = (u8)(v >> 16);
	p[3] = (u8)(v >> 24);
}

static void b3_load_words(u32 *w, const u8 *p, unsigned int nwords)
{
	unsigned int i;

	for (i = 0; i < nwords; i++)
		w[i] = b3_get_le32(p + 4 * i);
}

/*
 * The compression function of @impl, or the portable one where SIMD may
 * not be used right now (kernel: an interrupt that interrupted FPU use).
 */
static void b3_compress(const struct uniqd_blake3_impl *impl, u32 out[16],
			const u32 cv[8], const u32 m[16], u64 counter,
			u32 block_len, u32 flags)
{
	if (uniqd_blake3_simd_begin(impl)) {
		impl->compress(out, cv, m, counter, block_len, flags);
		uniqd_blake3_simd_end();
	} else {
		uniqd_blake3_compress_portable(out, cv, m, counter, block_len,
					       flags);
	}
}

/* As b3_compress() for hash_many(), at most impl->lanes jobs. */
static void b3_hash_many(const struct uniqd_blake3_impl *impl,
			 const struct uniqd_blake3_job *jobs, unsigned int n,
			 const u32 key[8], u8 *out)
{
	if (uniqd_blake3_simd_begin(impl)) {
		impl->hash_many(jobs, n, key, out);
		uniqd_blake3_simd_end();
	} else {
		uniqd_blake3_hash_many_portable(jobs, n, key, out);
	}
}

/* cv = first half of compress(cv, one 64-byte block of a chunk) */
static void b3_compress_block(const struct uniqd_blake3_impl *impl,
			      u32 cv[8], const u8 *block, u64 counter,
			      u32 flags)
{
	u32 m[16], out[16];

	b3_load_words(m, block, 16);
	b3_compress(impl, out, cv, m, counter, B3_BLOCK_LEN, flags);
	memcpy(cv, out, B3_CV_BYTES);
}

/* out = CV of the parent of @left and @right; @out may be @right. */
static void b3_parent_cv(const struct uniqd_blake3_impl *impl, u32 out[8],
			 const u32 left[8], const u32 right[8],
			 const u32 key[8], u32 flags)
{
	u32 m[16], res[16];

	memcpy(m, left, B3_CV_BYTES);
	memcpy(m + 8, right, B3_CV_BYTES);
	b3_compress(impl, res, key, m, 0, B3_BLOCK_LEN, flags | B3_PARENT);
	memcpy(out, res, B3_CV_BYTES);
}

static size_t b3_min(size_t a, size_t b)
{
	return a < b ? a : b;
}

/* Each job alone, block by block: the reference for the SIMD lanes. */
void uniqd_blake3_hash_many_portable(const struct uniqd_blake3_job *jobs,
				     unsigned int n, const u32 key[8], u8 *out)
{
	u8 last[B3_BLOCK_LEN];
	u32 cv[8], m[16], res[16];
	unsigned int i, w;

	for (i = 0; i < n; i++) {
		const struct uniqd_blake3_job *j = &jobs[i];
		u32 off = 0, flags = j->flags | j->flags_start;

		memcpy(cv, key, B3_CV_BYTES);
		for (;;) {
			u32 blen = b3_min(j->len - off, B3_BLOCK_LEN);
			bool end = off + blen >= j->len;

			if (end)
				flags |= j->flags_end;
			if (blen == B3_BLOCK_LEN) {
				b3_load_words(m, j->in + off, 16);
			} else {
				memset(last, 0, sizeof(last));
				memcpy(last, j->in + off, blen);
				b3_load_words(m, last, 16);
			}
			uniqd_blake3_compress_portable(res, cv, m, j->counter,
						       blen, flags);
			memcpy(cv, res, B3_CV_BYTES);
			if (end)
				break;
			off += B3_BLOCK_LEN;
			flags = j->flags;
		}
		for (w = 0; w < 8; w++)
			b3_put_le32(out + B3_CV_BYTES * i + 4 * w, cv[w]);
	}
	memzero_explicit(last, sizeof(last));
	memzero_explicit(cv, sizeof(cv));
}

const struct uniqd_blake3_impl uniqd_blake3_portable = {
	.name		= "portable",
	.lanes		= 1,
	.simd		= false,
	.compress	= uniqd_blake3_compress_portable,
	.hash_many	= uniqd_blake3_hash_many_portable,
};

static unsigned int b3_chunk_len(const struct uniqd_blake3_hasher *h)
{
	return h->blocks_done * B3_BLOCK_LEN + h->block_len;
}

/* CVs on the stack: one per completed subtree, see the top comment. */
static unsigned int b3_stack_len(const struct uniqd_blake3_hasher *h)
{
	u64 chunks = h->chunk_counter;

	return hweight64(chunks);
}

static u32 b3_start_flag(const struct uniqd_blake3_hasher *h)
{
	return h->blocks_done ? 0 : B3_CHUNK_START;
}

static int b3_status_err(const struct uniqd_blake3_hasher *h)
{
	return h->status == B3_STATUS_OVERFLOW ? -EOVERFLOW : -EINVAL;
}

static void b3_init_words(struct uniqd_blake3_hasher *h, const u32 key[8],
			  u32 flags)
{
	/* The block buffer and CV stack need no initial value. */
	memcpy(h->key, key, sizeof(h->key));
	memcpy(h->cv, key, sizeof(h->cv));
	h->chunk_counter = 0;
	h->block_len = 0;
	h->blocks_done = 0;
	h->flags = flags;
	h->status = 0;
}

/* Slot @i of the CV stack: the hasher's own, then finup()'s extension. */
static u32 *b3_slot(struct uniqd_blake3_hasher *h, u32 (*ext)[8],
		    unsigned int i)
{
	if (i < UNIQD_BLAKE3_STREAM_DEPTH)
		return h->cv_stack[i];
	return ext[i - UNIQD_BLAKE3_STREAM_DEPTH];
}

static const u32 *b3_slot_ro(const struct uniqd_blake3_hasher *h,
			     u32 (*ext)[8], unsigned int i)
{
	if (i < UNIQD_BLAKE3_STREAM_DEPTH)
		return h->cv_stack[i];
	return ext[i - UNIQD_BLAKE3_STREAM_DEPTH];
}

/*
 * Chunk number chunk_counter is complete and more input follows: merge its
 * CV into the stack. @depth is only a safety net, absorb() has already
 * checked that the input fits.
 */
static int b3_push_chunk_cv(const struct uniqd_blake3_impl *impl,
			    struct uniqd_blake3_hasher *h, u32 (*ext)[8],
			    unsigned int depth, u32 cv[8], unsigned int log2n)
{
	u64 total = ((u64)h->chunk_counter >> log2n) + 1;
	unsigned int n = b3_stack_len(h);

	while (!(total & 1)) {
		n--;
		b3_parent_cv(impl, cv, b3_slot_ro(h, ext, n), cv, h->key,
			     h->flags);
		total >>= 1;
	}
	if (unlikely(n >= depth))
		return -EOVERFLOW;
	memcpy(b3_slot(h, ext, n), cv, B3_CV_BYTES);
	h->chunk_counter += 1U << log2n;
	return 0;
}

/* Feed @len bytes that all belong to the current chunk. */
static void b3_absorb_chunk(const struct uniqd_blake3_impl *impl,
			    struct uniqd_blake3_hasher *h, const u8 *in,
			    size_t len)
{
	while (len) {
		size_t take;

		if (h->block_len == B3_BLOCK_LEN) {
			b3_compress_block(impl, h->cv, h->block,
					  h->chunk_counter,
					  h->flags | b3_start_flag(h));
			h->blocks_done++;
			h->block_len = 0;
		}
		/* Whole blocks that are not the chunk's last: no copy. */
		if (!h->block_len && len > B3_BLOCK_LEN) {
			b3_compress_block(impl, h->cv, in, h->chunk_counter,
					  h->flags | b3_start_flag(h));
			h->blocks_done++;
			in += B3_BLOCK_LEN;
			len -= B3_BLOCK_LEN;
			continue;
		}
		take = b3_min(len, B3_BLOCK_LEN - h->block_len);
		memcpy(h->block + h->block_len, in, take);
		h->block_len += take;
		in += take;
		len -= take;
	}
}

/*
 * How many whole chunks, 2^log2n, to hash at once from the start of @in:
 * as many as the lanes take, but never the last chunk (it may need the
 * ROOT flag) and only a subtree that the tree has at this position, i.e.
 * one that starts at a multiple of its own size.
 */
static unsigned int b3_subtree_log2(const struct uniqd_blake3_impl *impl,
				    const struct uniqd_blake3_hasher *h,
				    size_t len)
{
	u64 whole = (len - 1) / B3_CHUNK_LEN;
	u64 counter = h->chunk_counter;
	unsigned int log2n = 0;

	while ((2U << log2n) <= impl->lanes && (2ULL << log2n) <= whole &&
	       !(counter & ((2ULL << log2n) - 1)))
		log2n++;
	return log2n;
}

/* Jobs for @n whole chunks at @in, the next ones of @h's input. */
static void b3_chunk_jobs(const struct uniqd_blake3_hasher *h, const u8 *in,
			  unsigned int n, struct uniqd_blake3_job *jobs)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		jobs[i].in = in + (size_t)i * B3_CHUNK_LEN;
		jobs[i].counter = (u64)h->chunk_counter + i;
		jobs[i].len = B3_CHUNK_LEN;
		jobs[i].flags = h->flags;
		jobs[i].flags_start = B3_CHUNK_START;
		jobs[i].flags_end = B3_CHUNK_END;
	}
}

/*
 * CV of the subtree of 2^log2n whole chunks at @in: the chunks in lanes,
 * then each level of parents in lanes. Every level is written over the one
 * below it: hash_many() reads a job's input before writing its output and
 * job i only overwrites slot i, which jobs after it no longer read.
 */
static noinline void b3_hash_subtree(const struct uniqd_blake3_impl *impl,
			    const struct uniqd_blake3_hasher *h, const u8 *in,
			    unsigned int log2n, u32 cv[8])
{
	struct uniqd_blake3_job jobs[UNIQD_BLAKE3_MAX_LANES];
	u8 cvs[UNIQD_BLAKE3_MAX_LANES][UNIQD_BLAKE3_OUT_LEN];
	unsigned int n = 1U << log2n, i;

	b3_chunk_jobs(h, in, n, jobs);
	b3_hash_many(impl, jobs, n, h->key, cvs[0]);
	while (n > 1) {
		n /= 2;
		for (i = 0; i < n; i++) {
			jobs[i].in = cvs[2 * i];
			jobs[i].counter = 0;
			jobs[i].len = B3_BLOCK_LEN;
			jobs[i].flags = h->flags | B3_PARENT;
			jobs[i].flags_start = 0;
			jobs[i].flags_end = 0;
		}
		b3_hash_many(impl, jobs, n, h->key, cvs[0]);
	}
	b3_load_words(cv, cvs[0], 8);
}

/*
 * @n whole chunks at @in (at most the lanes, never the last chunk) in one
 * hash_many() call, their CVs then pushed one by one: for runs that do not
 * start a subtree as large as the lanes (a stream's tail of chunks, or an
 * update() that starts mid-way), which b3_hash_subtree() would cut into
 * small subtrees with most lanes idle.
 */
static noinline int b3_hash_run(const struct uniqd_blake3_impl *impl,
		       struct uniqd_blake3_hasher *h, u32 (*ext)[8],
		       unsigned int depth, const u8 *in, unsigned int n)
{
	struct uniqd_blake3_job jobs[UNIQD_BLAKE3_MAX_LANES];
	u8 cvs[UNIQD_BLAKE3_MAX_LANES][UNIQD_BLAKE3_OUT_LEN];
	unsigned int i;
	u32 cv[8];
	int ret = 0;

	b3_chunk_jobs(h, in, n, jobs);
	b3_hash_many(impl, jobs, n, h->key, cvs[0]);
	for (i = 0; !ret && i < n; i++) {
		b3_load_words(cv, cvs[i], 8);
		ret = b3_push_chunk_cv(impl, h, ext, depth, cv, 0);
	}
	return ret;
}

/*
 * Absorb @len bytes with a CV stack of @depth slots (the hasher's own plus,
 * beyond UNIQD_BLAKE3_STREAM_DEPTH, those in @ext). Fails up front, and
 * marks the hasher unusable, if the total would not fit.
 */
static int b3_absorb(const struct uniqd_blake3_impl *impl,
		     struct uniqd_blake3_hasher *h, u32 (*ext)[8],
		     unsigned int depth, const u8 *in, size_t len)
{
	u64 limit = UNIQD_BLAKE3_DEPTH_MAX_LEN(depth);
	u64 done;
	u32 cv[8];
	int ret;

	if (h->status)
		return b3_status_err(h);
	done = (u64)h->chunk_counter * B3_CHUNK_LEN + b3_chunk_len(h);
	if (len > limit - done) {
		h->status = B3_STATUS_OVERFLOW;
		return -EOVERFLOW;
	}

	while (len) {
		unsigned int have = b3_chunk_len(h);
		size_t take;

		if (have == B3_CHUNK_LEN) {
			/* Not the last chunk after all: finish it. */
			memcpy(cv, h->cv, B3_CV_BYTES);
			b3_compress_block(impl, cv, h->block,
					  h->chunk_counter,
					  h->flags | B3_CHUNK_END);
			ret = b3_push_chunk_cv(impl, h, ext, depth, cv, 0);
			if (ret)
				goto fail;
			memcpy(h->cv, h->key, B3_CV_BYTES);
			h->blocks_done = 0;
			h->block_len = 0;
			have = 0;
		}
		if (!have && len > B3_CHUNK_LEN) {
			unsigned int log2n = b3_subtree_log2(impl, h, len);
			size_t run = b3_min((len - 1) / B3_CHUNK_LEN,
					    b3_min(impl->lanes,
						   UNIQD_BLAKE3_MAX_LANES));

			if (run > 1U << log2n) {
				ret = b3_hash_run(impl, h, ext, depth, in, run);
				if (ret)
					goto fail;
				in += run * B3_CHUNK_LEN;
				len -= run * B3_CHUNK_LEN;
				continue;
			}
			b3_hash_subtree(impl, h, in, log2n, cv);
			ret = b3_push_chunk_cv(impl, h, ext, depth, cv, log2n);
			if (ret)
				goto fail;
			in += (size_t)B3_CHUNK_LEN << log2n;
			len -= (size_t)B3_CHUNK_LEN << log2n;
			continue;
		}
		take = b3_min(len, B3_CHUNK_LEN - have);
		b3_absorb_chunk(impl, h, in, take);
		in += take;
		len -= take;
	}
	return 0;

fail:
	h->status = B3_STATUS_OVERFLOW;
	return ret;
}

/*
 * Fold the CV stack, right to left, onto the current chunk and describe the
 * root node. Does not change the hasher, so output can be read repeatedly.
 */
static void b3_root_node(const struct uniqd_blake3_impl *impl,
			 const struct uniqd_blake3_hasher *h, u32 (*ext)[8],
			 struct b3_node *n)
{
	unsigned int i = b3_stack_len(h);
	u8 last[B3_BLOCK_LEN];
	u32 out[16];

	memcpy(last, h->block, h->block_len);
	memset(last + h->block_len, 0, B3_BLOCK_LEN - h->block_len);
	memcpy(n->cv, h->cv, B3_CV_BYTES);
	b3_load_words(n->m, last, 16);
	n->counter = h->chunk_counter;
	n->block_len = h->block_len;
	n->flags = h->flags | b3_start_flag(h) | B3_CHUNK_END;

	while (i--) {
		b3_compress(impl, out, n->cv, n->m, n->counter, n->block_len,
			    n->flags);
		memcpy(n->m, b3_slot_ro(h, ext, i), B3_CV_BYTES);
		memcpy(n->m + 8, out, B3_CV_BYTES);
		memcpy(n->cv, h->key, B3_CV_BYTES);
		n->counter = 0;
		n->block_len = B3_BLOCK_LEN;
		n->flags = h->flags | B3_PARENT;
	}
	memzero_explicit(last, sizeof(last));
}

/* Root output bytes [offset, offset + out_len). */
static void b3_output(const struct uniqd_blake3_impl *impl,
		      const struct b3_node *n, u64 offset, u8 *out,
		      size_t out_len)
{
	u64 counter = offset / B3_BLOCK_LEN;
	size_t pos = offset % B3_BLOCK_LEN;
	u8 buf[B3_BLOCK_LEN];
	u32 words[16];
	unsigned int i;

	while (out_len) {
		size_t take = b3_min(B3_BLOCK_LEN - pos, out_len);

		b3_compress(impl, words, n->cv, n->m, counter++, n->block_len,
			    n->flags | B3_ROOT);
		if (take == B3_BLOCK_LEN) {
			for (i = 0; i < 16; i++)
				b3_put_le32(out + 4 * i, words[i]);
		} else {
			for (i = 0; i < 16; i++)
				b3_put_le32(buf + 4 * i, words[i]);
			memcpy(out, buf + pos, take);
		}
		out += take;
		out_len -= take;
		pos = 0;
	}
}

/**
 * uniqd_blake3_init() - start a hash mode (unkeyed) computation
 * @h: hasher
 */
void uniqd_blake3_init(struct uniqd_blake3_hasher *h)
{
	b3_init_words(h, b3_iv, 0);
}

/**
 * uniqd_blake3_init_keyed() - start a keyed_hash mode computation
 * @h: hasher
 * @key: 32-byte key
 */
void uniqd_blake3_init_keyed(struct uniqd_blake3_hasher *h,
			     const u8 key[UNIQD_BLAKE3_KEY_LEN])
{
	u32 k[8];

	b3_load_words(k, key, 8);
	b3_init_words(h, k, B3_KEYED_HASH);
	memzero_explicit(k, sizeof(k));
}

/**
 * uniqd_blake3_init_derive_key() - start a derive_key mode computation
 * @h: hasher
 * @context: context string (any bytes; by convention hardcoded, unique and
 *	application specific)
 * @context_len: its length
 *
 * The key material is then fed with uniqd_blake3_update() or finup().
 *
 * Return: 0, or -EOVERFLOW if @context_len exceeds
 * UNIQD_BLAKE3_FINUP_MAX_LEN (the hasher is then unusable).
 */
int uniqd_blake3_init_derive_key(struct uniqd_blake3_hasher *h,
				 const void *context, size_t context_len)
{
	u8 context_key[UNIQD_BLAKE3_KEY_LEN];
	u32 k[8];
	int ret;

	b3_init_words(h, b3_iv, B3_DERIVE_KEY_CONTEXT);
	ret = uniqd_blake3_finup(h, context, context_len, context_key,
				 sizeof(context_key));
	if (ret)
		return ret;
	b3_load_words(k, context_key, 8);
	b3_init_words(h, k, B3_DERIVE_KEY_MATERIAL);
	memzero_explicit(k, sizeof(k));
	memzero_explicit(context_key, sizeof(context_key));
	return 0;
}

/**
 * uniqd_blake3_update() - absorb more input
 * @h: hasher
 * @data: input
 * @len: its length
 *
 * Any split of the input gives the same result.
 *
 * Return: 0; -EOVERFLOW if the total input would exceed
 * UNIQD_BLAKE3_STREAM_MAX_LEN (nothing of @data is absorbed and the hasher
 * is unusable until initialised again); -EINVAL if the hasher was consumed
 * by finup().
 */
int uniqd_blake3_update(struct uniqd_blake3_hasher *h, const void *data,
			size_t len)
{
	return uniqd_blake3_update_impl(uniqd_blake3_impl_default(), h, data,
					len);
}

/**
 * uniqd_blake3_update_impl() - uniqd_blake3_update() with @impl
 * @impl: implementation (the result does not depend on it)
 * @h: hasher
 * @data: input
 * @len: its length
 *
 * Return: as uniqd_blake3_update().
 */
int uniqd_blake3_update_impl(const struct uniqd_blake3_impl *impl,
			     struct uniqd_blake3_hasher *h, const void *data,
			     size_t len)
{
	return b3_absorb(impl, h, NULL, UNIQD_BLAKE3_STREAM_DEPTH, data, len);
}

/**
 * uniqd_blake3_update_ext() - update() with more CV slots than the hasher
 * @impl: implementation
 * @h: hasher
 * @ext: @ext_slots more CV slots (8 words each), owned by the caller
 *	with @h (their contents are part of the state: copy them with @h)
 * @ext_slots: how many; the total depth may not exceed what the chunk
 *	counter holds (31 in the kernel build: 2^32 - 1 chunks, 4 TiB)
 * @data: input
 * @len: its length
 *
 * For streaming users whose state is not bound to HASH_MAX_DESCSIZE (the
 * ahash). Read the output with uniqd_blake3_final_ext().
 *
 * Return: as uniqd_blake3_update(), with the larger bound.
 */
int uniqd_blake3_update_ext(const struct uniqd_blake3_impl *impl,
			    struct uniqd_blake3_hasher *h, u32 *ext,
			    unsigned int ext_slots, const void *data,
			    size_t len)
{
	unsigned int depth = UNIQD_BLAKE3_STREAM_DEPTH + ext_slots;

	if (depth > 8 * sizeof(h->chunk_counter) - 1)
		depth = 8 * sizeof(h->chunk_counter) - 1;
	if (depth > 54)		/* covers 2^64 bytes already */
		depth = 54;
	return b3_absorb(impl, h, (u32 (*)[8])ext, depth, data, len);
}

/**
 * uniqd_blake3_final_ext() - output of a hasher fed by update_ext()
 * @impl: implementation
 * @h: hasher, unchanged
 * @ext: its extra CV slots
 * @out: destination
 * @out_len: bytes to write
 *
 * Return: 0, or the error that made the hasher unusable.
 */
int uniqd_blake3_final_ext(const struct uniqd_blake3_impl *impl,
			   const struct uniqd_blake3_hasher *h, u32 *ext,
			   u8 *out, size_t out_len)
{
	struct b3_node n;

	if (h->status)
		return b3_status_err(h);
	b3_root_node(impl, h, (u32 (*)[8])ext, &n);
	b3_output(impl, &n, 0, out, out_len);
	memzero_explicit(&n, sizeof(n));
	return 0;
}

/**
 * uniqd_blake3_final_seek() - read extended output from any position
 * @h: hasher, unchanged: more output or more input may follow
 * @offset: position in the output stream
 * @out: destination
 * @out_len: bytes to write; any length
 *
 * Return: 0, or the error that made the hasher unusable.
 */
int uniqd_blake3_final_seek(const struct uniqd_blake3_hasher *h, u64 offset,
			    u8 *out, size_t out_len)
{
	return uniqd_blake3_final_seek_impl(uniqd_blake3_impl_default(), h,
					    offset, out, out_len);
}

/**
 * uniqd_blake3_final_seek_impl() - uniqd_blake3_final_seek() with @impl
 * @impl: implementation
 * @h: hasher, unchanged
 * @offset: position in the output stream
 * @out: destination
 * @out_len: bytes to write
 *
 * Return: as uniqd_blake3_final_seek().
 */
int uniqd_blake3_final_seek_impl(const struct uniqd_blake3_impl *impl,
				 const struct uniqd_blake3_hasher *h,
				 u64 offset, u8 *out, size_t out_len)
{
	struct b3_node n;

	if (h->status)
		return b3_status_err(h);
	b3_root_node(impl, h, NULL, &n);
	b3_output(impl, &n, offset, out, out_len);
	memzero_explicit(&n, sizeof(n));
	return 0;
}

/**
 * uniqd_blake3_final() - read the first @out_len bytes of output
 * @h: hasher, unchanged
 * @out: destination
 * @out_len: bytes to write; UNIQD_BLAKE3_OUT_LEN is the default digest
 *
 * Return: 0, or the error that made the hasher unusable.
 */
int uniqd_blake3_final(const struct uniqd_blake3_hasher *h, u8 *out,
		       size_t out_len)
{
	return uniqd_blake3_final_seek(h, 0, out, out_len);
}

/**
 * uniqd_blake3_finup_seek() - absorb the rest of the input and read output
 * @h: hasher; wiped and unusable afterwards
 * @data: last part of the input
 * @len: its length, up to UNIQD_BLAKE3_FINUP_MAX_LEN minus what @h has
 *	absorbed already (so any length the crypto API can pass)
 * @offset: position in the output stream
 * @out: destination
 * @out_len: bytes to write
 *
 * Unlike update(), this is not limited by the hasher's own CV stack: the
 * stack is extended on this function's frame for the duration of the call.
 *
 * Return: 0, -EOVERFLOW if the input is too long, or the error that had
 * already made the hasher unusable.
 */
int uniqd_blake3_finup_seek(struct uniqd_blake3_hasher *h, const void *data,
			    size_t len, u64 offset, u8 *out, size_t out_len)
{
	return uniqd_blake3_finup_seek_impl(uniqd_blake3_impl_default(), h,
					    data, len, offset, out, out_len);
}

/**
 * uniqd_blake3_finup_seek_impl() - uniqd_blake3_finup_seek() with @impl
 * @impl: implementation
 * @h: hasher; wiped and unusable afterwards
 * @data: last part of the input
 * @len: its length
 * @offset: position in the output stream
 * @out: destination
 * @out_len: bytes to write
 *
 * Return: as uniqd_blake3_finup_seek().
 */
noinline int uniqd_blake3_finup_seek_impl(const struct uniqd_blake3_impl *impl,
					  struct uniqd_blake3_hasher *h,
					  const void *data, size_t len,
					  u64 offset, u8 *out, size_t out_len)
{
	u32 ext[B3_EXT_DEPTH][8];
	struct b3_node n;
	u8 status;
	int ret;

	ret = b3_absorb(impl, h, ext, UNIQD_BLAKE3_FINUP_DEPTH, data, len);
	if (!ret) {
		b3_root_node(impl, h, ext, &n);
		b3_output(impl, &n, offset, out, out_len);
		memzero_explicit(&n, sizeof(n));
	}
	/* Slots in ext are only used past the streaming bound. */
	if ((u64)h->chunk_counter * B3_CHUNK_LEN >=
	    UNIQD_BLAKE3_STREAM_MAX_LEN)
		memzero_explicit(ext, sizeof(ext));
	status = h->status ? h->status : B3_STATUS_SPENT;
	memzero_explicit(h, sizeof(*h));
	h->status = status;
	return ret;
}

/**
 * uniqd_blake3_finup() - absorb the rest of the input and read the output
 * @h: hasher; wiped and unusable afterwards
 * @data: last part of the input
 * @len: its length
 * @out: destination
 * @out_len: bytes to write
 *
 * Return: as uniqd_blake3_finup_seek().
 */
int uniqd_blake3_finup(struct uniqd_blake3_hasher *h, const void *data,
		       size_t len, u8 *out, size_t out_len)
{
	return uniqd_blake3_finup_seek(h, data, len, 0, out, out_len);
}

/**
 * uniqd_blake3_hash() - one-shot hash or keyed_hash
 * @key: 32-byte key for keyed_hash mode, or NULL for hash mode
 * @data: input
 * @len: its length, up to UNIQD_BLAKE3_FINUP_MAX_LEN
 * @out: destination
 * @out_len: bytes of output
 *
 * Return: 0, or -EOVERFLOW if @len is too long.
 */
int uniqd_blake3_hash(const u8 *key, const void *data, size_t len, u8 *out,
		      size_t out_len)
{
	struct uniqd_blake3_hasher h;

	if (key)
		uniqd_blake3_init_keyed(&h, key);
	else
		uniqd_blake3_init(&h);
	return uniqd_blake3_finup(&h, data, len, out, out_len);
}

/**
 * uniqd_blake3_derive_key() - one-shot derive_key
 * @context: context string
 * @context_len: its length
 * @material: key material
 * @len: its length
 * @out: destination for the derived key
 * @out_len: bytes of output
 *
 * Return: 0, or -EOVERFLOW if an input is too long.
 */
int uniqd_blake3_derive_key(const void *context, size_t context_len,
			    const void *material, size_t len, u8 *out,
			    size_t out_len)
{
	struct uniqd_blake3_hasher h;
	int ret;

	ret = uniqd_blake3_init_derive_key(&h, context, context_len);
	if (!ret)
		ret = uniqd_blake3_finup(&h, material, len, out, out_len);
	memzero_explicit(&h, sizeof(h));
	return ret;
}

/**
 * uniqd_blake3_hash_many() - 32-byte hashes of many inputs at once
 * @impl: implementation, or NULL for uniqd_blake3_impl_default()
 * @key: 32-byte key for keyed_hash mode, or NULL for hash mode
 * @in: the inputs
 * @len: their lengths, each up to UNIQD_BLAKE3_FINUP_MAX_LEN
 * @n: number of inputs
 * @out: the 32 bytes at @out + 32 * i receive the hash of in[i]
 *
 * Inputs of one chunk or less (keys, typically) share the lanes, whatever
 * their lengths; longer ones are hashed one at a time, their chunks in
 * the lanes.
 *
 * Return: 0, or -EOVERFLOW if an input is too long (the outputs of the
 * other inputs are written all the same).
 */
int uniqd_blake3_hash_many(const struct uniqd_blake3_impl *impl,
			   const u8 *key, const void *const *in,
			   const size_t *len, size_t n, u8 *out)
{
	struct uniqd_blake3_job jobs[UNIQD_BLAKE3_MAX_LANES];
	unsigned int at[UNIQD_BLAKE3_MAX_LANES], nj = 0, lanes;
	u8 res[UNIQD_BLAKE3_MAX_LANES][UNIQD_BLAKE3_OUT_LEN];
	struct uniqd_blake3_hasher h;
	u32 k[8];
	size_t i;
	int ret = 0, err;

	if (!impl)
		impl = uniqd_blake3_impl_default();
	lanes = impl->lanes < UNIQD_BLAKE3_MAX_LANES ? impl->lanes :
		UNIQD_BLAKE3_MAX_LANES;
	if (key)
		b3_load_words(k, key, 8);
	else
		memcpy(k, b3_iv, sizeof(k));

	for (i = 0; i < n; i++) {
		if (len[i] > B3_CHUNK_LEN) {
			b3_init_words(&h, k, key ? B3_KEYED_HASH : 0);
			err = uniqd_blake3_finup_seek_impl(impl, &h, in[i],
							   len[i], 0,
							   out + B3_CV_BYTES * i,
							   UNIQD_BLAKE3_OUT_LEN);
			if (err)
				ret = err;
			continue;
		}
		jobs[nj].in = in[i];
		jobs[nj].counter = 0;
		jobs[nj].len = len[i];
		jobs[nj].flags = key ? B3_KEYED_HASH : 0;
		jobs[nj].flags_start = B3_CHUNK_START;
		jobs[nj].flags_end = B3_CHUNK_END | B3_ROOT;
		at[nj++] = i;
		if (nj == lanes) {
			b3_hash_many(impl, jobs, nj, k, res[0]);
			while (nj--)
				memcpy(out + B3_CV_BYTES * at[nj], res[nj],
				       B3_CV_BYTES);
			nj = 0;
		}
	}
	if (nj) {
		b3_hash_many(impl, jobs, nj, k, res[0]);
		while (nj--)
			memcpy(out + B3_CV_BYTES * at[nj], res[nj],
			       B3_CV_BYTES);
	}
	memzero_explicit(k, sizeof(k));
	memzero_explicit(res, sizeof(res));
	return ret;
}
