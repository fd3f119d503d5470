/* SPDX-License-Identifier: GPL-2.0 */
/*
 * uniqd: hashing through the kernel crypto API.
 */
#ifndef UNIQD_HASH_H
#define UNIQD_HASH_H

#include <linux/types.h>
#include <uapi/linux/uniqd.h>

struct crypto_shash;

/* The crypto API name of the hash behind table keys and DIGEST. */
#define UNIQD_HASH_ALG		"blake3"
#define UNIQD_HASH_KEY_SIZE	32

int uniqd_hash_check(void);
struct crypto_shash *uniqd_hash_tfm_keyed(void);
struct crypto_shash *uniqd_hash_tfm_plain(void);
void uniqd_hash_tfm_free(struct crypto_shash *tfm);
int uniqd_hash_64(struct crypto_shash *tfm, const void *data, u32 len,
		    u64 *hash);
int uniqd_hash_digest(struct crypto_shash *tfm, const void *name,
		      u32 name_len, const void *data, u32 len,
		      u8 out[UNIQD_DIGEST_SIZE]);

#endif /* UNIQD_HASH_H */
