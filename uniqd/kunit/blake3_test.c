// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: BLAKE3 through the kernel crypto API, as uniqd.ko registered it
 * ("blake3", one driver per implementation the CPU can run: generic and,
 * on x86-64, sse41, avx2, avx512): every official test vector in hash and
 * keyed_hash mode through every driver, one-shot, streamed in uneven
 * pieces and with finup(); "blake3" is the best driver; setkey,
 * export/import and the streaming bound. Then hash.c,
 * which derives the table keys and DIGEST from it.
 *
 * blake3_vectors.h is tests/blake3_vectors.h (tools/b3sum/gen_vectors.py's
 * output for tests/data/blake3_test_vectors.json), which
 * tools/build-module.sh puts beside this file in the build's copy.
 */
#include <crypto/hash.h>
#include <kunit/test.h>
#include <linux/err.h>
#include <linux/hex.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#ifdef CONFIG_X86_64
#include <asm/cpufeature.h>
#include <asm/fpu/api.h>
#endif

#include "../blake3/blake3.h"
#include "blake3_vectors.h"
#include "hash.h"

/* Input byte i of every vector is i % 251; long enough for every case here. */
#define UK_INPUT_LEN	(320 * 1024)
static u8 *uk_input;

static int uk_blake3_suite_init(struct kunit_suite *suite)
{
	size_t i;

	uk_input = vmalloc(UK_INPUT_LEN);
	if (!uk_input)
		return -ENOMEM;
	for (i = 0; i < UK_INPUT_LEN; i++)
		uk_input[i] = i % 251;
	return 0;
}

static void uk_blake3_suite_exit(struct kunit_suite *suite)
{
	vfree(uk_input);
	uk_input = NULL;
}

static void uk_free_tfm(void *tfm)
{
	crypto_free_shash(tfm);
}

/*
 * uniqd's drivers, slowest first, and whether this CPU runs each: the
 * same questions blake3_impl.c asks, asked again here so that a driver
 * missing for no reason fails the test.
 */
static const char *const uk_drivers[] = {
	"blake3-uniqd-generic",
#ifdef CONFIG_X86_64
	"blake3-uniqd-sse41",
	"blake3-uniqd-avx2",
	"blake3-uniqd-avx512",
#endif
};

static bool uk_cpu_runs(unsigned int i)
{
#ifdef CONFIG_X86_64
	switch (i) {
	case 1:
		return boot_cpu_has(X86_FEATURE_XMM4_1) &&
		       boot_cpu_has(X86_FEATURE_SSSE3);
	case 2:
		return boot_cpu_has(X86_FEATURE_AVX2) &&
		       cpu_has_xfeatures(XFEATURE_MASK_SSE | XFEATURE_MASK_YMM,
					 NULL);
	case 3:
		return boot_cpu_has(X86_FEATURE_AVX512F) &&
		       boot_cpu_has(X86_FEATURE_AVX512VL) &&
		       cpu_has_xfeatures(XFEATURE_MASK_SSE | XFEATURE_MASK_YMM |
					 XFEATURE_MASK_AVX512, NULL);
	}
#endif
	return i == 0;
}

/* A tfm of @alg freed when the test ends; keyed with the vectors' key. */
static struct crypto_shash *uk_tfm_of(struct kunit *test, const char *alg,
				      bool keyed)
{
	struct crypto_shash *tfm = crypto_alloc_shash(alg, 0, 0);

	KUNIT_ASSERT_NOT_ERR_OR_NULL_MSG(test, tfm,
					 "is uniqd.ko loaded? (%d)",
					 PTR_ERR_OR_ZERO(tfm));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, uk_free_tfm, tfm),
			0);
	if (keyed)
		KUNIT_ASSERT_EQ(test, crypto_shash_setkey(tfm, BLAKE3_VECTOR_KEY,
							  32), 0);
	return tfm;
}

static struct crypto_shash *uk_tfm(struct kunit *test, bool keyed)
{
	return uk_tfm_of(test, "blake3", keyed);
}

static void uk_unhex(struct kunit *test, const char *hex, u8 out[32])
{
	KUNIT_ASSERT_EQ(test, strlen(hex), 64UL);
	KUNIT_ASSERT_EQ(test, hex2bin(out, hex, 32), 0);
}

/* The first 8 bytes of a digest as a little-endian number. */
static u64 uk_le64(const u8 *p)
{
	__le64 v;

	memcpy(&v, p, sizeof(v));
	return le64_to_cpu(v);
}

static void uk_vector_desc(const struct blake3_vector *v, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "len %u", v->input_len);
}

KUNIT_ARRAY_PARAM(uk_vector, blake3_vectors, uk_vector_desc);

