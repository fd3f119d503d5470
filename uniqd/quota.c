// SPDX-License-Identifier: GPL-2.0
/*
 * uniqd: per-user quotas, like the keyrings' key_user, charged up the user
 * namespace chain like ucounts.
 *
 * A call that makes a pool grow (a new entry, a new class, a new pool) is
 * charged to its caller's fsuid and to the owner of every user namespace
 * between the caller's and the initial one, each kuid once: a uid mapped
 * into a namespace can never hold more than the user who owns that
 * namespace may. The kernel's ucounts cannot be given new counters by a
 * module, so uniqd keeps its own per-kuid counters here. Each pool records
 * what it charged to whom (pool->charges) and gives all of it back when it
 * dies: whoever made a shared pool grow pays for that growth until the pool
 * is gone (Documentation/design.rst, "Per-user quotas").
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bug.h>
#include <linux/cred.h>
#include <linux/hashtable.h>
#include <linux/lockdep.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uidgid.h>
#include <linux/user_namespace.h>

#include "pool.h"
#include "quota.h"
#include "trace.h"

/* What one kuid holds across every pool. */
struct uniqd_user {
	struct hlist_node node;		/* in uniqd_users */
	kuid_t uid;
	unsigned int refs;		/* struct uniqd_charge pointing here */
	u64 bytes;
	u64 entries;
	u32 pools;
};

/*
 * uniqd_quota_lock guards uniqd_users, every struct uniqd_user, every
 * pool's charges list and every struct uniqd_charge. A spinlock, and the
 * innermost lock: nothing is taken under it and nothing under it sleeps
 * (uniqd_charge_add() allocates with it dropped). Which locks it is
 * taken under, and when alone: design.rst, "Locking", the one place the
 * lock order is written.
 */
static DEFINE_SPINLOCK(uniqd_quota_lock);
static DEFINE_HASHTABLE(uniqd_users, 6);

/* The caller and the owners of its user namespaces: 32 levels at most. */
#define UNIQD_PAYERS_MAX	34

static bool uniqd_kuid_in(const kuid_t *uids, unsigned int n, kuid_t uid)
{
	while (n--)
		if (uid_eq(uids[n], uid))
			return true;
	return false;
}

/*
 * Who pays for the current call: its fsuid (the uid that owns what it
 * creates), then the owner of its user namespace, of that one's parent, up
 * to (not including) the initial one. current's cred pins the chain.
 */
static unsigned int uniqd_payers(kuid_t *uids)
{
	const struct cred *cred = current_cred();
	const struct user_namespace *ns;
	unsigned int n = 0;

	uids[n++] = cred->fsuid;
	for (ns = cred->user_ns; ns != &init_user_ns && n < UNIQD_PAYERS_MAX;
	     ns = ns->parent)
		if (!uniqd_kuid_in(uids, n, ns->owner))
			uids[n++] = ns->owner;
	return n;
}

static struct uniqd_user *uniqd_user_find(kuid_t uid)
{
	struct uniqd_user *u;

	lockdep_assert_held(&uniqd_quota_lock);
	hash_for_each_possible(uniqd_users, u, node, __kuid_val(uid))
		if (uid_eq(u->uid, uid))
			return u;
	return NULL;
}

static struct uniqd_charge *uniqd_charge_find(struct uniqd_pool *pool,
					      kuid_t uid)
{
	struct uniqd_charge *c;

	lockdep_assert_held(&uniqd_quota_lock);
	list_for_each_entry(c, &pool->charges, node)
		if (uid_eq(c->user->uid, uid))
			return c;
	return NULL;
}

/*
 * Give @pool a charge record for @uid (and @uid a user, if it has none).
 * Allocates with the lock dropped; a record is never removed before its
 * pool dies, so once there it stays.
 */
static int uniqd_charge_add(struct uniqd_pool *pool, kuid_t uid)
{
	struct uniqd_charge *c;
	struct uniqd_user *u;

	c = kzalloc(sizeof(*c), GFP_KERNEL_ACCOUNT);
	u = kzalloc(sizeof(*u), GFP_KERNEL);
	if (!c || !u) {
		kfree(u);
		kfree(c);
		return -ENOMEM;
	}
	spin_lock(&uniqd_quota_lock);
	if (!uniqd_charge_find(pool, uid)) {
		c->user = uniqd_user_find(uid);
		if (!c->user) {
			u->uid = uid;
			hash_add(uniqd_users, &u->node, __kuid_val(uid));
			c->user = u;
			u = NULL;
		}
		c->user->refs++;
		list_add(&c->node, &pool->charges);
		c = NULL;
	}
	spin_unlock(&uniqd_quota_lock);
	kfree(u);
	kfree(c);
	return 0;
}

