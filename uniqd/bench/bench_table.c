// SPDX-License-Identifier: GPL-2.0
/*
 * uniqd's level-2 table (uniqd/table.c, compiled into this module) against
 * the kernel's rhashtable, on the same keys with the same 64-bit hashes, in
 * the same run.
 *
 * Keys: ub_nkeys present and as many absent ones, 4..32 bytes of identifier
 * characters whose last four encode the key's number (so all differ),
 * hashed once before anything is timed with keyed BLAKE3 (uniqd's "blake3"
 * shash, the first 64 bits as uniqd does) or, without uniqd loaded, keyed
 * SipHash. Neither table hashes: both get the 64-bit hash as input.
 *
 * Records: uniqd's table points at struct uniqd_rec records packed in one
 * array, as uniqd's arena does. rhashtable's objects are the same record
 * with its struct rhash_head and the 64-bit hash in front (rhashtable
 * rehashes from the objects, uniqd's slots keep the hash), in their own
 * array. Lookups compare the 64-bit hash, the length, then memcmp(), in
 * both. Lookup keys live apart from the records, as a copied-in key does.
 *
 * rhashtable: variable-length keys (key_len 0, hashfn/obj_hashfn/obj_cmpfn),
 * rhashtable_lookup_get_insert_key() to insert, rhashtable_lookup() under
 * rcu_read_lock() to look up; its 32-bit hash mixes the seed into the 64-bit
 * one. Both tables start at 64 slots/buckets and grow at 3/4 load.
 *
 *   UBENCH table-setup n=.. hash=.. key_bytes=..
 *   UBENCH table impl=uniqd|rhashtable op=insert|settle|hit|miss|hot n=.. round=.. ns=.. best_ps=..
 *
 * ns is a round's total; best_ps the picoseconds per lookup of its fastest
 * slice (on a busy host most slices lose the CPU for a while).
 *   UBENCH table-mem impl=.. n=.. table_bytes=.. rec_bytes=.. content_bytes=..
 *   UBENCH table-verify impl=.. ok=0|1
 */
#include <crypto/hash.h>
#include <linux/err.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/rhashtable.h>
#include <linux/sched.h>
#include <linux/siphash.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include "bench.h"
#include "table.h"

struct ub_key {
	u64 hash;
	u32 len;
	u32 off;		/* into ub_kbytes */
};

/* What rhashtable_lookup() is given: the lookup key, as a pointer. */
struct ub_rkey {
	u64 hash;
	const u8 *data;
	u32 len;
};

struct ub_robj {
	struct rhash_head node;
	u64 hash;
	struct uniqd_rec rec;	/* idx, class_id, len, flags, data[] */
};

static struct ub_key *ub_keys;	/* [0, n) present, [n, 2n) absent */
static u8 *ub_kbytes;
static u32 *ub_perm;		/* lookup order: a permutation of [0, n) */
static struct uniqd_rec **ub_urec;
static struct ub_robj **ub_robj;
static u8 *ub_uarena, *ub_rarena;
static u64 ub_content, ub_uarena_bytes, ub_rarena_bytes;

static inline u32 ub_fold(u64 hash, u32 seed)
{
	return (u32)(((hash ^ seed) * 0x9E3779B97F4A7C15ULL) >> 32);
}

static u32 ub_r_hashfn(const void *data, u32 len, u32 seed)
{
	const struct ub_rkey *k = data;

	return ub_fold(k->hash, seed);
}

static u32 ub_r_obj_hashfn(const void *data, u32 len, u32 seed)
{
	const struct ub_robj *o = data;

	return ub_fold(o->hash, seed);
}

static int ub_r_obj_cmpfn(struct rhashtable_compare_arg *arg, const void *obj)
{
	const struct ub_rkey *k = arg->key;
	const struct ub_robj *o = obj;

	return !(o->hash == k->hash && o->rec.len == k->len &&
		 !memcmp(o->rec.data, k->data, k->len));
}

