// SPDX-License-Identifier: GPL-2.0
/*
 * What a table key costs uniqd: INTERN hashes every key with the pool's
 * keyed "blake3" tfm through the crypto API (uniqd_hash_64() of
 * uniqd/hash.c, compiled in: a descriptor on the stack,
 * crypto_shash_digest(), shash_desc_zero(), the first 8 of 32 bytes).
 * Against the same BLAKE3 called directly (uniqd/blake3.c is compiled in
 * too), asked for the 8 bytes it needs, and against the kernel's
 * SipHash-2-4 (siphash()), the keyed PRF the kernel uses against hash
 * flooding. Short keys, as a compiler interns them. Every variant takes
 * turns in 2-ms slices; a round reports each one's fastest slice.
 *
 *   UBENCH keyhash how=<crypto-api|direct|siphash> size=N round=R iters=I ns=T best_ps=P
 */
#include <crypto/hash.h>
#include <linux/err.h>
#include <linux/math64.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/siphash.h>
#include <linux/string.h>

#include "bench.h"
#include "blake3.h"
#include "hash.h"

#define UB_KH_SLICE_NS	(2 * NSEC_PER_MSEC)

enum ub_kh { UB_KH_API, UB_KH_DIRECT, UB_KH_SIPHASH, UB_KH_COUNT };
static const char *const ub_kh_name[UB_KH_COUNT] = {
	"crypto-api", "direct", "siphash",
};
static const unsigned int ub_kh_sizes[] = { 8, 16, 32, 64 };

struct ub_kh_ctx {
	struct crypto_shash *tfm;
	u8 key[32];
	siphash_key_t skey;
	u8 buf[64];
};

static int ub_kh_burst(struct ub_kh_ctx *c, enum ub_kh how, unsigned int len,
		       u64 count, u64 *ns)
{
	u64 i, h = 0, t0 = ub_now();
	int ret = 0;

	for (i = 0; i < count && !ret; i++) {
		switch (how) {
		case UB_KH_API:
			ret = uniqd_hash_64(c->tfm, c->buf, len, &h);
			break;
		case UB_KH_DIRECT: {
			__le64 le;

			ret = uniqd_blake3_hash(c->key, c->buf, len, (u8 *)&le,
						sizeof(le));
			h = le64_to_cpu(le);
			break;
		}
		default:
			h = siphash(c->buf, len, &c->skey);
			break;
		}
		c->buf[0] ^= (u8)h;	/* a dependency: nothing is hoisted */
	}
	*ns = ub_now() - t0;
	return ret;
}

int ub_keyhash_run(void)
{
	struct ub_kh_ctx *c;
	unsigned int s, r, k;
	int ret = 0;

	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	get_random_bytes(c->key, sizeof(c->key));
	get_random_bytes(&c->skey, sizeof(c->skey));
	memset(c->buf, 'k', sizeof(c->buf));
	c->tfm = crypto_alloc_shash("blake3", 0, 0);
	if (IS_ERR(c->tfm)) {
		ret = PTR_ERR(c->tfm);
		UB_OUT("keyhash-missing alg=blake3 err=%d", ret);
		kfree_sensitive(c);
		return ret;
	}
	ret = crypto_shash_setkey(c->tfm, c->key, sizeof(c->key));

	/* The three must agree on BLAKE3: the direct call is the same hash. */
	if (!ret) {
		u64 a = 0, b = 0;
		__le64 le = 0;

		ret = uniqd_hash_64(c->tfm, c->buf, 16, &a) ?:
		      uniqd_blake3_hash(c->key, c->buf, 16, (u8 *)&le, sizeof(le));
		b = le64_to_cpu(le);
		UB_OUT("keyhash-agree ok=%d", !ret && a == b);
	}

	for (r = 0; r < ub_rounds && !ret; r++) {
		for (s = 0; s < ARRAY_SIZE(ub_kh_sizes) && !ret; s++) {
			u64 iters[UB_KH_COUNT] = { 0 }, ns[UB_KH_COUNT] = { 0 };
			u64 best[UB_KH_COUNT], burst[UB_KH_COUNT];
			unsigned int len = ub_kh_sizes[s], slice, nslices;

			nslices = (u64)ub_hash_ms * NSEC_PER_MSEC / UB_KH_SLICE_NS ?: 1;
			for (k = 0; k < UB_KH_COUNT && !ret; k++) {
				u64 t = 0;

				best[k] = U64_MAX;
				for (burst[k] = 1; !ret; burst[k] *= 2) {
					ret = ub_kh_burst(c, k, len, burst[k], &t);
					if (t >= UB_KH_SLICE_NS / 4)
						break;
				}
				burst[k] = max_t(u64, 1, burst[k] * UB_KH_SLICE_NS / (t ?: 1));
			}
			for (slice = 0; slice < nslices && !ret; slice++) {
				unsigned int i;

				for (i = 0; i < UB_KH_COUNT && !ret; i++) {
					u64 t;

					k = (i + slice) % UB_KH_COUNT;
					ret = ub_kh_burst(c, k, len, burst[k], &t);
					iters[k] += burst[k];
					ns[k] += t;
					best[k] = min(best[k],
						      div64_u64(t * 1000, burst[k]));
				}
				cond_resched();
			}
			for (k = 0; k < UB_KH_COUNT && !ret; k++)
				UB_OUT("keyhash how=%s size=%u round=%u iters=%llu ns=%llu best_ps=%llu",
				       ub_kh_name[k], len, r, iters[k], ns[k],
				       best[k]);
		}
	}
	if (ret)
		UB_OUT("keyhash-error err=%d", ret);
	crypto_free_shash(c->tfm);
	kfree_sensitive(c);
	return ret;
}
