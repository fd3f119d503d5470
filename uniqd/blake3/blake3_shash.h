/* SPDX-License-Identifier: GPL-2.0 */
/*
 * "blake3" for the kernel crypto API, with an optional 32-byte key: shash
 * drivers "blake3-uniqd-generic", "-sse41", "-avx2", "-avx512"
 * (blake3_ahash.h has the ahash "blake3-uniqd", which shares their tfm
 * context). The module calls register at load and unregister at unload.
 */
#ifndef UNIQD_BLAKE3_SHASH_H
#define UNIQD_BLAKE3_SHASH_H

#include <linux/types.h>

/* The tfm context of every "blake3" driver: the key, if one was set. */
struct uniqd_blake3_tfm_ctx {
	u8 key[32];
	bool keyed;
};

int uniqd_blake3_ctx_setkey(struct uniqd_blake3_tfm_ctx *ctx, const u8 *key,
			    unsigned int keylen);

/* params.c: the blake3_impl module parameter ("auto" or a name). */
extern char *uniqd_blake3_impl_param;

int uniqd_blake3_shash_register(void);
void uniqd_blake3_shash_unregister(void);

#endif /* UNIQD_BLAKE3_SHASH_H */
