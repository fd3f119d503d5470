// SPDX-License-Identifier: GPL-2.0
/*
 * BLAKE3 as a kernel crypto API shash: cra_name "blake3", one driver per
 * implementation this CPU can run ("blake3-uniqd-generic" always, then
 * "-sse41", "-avx2", "-avx512", each with a higher priority, as
 * sha256-generic and sha256-avx2 do), 32-byte digest. Without a key it is BLAKE3's hash
 * mode; setkey() with exactly 32 bytes selects keyed_hash mode. The
 * descriptor holds a struct uniqd_blake3_hasher, so update() streams up to
 * UNIQD_BLAKE3_STREAM_MAX_LEN bytes in total and fails with -EOVERFLOW past
 * that, while finup() and digest() accept any length the API can pass.
 * Userspace reaches it through AF_ALG (algif_hash) like any other shash.
 * Each driver passes its own implementation to blake3.c, which falls back
 * to the portable code where the FPU cannot be used. The blake3_impl
 * module parameter caps the drivers registered (and so what "blake3"
 * resolves to); each is checked against known answers first.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/internal/hash.h>
#include <linux/build_bug.h>
#include <linux/container_of.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/printk.h>
#include <linux/string.h>

#include "blake3.h"
#include "blake3_impl.h"
#include "blake3_shash.h"

/* The descriptor must fit what SHASH_DESC_ON_STACK() reserves. */
static_assert(sizeof(struct uniqd_blake3_hasher) <= 360);
static_assert(sizeof(struct uniqd_blake3_hasher) <=
	      HASH_MAX_DESCSIZE - sizeof(struct shash_desc));
#ifdef HASH_MAX_STATESIZE
/* Exported state is the descriptor itself (6.1 checks this limit). */
static_assert(sizeof(struct uniqd_blake3_hasher) <= HASH_MAX_STATESIZE);
#endif

static_assert(sizeof(((struct uniqd_blake3_tfm_ctx *)0)->key) ==
	      UNIQD_BLAKE3_KEY_LEN);

/* A driver: the crypto API's alg and the implementation behind it. */
struct uniqd_blake3_drv {
	struct shash_alg alg;
	const struct uniqd_blake3_impl *impl;
	bool registered;
};

static const struct uniqd_blake3_impl *
uniqd_blake3_tfm_impl(struct crypto_shash *tfm)
{
	return container_of(crypto_shash_alg(tfm), struct uniqd_blake3_drv,
			    alg)->impl;
}

/**
 * uniqd_blake3_ctx_setkey() - setkey() of every "blake3" driver
 * @ctx: the tfm's context
 * @key: the key
 * @keylen: its length: exactly 32 bytes selects keyed_hash mode
 *
 * Return: 0, or -EINVAL for any other length (@ctx is then unchanged).
 */
int uniqd_blake3_ctx_setkey(struct uniqd_blake3_tfm_ctx *ctx, const u8 *key,
			    unsigned int keylen)
{
	if (keylen != UNIQD_BLAKE3_KEY_LEN)
		return -EINVAL;
	memcpy(ctx->key, key, UNIQD_BLAKE3_KEY_LEN);
	ctx->keyed = true;
	return 0;
}

static int uniqd_blake3_shash_setkey(struct crypto_shash *tfm, const u8 *key,
				     unsigned int keylen)
{
	return uniqd_blake3_ctx_setkey(crypto_shash_ctx(tfm), key, keylen);
}

static int uniqd_blake3_shash_init(struct shash_desc *desc)
{
	const struct uniqd_blake3_tfm_ctx *ctx = crypto_shash_ctx(desc->tfm);
	struct uniqd_blake3_hasher *h = shash_desc_ctx(desc);

	if (ctx->keyed)
		uniqd_blake3_init_keyed(h, ctx->key);
	else
		uniqd_blake3_init(h);
	return 0;
}

static int uniqd_blake3_shash_update(struct shash_desc *desc, const u8 *data,
				     unsigned int len)
{
	return uniqd_blake3_update_impl(uniqd_blake3_tfm_impl(desc->tfm),
					shash_desc_ctx(desc), data, len);
}

