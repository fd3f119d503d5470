// SPDX-License-Identifier: GPL-2.0
/*
 * uniqd's table (uniqd/table.c, compiled into this module: rhashtable with
 * the publish-before-visible lock and flag) against plain rhashtable with
 * the same parameters, and against the open-addressing table uniqd used
 * before (bench_oa_table.c), on the same keys with the same 64-bit hashes,
 * in the same run.
 *
 * Keys: ub_nkeys present and as many absent ones, 4..32 bytes of identifier
 * characters whose last four encode the key's number (so all differ),
 * hashed once before anything is timed with uniqd's own table-key function
 * (uniqd_hash_64() of hash.c, compiled in: keyed BLAKE3 through the
 * crypto API) or, without uniqd loaded, keyed SipHash. No table hashes: each gets the 64-bit hash as input.
 *
 * Records: each table has its own copy of every record, packed in one array
 * as uniqd's arena packs them: struct uniqd_rec (rhashtable's link, the
 * 64-bit hash, a 16-byte header) for uniqd and rhashtable, the old 16-byte
 * header for open addressing (whose slots keep the hash). Lookups compare
 * the 64-bit hash, the length, then memcmp(), in all three. Lookup keys
 * live apart from the records, as a copied-in key does.
 *
 * rhashtable: variable-length keys (key_len 0, hashfn/obj_hashfn/obj_cmpfn),
 * rhashtable_lookup_get_insert_key() to insert, rhashtable_lookup_fast() to
 * look up; its 32-bit hash folds the 64-bit one with the seed, as table.c
 * does. All tables start at 64 slots/buckets and grow at 3/4 load.
 *
 *   UBENCH table-setup n=.. hash=.. key_bytes=..
 *   UBENCH table impl=uniqd|rhashtable|openaddr op=insert|settle|hit|miss|hot n=.. round=.. ns=.. best_ps=..
 *
 * ns is a round's total; best_ps the picoseconds per lookup of its fastest
 * slice (on a busy host most slices lose the CPU for a while).
 *   UBENCH table-mem impl=.. n=.. slots=.. table_bytes=.. rec_bytes=.. content_bytes=..
 *   UBENCH table-verify impl=.. ok=0|1
 */
#include <linux/err.h>
#include <linux/hash.h>
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
#include "bench_oa_table.h"
#include "hash.h"
#include "table.h"

struct ub_key {
	u64 hash;
	u32 len;
	u32 off;		/* into ub_kbytes */
};

/* What rhashtable_lookup_fast() is given: the lookup key, as a pointer. */
struct ub_rkey {
	u64 hash;
	const u8 *data;
	u32 len;
};

enum ub_impl { UB_UNIQD, UB_RHT, UB_OA, UB_NIMPL };
static const char *const ub_impl_name[UB_NIMPL] = {
	"uniqd", "rhashtable", "openaddr"
};

struct ub_tables {
	struct uniqd_table u;
	struct rhashtable r;
	struct ub_oa_table o;
};

static struct ub_key *ub_keys;	/* [0, n) present, [n, 2n) absent */
static u8 *ub_kbytes;
static u32 *ub_perm;		/* lookup order: a permutation of [0, n) */
static struct uniqd_rec **ub_urec, **ub_rrec;
static struct ub_oa_rec **ub_orec;
static u8 *ub_arena[UB_NIMPL];
static u64 ub_arena_bytes[UB_NIMPL];
static u64 ub_content;

static u32 ub_r_hashfn(const void *data, u32 len, u32 seed)
{
	const struct ub_rkey *k = data;

	return hash_64(k->hash ^ seed, 32);
}

static u32 ub_r_obj_hashfn(const void *data, u32 len, u32 seed)
{
	const struct uniqd_rec *rec = data;

	return hash_64(rec->hash ^ seed, 32);
}

