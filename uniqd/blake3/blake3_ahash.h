/* SPDX-License-Identifier: GPL-2.0 */
/*
 * "blake3" as an ahash for the kernel crypto API (driver "blake3-uniqd"),
 * registered after the shash drivers of blake3_shash.h, whose default
 * implementation and tfm context it uses, and unregistered before them.
 */
#ifndef UNIQD_BLAKE3_AHASH_H
#define UNIQD_BLAKE3_AHASH_H

int uniqd_blake3_ahash_register(void);
void uniqd_blake3_ahash_unregister(void);

#endif /* UNIQD_BLAKE3_AHASH_H */