static const struct rhashtable_params ub_rparams = {
	.head_offset = offsetof(struct ub_robj, node),
	.hashfn = ub_r_hashfn,
	.obj_hashfn = ub_r_obj_hashfn,
	.obj_cmpfn = ub_r_obj_cmpfn,
};

static noinline struct uniqd_rec *ub_u_find(struct uniqd_table *t,
					    const struct ub_key *k)
{
	struct uniqd_rec *rec;

	rcu_read_lock();
	rec = uniqd_table_find(t, k->hash, ub_kbytes + k->off, k->len);
	rcu_read_unlock();
	return rec;
}

static noinline struct ub_robj *ub_r_find(struct rhashtable *ht,
					  const struct ub_key *k)
{
	struct ub_rkey rk = { k->hash, ub_kbytes + k->off, k->len };
	struct ub_robj *o;

	rcu_read_lock();
	o = rhashtable_lookup(ht, &rk, ub_rparams);
	rcu_read_unlock();
	return o;
}

static const char ub_chars[] =
	"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_";

/* Keys, their hashes, the lookup order and both tables' records. */
static int ub_setup(u32 n)
{
	struct crypto_shash *tfm;
	u8 hkey[32];
	siphash_key_t skey;
	u64 seed = 0x75d1c2b3a4f5e607ULL, off = 0, uoff = 0, roff = 0;
	const char *how;
	u32 i;
	int ret = 0;

	ub_keys = vmalloc(array_size(2 * n, sizeof(*ub_keys)));
	ub_perm = vmalloc(array_size(n, sizeof(*ub_perm)));
	ub_urec = vmalloc(array_size(n, sizeof(*ub_urec)));
	ub_robj = vmalloc(array_size(n, sizeof(*ub_robj)));
	ub_kbytes = vmalloc(array_size(2 * n, 32));
	if (!ub_keys || !ub_perm || !ub_urec || !ub_robj || !ub_kbytes)
		return -ENOMEM;

	for (i = 0; i < 2 * n; i++) {
		u32 len = 4 + ub_rand(&seed) % 29, j, v = i;
		u8 *p = ub_kbytes + off;

		for (j = 0; j < len - 4; j++)
			p[j] = ub_chars[ub_rand(&seed) % 63];
		for (j = len - 4; j < len; j++, v /= 62)
			p[j] = ub_chars[v % 62];
		ub_keys[i].len = len;
		ub_keys[i].off = off;
		off += len;
		if (i < n) {
			ub_content += len;
			uoff += UNIQD_REC_SIZE(len);
			roff += ALIGN(sizeof(struct ub_robj) + len, 8);
		}
	}

	/* The hashes: keyed BLAKE3 as uniqd computes them, else SipHash. */
	get_random_bytes(hkey, sizeof(hkey));
	tfm = crypto_alloc_shash("blake3", 0, 0);
	if (!IS_ERR(tfm) && crypto_shash_setkey(tfm, hkey, sizeof(hkey))) {
		crypto_free_shash(tfm);
		tfm = ERR_PTR(-EINVAL);
	}
	how = IS_ERR(tfm) ? "siphash" : "blake3-keyed";
	memcpy(&skey, hkey, sizeof(skey));
	for (i = 0; i < 2 * n; i++) {
		const u8 *p = ub_kbytes + ub_keys[i].off;

		if (!IS_ERR(tfm)) {
			u8 out[32];
			__le64 h;

			ret = crypto_shash_tfm_digest(tfm, p, ub_keys[i].len, out);
			if (ret)
				break;
			memcpy(&h, out, sizeof(h));
			ub_keys[i].hash = le64_to_cpu(h);
		} else {
			ub_keys[i].hash = siphash(p, ub_keys[i].len, &skey);
		}
		if (!(i & 1023))
			cond_resched();
	}
	if (!IS_ERR(tfm))
		crypto_free_shash(tfm);
	memzero_explicit(hkey, sizeof(hkey));
	memzero_explicit(&skey, sizeof(skey));
	if (ret)
		return ret;

	for (i = 0; i < n; i++)
		ub_perm[i] = i;
	for (i = n - 1; i > 0; i--) {
		u32 j = ub_rand(&seed) % (i + 1), t = ub_perm[i];

		ub_perm[i] = ub_perm[j];
		ub_perm[j] = t;
	}

	/* Records, complete before any insert, in insertion order. */
	ub_uarena_bytes = uoff;
	ub_rarena_bytes = roff;
	ub_uarena = vzalloc(uoff);
	ub_rarena = vzalloc(roff);
	if (!ub_uarena || !ub_rarena)
		return -ENOMEM;
	uoff = roff = 0;
	for (i = 0; i < n; i++) {
		const struct ub_key *k = &ub_keys[i];
		struct uniqd_rec *rec = (void *)(ub_uarena + uoff);
		struct ub_robj *o = (void *)(ub_rarena + roff);

		rec->idx = o->rec.idx = i + 1;
		rec->class_id = o->rec.class_id = 1;
		rec->len = o->rec.len = k->len;
		memcpy(rec->data, ub_kbytes + k->off, k->len);
		memcpy(o->rec.data, ub_kbytes + k->off, k->len);
		o->hash = k->hash;
		ub_urec[i] = rec;
		ub_robj[i] = o;
		uoff += UNIQD_REC_SIZE(k->len);
		roff += ALIGN(sizeof(struct ub_robj) + k->len, 8);
	}
	UB_OUT("table-setup n=%u hash=%s key_bytes=%llu rec_size=%zu robj_size=%zu",
	       n, how, ub_content, sizeof(struct uniqd_rec),
	       sizeof(struct ub_robj));
	return 0;
}