/* Digest of uk_input[0..len) three ways, each compared with @want. */
static void uk_check_digest(struct kunit *test, struct crypto_shash *tfm,
			    size_t len, const u8 want[32])
{
	static const unsigned int pieces[] = { 1, 63, 64, 65, 1023, 1024, 1025,
					       4096, 7 };
	SHASH_DESC_ON_STACK(desc, tfm);
	size_t pos, n, half = len / 2;
	unsigned int i;
	u8 out[32];

	memset(out, 0, sizeof(out));
	KUNIT_ASSERT_EQ(test, crypto_shash_tfm_digest(tfm, uk_input, len, out), 0);
	KUNIT_EXPECT_MEMEQ_MSG(test, out, want, 32, "digest(), len %zu", len);

	/* Streamed in uneven pieces, across block and chunk boundaries. */
	desc->tfm = tfm;
	memset(out, 0, sizeof(out));
	KUNIT_ASSERT_EQ(test, crypto_shash_init(desc), 0);
	for (pos = 0, i = 0; pos < len; pos += n, i++) {
		n = min_t(size_t, pieces[i % ARRAY_SIZE(pieces)], len - pos);
		KUNIT_ASSERT_EQ(test, crypto_shash_update(desc, uk_input + pos, n),
				0);
	}
	KUNIT_ASSERT_EQ(test, crypto_shash_final(desc, out), 0);
	KUNIT_EXPECT_MEMEQ_MSG(test, out, want, 32, "update()s, len %zu", len);

	memset(out, 0, sizeof(out));
	KUNIT_ASSERT_EQ(test, crypto_shash_init(desc), 0);
	KUNIT_ASSERT_EQ(test, crypto_shash_update(desc, uk_input, half), 0);
	KUNIT_ASSERT_EQ(test, crypto_shash_finup(desc, uk_input + half,
						 len - half, out), 0);
	KUNIT_EXPECT_MEMEQ_MSG(test, out, want, 32, "finup(), len %zu", len);
	shash_desc_zero(desc);
}

/* The vector through every driver this CPU runs. */
static void uk_check_drivers(struct kunit *test,
			     const struct blake3_vector *v, bool keyed)
{
	struct crypto_shash *tfm;
	unsigned int i;
	u8 want[32];

	uk_unhex(test, keyed ? v->keyed_hash : v->hash, want);
	for (i = 0; i < ARRAY_SIZE(uk_drivers); i++) {
		if (!uk_cpu_runs(i))
			continue;
		tfm = uk_tfm_of(test, uk_drivers[i], keyed);
		uk_check_digest(test, tfm, v->input_len, want);
	}
}

static void blake3_hash_vectors(struct kunit *test)
{
	uk_check_drivers(test, test->param_value, false);
}

static void blake3_keyed_vectors(struct kunit *test)
{
	uk_check_drivers(test, test->param_value, true);
}

/*
 * Every driver this CPU runs is registered and no other; "blake3" is the
 * best of them.
 */
static void blake3_drivers(struct kunit *test)
{
	struct crypto_shash *tfm;
	unsigned int i, best = 0;

	for (i = 0; i < ARRAY_SIZE(uk_drivers); i++) {
		tfm = crypto_alloc_shash(uk_drivers[i], 0, 0);
		if (uk_cpu_runs(i)) {
			best = i;
			KUNIT_EXPECT_FALSE_MSG(test, IS_ERR(tfm), "%s: %ld",
					       uk_drivers[i], PTR_ERR(tfm));
		} else {
			KUNIT_EXPECT_EQ_MSG(test, PTR_ERR_OR_ZERO(tfm),
					    (long)-ENOENT, "%s",
					    uk_drivers[i]);
		}
		if (!IS_ERR(tfm))
			crypto_free_shash(tfm);
	}
	tfm = uk_tfm(test, false);
	KUNIT_EXPECT_STREQ(test, crypto_shash_driver_name(tfm),
			   uk_drivers[best]);
}

/* What the crypto API found is uniqd.ko's shash, with the right shape. */
static void blake3_registered(struct kunit *test)
{
	struct crypto_shash *tfm = uk_tfm(test, false);
	struct module *owner = crypto_shash_alg(tfm)->base.cra_module;

	KUNIT_EXPECT_STREQ(test, crypto_shash_alg_name(tfm), "blake3");
	KUNIT_ASSERT_NOT_NULL(test, owner);
	KUNIT_EXPECT_STREQ(test, module_name(owner), "uniqd");
	KUNIT_EXPECT_EQ(test, crypto_shash_digestsize(tfm), 32U);
	KUNIT_EXPECT_EQ(test, crypto_shash_blocksize(tfm), 64U);
	KUNIT_EXPECT_LE(test, crypto_shash_descsize(tfm) + sizeof(struct shash_desc),
			HASH_MAX_DESCSIZE);
	KUNIT_EXPECT_EQ(test, ARRAY_SIZE(blake3_vectors), 35UL);
}

