// SPDX-License-Identifier: GPL-2.0
/*
 * uniqd: classes and their entries. Level 1 maps a class name to its class
 * (pool->names, then pool->classes by id); level 2, one table per class,
 * maps content to its record, whose index in pool->entries is the low half
 * of the handle.
 */
#include <linux/err.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "keys.h"
#include "map.h"
#include "pool.h"
#include "quota.h"
#include "trace.h"

/* Contents up to this long are copied to the stack, longer ones to the heap. */
#define UNIQD_KEY_ON_STACK	256

static void uniqd_hit(struct uniqd_pool *pool)
{
	this_cpu_inc(pool->stats->hits);
}

static void uniqd_miss(struct uniqd_pool *pool)
{
	this_cpu_inc(pool->stats->misses);
}

/* Reserve @size arena bytes against max_bytes; never goes above it. */
static bool uniqd_bytes_reserve(struct uniqd_pool *pool, u64 size)
{
	s64 old = atomic64_read(&pool->arena_bytes);

	do {
		if (old + size > pool->max_bytes)
			return false;
	} while (!atomic64_try_cmpxchg(&pool->arena_bytes, &old, old + size));
	return true;
}

static void uniqd_bytes_unreserve(struct uniqd_pool *pool, u64 size)
{
	atomic64_sub(size, &pool->arena_bytes);
}

/*
 * Give back a record that was never published: its arena bytes if it still
 * is the latest allocation, and then its @size bytes of max_bytes; else
 * they stay counted as used.
 */
static void uniqd_rec_waste(struct uniqd_pool *pool, struct uniqd_rec *rec,
			    size_t arena_size, size_t size)
{
	if (uniqd_arena_unalloc(&pool->arena, rec, arena_size))
		uniqd_bytes_unreserve(pool, size);
}

/*
 * Publishing a record: store @entry at the reserved index @idx of @xa, and
 * for an entry, its offset in entries[] of the mapping (@slot).
 */
struct uniqd_publish {
	struct xarray *xa;
	u32 idx;
	void *entry;
	struct uniqd_map_slot *slot;
};

/*
 * Runs under a table spinlock. The index was reserved by xa_alloc(), so
 * replacing the reservation allocates nothing and cannot fail; the
 * mapping's entry page was allocated beforehand.
 */
static void uniqd_publish_xa(void *ctx, struct uniqd_rec *rec)
{
	struct uniqd_publish *p = ctx;

	WARN_ON_ONCE(xa_is_err(xa_store(p->xa, p->idx, p->entry, GFP_NOWAIT)));
	if (p->slot)
		uniqd_map_entry_publish(p->slot);
}

struct uniqd_kclass *uniqd_class_find(struct uniqd_pool *pool, u32 id)
{
	return xa_load(&pool->classes, id);
}

/* Look the class name up: its id, or 0. */
static u32 uniqd_class_lookup(struct uniqd_pool *pool, u64 hash,
			      const u8 *name, u32 len)
{
	struct uniqd_rec *rec = uniqd_table_find(&pool->names, hash, name, len);

	return rec ? rec->idx : 0;
}

/*
 * The class called @name (1..UNIQD_CLASS_NAME_MAX bytes, in kernel memory):
 * its id, registering it first if @create. Errors: -ENOENT (absent and not
 * @create), -EDQUOT (max_classes or max_bytes), -ENOMEM.
 */