static void ub_teardown(void)
{
	vfree(ub_keys);
	vfree(ub_perm);
	vfree(ub_urec);
	vfree(ub_robj);
	vfree(ub_kbytes);
	vfree(ub_uarena);
	vfree(ub_rarena);
	ub_keys = NULL;
	ub_perm = NULL;
	ub_urec = NULL;
	ub_robj = NULL;
	ub_kbytes = NULL;
	ub_uarena = ub_rarena = NULL;
}

static void ub_report(const char *impl, const char *op, u32 n, u32 round,
		      u64 ns, u64 best_ps)
{
	UB_OUT("table impl=%s op=%s n=%u round=%u ns=%llu best_ps=%llu", impl,
	       op, n, round, ns, best_ps);
}

/* Picoseconds per op of a slice of @ops that took @ns. */
static u64 ub_ps(u64 ns, u32 ops)
{
	return ops ? div64_u64(ns * 1000, ops) : U64_MAX;
}

/*
 * Every timed phase is cut into UB_CHUNKS slices that alternate between the
 * two tables (who goes first alternates too), so that a slow moment of the
 * shared host falls on both alike.
 */
#define UB_CHUNKS	128

static int ub_u_insert(struct uniqd_table *t, u32 from, u32 to, u64 *ns)
{
	u64 t0 = ub_now();
	u32 i;

	for (i = from; i < to; i++) {
		struct uniqd_rec *got;

		got = uniqd_table_insert(t, ub_keys[i].hash, ub_urec[i], NULL,
					 NULL);
		if (got != ub_urec[i])
			return IS_ERR(got) ? PTR_ERR(got) : -EEXIST;
		if (!(i & 1023))
			cond_resched();
	}
	*ns += ub_now() - t0;
	return 0;
}

static int ub_r_insert(struct rhashtable *ht, u32 from, u32 to, u64 *ns,
		       u64 *retries)
{
	u64 t0 = ub_now();
	u32 i;

	for (i = from; i < to; i++) {
		const struct ub_key *k = &ub_keys[i];
		struct ub_rkey rk = { k->hash, ub_kbytes + k->off, k->len };
		void *got;

		got = rhashtable_lookup_get_insert_key(ht, &rk,
						       &ub_robj[i]->node,
						       ub_rparams);
		if (IS_ERR(got) && (PTR_ERR(got) == -ENOMEM ||
				    PTR_ERR(got) == -EBUSY) &&
		    *retries < 1000000) {
			/* Atomic allocation or a pending rehash: again. */
			(*retries)++;
			cond_resched();
			i--;
			continue;
		}
		if (got)
			return IS_ERR(got) ? PTR_ERR(got) : -EEXIST;
		if (!(i & 1023))
			cond_resched();
	}
	*ns += ub_now() - t0;
	return 0;
}