/* 0 if @u may grow by so much, else the UNIQD_LIMIT_* it would pass. */
static int uniqd_user_over(const struct uniqd_user *u, u64 bytes,
			   u64 entries, u32 pools)
{
	lockdep_assert_held(&uniqd_quota_lock);
	if (u->pools + pools > READ_ONCE(uniqd_max_user_pools))
		return UNIQD_LIMIT_USER_POOLS;
	if (u->bytes + bytes > READ_ONCE(uniqd_max_user_bytes))
		return UNIQD_LIMIT_USER_BYTES;
	if (u->entries + entries > READ_ONCE(uniqd_max_user_entries))
		return UNIQD_LIMIT_USER_ENTRIES;
	return 0;
}

/*
 * Charge the current caller's payers for @pool's growth by @bytes, @entries
 * and @pools: all of them or none. -EDQUOT when one of them would pass a
 * quota, -ENOMEM.
 */
int uniqd_quota_charge(struct uniqd_pool *pool, u64 bytes, u64 entries,
		       u32 pools)
{
	struct uniqd_charge *c[UNIQD_PAYERS_MAX];
	kuid_t uids[UNIQD_PAYERS_MAX];
	unsigned int i, n = uniqd_payers(uids);
	int ret, over;

again:
	spin_lock(&uniqd_quota_lock);
	for (i = 0; i < n; i++) {
		c[i] = uniqd_charge_find(pool, uids[i]);
		if (!c[i]) {
			spin_unlock(&uniqd_quota_lock);
			ret = uniqd_charge_add(pool, uids[i]);
			if (ret)
				return ret;
			goto again;
		}
		over = uniqd_user_over(c[i]->user, bytes, entries, pools);
		if (over) {
			spin_unlock(&uniqd_quota_lock);
			trace_uniqd_refuse(pool->id, over, -EDQUOT);
			return -EDQUOT;
		}
	}
	for (i = 0; i < n; i++) {
		c[i]->user->bytes += bytes;
		c[i]->user->entries += entries;
		c[i]->user->pools += pools;
		c[i]->bytes += bytes;
		c[i]->entries += entries;
		c[i]->pools += pools;
	}
	spin_unlock(&uniqd_quota_lock);
	return 0;
}

/* Undo a uniqd_quota_charge() of the same call that grew nothing after all. */
void uniqd_quota_uncharge(struct uniqd_pool *pool, u64 bytes, u64 entries)
{
	kuid_t uids[UNIQD_PAYERS_MAX];
	unsigned int i, n = uniqd_payers(uids);
	struct uniqd_charge *c;

	spin_lock(&uniqd_quota_lock);
	for (i = 0; i < n; i++) {
		c = uniqd_charge_find(pool, uids[i]);
		if (WARN_ON_ONCE(!c || c->bytes < bytes || c->entries < entries))
			continue;
		c->bytes -= bytes;
		c->entries -= entries;
		c->user->bytes -= bytes;
		c->user->entries -= entries;
	}
	spin_unlock(&uniqd_quota_lock);
}

/* The pool dies: give back everything it charged, to everyone. */
void uniqd_quota_release(struct uniqd_pool *pool)
{
	struct uniqd_charge *c, *next;
	struct uniqd_user *u;

	spin_lock(&uniqd_quota_lock);
	list_for_each_entry_safe(c, next, &pool->charges, node) {
		u = c->user;
		WARN_ON_ONCE(u->bytes < c->bytes || u->entries < c->entries ||
			     u->pools < c->pools);
		u->bytes -= c->bytes;
		u->entries -= c->entries;
		u->pools -= c->pools;
		list_del(&c->node);
		kfree(c);
		if (--u->refs)
			continue;
		/* Nobody's pool holds anything of this user's any more. */
		WARN_ON_ONCE(u->bytes || u->entries || u->pools);
		hash_del(&u->node);
		kfree(u);
	}
	spin_unlock(&uniqd_quota_lock);
}

/* True when no user holds anything: every pool is gone (module exit). */
bool uniqd_quota_idle(void)
{
	bool idle;

	spin_lock(&uniqd_quota_lock);
	idle = hash_empty(uniqd_users);
	spin_unlock(&uniqd_quota_lock);
	return idle;
}
