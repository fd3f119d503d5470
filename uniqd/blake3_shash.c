// SPDX-License-Identifier: GPL-2.0
/*
 * BLAKE3 as a kernel crypto API shash: cra_name "blake3", driver
 * "blake3-uniqd-generic", 32-byte digest. Without a key it is BLAKE3's hash
 * mode; setkey() with exactly 32 bytes selects keyed_hash mode. The
 * descriptor holds a struct uniqd_blake3_hasher, so update() streams up to
 * UNIQD_BLAKE3_STREAM_MAX_LEN bytes in total and fails with -EOVERFLOW past
 * that, while finup() and digest() accept any length the API can pass.
 * Userspace reaches it through AF_ALG (algif_hash) like any other shash.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/internal/hash.h>
#include <linux/build_bug.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/printk.h>
#include <linux/string.h>

#include "blake3.h"
#include "blake3_shash.h"

/* The descriptor must fit what SHASH_DESC_ON_STACK() reserves. */
static_assert(sizeof(struct uniqd_blake3_hasher) <= 360);
static_assert(sizeof(struct uniqd_blake3_hasher) <=
	      HASH_MAX_DESCSIZE - sizeof(struct shash_desc));
#ifdef HASH_MAX_STATESIZE
/* Exported state is the descriptor itself (6.1 checks this limit). */
static_assert(sizeof(struct uniqd_blake3_hasher) <= HASH_MAX_STATESIZE);
#endif

struct uniqd_blake3_tfm_ctx {
	u8 key[UNIQD_BLAKE3_KEY_LEN];
	bool keyed;
};

static int uniqd_blake3_shash_setkey(struct crypto_shash *tfm, const u8 *key,
				     unsigned int keylen)
{
	struct uniqd_blake3_tfm_ctx *ctx = crypto_shash_ctx(tfm);

	if (keylen != UNIQD_BLAKE3_KEY_LEN)
		return -EINVAL;
	memcpy(ctx->key, key, UNIQD_BLAKE3_KEY_LEN);
	ctx->keyed = true;
	return 0;
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
	return uniqd_blake3_update(shash_desc_ctx(desc), data, len);
}

static int uniqd_blake3_shash_final(struct shash_desc *desc, u8 *out)
{
	struct uniqd_blake3_hasher *h = shash_desc_ctx(desc);
	int ret;

	ret = uniqd_blake3_final(h, out, UNIQD_BLAKE3_OUT_LEN);
	memzero_explicit(h, sizeof(*h));
	return ret;
}