int uniqd_class_get(struct uniqd_pool *pool, const u8 *name, u32 len,
		    bool create, u32 *id, bool *created)
{
	size_t size = UNIQD_REC_SIZE(len);
	size_t arena_size = sizeof(struct uniqd_rec) + ALIGN(len, 8);
	struct uniqd_publish pub = {};
	struct uniqd_kclass *cls;
	struct uniqd_rec *rec, *got;
	u64 hash;
	u32 cid;
	int ret;

	*created = false;
	ret = uniqd_keys_hash(pool->hash_tfm, name, len, &hash);
	if (ret)
		return ret;
	*id = uniqd_class_lookup(pool, hash, name, len);
	if (*id)
		return 0;
	if (!create)
		return -ENOENT;

	/* Registration is rare: one at a time per pool. */
	mutex_lock(&pool->class_mutex);
	*id = uniqd_class_lookup(pool, hash, name, len);
	if (*id)
		goto unlock;
	ret = -EDQUOT;
	if (atomic_read(&pool->nr_classes) >= pool->max_classes) {
		trace_uniqd_refuse(pool->id, UNIQD_LIMIT_CLASSES, ret);
		goto unlock;
	}
	if (!uniqd_bytes_reserve(pool, size)) {
		trace_uniqd_refuse(pool->id, UNIQD_LIMIT_BYTES, ret);
		goto unlock;
	}
	/* The caller's users pay for the name until the pool dies. */
	ret = uniqd_quota_charge(pool, size, 0, 0);
	if (ret)
		goto unreserve;

	ret = -ENOMEM;
	cls = kzalloc(sizeof(*cls), GFP_KERNEL_ACCOUNT);
	if (!cls)
		goto uncharge;
	atomic64_set(&cls->entries, 0);
	if (uniqd_table_init(&cls->table))
		goto free_cls;
	rec = uniqd_arena_alloc(&pool->arena, arena_size);
	if (!rec)
		goto free_table;

	/* Reserve the id: xa_load() sees NULL until the class is complete. */
	ret = xa_alloc(&pool->classes, &cid, NULL,
		       XA_LIMIT(1, pool->max_classes), GFP_KERNEL_ACCOUNT);
	if (ret) {
		if (ret == -EBUSY)
			ret = -EDQUOT;
		goto free_rec;
	}
	rec->idx = cid;
	rec->class_id = 0;
	rec->len = len;
	rec->flags = 0;
	memcpy(rec + 1, name, len);
	rec->data = (const u8 *)(rec + 1);
	cls->id = cid;
	cls->name = rec;

	/* The class goes into pool->classes right before its name is visible. */
	pub.xa = &pool->classes;
	pub.idx = cid;
	pub.entry = cls;
	got = uniqd_table_insert(&pool->names, hash, rec, uniqd_publish_xa, &pub);
	if (IS_ERR(got)) {
		ret = PTR_ERR(got);
		xa_erase(&pool->classes, cid);
		goto free_rec;
	}
	/* Nobody else registers names: class_mutex is held. */
	WARN_ON_ONCE(got != rec);
	atomic_inc(&pool->nr_classes);
	*id = cid;
	*created = true;
	ret = 0;
	goto unlock;

free_rec:
	/* Unreserves the bytes it can give back; the rest stay counted. */
	uniqd_rec_waste(pool, rec, arena_size, size);
	uniqd_table_destroy(&cls->table);
	kfree(cls);
	uniqd_quota_uncharge(pool, size, 0);
	goto unlock;
free_table:
	uniqd_table_destroy(&cls->table);
free_cls:
	kfree(cls);
uncharge:
	uniqd_quota_uncharge(pool, size, 0);
unreserve:
	uniqd_bytes_unreserve(pool, size);
unlock:
	mutex_unlock(&pool->class_mutex);
	return ret;
}

/* Pool teardown: no file is attached, so no reader or writer remains. */
void uniqd_classes_free(struct uniqd_pool *pool)
{
	struct uniqd_kclass *cls;
	unsigned long id;

	xa_for_each(&pool->classes, id, cls) {
		uniqd_table_destroy(&cls->table);
		kfree(cls);
		cond_resched();
	}
	xa_destroy(&pool->classes);
}

/*
 * The miss path: reserve the bytes and an index, write the record, then
 * insert it unless another inserter was faster (then give everything back
 * and return theirs). Returns the record in the table, or an ERR_PTR;
 * *@created says whether it is ours.
 */
