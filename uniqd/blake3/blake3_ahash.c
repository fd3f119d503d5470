// SPDX-License-Identifier: GPL-2.0
/*
 * "blake3" as an ahash (driver "blake3-uniqd", priority 300, above every
 * shash driver): the streaming state lives in the request, which the
 * crypto API allocates (AF_ALG: sock_kmalloc()) and which no
 * HASH_MAX_DESCSIZE bounds, so it holds 24 CV slots beyond the hasher's 7
 * and update() streams up to 2^32 - 1 chunks (4 TiB) instead of 255 KiB.
 * AF_ALG and other ahash users get it; crypto_alloc_shash("blake3") still
 * gets the best shash driver (in-kernel digest() callers, SHASH_DESC_ON_STACK).
 * It runs the default implementation (blake3_impl.c). See
 * Documentation/blake3.rst.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/internal/hash.h>
#include <linux/bitops.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/string.h>

#include "blake3.h"
#include "blake3_ahash.h"
#include "blake3_impl.h"
#include "blake3_shash.h"

/* Counter of u32 chunks: 31 slots in all (blake3.c caps it there too). */
#define UNIQD_BLAKE3_AHASH_EXT	(31 - UNIQD_BLAKE3_STREAM_DEPTH)
/* Slots the exported state carries: it stays within 6.1's 512 bytes. */
#define UNIQD_BLAKE3_EXPORT_EXT	4

struct uniqd_blake3_areq {
	struct uniqd_blake3_hasher h;
	u32 ext[UNIQD_BLAKE3_AHASH_EXT][8];
};

struct uniqd_blake3_astate {
	struct uniqd_blake3_hasher h;
	u32 ext[UNIQD_BLAKE3_EXPORT_EXT][8];
};

#ifdef HASH_MAX_STATESIZE
static_assert(sizeof(struct uniqd_blake3_astate) <= HASH_MAX_STATESIZE);
#endif

static int uniqd_blake3_ahash_setkey(struct crypto_ahash *tfm, const u8 *key,
				     unsigned int keylen)
{
	return uniqd_blake3_ctx_setkey(crypto_ahash_ctx(tfm), key, keylen);
}

static int uniqd_blake3_ahash_init(struct ahash_request *req)
{
	struct uniqd_blake3_tfm_ctx *ctx =
		crypto_ahash_ctx(crypto_ahash_reqtfm(req));
	struct uniqd_blake3_areq *r = ahash_request_ctx(req);

	if (ctx->keyed)
		uniqd_blake3_init_keyed(&r->h, ctx->key);
	else
		uniqd_blake3_init(&r->h);
	return 0;
}

static int uniqd_blake3_ahash_update(struct ahash_request *req)
{
	const struct uniqd_blake3_impl *impl = uniqd_blake3_impl_default();
	struct uniqd_blake3_areq *r = ahash_request_ctx(req);
	struct crypto_hash_walk walk;
	int n, ret = 0;

	/* Page by page; the walk may sleep between pages (crypto_yield). */
	for (n = crypto_hash_walk_first(req, &walk); n > 0;
	     n = crypto_hash_walk_done(&walk, ret))
		ret = uniqd_blake3_update_ext(impl, &r->h, r->ext[0],
					      UNIQD_BLAKE3_AHASH_EXT, walk.data,
					      n);
	return n;
}

static int uniqd_blake3_ahash_final(struct ahash_request *req)
{
	struct uniqd_blake3_areq *r = ahash_request_ctx(req);
	int ret;

	ret = uniqd_blake3_final_ext(uniqd_blake3_impl_default(), &r->h,
				     r->ext[0], req->result, UNIQD_BLAKE3_OUT_LEN);
	memzero_explicit(r, sizeof(*r));
	return ret;
}

static int uniqd_blake3_ahash_finup(struct ahash_request *req)
{
	int ret = uniqd_blake3_ahash_update(req);

	if (ret) {
		memzero_explicit(ahash_request_ctx(req),
				 sizeof(struct uniqd_blake3_areq));
		return ret;
	}
	return uniqd_blake3_ahash_final(req);
}

static int uniqd_blake3_ahash_digest(struct ahash_request *req)
{
	uniqd_blake3_ahash_init(req);
	return uniqd_blake3_ahash_finup(req);
}

/*
 * The state with the first UNIQD_BLAKE3_EXPORT_EXT extra slots: enough
 * while the stack holds at most 11 CVs, i.e. always up to 4095 chunks
 * (4 MiB) and past that whenever popcount(chunks) <= 11. A deeper state
 * cannot be exported (AF_ALG: accept() on such a socket fails).
 */