static int uniqd_blake3_shash_final(struct shash_desc *desc, u8 *out)
{
	struct uniqd_blake3_hasher *h = shash_desc_ctx(desc);
	int ret;

	ret = uniqd_blake3_final_seek_impl(uniqd_blake3_tfm_impl(desc->tfm),
					   h, 0, out, UNIQD_BLAKE3_OUT_LEN);
	memzero_explicit(h, sizeof(*h));
	return ret;
}

static int uniqd_blake3_shash_finup(struct shash_desc *desc, const u8 *data,
				    unsigned int len, u8 *out)
{
	return uniqd_blake3_finup_seek_impl(uniqd_blake3_tfm_impl(desc->tfm),
					    shash_desc_ctx(desc), data, len, 0,
					    out, UNIQD_BLAKE3_OUT_LEN);
}

static int uniqd_blake3_shash_digest(struct shash_desc *desc, const u8 *data,
				     unsigned int len, u8 *out)
{
	uniqd_blake3_shash_init(desc);
	return uniqd_blake3_shash_finup(desc, data, len, out);
}

/*
 * No export()/import(): the state is plain data without pointers, so the
 * default memcpy of the descriptor (statesize == descsize) is right.
 */
#define UNIQD_BLAKE3_DRV(suffix, prio)					\
	{								\
		.alg = {						\
			.digestsize	= UNIQD_BLAKE3_OUT_LEN,		\
			.setkey		= uniqd_blake3_shash_setkey,	\
			.init		= uniqd_blake3_shash_init,	\
			.update		= uniqd_blake3_shash_update,	\
			.final		= uniqd_blake3_shash_final,	\
			.finup		= uniqd_blake3_shash_finup,	\
			.digest		= uniqd_blake3_shash_digest,	\
			.descsize	= sizeof(struct uniqd_blake3_hasher), \
			.base		= {				\
				.cra_name	 = "blake3",		\
				.cra_driver_name = "blake3-uniqd-" suffix, \
				.cra_priority	 = prio,		\
				.cra_flags	 = CRYPTO_ALG_OPTIONAL_KEY, \
				.cra_blocksize	 = UNIQD_BLAKE3_BLOCK_LEN, \
				.cra_ctxsize	 =			\
					sizeof(struct uniqd_blake3_tfm_ctx), \
				.cra_module	 = THIS_MODULE,		\
			},						\
		},							\
	}

/*
 * Slowest first, in the order of uniqd_blake3_impl_nth(); .impl is filled
 * in at registration. Priorities leave room between them, like the
 * kernel's sha256 drivers (generic 100, ssse3 150, avx 160, avx2 170).
 */
static struct uniqd_blake3_drv uniqd_blake3_drvs[] = {
	UNIQD_BLAKE3_DRV("generic", 100),
#ifdef UNIQD_BLAKE3_X86
	UNIQD_BLAKE3_DRV("sse41", 150),
	UNIQD_BLAKE3_DRV("avx2", 170),
	UNIQD_BLAKE3_DRV("avx512", 190),
#endif
};

/*
 * Known answers from the official test vectors (input byte i is i % 251),
 * checked for every driver before registering, since the crypto manager
 * has none for "blake3": lengths around block and chunk boundaries, and
 * 31 chunks, whose subtrees of 16, 8, 4 and 2 chunks fill every lane
 * count; one-shot, streamed in 64-byte updates, and all at once through
 * uniqd_blake3_hash_many().
 */
static const u8 uniqd_blake3_test_key[UNIQD_BLAKE3_KEY_LEN] __nonstring =
	"whats the Elvish word for friend";

#define UNIQD_BLAKE3_TEST_MAX	31744