/* Only 32-byte keys; a refused key leaves the tfm as it was. */
static void blake3_setkey(struct kunit *test)
{
	static const u8 long_key[33] __nonstring =
		"whats the Elvish word for friend!";
	struct crypto_shash *tfm = uk_tfm(test, false);
	u8 want[32], out[32];

	KUNIT_EXPECT_EQ(test, crypto_shash_setkey(tfm, long_key, 31), -EINVAL);
	KUNIT_EXPECT_EQ(test, crypto_shash_setkey(tfm, long_key, 33), -EINVAL);
	KUNIT_EXPECT_EQ(test, crypto_shash_setkey(tfm, long_key, 0), -EINVAL);
	uk_unhex(test, blake3_vectors[0].hash, want);
	KUNIT_ASSERT_EQ(test, crypto_shash_tfm_digest(tfm, uk_input, 0, out), 0);
	KUNIT_EXPECT_MEMEQ(test, out, want, 32);

	KUNIT_ASSERT_EQ(test, crypto_shash_setkey(tfm, long_key, 32), 0);
	uk_unhex(test, blake3_vectors[0].keyed_hash, want);
	KUNIT_ASSERT_EQ(test, crypto_shash_tfm_digest(tfm, uk_input, 0, out), 0);
	KUNIT_EXPECT_MEMEQ(test, out, want, 32);
}

/* The state exported mid-stream and imported elsewhere goes on the same. */
static void blake3_export_import(struct kunit *test)
{
	const struct blake3_vector *v = &blake3_vectors[ARRAY_SIZE(blake3_vectors) - 1];
	struct crypto_shash *tfm = uk_tfm(test, true);
	SHASH_DESC_ON_STACK(desc, tfm);
	u8 want[32], out[32];
	void *state;

	state = kunit_kzalloc(test, crypto_shash_statesize(tfm), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, state);
	uk_unhex(test, v->keyed_hash, want);
	desc->tfm = tfm;
	KUNIT_ASSERT_EQ(test, crypto_shash_init(desc), 0);
	KUNIT_ASSERT_EQ(test, crypto_shash_update(desc, uk_input, 5000), 0);
	KUNIT_ASSERT_EQ(test, crypto_shash_export(desc, state), 0);
	/* Whatever the descriptor did meanwhile, the import replaces it. */
	KUNIT_ASSERT_EQ(test, crypto_shash_update(desc, uk_input, 777), 0);
	KUNIT_ASSERT_EQ(test, crypto_shash_import(desc, state), 0);
	KUNIT_ASSERT_EQ(test, crypto_shash_finup(desc, uk_input + 5000,
						 v->input_len - 5000, out), 0);
	KUNIT_EXPECT_MEMEQ(test, out, want, 32);
	shash_desc_zero(desc);
}

/*
 * update() streams UNIQD_BLAKE3_STREAM_MAX_LEN bytes in total and refuses
 * more with -EOVERFLOW; finup() after a full stream still takes more, and
 * agrees with the one-shot digest.
 */
static void blake3_stream_limit(struct kunit *test)
{
	const size_t max = UNIQD_BLAKE3_STREAM_MAX_LEN;
	struct crypto_shash *tfm = uk_tfm(test, false);
	SHASH_DESC_ON_STACK(desc, tfm);
	u8 want[32], out[32];
	size_t pos;

	KUNIT_ASSERT_EQ(test, max, 261120UL);
	KUNIT_ASSERT_LE(test, max + 4096, (size_t)UK_INPUT_LEN);
	desc->tfm = tfm;
	KUNIT_ASSERT_EQ(test, crypto_shash_init(desc), 0);
	for (pos = 0; pos < max; pos += 4096)
		KUNIT_ASSERT_EQ(test, crypto_shash_update(desc, uk_input + pos,
							  min_t(size_t, 4096, max - pos)), 0);
	KUNIT_EXPECT_EQ(test, crypto_shash_update(desc, uk_input + max, 1),
			-EOVERFLOW);

	KUNIT_ASSERT_EQ(test, crypto_shash_tfm_digest(tfm, uk_input, max + 4096,
						      want), 0);
	KUNIT_ASSERT_EQ(test, crypto_shash_init(desc), 0);
	KUNIT_ASSERT_EQ(test, crypto_shash_update(desc, uk_input, max), 0);
	KUNIT_ASSERT_EQ(test, crypto_shash_finup(desc, uk_input + max, 4096, out),
			0);
	KUNIT_EXPECT_MEMEQ(test, out, want, 32);
	shash_desc_zero(desc);
}

