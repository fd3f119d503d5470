// SPDX-License-Identifier: GPL-2.0
/*
 * uniqd: one open-addressing hash table, used for class names (level 1) and
 * for each class's contents (level 2).
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

#include "table.h"

static struct uniqd_slots *uniqd_slots_alloc(u32 n)
{
	struct uniqd_slots *s;

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

static void uniqd_slots_free(struct uniqd_slots *s)
{
	kvfree(s->slot);
	kfree(s);
}

static void uniqd_slots_free_rcu(struct rcu_head *head)
{
	uniqd_slots_free(container_of(head, struct uniqd_slots, rcu));
}

int uniqd_table_init(struct uniqd_table *t)
{
	struct uniqd_slots *s;

	spin_lock_init(&t->lock);
	t->used = 0;
	s = uniqd_slots_alloc(UNIQD_TABLE_MIN_SLOTS);
	if (!s)
		return -ENOMEM;
	RCU_INIT_POINTER(t->slots, s);
	return 0;
}

/* Only when no reader and no writer can remain. */
void uniqd_table_destroy(struct uniqd_table *t)
{
	struct uniqd_slots *s = rcu_dereference_protected(t->slots, true);

	if (s)
		uniqd_slots_free(s);
	RCU_INIT_POINTER(t->slots, NULL);
}

static struct uniqd_rec *uniqd_probe(const struct uniqd_slots *s, u64 hash,
				     const void *key, u32 len)
{
	u32 i = (u32)hash & s->mask;

	/* Never more than 3/4 full: an empty slot always ends the probe. */
	for (;;) {
		const struct uniqd_slot *slot = &s->slot[i];
		/* Pairs with uniqd_slot_set(): the hash and record are written. */
		struct uniqd_rec *rec = smp_load_acquire(&slot->rec);

		if (!rec)
			return NULL;
		if (READ_ONCE(slot->hash) == hash && rec->len == len &&
		    !memcmp(rec->data, key, len))
			return rec;
		i = (i + 1) & s->mask;
	}
}

/* Caller holds rcu_read_lock(); the record lives as long as the pool. */
struct uniqd_rec *uniqd_table_find(struct uniqd_table *t, u64 hash,
				   const void *key, u32 len)
{
	return uniqd_probe(rcu_dereference(t->slots), hash, key, len);
}

static void uniqd_slot_set(struct uniqd_slots *s, u64 hash,
			   struct uniqd_rec *rec)
{
	u32 i = (u32)hash & s->mask;

	while (s->slot[i].rec)
		i = (i + 1) & s->mask;
	WRITE_ONCE(s->slot[i].hash, hash);
	/* Publish: pairs with the acquire in uniqd_probe(). */
	smp_store_release(&s->slot[i].rec, rec);
}

/* Under t->lock: move every slot of @old into the empty @new. */
static void uniqd_rehash(struct uniqd_slots *old, struct uniqd_slots *new)
{
	u32 i;

	for (i = 0; i <= old->mask; i++) {
		struct uniqd_slot *slot = &old->slot[i];

		if (slot->rec)
			uniqd_slot_set(new, slot->hash, slot->rec);
	}
}

/*
 * Insert @rec (complete, with its hash @hash) unless an equal record is
 * there. Returns the record that is in the table now: @rec if it was
 * inserted, the equal one found otherwise, or an ERR_PTR (-ENOMEM, or what
 * @publish returned). @publish, when not NULL, runs under t->lock right
 * before @rec becomes visible in the table; it must not sleep.
 */
struct uniqd_rec *uniqd_table_insert(struct uniqd_table *t, u64 hash,
				     struct uniqd_rec *rec,
				     uniqd_publish_fn publish, void *ctx)
{
	struct uniqd_slots *s, *ns = NULL;
	struct uniqd_rec *ret;
	int err;

	spin_lock(&t->lock);
	for (;;) {
		u32 size;

		s = rcu_dereference_protected(t->slots,
					      lockdep_is_held(&t->lock));
		ret = uniqd_probe(s, hash, rec->data, rec->len);
		if (ret)
			goto unlock;
		size = s->mask + 1;
		if ((u64)(t->used + 1) * 4 <= (u64)size * 3)
			break;

		/* Grow: with an array of the right size at hand, rehash. */
		if (ns && ns->mask == 2 * size - 1) {
			uniqd_rehash(s, ns);
			rcu_assign_pointer(t->slots, ns);
			call_rcu(&s->rcu, uniqd_slots_free_rcu);
			ns = NULL;
			continue;
		}
		if (size >= UNIQD_TABLE_MAX_SLOTS) {
			ret = ERR_PTR(-ENOMEM);
			goto unlock;
		}
		/* Allocating may sleep: drop the lock, then look again. */
		spin_unlock(&t->lock);
		if (ns)
			uniqd_slots_free(ns);
		ns = uniqd_slots_alloc(2 * size);
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
	uniqd_slot_set(s, hash, rec);
	t->used++;
	ret = rec;
unlock:
	spin_unlock(&t->lock);
	if (ns)
		uniqd_slots_free(ns);
	return ret;
}

/* The number of slots now. */
u32 uniqd_table_size(struct uniqd_table *t)
{
	u32 size;

	rcu_read_lock();
	size = rcu_dereference(t->slots)->mask + 1;
	rcu_read_unlock();
	return size;
}
