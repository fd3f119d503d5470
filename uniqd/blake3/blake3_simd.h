/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * BLAKE3's two primitives in GCC vector extensions, instantiated once per
 * instruction set by blake3_sse41.c, blake3_avx2.c and blake3_avx512.c:
 * each defines B3_ISA (the name suffix), B3_LANES (4, 8 or 16 words in a
 * vector) and, for AVX-512, B3_HAVE_ROR, and is compiled with the matching
 * -m flags. No <immintrin.h>: the same code builds in the kernel (which has
 * no such header) and in userspace. GCC turns the generic operators into
 * the instruction set's: 32-bit adds, xors, shifts or (AVX-512) vprord,
 * pshufb for the byte rotations, and two-source permutes for the shuffles.
 *
 * Everything here may use vector registers, so in the kernel it runs only
 * between kernel_fpu_begin() and kernel_fpu_end() (blake3_impl.c).
 *
 * - compress(): one block, the 4x4 state held as four row vectors; the
 *   diagonal step rotates rows 1-3 so that diagonals become columns.
 * - hash_many(): B3_LANES independent nodes at once, "transposed": state
 *   word i of every lane in one vector, so the rounds are the scalar ones
 *   with vectors for words. Full 64-byte blocks are loaded as rows and
 *   transposed in registers; short or absent blocks go through a zeroed
 *   staging block. Lanes whose node has fewer blocks keep their CV through
 *   a per-lane mask while the others go on.
 */
#include "blake3_impl.h"
#include "blake3_tables.h"

/*
 * sparse cannot parse vector extensions: it checks the rest of the module,
 * not these files.
 */
#if defined(UNIQD_BLAKE3_X86) && !defined(__CHECKER__)

#if !defined(B3_ISA) || !defined(B3_LANES)
#error "define B3_ISA and B3_LANES before including blake3_simd.h"
#endif

#define B3_PASTE_(a, b)	a##_##b
#define B3_PASTE(a, b)	B3_PASTE_(a, b)
#define B3_FN(name)	B3_PASTE(name, B3_ISA)

typedef u32 b3_v4 __attribute__((vector_size(16)));
typedef u8 b3_b16 __attribute__((vector_size(16)));
typedef u32 b3_vn __attribute__((vector_size(4 * B3_LANES)));
typedef u8 b3_bn __attribute__((vector_size(4 * B3_LANES)));
/* Unaligned loads: what _mm_loadu_si128() is, without the header. */
typedef u32 b3_v4_u __attribute__((vector_size(16), may_alias)) __aligned(1);
typedef u32 b3_vn_u
	__attribute__((vector_size(4 * B3_LANES), may_alias)) __aligned(1);

/* Byte masks of ror 16 and ror 8 within each 32-bit word. */
#define B3_R16_16	{ 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13 }
#define B3_R8_16	{ 1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8, 13, 14, 15, 12 }
#define B3_R16_32	{ 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13, \
			  18, 19, 16, 17, 22, 23, 20, 21, 26, 27, 24, 25,	\
			  30, 31, 28, 29 }
#define B3_R8_32	{ 1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8, 13, 14, 15, 12, \
			  17, 18, 19, 16, 21, 22, 23, 20, 25, 26, 27, 24,	\
			  29, 30, 31, 28 }

/*
 * Kernels built with -ftrivial-auto-var-init=zero (INIT_STACK_ALL_ZERO)
 * would zero the state and message arrays first, which keeps them out of
 * registers and more than doubles the frame; every one of them is fully
 * written before it is read.
 */
#if defined(__has_attribute) && __has_attribute(__uninitialized__)
#define B3_NOINIT	__attribute__((__uninitialized__))
#else
#define B3_NOINIT
#endif

#define B3_SHR_ROR(x, n)	(((x) >> (n)) | ((x) << (32 - (n))))