static int uniqd_blake3_shash_finup(struct shash_desc *desc, const u8 *data,
				    unsigned int len, u8 *out)
{
	return uniqd_blake3_finup(shash_desc_ctx(desc), data, len, out,
				  UNIQD_BLAKE3_OUT_LEN);
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
static struct shash_alg uniqd_blake3_alg = {
	.digestsize	= UNIQD_BLAKE3_OUT_LEN,
	.setkey		= uniqd_blake3_shash_setkey,
	.init		= uniqd_blake3_shash_init,
	.update		= uniqd_blake3_shash_update,
	.final		= uniqd_blake3_shash_final,
	.finup		= uniqd_blake3_shash_finup,
	.digest		= uniqd_blake3_shash_digest,
	.descsize	= sizeof(struct uniqd_blake3_hasher),
	.base		= {
		.cra_name		= "blake3",
		.cra_driver_name	= "blake3-uniqd-generic",
		.cra_priority		= 100,
		.cra_flags		= CRYPTO_ALG_OPTIONAL_KEY,
		.cra_blocksize		= UNIQD_BLAKE3_BLOCK_LEN,
		.cra_ctxsize		= sizeof(struct uniqd_blake3_tfm_ctx),
		.cra_module		= THIS_MODULE,
	},
};

/*
 * Known answers from the official test vectors (input byte i is i % 251),
 * checked before registering since the crypto manager has none for
 * "blake3". 1025 bytes take two chunks, so a parent node, the streaming
 * path (64-byte updates) and finup() are all exercised.
 */
static const u8 uniqd_blake3_test_key[UNIQD_BLAKE3_KEY_LEN] __nonstring =
	"whats the Elvish word for friend";

static const u8 uniqd_blake3_test_hash0[UNIQD_BLAKE3_OUT_LEN] = {
	0xaf, 0x13, 0x49, 0xb9, 0xf5, 0xf9, 0xa1, 0xa6,
	0xa0, 0x40, 0x4d, 0xea, 0x36, 0xdc, 0xc9, 0x49,
	0x9b, 0xcb, 0x25, 0xc9, 0xad, 0xc1, 0x12, 0xb7,
	0xcc, 0x9a, 0x93, 0xca, 0xe4, 0x1f, 0x32, 0x62,
};

static const u8 uniqd_blake3_test_hash1025[UNIQD_BLAKE3_OUT_LEN] = {
	0xd0, 0x02, 0x78, 0xae, 0x47, 0xeb, 0x27, 0xb3,
	0x4f, 0xae, 0xcf, 0x67, 0xb4, 0xfe, 0x26, 0x3f,
	0x82, 0xd5, 0x41, 0x29, 0x16, 0xc1, 0xff, 0xd9,
	0x7c, 0x8c, 0xb7, 0xfb, 0x81, 0x4b, 0x84, 0x44,
};

static const u8 uniqd_blake3_test_keyed1025[UNIQD_BLAKE3_OUT_LEN] = {
	0x35, 0x7d, 0xc5, 0x5d, 0xe0, 0xc7, 0xe3, 0x82,
	0xc9, 0x00, 0xfd, 0x6e, 0x32, 0x0a, 0xcc, 0x04,
	0x14, 0x6b, 0xe0, 0x1d, 0xb6, 0xa8, 0xce, 0x72,
	0x10, 0xb7, 0x18, 0x9b, 0xd6, 0x64, 0xea, 0x69,
};

static int uniqd_blake3_selftest_one(const u8 *key, size_t len,
				     const u8 *want)
{
	struct uniqd_blake3_hasher h;
	u8 buf[64], out[UNIQD_BLAKE3_OUT_LEN];
	size_t pos = 0, n, i;
	int ret = 0;

	if (key)
		uniqd_blake3_init_keyed(&h, key);
	else
		uniqd_blake3_init(&h);
	if (!len)
		ret = uniqd_blake3_final(&h, out, sizeof(out));
	while (!ret && pos < len) {
		n = min_t(size_t, sizeof(buf), len - pos);
		for (i = 0; i < n; i++)
			buf[i] = (pos + i) % 251;
		pos += n;
		if (pos < len)
			ret = uniqd_blake3_update(&h, buf, n);
		else
			ret = uniqd_blake3_finup(&h, buf, n, out, sizeof(out));
	}
	memzero_explicit(&h, sizeof(h));
	if (ret)
		return ret;
	return memcmp(out, want, sizeof(out)) ? -EINVAL : 0;
}

static int uniqd_blake3_selftest(void)
{
	return uniqd_blake3_selftest_one(NULL, 0, uniqd_blake3_test_hash0) ?:
	       uniqd_blake3_selftest_one(NULL, 1025,
					 uniqd_blake3_test_hash1025) ?:
	       uniqd_blake3_selftest_one(uniqd_blake3_test_key, 1025,
					 uniqd_blake3_test_keyed1025);
}

/**
 * uniqd_blake3_shash_register() - check the implementation, register "blake3"
 *
 * Return: 0, or a negative errno (self-test failure or from the crypto API).
 */
int uniqd_blake3_shash_register(void)
{
	int ret;

	ret = uniqd_blake3_selftest();
	if (ret) {
		pr_err("blake3 self-test failed (%d), not registering\n", ret);
		return ret;
	}
	return crypto_register_shash(&uniqd_blake3_alg);
}

/**
 * uniqd_blake3_shash_unregister() - unregister "blake3"
 *
 * Only after a successful uniqd_blake3_shash_register().
 */
void uniqd_blake3_shash_unregister(void)
{
	crypto_unregister_shash(&uniqd_blake3_alg);
}