static int uniqd_blake3_ahash_export(struct ahash_request *req, void *out)
{
	struct uniqd_blake3_areq *r = ahash_request_ctx(req);
	struct uniqd_blake3_astate *st = out;

	if (hweight64((u64)r->h.chunk_counter) >
	    UNIQD_BLAKE3_STREAM_DEPTH + UNIQD_BLAKE3_EXPORT_EXT)
		return -EOVERFLOW;
	memcpy(&st->h, &r->h, sizeof(st->h));
	memcpy(st->ext, r->ext, sizeof(st->ext));
	return 0;
}

static int uniqd_blake3_ahash_import(struct ahash_request *req,
				     const void *in)
{
	struct uniqd_blake3_areq *r = ahash_request_ctx(req);
	const struct uniqd_blake3_astate *st = in;

	memset(r, 0, sizeof(*r));
	memcpy(&r->h, &st->h, sizeof(r->h));
	memcpy(r->ext, st->ext, sizeof(st->ext));
	return 0;
}

static int uniqd_blake3_ahash_init_tfm(struct crypto_ahash *tfm)
{
	crypto_ahash_set_reqsize(tfm, sizeof(struct uniqd_blake3_areq));
	return 0;
}

static struct ahash_alg uniqd_blake3_ahash_alg = {
	.init		= uniqd_blake3_ahash_init,
	.update		= uniqd_blake3_ahash_update,
	.final		= uniqd_blake3_ahash_final,
	.finup		= uniqd_blake3_ahash_finup,
	.digest		= uniqd_blake3_ahash_digest,
	.export		= uniqd_blake3_ahash_export,
	.import		= uniqd_blake3_ahash_import,
	.setkey		= uniqd_blake3_ahash_setkey,
	.init_tfm	= uniqd_blake3_ahash_init_tfm,
	.halg = {
		.digestsize	= UNIQD_BLAKE3_OUT_LEN,
		.statesize	= sizeof(struct uniqd_blake3_astate),
		.base = {
			.cra_name		= "blake3",
			.cra_driver_name	= "blake3-uniqd",
			.cra_priority		= 300,
			.cra_flags		= CRYPTO_ALG_OPTIONAL_KEY,
			.cra_blocksize		= UNIQD_BLAKE3_BLOCK_LEN,
			.cra_ctxsize		=
				sizeof(struct uniqd_blake3_tfm_ctx),
			.cra_module		= THIS_MODULE,
		},
	},
};

/*
 * Known answer through the extended state: 102400 bytes of the official
 * pattern streamed in 4 KiB updates (as the walk feeds it), then checked
 * against the one-shot digest of the driver already tested.
 */
static int uniqd_blake3_ahash_selftest(void)
{
	const struct uniqd_blake3_impl *impl = uniqd_blake3_impl_default();
	u8 want[UNIQD_BLAKE3_OUT_LEN], got[UNIQD_BLAKE3_OUT_LEN];
	struct uniqd_blake3_areq *r;
	size_t len = 300 * 1024 + 7, pos, i;
	u8 *in;
	int ret;

	in = kvmalloc(len, GFP_KERNEL);
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	ret = -ENOMEM;
	if (!in || !r)
		goto out;
	for (i = 0; i < len; i++)
		in[i] = i % 251;
	ret = uniqd_blake3_hash(NULL, in, len, want, sizeof(want));
	uniqd_blake3_init(&r->h);
	for (pos = 0; !ret && pos < len; pos += 4096)
		ret = uniqd_blake3_update_ext(impl, &r->h, r->ext[0],
					      UNIQD_BLAKE3_AHASH_EXT, in + pos,
					      min_t(size_t, 4096, len - pos));
	if (!ret)
		ret = uniqd_blake3_final_ext(impl, &r->h, r->ext[0], got,
					     sizeof(got));
	if (!ret && memcmp(got, want, sizeof(got)))
		ret = -EBADMSG;
out:
	kvfree(in);
	kfree_sensitive(r);
	return ret;
}

/**
 * uniqd_blake3_ahash_register() - check and register the "blake3" ahash
 *
 * After the shash drivers (it uses the default implementation they
 * tested).
 *
 * Return: 0 or a negative errno.
 */
int uniqd_blake3_ahash_register(void)
{
	int ret = uniqd_blake3_ahash_selftest();

	if (ret) {
		pr_err("blake3-uniqd: self-test failed (%d), not registering\n",
		       ret);
		return ret;
	}
	return crypto_register_ahash(&uniqd_blake3_ahash_alg);
}

/**
 * uniqd_blake3_ahash_unregister() - unregister the "blake3" ahash
 */
void uniqd_blake3_ahash_unregister(void)
{
	crypto_unregister_ahash(&uniqd_blake3_ahash_alg);
}