#ifdef B3_HAVE_ROR
/* AVX-512F/VL rotate any vector width in one instruction. */
#define B3_ROR16_4(x)	B3_SHR_ROR(x, 16)
#define B3_ROR8_4(x)	B3_SHR_ROR(x, 8)
#define B3_ROR16_N(x)	B3_SHR_ROR(x, 16)
#define B3_ROR8_N(x)	B3_SHR_ROR(x, 8)
#else
#define B3_ROR16_4(x)	((b3_v4)__builtin_shuffle((b3_b16)(x),		\
					(b3_b16)B3_R16_16))
#define B3_ROR8_4(x)	((b3_v4)__builtin_shuffle((b3_b16)(x),		\
					(b3_b16)B3_R8_16))
#if B3_LANES == 4
#define B3_ROR16_N(x)	B3_ROR16_4(x)
#define B3_ROR8_N(x)	B3_ROR8_4(x)
#elif B3_LANES == 8
#define B3_ROR16_N(x)	((b3_vn)__builtin_shuffle((b3_bn)(x),		\
					(b3_bn)B3_R16_32))
#define B3_ROR8_N(x)	((b3_vn)__builtin_shuffle((b3_bn)(x),		\
					(b3_bn)B3_R8_32))
#else
#error "16 lanes need B3_HAVE_ROR"
#endif
#endif

/* The quarter-round on vectors; R16 and R8 are the byte rotations. */
#define B3_VG(a, b, c, d, x, y, R16, R8)				\
	do {								\
		a = a + b + (x);					\
		d = R16(d ^ a);						\
		c = c + d;						\
		b = B3_SHR_ROR(b ^ c, 12);				\
		a = a + b + (y);					\
		d = R8(d ^ a);						\
		c = c + d;						\
		b = B3_SHR_ROR(b ^ c, 7);				\
	} while (0)

/* ---- one block, row by row --------------------------------------------- */

static __always_inline b3_v4 b3_msg4(const u32 *m, const u8 *s,
				     unsigned int i, unsigned int j,
				     unsigned int k, unsigned int l)
{
	b3_v4 v = { m[s[i]], m[s[j]], m[s[k]], m[s[l]] };

	return v;
}

/* Lane rotations of the rows: by one, two and three words. */
#define B3_ROT1		{ 1, 2, 3, 0 }
#define B3_ROT2		{ 2, 3, 0, 1 }
#define B3_ROT3		{ 3, 0, 1, 2 }

#define B3_ROW_ROUND(a, b, c, d, m, r)					\
	do {								\
		const u8 *s_ = b3_schedule[r];				\
									\
		B3_VG(a, b, c, d, b3_msg4(m, s_, 0, 2, 4, 6),		\
		      b3_msg4(m, s_, 1, 3, 5, 7), B3_ROR16_4, B3_ROR8_4);\
		b = __builtin_shuffle(b, (b3_v4)B3_ROT1);	\
		c = __builtin_shuffle(c, (b3_v4)B3_ROT2);	\
		d = __builtin_shuffle(d, (b3_v4)B3_ROT3);	\
		B3_VG(a, b, c, d, b3_msg4(m, s_, 8, 10, 12, 14),	\
		      b3_msg4(m, s_, 9, 11, 13, 15), B3_ROR16_4, B3_ROR8_4);\
		b = __builtin_shuffle(b, (b3_v4)B3_ROT3);	\
		c = __builtin_shuffle(c, (b3_v4)B3_ROT2);	\
		d = __builtin_shuffle(d, (b3_v4)B3_ROT1);	\
	} while (0)

void B3_FN(uniqd_blake3_compress)(u32 out[16], const u32 cv[8],
				  const u32 m[16], u64 counter,
				  u32 block_len, u32 flags)
{
	b3_v4 cv_lo = *(const b3_v4_u *)cv;
	b3_v4 cv_hi = *(const b3_v4_u *)(cv + 4);
	b3_v4 a = cv_lo, b = cv_hi;
	b3_v4 c = { b3_iv[0], b3_iv[1], b3_iv[2], b3_iv[3] };
	b3_v4 d = { (u32)counter, (u32)(counter >> 32), block_len, flags };

	B3_ROW_ROUND(a, b, c, d, m, 0);
	B3_ROW_ROUND(a, b, c, d, m, 1);
	B3_ROW_ROUND(a, b, c, d, m, 2);
	B3_ROW_ROUND(a, b, c, d, m, 3);
	B3_ROW_ROUND(a, b, c, d, m, 4);
	B3_ROW_ROUND(a, b, c, d, m, 5);
	B3_ROW_ROUND(a, b, c, d, m, 6);

	*(b3_v4_u *)out = a ^ c;
	*(b3_v4_u *)(out + 4) = b ^ d;
	*(b3_v4_u *)(out + 8) = c ^ cv_lo;
	*(b3_v4_u *)(out + 12) = d ^ cv_hi;
}