static int ub_r_obj_cmpfn(struct rhashtable_compare_arg *arg, const void *obj)
{
	const struct ub_rkey *k = arg->key;
	const struct uniqd_rec *rec = obj;

	return rec->hash != k->hash || rec->len != k->len ||
	       memcmp(rec->data, k->data, k->len);
}

/*
 * table.c's parameters, written out again: rhashtable's inline lookup only
 * specialises on parameters that are a constant in the calling file.
 */
static const struct rhashtable_params ub_rparams = {
	.head_offset = offsetof(struct uniqd_rec, node),
	.hashfn = ub_r_hashfn,
	.obj_hashfn = ub_r_obj_hashfn,
	.obj_cmpfn = ub_r_obj_cmpfn,
	.min_size = UNIQD_TABLE_MIN_SLOTS,
};

static noinline void *ub_u_find(struct ub_tables *t, const struct ub_key *k)
{
	return uniqd_table_find(&t->u, k->hash, ub_kbytes + k->off, k->len);
}

static noinline void *ub_r_find(struct ub_tables *t, const struct ub_key *k)
{
	struct ub_rkey rk = { k->hash, ub_kbytes + k->off, k->len };

	return rhashtable_lookup_fast(&t->r, &rk, ub_rparams);
}

static noinline void *ub_o_find(struct ub_tables *t, const struct ub_key *k)
{
	void *rec;

	rcu_read_lock();
	rec = ub_oa_table_find(&t->o, k->hash, ub_kbytes + k->off, k->len);
	rcu_read_unlock();
	return rec;
}

static void *ub_find(enum ub_impl impl, struct ub_tables *t,
		     const struct ub_key *k)
{
	switch (impl) {
	case UB_UNIQD:
		return ub_u_find(t, k);
	case UB_RHT:
		return ub_r_find(t, k);
	default:
		return ub_o_find(t, k);
	}
}

static const char ub_chars[] =
	"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_";

/* A record of key @i for @impl, at @p (zeroed). */
static void ub_rec_fill(enum ub_impl impl, void *p, u32 i)
{
	const struct ub_key *k = &ub_keys[i];

	if (impl == UB_OA) {
		struct ub_oa_rec *rec = p;

		rec->idx = i + 1;
		rec->class_id = 1;
		rec->len = k->len;
		memcpy(rec->data, ub_kbytes + k->off, k->len);
	} else {
		struct uniqd_rec *rec = p;

		rec->hash = k->hash;
		rec->idx = i + 1;
		rec->class_id = 1;
		rec->len = k->len;
		/* As uniqd's class names: the bytes right after the record. */
		memcpy(rec + 1, ub_kbytes + k->off, k->len);
		rec->data = (const u8 *)(rec + 1);
	}
}

static size_t ub_rec_size(enum ub_impl impl, u32 len)
{
	return impl == UB_OA ? UB_OA_REC_SIZE(len) :
			       sizeof(struct uniqd_rec) + ALIGN(len, 8);
}