static const struct {
	u32 len;
	u8 hash[UNIQD_BLAKE3_OUT_LEN];
	u8 keyed[UNIQD_BLAKE3_OUT_LEN];
} uniqd_blake3_kat[] = {
	{ 0,
	  { 0xaf, 0x13, 0x49, 0xb9, 0xf5, 0xf9, 0xa1, 0xa6, 0xa0, 0x40, 0x4d,
	    0xea, 0x36, 0xdc, 0xc9, 0x49, 0x9b, 0xcb, 0x25, 0xc9, 0xad, 0xc1,
	    0x12, 0xb7, 0xcc, 0x9a, 0x93, 0xca, 0xe4, 0x1f, 0x32, 0x62 },
	  { 0x92, 0xb2, 0xb7, 0x56, 0x04, 0xed, 0x3c, 0x76, 0x1f, 0x9d, 0x6f,
	    0x62, 0x39, 0x2c, 0x8a, 0x92, 0x27, 0xad, 0x0e, 0xa3, 0xf0, 0x95,
	    0x73, 0xe7, 0x83, 0xf1, 0x49, 0x8a, 0x4e, 0xd6, 0x0d, 0x26 } },
	{ 1,
	  { 0x2d, 0x3a, 0xde, 0xdf, 0xf1, 0x1b, 0x61, 0xf1, 0x4c, 0x88, 0x6e,
	    0x35, 0xaf, 0xa0, 0x36, 0x73, 0x6d, 0xcd, 0x87, 0xa7, 0x4d, 0x27,
	    0xb5, 0xc1, 0x51, 0x02, 0x25, 0xd0, 0xf5, 0x92, 0xe2, 0x13 },
	  { 0x6d, 0x78, 0x78, 0xdf, 0xff, 0x2f, 0x48, 0x56, 0x35, 0xd3, 0x90,
	    0x13, 0x27, 0x8a, 0xe1, 0x4f, 0x14, 0x54, 0xb8, 0xc0, 0xa3, 0xa2,
	    0xd3, 0x4b, 0xc1, 0xab, 0x38, 0x22, 0x8a, 0x80, 0xc9, 0x5b } },
	{ 64,
	  { 0x4e, 0xed, 0x71, 0x41, 0xea, 0x4a, 0x5c, 0xd4, 0xb7, 0x88, 0x60,
	    0x6b, 0xd2, 0x3f, 0x46, 0xe2, 0x12, 0xaf, 0x9c, 0xac, 0xeb, 0xac,
	    0xdc, 0x7d, 0x1f, 0x4c, 0x6d, 0xc7, 0xf2, 0x51, 0x1b, 0x98 },
	  { 0xba, 0x8c, 0xed, 0x36, 0xf3, 0x27, 0x70, 0x0d, 0x21, 0x3f, 0x12,
	    0x0b, 0x1a, 0x20, 0x7a, 0x3b, 0x8c, 0x04, 0x33, 0x05, 0x28, 0x58,
	    0x6f, 0x41, 0x4d, 0x09, 0xf2, 0xf7, 0xd9, 0xcc, 0xb7, 0xe6 } },
	{ 65,
	  { 0xde, 0x1e, 0x5f, 0xa0, 0xbe, 0x70, 0xdf, 0x6d, 0x2b, 0xe8, 0xff,
	    0xfd, 0x0e, 0x99, 0xce, 0xaa, 0x8e, 0xb6, 0xe8, 0xc9, 0x3a, 0x63,
	    0xf2, 0xd8, 0xd1, 0xc3, 0x0e, 0xcb, 0x6b, 0x26, 0x3d, 0xee },
	  { 0xc0, 0xa4, 0xed, 0xef, 0xa2, 0xd2, 0xac, 0xcb, 0x92, 0x77, 0xc3,
	    0x71, 0xac, 0x12, 0xfc, 0xdb, 0xb5, 0x29, 0x88, 0xa8, 0x6e, 0xdc,
	    0x54, 0xf0, 0x71, 0x6e, 0x15, 0x91, 0xb4, 0x32, 0x6e, 0x72 } },
	{ 1024,
	  { 0x42, 0x21, 0x47, 0x39, 0xf0, 0x95, 0xa4, 0x06, 0xf3, 0xfc, 0x83,
	    0xde, 0xb8, 0x89, 0x74, 0x4a, 0xc0, 0x0d, 0xf8, 0x31, 0xc1, 0x0d,
	    0xaa, 0x55, 0x18, 0x9b, 0x5d, 0x12, 0x1c, 0x85, 0x5a, 0xf7 },
	  { 0x75, 0xc4, 0x6f, 0x6f, 0x3d, 0x9e, 0xb4, 0xf5, 0x5e, 0xca, 0xae,
	    0xe4, 0x80, 0xdb, 0x73, 0x2e, 0x6c, 0x21, 0x05, 0x54, 0x6f, 0x1e,
	    0x67, 0x50, 0x03, 0x68, 0x7c, 0x31, 0x71, 0x9c, 0x7b, 0xa4 } },
	{ 1025,
	  { 0xd0, 0x02, 0x78, 0xae, 0x47, 0xeb, 0x27, 0xb3, 0x4f, 0xae, 0xcf,
	    0x67, 0xb4, 0xfe, 0x26, 0x3f, 0x82, 0xd5, 0x41, 0x29, 0x16, 0xc1,
	    0xff, 0xd9, 0x7c, 0x8c, 0xb7, 0xfb, 0x81, 0x4b, 0x84, 0x44 },
	  { 0x35, 0x7d, 0xc5, 0x5d, 0xe0, 0xc7, 0xe3, 0x82, 0xc9, 0x00, 0xfd,
	    0x6e, 0x32, 0x0a, 0xcc, 0x04, 0x14, 0x6b, 0xe0, 0x1d, 0xb6, 0xa8,
	    0xce, 0x72, 0x10, 0xb7, 0x18, 0x9b, 0xd6, 0x64, 0xea, 0x69 } },
	{ UNIQD_BLAKE3_TEST_MAX,
	  { 0x62, 0xb6, 0x96, 0x0e, 0x1a, 0x44, 0xbc, 0xc1, 0xeb, 0x1a, 0x61,
	    0x1a, 0x8d, 0x62, 0x35, 0xb6, 0xb4, 0xb7, 0x8f, 0x32, 0xe7, 0xab,
	    0xc4, 0xfb, 0x4c, 0x6c, 0xdc, 0xce, 0x94, 0x89, 0x5c, 0x47 },
	  { 0xef, 0xa5, 0x3b, 0x38, 0x9a, 0xb6, 0x7c, 0x59, 0x3d, 0xba, 0x62,
	    0x4d, 0x89, 0x8d, 0x0f, 0x73, 0x53, 0xab, 0x99, 0xe4, 0xac, 0x9d,
	    0x42, 0x30, 0x2e, 0xe6, 0x4c, 0xbf, 0x99, 0x39, 0xa4, 0x19 } },
};