/* ---- B3_LANES nodes at once, transposed -------------------------------- */

/*
 * Shuffle masks of the in-register transpose: stage @b swaps, for every
 * pair of rows (i, i + b) with bit b of i clear, the elements at positions
 * with bit b set in row i with those with it clear in row i + b. After the
 * stages b = LANES/2 .. 1, row j holds what was column j.
 */
#define B3_TLO(b, j)	(((j) & (b)) ? B3_LANES + (j) - (b) : (j))
#define B3_THI(b, j)	(((j) & (b)) ? B3_LANES + (j) : (j) + (b))
#define B3_L4(F, b)	{ F(b, 0), F(b, 1), F(b, 2), F(b, 3) }
#define B3_L8(F, b)	{ F(b, 0), F(b, 1), F(b, 2), F(b, 3), F(b, 4),	\
			  F(b, 5), F(b, 6), F(b, 7) }
#define B3_L16(F, b)	{ F(b, 0), F(b, 1), F(b, 2), F(b, 3), F(b, 4),	\
			  F(b, 5), F(b, 6), F(b, 7), F(b, 8), F(b, 9),	\
			  F(b, 10), F(b, 11), F(b, 12), F(b, 13),	\
			  F(b, 14), F(b, 15) }
#if B3_LANES == 4
#define B3_LIST(F, b)	B3_L4(F, b)
#elif B3_LANES == 8
#define B3_LIST(F, b)	B3_L8(F, b)
#else
#define B3_LIST(F, b)	B3_L16(F, b)
#endif

#define B3_TSTAGE(r, b)							\
	do {								\
		unsigned int i_;					\
									\
		_Pragma("GCC unroll 16")				\
		for (i_ = 0; i_ < B3_LANES; i_++) {			\
			b3_vn lo_, hi_;					\
									\
			if (i_ & (b))					\
				continue;				\
			lo_ = r[i_];					\
			hi_ = r[i_ + (b)];				\
			r[i_] = __builtin_shuffle(lo_, hi_,		\
				(b3_vn)B3_LIST(B3_TLO, b));		\
			r[i_ + (b)] = __builtin_shuffle(lo_, hi_,	\
				(b3_vn)B3_LIST(B3_THI, b));		\
		}							\
	} while (0)

static __always_inline void b3_transpose(b3_vn r[B3_LANES])
{
#if B3_LANES >= 16
	B3_TSTAGE(r, 8);
#endif
#if B3_LANES >= 8
	B3_TSTAGE(r, 4);
#endif
	B3_TSTAGE(r, 2);
	B3_TSTAGE(r, 1);
}

#define B3_LANE_ROUND(v, m, r)						\
	do {								\
		const u8 *s_ = b3_schedule[r];				\
									\
		B3_VG(v[0], v[4], v[8], v[12], m[s_[0]], m[s_[1]],	\
		      B3_ROR16_N, B3_ROR8_N);				\
		B3_VG(v[1], v[5], v[9], v[13], m[s_[2]], m[s_[3]],	\
		      B3_ROR16_N, B3_ROR8_N);				\
		B3_VG(v[2], v[6], v[10], v[14], m[s_[4]], m[s_[5]],	\
		      B3_ROR16_N, B3_ROR8_N);				\
		B3_VG(v[3], v[7], v[11], v[15], m[s_[6]], m[s_[7]],	\
		      B3_ROR16_N, B3_ROR8_N);				\
		B3_VG(v[0], v[5], v[10], v[15], m[s_[8]], m[s_[9]],	\
		      B3_ROR16_N, B3_ROR8_N);				\
		B3_VG(v[1], v[6], v[11], v[12], m[s_[10]], m[s_[11]],	\
		      B3_ROR16_N, B3_ROR8_N);				\
		B3_VG(v[2], v[7], v[8], v[13], m[s_[12]], m[s_[13]],	\
		      B3_ROR16_N, B3_ROR8_N);				\
		B3_VG(v[3], v[4], v[9], v[14], m[s_[14]], m[s_[15]],	\
		      B3_ROR16_N, B3_ROR8_N);				\
	} while (0)