static struct kunit_case uniqd_blake3_cases[] = {
	KUNIT_CASE(blake3_registered),
	KUNIT_CASE(blake3_drivers),
	KUNIT_CASE_PARAM(blake3_hash_vectors, uk_vector_gen_params),
	KUNIT_CASE_PARAM(blake3_keyed_vectors, uk_vector_gen_params),
	KUNIT_CASE(blake3_setkey),
	KUNIT_CASE(blake3_export_import),
	KUNIT_CASE(blake3_stream_limit),
	{}
};

static struct kunit_suite uniqd_blake3_suite = {
	.name = "uniqd_blake3",
	.suite_init = uk_blake3_suite_init,
	.suite_exit = uk_blake3_suite_exit,
	.test_cases = uniqd_blake3_cases,
};

/* ---- hash.c: table keys and DIGEST -------------------------------------- */

static void uk_free_hash_tfm(void *tfm)
{
	uniqd_hash_tfm_free(tfm);
}

static struct crypto_shash *uk_hash_tfm(struct kunit *test, bool keyed)
{
	struct crypto_shash *tfm;

	tfm = keyed ? uniqd_hash_tfm_keyed() : uniqd_hash_tfm_plain();
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, tfm);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, uk_free_hash_tfm,
							tfm), 0);
	return tfm;
}

static void hash_check(struct kunit *test)
{
	struct crypto_shash *tfm = uk_hash_tfm(test, false);
	u8 want[32], out[32];

	KUNIT_EXPECT_EQ(test, uniqd_hash_check(), 0);
	/* The plain tfm is BLAKE3's hash mode. */
	uk_unhex(test, blake3_vectors[5].hash, want);
	KUNIT_ASSERT_EQ(test, crypto_shash_tfm_digest(tfm, uk_input,
						      blake3_vectors[5].input_len,
						      out), 0);
	KUNIT_EXPECT_MEMEQ(test, out, want, 32);
}

/* A table key is the first 8 bytes (LE) of the pool-keyed BLAKE3. */
static void hash_hash_is_keyed_prefix(struct kunit *test)
{
	struct crypto_shash *k1 = uk_hash_tfm(test, true);
	struct crypto_shash *k2 = uk_hash_tfm(test, true);
	static const u32 lens[] = { 0, 1, 64, 1025, 70000 };
	unsigned int i;
	u64 h1, h2;
	u8 out[32];

	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		KUNIT_ASSERT_EQ(test, uniqd_hash_64(k1, uk_input, lens[i], &h1),
				0);
		KUNIT_ASSERT_EQ(test, crypto_shash_tfm_digest(k1, uk_input,
							      lens[i], out), 0);
		KUNIT_EXPECT_EQ(test, h1, uk_le64(out));
		/* Each pool has its own random key. */
		KUNIT_ASSERT_EQ(test, uniqd_hash_64(k2, uk_input, lens[i], &h2),
				0);
		KUNIT_EXPECT_NE(test, h1, h2);
		/* Not the unkeyed hash either. */
		uk_unhex(test, blake3_vectors[0].hash, out);
		KUNIT_EXPECT_NE(test, h1, uk_le64(out));
	}
}

/* DIGEST = BLAKE3(le32(name_len) || name || content), contents of any size. */
static void hash_digest_layout(struct kunit *test)
{
	static const u32 lens[] = { 0, 5, 1024, 300000 };
	struct crypto_shash *tfm = uk_hash_tfm(test, false);
	static const char name[] = "c-identifiers";
	const u32 nl = sizeof(name) - 1;
	u8 want[32], out[32];
	unsigned int i;
	__le32 le;
	u8 *buf;

	buf = kunit_kmalloc(test, 4 + nl + 300000, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		le = cpu_to_le32(nl);
		memcpy(buf, &le, sizeof(le));
		memcpy(buf + 4, name, nl);
		memcpy(buf + 4 + nl, uk_input, lens[i]);
		KUNIT_ASSERT_EQ(test, crypto_shash_tfm_digest(tfm, buf,
							      4 + nl + lens[i],
							      want), 0);
		KUNIT_ASSERT_EQ(test, uniqd_hash_digest(tfm, name, nl, uk_input,
							lens[i], out), 0);
		KUNIT_EXPECT_MEMEQ_MSG(test, out, want, 32, "content of %u",
				       lens[i]);
	}
}

static struct kunit_case uniqd_hash_cases[] = {
	KUNIT_CASE(hash_check),
	KUNIT_CASE(hash_hash_is_keyed_prefix),
	KUNIT_CASE(hash_digest_layout),
	{}
};

static struct kunit_suite uniqd_hash_suite = {
	.name = "uniqd_hash",
	.suite_init = uk_blake3_suite_init,
	.suite_exit = uk_blake3_suite_exit,
	.test_cases = uniqd_hash_cases,
};

kunit_test_suites(&uniqd_blake3_suite, &uniqd_hash_suite);
