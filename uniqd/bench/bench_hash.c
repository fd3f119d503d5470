// SPDX-License-Identifier: GPL-2.0
/*
 * Hash throughput through the crypto API: crypto_shash_digest() of one
 * buffer, back to back, for each algorithm and size. The algorithms take
 * turns every few milliseconds, so that a slow moment of the shared host
 * hurts all of them alike; the report compares them round by round. Each
 * round reports the total and its fastest slice (best_ps, picoseconds per
 * digest): on a busy host, most slices lose the CPU for a while, the
 * fastest one is the closest to the real cost.
 *
 *   UBENCH hash alg=<name> driver=<driver> size=<bytes> round=<r> iters=<n> ns=<t>
 *   UBENCH hash-missing alg=<name> err=<errno>
 */
#include <crypto/hash.h>
#include <linux/err.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "bench.h"

/*
 * "blake3" is uniqd's (portable C); "sha256" and "blake2b-256" are whatever
 * the kernel picks (the highest priority driver: SHA-NI/AVX2/SSSE3 for
 * sha256 when the CPU has them), the *-generic ones the kernel's C code.
 */
static const char *const ub_algs[] = {
	"blake3", "sha256", "blake2b-256", "sha256-generic", "blake2b-256-generic",
};
static const unsigned int ub_sizes[] = { 16, 64, 1024, 4096, 65536 };
#define UB_MAX_SIZE	65536
/* Alternate algorithms every few milliseconds. */
#define UB_SLICE_NS	(2 * NSEC_PER_MSEC)

/* Digest @len bytes @count times; nanoseconds taken. */
static int ub_hash_burst(struct shash_desc *desc, const u8 *buf,
			 unsigned int len, u64 count, u64 *ns)
{
	u8 out[64];
	u64 i, t0 = ub_now();
	int ret;

	for (i = 0; i < count; i++) {
		ret = crypto_shash_digest(desc, buf, len, out);
		if (ret)
			return ret;
	}
	*ns = ub_now() - t0;
	return 0;
}

int ub_hash_run(void)
{
	struct crypto_shash *tfm[ARRAY_SIZE(ub_algs)];
	struct shash_desc *desc[ARRAY_SIZE(ub_algs)] = { NULL };
	unsigned int a, s, r;
	u8 *buf;
	int ret = 0;

	buf = kvmalloc(UB_MAX_SIZE, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	for (s = 0; s < UB_MAX_SIZE; s++)
		buf[s] = s % 251;

	for (a = 0; a < ARRAY_SIZE(ub_algs); a++) {
		tfm[a] = crypto_alloc_shash(ub_algs[a], 0, 0);
		if (IS_ERR(tfm[a])) {
			UB_OUT("hash-missing alg=%s err=%ld", ub_algs[a],
			       PTR_ERR(tfm[a]));
			tfm[a] = NULL;
			continue;
		}
		desc[a] = kzalloc(sizeof(*desc[a]) +
				  crypto_shash_descsize(tfm[a]), GFP_KERNEL);
		if (!desc[a]) {
			crypto_free_shash(tfm[a]);
			tfm[a] = NULL;
			ret = -ENOMEM;
			continue;
		}
		desc[a]->tfm = tfm[a];
		UB_OUT("hash-alg alg=%s driver=%s digestsize=%u descsize=%u",
		       ub_algs[a], crypto_shash_driver_name(tfm[a]),
		       crypto_shash_digestsize(tfm[a]),
		       crypto_shash_descsize(tfm[a]));
	}

	/*
	 * Each round gives every algorithm about hash_ms of one size, in
	 * slices of UB_SLICE_NS that rotate between the algorithms, so that
	 * the shared host's slow moments fall on all of them alike.
	 */
	for (r = 0; r < ub_rounds && !ret; r++) {
		for (s = 0; s < ARRAY_SIZE(ub_sizes) && !ret; s++) {
			u64 iters[ARRAY_SIZE(ub_algs)] = { 0 };
			u64 ns[ARRAY_SIZE(ub_algs)] = { 0 };
			u64 best[ARRAY_SIZE(ub_algs)];	/* ps per op */
			u64 burst[ARRAY_SIZE(ub_algs)];
			u64 budget = (u64)ub_hash_ms * NSEC_PER_MSEC;
			unsigned int slice, nslices = budget / UB_SLICE_NS ?: 1;

			/* Calibrate: a burst of about one slice each. */
			for (a = 0; a < ARRAY_SIZE(ub_algs) && !ret; a++) {
				u64 t = 0;

				burst[a] = 1;
				best[a] = U64_MAX;
				while (tfm[a] && !ret) {
					ret = ub_hash_burst(desc[a], buf,
							    ub_sizes[s],
							    burst[a], &t);
					if (t >= UB_SLICE_NS / 4)
						break;
					burst[a] *= 2;
				}
				if (t)
					burst[a] = max_t(u64, 1, burst[a] *
							 UB_SLICE_NS / t);
			}
			for (slice = 0; slice < nslices && !ret; slice++) {
				unsigned int i;

				for (i = 0; i < ARRAY_SIZE(ub_algs) && !ret; i++) {
					u64 t;

					a = (i + slice) % ARRAY_SIZE(ub_algs);
					if (!tfm[a])
						continue;
					ret = ub_hash_burst(desc[a], buf,
							    ub_sizes[s],
							    burst[a], &t);
					iters[a] += burst[a];
					ns[a] += t;
					best[a] = min(best[a],
						      div64_u64(t * 1000, burst[a]));
				}
				cond_resched();
			}
			for (a = 0; a < ARRAY_SIZE(ub_algs) && !ret; a++) {
				if (!tfm[a])
					continue;
				UB_OUT("hash alg=%s driver=%s size=%u round=%u iters=%llu ns=%llu best_ps=%llu",
				       ub_algs[a],
				       crypto_shash_driver_name(tfm[a]),
				       ub_sizes[s], r, iters[a], ns[a], best[a]);
			}
		}
	}
	if (ret)
		UB_OUT("hash-error err=%d", ret);

	for (a = 0; a < ARRAY_SIZE(ub_algs); a++)
		kfree_sensitive(desc[a]);
	for (a = 0; a < ARRAY_SIZE(ub_algs); a++)
		if (tfm[a])
			crypto_free_shash(tfm[a]);
	kvfree(buf);
	return ret;
}