/*
 * Per-lane inputs of one block step, staged as words. Every loop over
 * state words below is unrolled on purpose: GCC would otherwise turn a
 * copy loop into memcpy() and keep the whole state in memory.
 */
struct b3_step {
	u32 ctr_lo[B3_LANES];
	u32 ctr_hi[B3_LANES];
	u32 blen[B3_LANES];
	u32 flags[B3_LANES];
	u32 active[B3_LANES];
};

/*
 * The message words of step @blk: each lane's 64-byte block copied to its
 * row of @rows (zero-padded when short, zero when the lane has no block
 * left), then each group of B3_LANES rows loaded as vectors and transposed
 * so that m[w] holds word w of every lane. Going through @rows costs one
 * 64-byte copy a lane but keeps every vector index a constant, so the
 * state and message stay in registers (and the kernel's frame small).
 */
static __always_inline void
b3_load_msg(b3_vn m[16], u8 (*rows)[UNIQD_BLAKE3_BLOCK_LEN],
	    const struct uniqd_blake3_job *jobs,
	    const unsigned int nblocks[B3_LANES], unsigned int blk)
{
	u32 off = blk * UNIQD_BLAKE3_BLOCK_LEN;
	b3_vn r[B3_LANES] B3_NOINIT;
	unsigned int g, l;

	for (l = 0; l < B3_LANES; l++) {
		if (blk < nblocks[l] &&
		    jobs[l].len - off >= UNIQD_BLAKE3_BLOCK_LEN) {
			memcpy(rows[l], jobs[l].in + off,
			       UNIQD_BLAKE3_BLOCK_LEN);
			continue;
		}
		memset(rows[l], 0, UNIQD_BLAKE3_BLOCK_LEN);
		if (blk < nblocks[l] && jobs[l].len > off)
			memcpy(rows[l], jobs[l].in + off, jobs[l].len - off);
	}
	_Pragma("GCC unroll 4")
	for (g = 0; g < 16 / B3_LANES; g++) {
		_Pragma("GCC unroll 16")
		for (l = 0; l < B3_LANES; l++)
			r[l] = *(const b3_vn_u *)(rows[l] + 4 * B3_LANES * g);
		b3_transpose(r);
		_Pragma("GCC unroll 16")
		for (l = 0; l < B3_LANES; l++)
			m[g * B3_LANES + l] = r[l];
	}
}

/*
 * Back to one CV per lane: the 8 state vectors transposed in groups of
 * B3_LANES (zero rows fill the group when there are 16 lanes), so that
 * row l of group g holds words g * B3_LANES .. of lane l's CV.
 */
typedef u32 b3_v8_u __attribute__((vector_size(32), may_alias)) __aligned(1);

static __always_inline void
b3_store_cvs(const b3_vn h[8], unsigned int n, u8 *out)
{
	b3_vn r[B3_LANES] B3_NOINIT;
	unsigned int g, l;

	_Pragma("GCC unroll 2")
	for (g = 0; g < (8 + B3_LANES - 1) / B3_LANES; g++) {
		_Pragma("GCC unroll 16")
		for (l = 0; l < B3_LANES; l++)
			r[l] = g * B3_LANES + l < 8 ? h[g * B3_LANES + l] :
						     (b3_vn){ 0 };
		b3_transpose(r);
		_Pragma("GCC unroll 16")
		for (l = 0; l < B3_LANES; l++) {
			if (l >= n)
				break;
#if B3_LANES == 16
			*(b3_v8_u *)(out + 32 * l) = (b3_v8_u){ r[l][0], r[l][1],
				r[l][2], r[l][3], r[l][4], r[l][5], r[l][6],
				r[l][7] };
#elif B3_LANES == 8
			*(b3_v8_u *)(out + 32 * l) = r[l];
#else
			*(b3_vn_u *)(out + 32 * l + 16 * g) = r[l];
#endif
		}
	}
}