/* Keys, their hashes, the lookup order and every table's records. */
static int ub_setup(u32 n)
{
	struct crypto_shash *tfm;
	siphash_key_t skey;
	u64 seed = 0x75d1c2b3a4f5e607ULL, off = 0;
	enum ub_impl impl;
	const char *how;
	u32 i;
	int ret = 0;

	ub_keys = vmalloc(array_size(2 * n, sizeof(*ub_keys)));
	ub_perm = vmalloc(array_size(n, sizeof(*ub_perm)));
	ub_urec = vmalloc(array_size(n, sizeof(*ub_urec)));
	ub_rrec = vmalloc(array_size(n, sizeof(*ub_rrec)));
	ub_orec = vmalloc(array_size(n, sizeof(*ub_orec)));
	ub_kbytes = vmalloc(array_size(2 * n, 32));
	if (!ub_keys || !ub_perm || !ub_urec || !ub_rrec || !ub_orec ||
	    !ub_kbytes)
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
		if (i >= n)
			continue;
		ub_content += len;
		for (impl = 0; impl < UB_NIMPL; impl++)
			ub_arena_bytes[impl] += ub_rec_size(impl, len);
	}

	/* The hashes: uniqd's table keys (hash.c), else SipHash. */
	tfm = uniqd_hash_tfm_keyed();
	how = IS_ERR(tfm) ? "siphash" : "blake3-keyed";
	get_random_bytes(&skey, sizeof(skey));
	for (i = 0; i < 2 * n; i++) {
		const u8 *p = ub_kbytes + ub_keys[i].off;

		if (!IS_ERR(tfm)) {
			ret = uniqd_hash_64(tfm, p, ub_keys[i].len,
					      &ub_keys[i].hash);
			if (ret)
				break;
		} else {
			ub_keys[i].hash = siphash(p, ub_keys[i].len, &skey);
		}
		if (!(i & 1023))
			cond_resched();
	}
	if (!IS_ERR(tfm))
		uniqd_hash_tfm_free(tfm);
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
	for (impl = 0; impl < UB_NIMPL; impl++) {
		ub_arena[impl] = vzalloc(ub_arena_bytes[impl]);
		if (!ub_arena[impl])
			return -ENOMEM;
		off = 0;
		for (i = 0; i < n; i++) {
			void *p = ub_arena[impl] + off;

			ub_rec_fill(impl, p, i);
			if (impl == UB_UNIQD)
				ub_urec[i] = p;
			else if (impl == UB_RHT)
				ub_rrec[i] = p;
			else
				ub_orec[i] = p;
			off += ub_rec_size(impl, ub_keys[i].len);
		}
	}
	UB_OUT("table-setup n=%u hash=%s key_bytes=%llu rec_size=%zu oa_rec_size=%zu",
	       n, how, ub_content, sizeof(struct uniqd_rec),
	       sizeof(struct ub_oa_rec));
	return 0;
}

static void ub_teardown(void)
{
	enum ub_impl impl;

	vfree(ub_keys);
	vfree(ub_perm);
	vfree(ub_urec);
	vfree(ub_rrec);
	vfree(ub_orec);
	vfree(ub_kbytes);
	ub_keys = NULL;
	ub_perm = NULL;
	ub_urec = ub_rrec = NULL;
	ub_orec = NULL;
	ub_kbytes = NULL;
	for (impl = 0; impl < UB_NIMPL; impl++) {
		vfree(ub_arena[impl]);
		ub_arena[impl] = NULL;
		ub_arena_bytes[impl] = 0;
	}
	ub_content = 0;
}

static void ub_report(enum ub_impl impl, const char *op, u32 n, u32 round,
		      u64 ns, u64 best_ps)
{
	UB_OUT("table impl=%s op=%s n=%u round=%u ns=%llu best_ps=%llu",
	       ub_impl_name[impl], op, n, round, ns, best_ps);
}

/* Picoseconds per op of a slice of @ops that took @ns. */
static u64 ub_ps(u64 ns, u32 ops)
{
	return ops ? div64_u64(ns * 1000, ops) : U64_MAX;
}

/*
 * Every timed phase is cut into UB_CHUNKS slices that go round the tables
 * (who goes first rotates too), so that a slow moment of the shared host
 * falls on all alike.
 */
#define UB_CHUNKS	128

/* The table that goes @j-th in slice @c of round @round. */
static enum ub_impl ub_turn(u32 c, u32 round, u32 j)
{
	return (c + round + j) % UB_NIMPL;
}

static int ub_r_insert(struct rhashtable *ht, u32 i, u64 *retries)
{
	const struct ub_key *k = &ub_keys[i];
	struct ub_rkey rk = { k->hash, ub_kbytes + k->off, k->len };
	void *got;

	for (;;) {
		got = rhashtable_lookup_get_insert_key(ht, &rk, &ub_rrec[i]->node,
						       ub_rparams);
		if (!IS_ERR(got) || (PTR_ERR(got) != -ENOMEM &&
				     PTR_ERR(got) != -EBUSY) ||
		    *retries >= 1000000)
			break;
		/* Atomic allocation or a pending rehash: again. */
		(*retries)++;
		cond_resched();
	}
	if (got)
		return IS_ERR(got) ? PTR_ERR(got) : -EEXIST;
	return 0;
}

