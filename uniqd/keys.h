/* SPDX-License-Identifier: GPL-2.0 */
/*
 * uniqd: hashing through the kernel crypto API.
 */
#ifndef UNIQD_KEYS_H
#define UNIQD_KEYS_H

#include <linux/types.h>
#include <uapi/linux/uniqd.h>

struct crypto_shash;

/* The crypto API name of the hash behind table keys and DIGEST. */
#define UNIQD_HASH_ALG		"blake3"
#define UNIQD_HASH_KEY_SIZE	32

int uniqd_keys_check(void);
struct crypto_shash *uniqd_keys_tfm_keyed(void);
struct crypto_shash *uniqd_keys_tfm_plain(void);
void uniqd_keys_tfm_free(struct crypto_shash *tfm);
int uniqd_keys_hash(struct crypto_shash *tfm, const void *data, u32 len,
		    u64 *hash);
int uniqd_keys_digest(struct crypto_shash *tfm, const void *name,
		      u32 name_len, const void *data, u32 len,
		      u8 out[UNIQD_DIGEST_SIZE]);

#endif /* UNIQD_KEYS_H */