void B3_FN(uniqd_blake3_hash_many)(const struct uniqd_blake3_job *jobs,
				   unsigned int n, const u32 key[8], u8 *out)
{
	unsigned int nblocks[B3_LANES], maxb = 0, blk, l, w;
	u8 rows[B3_LANES][UNIQD_BLAKE3_BLOCK_LEN] B3_NOINIT;
	b3_vn h[8] B3_NOINIT, m[16] B3_NOINIT, v[16] B3_NOINIT, act;
	struct b3_step st B3_NOINIT;

	if (n > B3_LANES)
		n = B3_LANES;
	for (l = 0; l < B3_LANES; l++) {
		nblocks[l] = 0;
		if (l >= n)
			continue;
		nblocks[l] = jobs[l].len ?
			     (jobs[l].len + UNIQD_BLAKE3_BLOCK_LEN - 1) /
			     UNIQD_BLAKE3_BLOCK_LEN : 1;
		if (nblocks[l] > maxb)
			maxb = nblocks[l];
	}
	_Pragma("GCC unroll 8")
	for (w = 0; w < 8; w++)
		h[w] = (b3_vn){ 0 } + key[w];

	for (blk = 0; blk < maxb; blk++) {
		u32 off = blk * UNIQD_BLAKE3_BLOCK_LEN;

		for (l = 0; l < B3_LANES; l++) {
			const struct uniqd_blake3_job *j;
			u32 f;

			if (blk >= nblocks[l]) {
				st.blen[l] = 0;
				st.flags[l] = 0;
				st.ctr_lo[l] = 0;
				st.ctr_hi[l] = 0;
				st.active[l] = 0;
				continue;
			}
			j = &jobs[l];
			f = j->flags;
			if (!blk)
				f |= j->flags_start;
			if (blk + 1 == nblocks[l])
				f |= j->flags_end;
			st.blen[l] = j->len - off < UNIQD_BLAKE3_BLOCK_LEN ?
				     j->len - off : UNIQD_BLAKE3_BLOCK_LEN;
			st.flags[l] = f;
			st.ctr_lo[l] = (u32)j->counter;
			st.ctr_hi[l] = (u32)(j->counter >> 32);
			st.active[l] = ~0U;
		}
		b3_load_msg(m, rows, jobs, nblocks, blk);

		_Pragma("GCC unroll 8")
		for (w = 0; w < 8; w++)
			v[w] = h[w];
		_Pragma("GCC unroll 8")
		for (w = 0; w < 4; w++)
			v[w + 8] = (b3_vn){ 0 } + b3_iv[w];
		v[12] = *(const b3_vn_u *)st.ctr_lo;
		v[13] = *(const b3_vn_u *)st.ctr_hi;
		v[14] = *(const b3_vn_u *)st.blen;
		v[15] = *(const b3_vn_u *)st.flags;
		act = *(const b3_vn_u *)st.active;

		B3_LANE_ROUND(v, m, 0);
		B3_LANE_ROUND(v, m, 1);
		B3_LANE_ROUND(v, m, 2);
		B3_LANE_ROUND(v, m, 3);
		B3_LANE_ROUND(v, m, 4);
		B3_LANE_ROUND(v, m, 5);
		B3_LANE_ROUND(v, m, 6);

		_Pragma("GCC unroll 8")
		for (w = 0; w < 8; w++)
			h[w] = ((v[w] ^ v[w + 8]) & act) | (h[w] & ~act);
	}

	b3_store_cvs(h, n, out);
	memzero_explicit(rows, sizeof(rows));
}

#endif /* UNIQD_BLAKE3_X86 */