static int ub_insert(enum ub_impl impl, struct ub_tables *t, u32 from, u32 to,
		     u64 *ns, u64 *retries)
{
	u64 t0 = ub_now();
	u32 i;
	int ret = 0;

	for (i = from; i < to && !ret; i++) {
		const struct ub_key *k = &ub_keys[i];
		void *got;

		switch (impl) {
		case UB_UNIQD:
			got = uniqd_table_insert(&t->u, k->hash, ub_urec[i],
						 NULL, NULL);
			if (got != ub_urec[i])
				ret = IS_ERR(got) ? PTR_ERR(got) : -EEXIST;
			break;
		case UB_RHT:
			ret = ub_r_insert(&t->r, i, retries);
			break;
		default:
			got = ub_oa_table_insert(&t->o, k->hash, ub_orec[i],
						 NULL, NULL);
			if (got != ub_orec[i])
				ret = IS_ERR(got) ? PTR_ERR(got) : -EEXIST;
			break;
		}
		if (!(i & 1023))
			cond_resched();
	}
	*ns += ub_now() - t0;
	return ret;
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

static int ub_inserts(struct ub_tables *t, u32 n, u32 round)
{
	u64 ns[UB_NIMPL] = {}, retries = 0, t0;
	enum ub_impl impl;
	u32 c, j;
	int ret = 0;

	for (c = 0; c < UB_CHUNKS && !ret; c++) {
		u32 from = (u64)n * c / UB_CHUNKS;
		u32 to = (u64)n * (c + 1) / UB_CHUNKS;

		for (j = 0; j < UB_NIMPL && !ret; j++) {
			impl = ub_turn(c, round, j);
			ret = ub_insert(impl, t, from, to, &ns[impl], &retries);
		}
	}
	if (ret)
		return ret;
	/* Slices of inserts differ (growing): only the totals mean something. */
	for (impl = 0; impl < UB_NIMPL; impl++)
		ub_report(impl, "insert", n, round, ns[impl], 0);
	/* rhashtable grows in a worker: the time until its table is settled. */
	t0 = ub_now();
	ub_r_settle(&t->u.ht);
	ub_report(UB_UNIQD, "settle", n, round, ub_now() - t0, 0);
	t0 = ub_now();
	ub_r_settle(&t->r);
	ub_report(UB_RHT, "settle", n, round, ub_now() - t0, 0);
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

static u64 ub_lookup_slice(enum ub_impl impl, struct ub_tables *t,
			   enum ub_op op, u32 n, u32 from, u32 to, u64 *ns)
{
	u64 t0 = ub_now(), found = 0;
	u32 j;

	for (j = from; j < to; j++) {
		found += !!ub_find(impl, t, ub_op_key(op, n, j));
		if (!(j & 1023))
			cond_resched();
	}
	*ns += ub_now() - t0;
	return found;
}

static int ub_lookups(struct ub_tables *t, enum ub_op op, u32 n, u32 round)
{
	u64 ns[UB_NIMPL] = {}, found[UB_NIMPL] = {}, best[UB_NIMPL], want;
	enum ub_impl impl;
	u32 c, j;
	int ret = 0;

	for (impl = 0; impl < UB_NIMPL; impl++)
		best[impl] = U64_MAX;
	for (c = 0; c < UB_CHUNKS; c++) {
		u32 from = (u64)n * c / UB_CHUNKS;
		u32 to = (u64)n * (c + 1) / UB_CHUNKS;

		for (j = 0; j < UB_NIMPL; j++) {
			u64 before;

			impl = ub_turn(c, round, j);
			before = ns[impl];
			found[impl] += ub_lookup_slice(impl, t, op, n, from, to,
						       &ns[impl]);
			best[impl] = min(best[impl],
					 ub_ps(ns[impl] - before, to - from));
		}
	}
	want = op == UB_MISS ? 0 : n;
	for (impl = 0; impl < UB_NIMPL; impl++) {
		ub_report(impl, ub_op_name[op], n, round, ns[impl], best[impl]);
		if (found[impl] != want)
			ret = -EIO;
	}
	return ret;
}

/* Untimed: every present key finds its own record, no absent key any. */
static void ub_verify(struct ub_tables *t, u32 n)
{
	bool ok[UB_NIMPL] = { true, true, true };
	enum ub_impl impl;
	u32 i;

	for (i = 0; i < n; i++) {
		void *own[UB_NIMPL] = { ub_urec[i], ub_rrec[i], ub_orec[i] };

		for (impl = 0; impl < UB_NIMPL; impl++)
			if (ub_find(impl, t, &ub_keys[i]) != own[impl] ||
			    ub_find(impl, t, &ub_keys[n + i]))
				ok[impl] = false;
		if (!(i & 1023))
			cond_resched();
	}
	for (impl = 0; impl < UB_NIMPL; impl++)
		UB_OUT("table-verify impl=%s ok=%d", ub_impl_name[impl],
		       ok[impl]);
}

static void ub_memory(struct ub_tables *t, u32 n)
{
	struct bucket_table *tbl;
	u32 slots[UB_NIMPL], nest;
	u64 bytes[UB_NIMPL];
	enum ub_impl impl;

	slots[UB_UNIQD] = uniqd_table_size(&t->u);
	bytes[UB_UNIQD] = uniqd_table_bytes(slots[UB_UNIQD]);
	rcu_read_lock();
	tbl = rcu_dereference(t->r.tbl);
	slots[UB_RHT] = tbl->size;
	nest = tbl->nest;
	rcu_read_unlock();
	bytes[UB_RHT] = uniqd_table_bytes(slots[UB_RHT]);
	slots[UB_OA] = ub_oa_table_size(&t->o);
	bytes[UB_OA] = ub_oa_table_bytes(slots[UB_OA]);
	for (impl = 0; impl < UB_NIMPL; impl++)
		UB_OUT("table-mem impl=%s n=%u slots=%u table_bytes=%llu rec_bytes=%llu content_bytes=%llu nest=%u",
		       ub_impl_name[impl], n, slots[impl], bytes[impl],
		       ub_arena_bytes[impl], ub_content,
		       impl == UB_RHT ? nest : 0);
}

int ub_table_run(void)
{
	struct ub_tables *t;
	u32 n = ub_nkeys, r;
	int ret;

	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	ret = ub_setup(n);
	for (r = 0; r < ub_rounds && !ret; r++) {
		enum ub_op op;

		ret = uniqd_table_init(&t->u);
		if (ret)
			break;
		ret = rhashtable_init(&t->r, &ub_rparams);
		if (ret) {
			uniqd_table_destroy(&t->u);
			break;
		}
		ret = ub_oa_table_init(&t->o);
		if (ret) {
			rhashtable_destroy(&t->r);
			uniqd_table_destroy(&t->u);
			break;
		}
		ret = ub_inserts(t, n, r);
		if (!ret && r == 0) {
			ub_verify(t, n);
			ub_memory(t, n);
		}
		for (op = UB_HIT; op <= UB_HOT && !ret; op++)
			ret = ub_lookups(t, op, n, r);
		rhashtable_destroy(&t->r);
		uniqd_table_destroy(&t->u);
		synchronize_rcu();
		ub_oa_table_destroy(&t->o);
	}
	if (ret)
		UB_OUT("table-error err=%d", ret);
	ub_teardown();
	kfree(t);
	return ret;
}
