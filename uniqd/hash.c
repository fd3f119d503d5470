// SPDX-License-Identifier: GPL-2.0
/*
 * uniqd: hashing through the kernel crypto API.
 *
 * Table keys are the first 64 bits of the keyed BLAKE3 of the bytes, keyed
 * per pool with 32 random bytes, so that no process can choose contents
 * that collide in the tables of a pool it does not know the key of. DIGEST
 * is the unkeyed BLAKE3-256, the same on every machine.
 *
 * A tfm is allocated once (per pool) and then used concurrently: every
 * call has its own descriptor on the stack.
 */
#include <crypto/hash.h>
#include <linux/err.h>
#include <linux/random.h>
#include <linux/string.h>

#include "uniqd.h"
#include "hash.h"

static struct crypto_shash *uniqd_hash_tfm(void)
{
	struct crypto_shash *tfm;

	tfm = crypto_alloc_shash(UNIQD_HASH_ALG, 0, 0);
	if (IS_ERR(tfm))
		return tfm;
	if (crypto_shash_digestsize(tfm) != UNIQD_DIGEST_SIZE) {
		crypto_free_shash(tfm);
		return ERR_PTR(-EINVAL);
	}
	return tfm;
}

/* At module load: is the hash there and does it have the right shape? */
int uniqd_hash_check(void)
{
	struct crypto_shash *tfm = uniqd_hash_tfm();

	if (IS_ERR(tfm))
		return PTR_ERR(tfm);
	crypto_free_shash(tfm);
	return 0;
}

/* A tfm keyed with fresh random bytes: one per pool, for table keys. */
struct crypto_shash *uniqd_hash_tfm_keyed(void)
{
	u8 key[UNIQD_HASH_KEY_SIZE];
	struct crypto_shash *tfm;
	int ret;

	tfm = uniqd_hash_tfm();
	if (IS_ERR(tfm))
		return tfm;
	get_random_bytes(key, sizeof(key));
	ret = crypto_shash_setkey(tfm, key, sizeof(key));
	memzero_explicit(key, sizeof(key));
	if (ret) {
		crypto_free_shash(tfm);
		return ERR_PTR(ret);
	}
	return tfm;
}

/* An unkeyed tfm, for DIGEST. */
struct crypto_shash *uniqd_hash_tfm_plain(void)
{
	return uniqd_hash_tfm();
}

void uniqd_hash_tfm_free(struct crypto_shash *tfm)
{
	crypto_free_shash(tfm);
}

/* The table key of @len bytes at @data: 64 bits of the keyed hash. */
int uniqd_hash_64(struct crypto_shash *tfm, const void *data, u32 len,
		    u64 *hash)
{
	SHASH_DESC_ON_STACK(desc, tfm);
	u8 out[UNIQD_DIGEST_SIZE];
	__le64 h;
	int ret;

	desc->tfm = tfm;
	ret = crypto_shash_digest(desc, data, len, out);
	shash_desc_zero(desc);
	if (ret)
		return ret;
	memcpy(&h, out, sizeof(h));
	*hash = le64_to_cpu(h);
	return 0;
}

/* BLAKE3-256 of le32(name_len) || name || data, with an unkeyed @tfm. */
int uniqd_hash_digest(struct crypto_shash *tfm, const void *name,
		      u32 name_len, const void *data, u32 len,
		      u8 out[UNIQD_DIGEST_SIZE])
{
	SHASH_DESC_ON_STACK(desc, tfm);
	__le32 nl = cpu_to_le32(name_len);
	int ret;

	desc->tfm = tfm;
	ret = crypto_shash_init(desc);
	if (!ret)
		ret = crypto_shash_update(desc, (const u8 *)&nl, sizeof(nl));
	if (!ret)
		ret = crypto_shash_update(desc, name, name_len);
	/*
	 * The content last with finup(), not update() + final(): the blake3
	 * shash streams at most 255 KiB through update() (its state must fit
	 * HASH_MAX_DESCSIZE), while finup() takes any length.
	 */
	if (!ret)
		ret = crypto_shash_finup(desc, data, len, out);
	shash_desc_zero(desc);
	return ret;
}