#define UNIQD_BLAKE3_NKAT	ARRAY_SIZE(uniqd_blake3_kat)

/* One vector, one-shot and (up to two chunks) in 64-byte updates. */
static int uniqd_blake3_selftest_one(const struct uniqd_blake3_impl *impl,
				     const u8 *in, const u8 *key, u32 len,
				     const u8 *want)
{
	struct uniqd_blake3_hasher h;
	u8 out[UNIQD_BLAKE3_OUT_LEN];
	u32 pos = 0;
	int ret;

	if (key)
		uniqd_blake3_init_keyed(&h, key);
	else
		uniqd_blake3_init(&h);
	ret = uniqd_blake3_finup_seek_impl(impl, &h, in, len, 0, out,
					   sizeof(out));
	if (ret || memcmp(out, want, sizeof(out)))
		return ret ?: -EBADMSG;
	if (len > 2 * UNIQD_BLAKE3_CHUNK_LEN)
		return 0;

	if (key)
		uniqd_blake3_init_keyed(&h, key);
	else
		uniqd_blake3_init(&h);
	for (; !ret && len - pos > 64; pos += 64)
		ret = uniqd_blake3_update_impl(impl, &h, in + pos, 64);
	if (!ret)
		ret = uniqd_blake3_finup_seek_impl(impl, &h, in + pos,
						   len - pos, 0, out,
						   sizeof(out));
	memzero_explicit(&h, sizeof(h));
	if (ret || memcmp(out, want, sizeof(out)))
		return ret ?: -EBADMSG;
	return 0;
}