/* Wait until no rehash is pending or running. */
static void ub_r_settle(struct rhashtable *ht)
{
	for (;;) {
		struct bucket_table *tbl;
		bool busy;

		flush_work(&ht->run_work);
		rcu_read_lock();
		tbl = rcu_dereference(ht->tbl);
		busy = rcu_access_pointer(tbl->future_tbl) ||
		       work_pending(&ht->run_work);
		rcu_read_unlock();
		if (!busy)
			return;
		cond_resched();
	}
}

static int ub_inserts(struct uniqd_table *ut, struct rhashtable *rt, u32 n,
		      u32 round)
{
	u64 uns = 0, rns = 0, retries = 0, t0;
	u32 c;
	int ret = 0;

	for (c = 0; c < UB_CHUNKS && !ret; c++) {
		u32 from = (u64)n * c / UB_CHUNKS;
		u32 to = (u64)n * (c + 1) / UB_CHUNKS;

		if ((c + round) & 1)
			ret = ub_r_insert(rt, from, to, &rns, &retries) ?:
			      ub_u_insert(ut, from, to, &uns);
		else
			ret = ub_u_insert(ut, from, to, &uns) ?:
			      ub_r_insert(rt, from, to, &rns, &retries);
	}
	if (ret)
		return ret;
	/* Slices of inserts differ (growing): only the totals mean something. */
	ub_report("uniqd", "insert", n, round, uns, 0);
	ub_report("rhashtable", "insert", n, round, rns, 0);
	/* rhashtable grows in a worker: the time until its table is settled. */
	t0 = ub_now();
	ub_r_settle(rt);
	ub_report("rhashtable", "settle", n, round, ub_now() - t0, 0);
	if (retries)
		UB_OUT("table-retries impl=rhashtable round=%u retries=%llu",
		       round, retries);
	return 0;
}

enum ub_op { UB_HIT, UB_MISS, UB_HOT };
static const char *const ub_op_name[] = { "hit", "miss", "hot" };

static const struct ub_key *ub_op_key(enum ub_op op, u32 n, u32 j)
{
	switch (op) {
	case UB_HIT:
		return &ub_keys[ub_perm[j]];
	case UB_MISS:
		return &ub_keys[n + ub_perm[j]];
	default:
		return &ub_keys[ub_perm[j % ub_hot]];
	}
}

static u64 ub_u_lookups(struct uniqd_table *t, enum ub_op op, u32 n, u32 from,
			u32 to, u64 *ns)
{
	u64 t0 = ub_now(), found = 0;
	u32 j;

	for (j = from; j < to; j++) {
		found += !!ub_u_find(t, ub_op_key(op, n, j));
		if (!(j & 1023))
			cond_resched();
	}
	*ns += ub_now() - t0;
	return found;
}

static u64 ub_r_lookups(struct rhashtable *ht, enum ub_op op, u32 n, u32 from,
			u32 to, u64 *ns)
{
	u64 t0 = ub_now(), found = 0;
	u32 j;

	for (j = from; j < to; j++) {
		found += !!ub_r_find(ht, ub_op_key(op, n, j));
		if (!(j & 1023))
			cond_resched();
	}
	*ns += ub_now() - t0;
	return found;
}

static int ub_lookups(struct uniqd_table *ut, struct rhashtable *rt,
		      enum ub_op op, u32 n, u32 round)
{
	u64 uns = 0, rns = 0, ufound = 0, rfound = 0, want;
	u64 ubest = U64_MAX, rbest = U64_MAX;
	u32 c;