static struct uniqd_rec *uniqd_entry_new(struct uniqd_pool *pool,
					 struct uniqd_kclass *cls, u64 hash,
					 const void *buf, u32 len,
					 bool *created)
{
	size_t size = UNIQD_REC_SIZE(len);
	struct uniqd_map_slot slot;
	struct uniqd_publish pub;
	struct uniqd_rec *rec, *got, *out = NULL;
	bool back = true;
	u32 idx;
	int ret;

	if (!uniqd_bytes_reserve(pool, size)) {
		trace_uniqd_refuse(pool->id, UNIQD_LIMIT_BYTES, -EDQUOT);
		return ERR_PTR(-EDQUOT);
	}
	/* The caller's users pay for the entry until the pool dies. */
	ret = uniqd_quota_charge(pool, size, 1, 0);
	if (ret)
		goto unreserve;
	ret = xa_alloc(&pool->entries, &idx, NULL,
		       XA_LIMIT(1, pool->max_entries), GFP_KERNEL_ACCOUNT);
	if (ret == -EBUSY) {
		ret = -EDQUOT;
		trace_uniqd_refuse(pool->id, UNIQD_LIMIT_ENTRIES, ret);
	}
	if (ret)
		goto uncharge;
	/* The kernel record first: failing then wastes no mapped space. */
	ret = -ENOMEM;
	rec = uniqd_arena_alloc(&pool->arena, sizeof(*rec));
	if (!rec)
		goto erase;
	ret = uniqd_map_entry_new(&pool->map, idx, cls->id, buf, len, &slot);
	if (ret)
		goto unalloc;
	rec->idx = idx;
	rec->class_id = cls->id;
	rec->len = len;
	rec->flags = 0;
	rec->data = slot.rec->data;

	/* The handle resolves right before the content can be found. */
	pub.xa = &pool->entries;
	pub.idx = idx;
	pub.entry = rec;
	pub.slot = &slot;
	got = uniqd_table_insert(&cls->table, hash, rec, uniqd_publish_xa, &pub);
	if (got != rec) {
		/* An error, or another inserter won: neither was ever visible. */
		out = got;
		goto waste_map;
	}
	atomic64_inc(&cls->entries);
	atomic64_inc(&pool->nr_entries);
	atomic64_add(len, &pool->content_bytes);
	/* Now processes may find it without asking (index.c). */
	uniqd_map_index_add(&pool->map, cls->id, rec->data, len, idx);
	*created = true;
	trace_uniqd_entry_create(uniqd_handle(pool, idx), cls->id, len);
	return rec;

	/*
	 * Its max_bytes go back only if all its space did: what still takes
	 * room (in the records region, sized from max_bytes) stays counted,
	 * so max_bytes fills first and STATS.arena_bytes shows it.
	 */
waste_map:
	back = uniqd_map_entry_waste(&pool->map, &slot);
unalloc:
	back &= uniqd_arena_unalloc(&pool->arena, rec, sizeof(*rec));
erase:
	xa_erase(&pool->entries, idx);
uncharge:
	uniqd_quota_uncharge(pool, size, 1);
unreserve:
	if (back)
		uniqd_bytes_unreserve(pool, size);
	return out ?: ERR_PTR(ret);
}

/*
 * INTERN (@create) or LOOKUP @len bytes at @udata in class @cls: the handle,
 * and whether this call created the entry. Errors: -EFAULT, -ENOMEM,
 * -ENOENT (LOOKUP miss), -EDQUOT (a limit stops a new entry).
 */
int uniqd_intern(struct uniqd_pool *pool, struct uniqd_kclass *cls,
		 const void __user *udata, u32 len, bool create,
		 u64 *handle, bool *created)
{
	u8 stack[UNIQD_KEY_ON_STACK];
	struct uniqd_rec *rec;
	void *buf = stack;
	u64 hash;
	int ret;

	*created = false;
	if (len > sizeof(stack)) {
		buf = kvmalloc(len, GFP_KERNEL_ACCOUNT);
		if (!buf)
			return -ENOMEM;
	}
	ret = -EFAULT;
	if (copy_from_user(buf, udata, len))
		goto out;
	ret = uniqd_keys_hash(pool->hash_tfm, buf, len, &hash);
	if (ret)
		goto out;

	rec = uniqd_table_find(&cls->table, hash, buf, len);
	if (!rec && create) {
		rec = uniqd_entry_new(pool, cls, hash, buf, len, created);
		/* A limit was hit, but the entry may have been added meanwhile. */
		if (PTR_ERR_OR_ZERO(rec) == -EDQUOT)
			rec = uniqd_table_find(&cls->table, hash, buf, len) ?: rec;
		if (IS_ERR(rec)) {
			ret = PTR_ERR(rec);
			goto out;
		}
	}
	if (!rec) {
		uniqd_miss(pool);
		ret = -ENOENT;
		goto out;
	}
	if (*created)
		uniqd_miss(pool);
	else
		uniqd_hit(pool);
	*handle = uniqd_handle(pool, rec->idx);
	ret = 0;
out:
	if (buf != stack)
		kvfree(buf);
	return ret;
}

/* The record of @handle: ERR_PTR(-EXDEV) if of another pool, -ENOENT. */
struct uniqd_rec *uniqd_resolve(struct uniqd_pool *pool, u64 handle)
{
	struct uniqd_rec *rec;
	u32 idx = (u32)handle;

	if ((u32)(handle >> 32) != pool->id)
		return ERR_PTR(-EXDEV);
	if (!idx)
		return ERR_PTR(-ENOENT);
	rec = xa_load(&pool->entries, idx);
	return rec ? rec : ERR_PTR(-ENOENT);
}