static int uniqd_blake3_selftest(const struct uniqd_blake3_impl *impl,
				 const u8 *in)
{
	u8 out[UNIQD_BLAKE3_NKAT][UNIQD_BLAKE3_OUT_LEN];
	const void *ins[UNIQD_BLAKE3_NKAT];
	size_t lens[UNIQD_BLAKE3_NKAT];
	unsigned int i, keyed;
	int ret;

	for (i = 0; i < UNIQD_BLAKE3_NKAT; i++) {
		ret = uniqd_blake3_selftest_one(impl, in, NULL,
						uniqd_blake3_kat[i].len,
						uniqd_blake3_kat[i].hash) ?:
		      uniqd_blake3_selftest_one(impl, in,
						uniqd_blake3_test_key,
						uniqd_blake3_kat[i].len,
						uniqd_blake3_kat[i].keyed);
		if (ret)
			return ret;
		/* Reversed, so that lengths mix differently in the lanes. */
		ins[i] = in;
		lens[i] = uniqd_blake3_kat[UNIQD_BLAKE3_NKAT - 1 - i].len;
	}
	for (keyed = 0; keyed < 2; keyed++) {
		ret = uniqd_blake3_hash_many(impl, keyed ?
					     uniqd_blake3_test_key : NULL,
					     ins, lens, UNIQD_BLAKE3_NKAT, out[0]);
		if (ret)
			return ret;
		for (i = 0; i < UNIQD_BLAKE3_NKAT; i++) {
			unsigned int k = UNIQD_BLAKE3_NKAT - 1 - i;

			if (memcmp(out[i], keyed ? uniqd_blake3_kat[k].keyed :
				   uniqd_blake3_kat[k].hash, sizeof(out[i])))
				return -EBADMSG;
		}
	}
	return 0;
}

static void uniqd_blake3_unregister_all(void)
{
	unsigned int i = ARRAY_SIZE(uniqd_blake3_drvs);

	while (i--) {
		if (!uniqd_blake3_drvs[i].registered)
			continue;
		crypto_unregister_shash(&uniqd_blake3_drvs[i].alg);
		uniqd_blake3_drvs[i].registered = false;
	}
}

/**
 * uniqd_blake3_shash_register() - check and register the "blake3" drivers
 *
 * One driver for each implementation the CPU can run, up to the one the
 * blake3_impl module parameter names ("auto": all of them). Each is
 * checked against known answers before it is registered.
 *
 * Return: 0; -EINVAL if blake3_impl names no implementation; -ENODEV if
 * this CPU cannot run it; -EBADMSG if a self-test failed; -ENOMEM; or an
 * error of the crypto API. Nothing stays registered on failure.
 */
int uniqd_blake3_shash_register(void)
{
	const char *cap = uniqd_blake3_impl_param;
	const struct uniqd_blake3_impl *impl;
	unsigned int i;
	u8 *in;
	int ret;

	ret = uniqd_blake3_impl_force(cap);
	if (ret) {
		pr_err("blake3_impl=%s: %s\n", cap, ret == -ENODEV ?
		       "this CPU cannot run it" : "no such implementation");
		return ret == -ENODEV ? -ENODEV : -EINVAL;
	}
	in = kvmalloc(UNIQD_BLAKE3_TEST_MAX, GFP_KERNEL);
	if (!in)
		return -ENOMEM;
	for (i = 0; i < UNIQD_BLAKE3_TEST_MAX; i++)
		in[i] = i % 251;

	for (i = 0; i < ARRAY_SIZE(uniqd_blake3_drvs); i++) {
		struct uniqd_blake3_drv *drv = &uniqd_blake3_drvs[i];

		impl = uniqd_blake3_impl_nth(i);
		if (!uniqd_blake3_impl_usable(impl))
			break;
		drv->impl = impl;
		ret = uniqd_blake3_selftest(impl, in);
		if (ret) {
			pr_err("%s: self-test failed (%d), not registering\n",
			       drv->alg.base.cra_driver_name, ret);
			goto fail;
		}
		ret = crypto_register_shash(&drv->alg);
		if (ret)
			goto fail;
		drv->registered = true;
		if (impl == uniqd_blake3_impl_default())
			break;
	}
	kvfree(in);
	return 0;

fail:
	kvfree(in);
	uniqd_blake3_unregister_all();
	return ret;
}

/**
 * uniqd_blake3_shash_unregister() - unregister the "blake3" drivers
 *
 * Only after a successful uniqd_blake3_shash_register().
 */
void uniqd_blake3_shash_unregister(void)
{
	uniqd_blake3_unregister_all();
}