	for (c = 0; c < UB_CHUNKS; c++) {
		u32 from = (u64)n * c / UB_CHUNKS;
		u32 to = (u64)n * (c + 1) / UB_CHUNKS;
		u64 u0 = uns, r0 = rns;

		if ((c + round) & 1) {
			rfound += ub_r_lookups(rt, op, n, from, to, &rns);
			ufound += ub_u_lookups(ut, op, n, from, to, &uns);
		} else {
			ufound += ub_u_lookups(ut, op, n, from, to, &uns);
			rfound += ub_r_lookups(rt, op, n, from, to, &rns);
		}
		ubest = min(ubest, ub_ps(uns - u0, to - from));
		rbest = min(rbest, ub_ps(rns - r0, to - from));
	}
	ub_report("uniqd", ub_op_name[op], n, round, uns, ubest);
	ub_report("rhashtable", ub_op_name[op], n, round, rns, rbest);
	want = op == UB_MISS ? 0 : n;
	return ufound == want && rfound == want ? 0 : -EIO;
}

/* Untimed: every present key finds its own record, no absent key any. */
static void ub_verify(struct uniqd_table *t, struct rhashtable *ht, u32 n)
{
	bool uok = true, rok = true;
	u32 i;

	for (i = 0; i < n; i++) {
		struct ub_robj *o;

		if (ub_u_find(t, &ub_keys[i]) != ub_urec[i] ||
		    ub_u_find(t, &ub_keys[n + i]))
			uok = false;
		o = ub_r_find(ht, &ub_keys[i]);
		if (o != ub_robj[i] || ub_r_find(ht, &ub_keys[n + i]))
			rok = false;
		if (!(i & 1023))
			cond_resched();
	}
	UB_OUT("table-verify impl=uniqd ok=%d", uok);
	UB_OUT("table-verify impl=rhashtable ok=%d", rok);
}

static void ub_memory(struct uniqd_table *t, struct rhashtable *ht, u32 n)
{
	struct bucket_table *tbl;
	u32 slots = uniqd_table_size(t), buckets, nest;

	rcu_read_lock();
	tbl = rcu_dereference(ht->tbl);
	buckets = tbl->size;
	nest = tbl->nest;
	rcu_read_unlock();
	UB_OUT("table-mem impl=uniqd n=%u slots=%u table_bytes=%llu rec_bytes=%llu content_bytes=%llu",
	       n, slots, uniqd_table_bytes(slots), ub_uarena_bytes, ub_content);
	UB_OUT("table-mem impl=rhashtable n=%u slots=%u table_bytes=%llu rec_bytes=%llu content_bytes=%llu nest=%u",
	       n, buckets,
	       (u64)buckets * sizeof(tbl->buckets[0]) + sizeof(*tbl),
	       ub_rarena_bytes, ub_content, nest);
}

int ub_table_run(void)
{
	u32 n = ub_nkeys, r;
	int ret;

	ret = ub_setup(n);
	if (ret)
		goto out;

	for (r = 0; r < ub_rounds && !ret; r++) {
		struct uniqd_table ut;
		struct rhashtable rt;
		enum ub_op op;

		ret = uniqd_table_init(&ut);
		if (ret)
			break;
		ret = rhashtable_init(&rt, &ub_rparams);
		if (ret) {
			uniqd_table_destroy(&ut);
			break;
		}
		ret = ub_inserts(&ut, &rt, n, r);
		if (!ret && r == 0) {
			ub_verify(&ut, &rt, n);
			ub_memory(&ut, &rt, n);
		}
		for (op = UB_HIT; op <= UB_HOT && !ret; op++)
			ret = ub_lookups(&ut, &rt, op, n, r);
		rhashtable_destroy(&rt);
		synchronize_rcu();
		uniqd_table_destroy(&ut);
	}
out:
	if (ret)
		UB_OUT("table-error err=%d", ret);
	ub_teardown();
	return ret;
}
