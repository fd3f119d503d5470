// SPDX-License-Identifier: GPL-2.0
/*
 * uniqd_bench: the open-addressing table uniqd used before it moved to
 * rhashtable (Documentation/benchmarks.rst), kept only in the benchmark so
 * that the decision can be measured again. Not part of uniqd.ko.
 *
 * Slots are { hash, rec }, linear probing, a power of two of them, grown to
 * twice the size when an insert would take the load above 3/4, never
 * deleted. A slot is written once: its hash first, then its record pointer
 * with release semantics; a reader loads the pointer with acquire semantics
 * first (NULL ends the probe), then compares the hash, the length and the
 * bytes. Readers only hold rcu_read_lock(). Writers hold t->lock, a
 * spinlock; growing allocates the new array with the lock dropped, rehashes
 * under the lock, publishes it with rcu_assign_pointer() and frees the old
 * one after a grace period.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "bench_oa_table.h"

static struct ub_oa_slots *ub_oa_slots_alloc(u32 n)
{
	struct ub_oa_slots *s;

	s = kmalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
	if (!s)
		return NULL;
	s->slot = kvcalloc(n, sizeof(*s->slot), GFP_KERNEL_ACCOUNT);
	if (!s->slot) {
		kfree(s);
		return NULL;
	}
	s->mask = n - 1;
	return s;
}

static void ub_oa_slots_free(struct ub_oa_slots *s)
{
	kvfree(s->slot);
	kfree(s);
}

static void ub_oa_slots_free_rcu(struct rcu_head *head)
{
	ub_oa_slots_free(container_of(head, struct ub_oa_slots, rcu));
}

int ub_oa_table_init(struct ub_oa_table *t)
{
	struct ub_oa_slots *s;

	spin_lock_init(&t->lock);
	t->used = 0;
	s = ub_oa_slots_alloc(UB_OA_TABLE_MIN_SLOTS);
	if (!s)
		return -ENOMEM;
	RCU_INIT_POINTER(t->slots, s);
	return 0;
}

/* Only when no reader and no writer can remain. */
void ub_oa_table_destroy(struct ub_oa_table *t)
{
	struct ub_oa_slots *s = rcu_dereference_protected(t->slots, true);

	if (s)
		ub_oa_slots_free(s);
	RCU_INIT_POINTER(t->slots, NULL);
}

static struct ub_oa_rec *ub_oa_probe(const struct ub_oa_slots *s, u64 hash,
				     const void *key, u32 len)
{
	u32 i = (u32)hash & s->mask;

	/* Never more than 3/4 full: an empty slot always ends the probe. */
	for (;;) {
		const struct ub_oa_slot *slot = &s->slot[i];
		/* Pairs with ub_oa_slot_set(): the hash and record are written. */
		struct ub_oa_rec *rec = smp_load_acquire(&slot->rec);

		if (!rec)
			return NULL;
		if (READ_ONCE(slot->hash) == hash && rec->len == len &&
		    !memcmp(rec->data, key, len))
			return rec;
		i = (i + 1) & s->mask;
	}
}

/* Caller holds rcu_read_lock(); the record lives as long as the pool. */
struct ub_oa_rec *ub_oa_table_find(struct ub_oa_table *t, u64 hash,
				   const void *key, u32 len)
{
	return ub_oa_probe(rcu_dereference(t->slots), hash, key, len);
}

static void ub_oa_slot_set(struct ub_oa_slots *s, u64 hash,
			   struct ub_oa_rec *rec)
{
	u32 i = (u32)hash & s->mask;

	while (s->slot[i].rec)
		i = (i + 1) & s->mask;
	WRITE_ONCE(s->slot[i].hash, hash);
	/* Publish: pairs with the acquire in ub_oa_probe(). */
	smp_store_release(&s->slot[i].rec, rec);
}

/* Under t->lock: move every slot of @old into the empty @new. */
static void ub_oa_rehash(struct ub_oa_slots *old, struct ub_oa_slots *new)
{
	u32 i;

	for (i = 0; i <= old->mask; i++) {
		struct ub_oa_slot *slot = &old->slot[i];

		if (slot->rec)
			ub_oa_slot_set(new, slot->hash, slot->rec);
	}
}

/*
 * Insert @rec (complete, with its hash @hash) unless an equal record is
 * there. Returns the record that is in the table now: @rec if it was
 * inserted, the equal one found otherwise, or an ERR_PTR (-ENOMEM, or what
 * @publish returned). @publish, when not NULL, runs under t->lock right
 * before @rec becomes visible in the table; it must not sleep.
 */
struct ub_oa_rec *ub_oa_table_insert(struct ub_oa_table *t, u64 hash,
				     struct ub_oa_rec *rec,
				     ub_oa_publish_fn publish, void *ctx)
{
	struct ub_oa_slots *s, *ns = NULL;
	struct ub_oa_rec *ret;
	int err;

	spin_lock(&t->lock);
	for (;;) {
		u32 size;

		s = rcu_dereference_protected(t->slots,
					      lockdep_is_held(&t->lock));
		ret = ub_oa_probe(s, hash, rec->data, rec->len);
		if (ret)
			goto unlock;
		size = s->mask + 1;
		if ((u64)(t->used + 1) * 4 <= (u64)size * 3)
			break;

		/* Grow: with an array of the right size at hand, rehash. */
		if (ns && ns->mask == 2 * size - 1) {
			ub_oa_rehash(s, ns);
			rcu_assign_pointer(t->slots, ns);
			call_rcu(&s->rcu, ub_oa_slots_free_rcu);
			ns = NULL;
			continue;
		}
		if (size >= UB_OA_TABLE_MAX_SLOTS) {
			ret = ERR_PTR(-ENOMEM);
			goto unlock;
		}
		/* Allocating may sleep: drop the lock, then look again. */
		spin_unlock(&t->lock);
		if (ns)
			ub_oa_slots_free(ns);
		ns = ub_oa_slots_alloc(2 * size);
		if (!ns)
			return ERR_PTR(-ENOMEM);
		spin_lock(&t->lock);
	}

	if (publish) {
		err = publish(ctx, rec);
		if (err) {
			ret = ERR_PTR(err);
			goto unlock;
		}
	}
	ub_oa_slot_set(s, hash, rec);
	t->used++;
	ret = rec;
unlock:
	spin_unlock(&t->lock);
	if (ns)
		ub_oa_slots_free(ns);
	return ret;
}

/* The number of slots now. */
u32 ub_oa_table_size(struct ub_oa_table *t)
{
	u32 size;

	rcu_read_lock();
	size = rcu_dereference(t->slots)->mask + 1;
	rcu_read_unlock();
	return size;
}
