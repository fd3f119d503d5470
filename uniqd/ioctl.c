// SPDX-License-Identifier: GPL-2.0
/*
 * uniqd: ioctl decoding. Every command is described once in uniqd_ioctls[];
 * the generic code checks direction and size, copies the struct in with
 * copy_struct_from_user() (so larger structs from newer userspace work while
 * their unknown tail is zero), checks that the file is attached when the
 * command needs a pool, and copies the struct back out.
 *
 * Every field that comes from userspace is checked here before the pool
 * code sees it; Documentation/userspace-api.rst lists each errno.
 */
#include <linux/cred.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/sched/signal.h>
#include <linux/uaccess.h>

#include "keys.h"
#include "pool.h"
#include "uniqd.h"

union uniqd_ioctl_arg {
	struct uniqd_version version;
	struct uniqd_attach attach;
	struct uniqd_class class;
	struct uniqd_key key;
	struct uniqd_batch batch;
	struct uniqd_resolve resolve;
	struct uniqd_digest digest;
	struct uniqd_class_info class_info;
	struct uniqd_stats stats;
};

struct uniqd_ioctl_desc {
	unsigned int cmd;	/* the command with this ABI's struct size */
	unsigned int min_size;	/* the first published size of the struct */
	bool needs_pool;	/* -EBADFD unless the file is attached */
	bool copy_out_on_error;	/* the struct carries results even on error */
	bool copy_out_first;	/* check the struct is writable before acting */
	int (*fn)(struct uniqd_file *uf, struct uniqd_pool *pool, void *arg);
};

/* Set by main.c when the module registered "blake3" with the crypto API. */
bool uniqd_have_blake3_shash;

static int uniqd_ioc_version(struct uniqd_file *uf, struct uniqd_pool *pool,
			     void *arg)
{
	struct uniqd_version *v = arg;

	v->abi_version = UNIQD_ABI_VERSION;
	v->max_key_len = uniqd_max_key_len;
	v->features = UNIQD_FEAT_POOLS | UNIQD_FEAT_BATCH |
		      UNIQD_FEAT_RESOLVE | UNIQD_FEAT_STATS | UNIQD_FEAT_MAP;
	if (uniqd_have_blake3_shash)
		v->features |= UNIQD_FEAT_BLAKE3_SHASH;
	v->max_pool_name = UNIQD_POOL_NAME_MAX;
	v->max_class_name = UNIQD_CLASS_NAME_MAX;
	v->max_batch = UNIQD_BATCH_MAX;
	v->reserved = 0;
	return 0;
}

/* Name lengths: 0 is invalid, too long has its own errno. */
static int uniqd_check_name_len(u32 len, u32 max)
{
	if (!len)
		return -EINVAL;
	if (len > max)
		return -ENAMETOOLONG;
	return 0;
}

static int uniqd_ioc_attach(struct uniqd_file *uf, struct uniqd_pool *unused,
			    void *arg)
{
	struct uniqd_attach *a = arg;
	struct uniqd_attach_req req;
	u8 name[UNIQD_POOL_NAME_MAX];
	struct uniqd_pool *pool;
	bool created;
	int ret;

	if (a->flags & ~UNIQD_ATTACH_FLAGS)
		return -EINVAL;
	if ((a->flags & UNIQD_ATTACH_EXISTING) && (a->flags & UNIQD_ATTACH_NEW))
		return -EINVAL;
	ret = uniqd_check_name_len(a->name_len, UNIQD_POOL_NAME_MAX);
	if (ret)
		return ret;
	/* Limits above the module's maxima are refused, even for an existing pool. */
	if (a->max_bytes > uniqd_max_pool_bytes ||
	    a->max_entries > uniqd_max_pool_entries ||
	    a->max_classes > uniqd_max_pool_classes)
		return -EINVAL;

	mutex_lock(&uf->attach_lock);
	ret = -EBUSY;
	if (uf->pool)
		goto unlock;
	ret = -EFAULT;
	if (copy_from_user(name, u64_to_user_ptr(a->name), a->name_len))
		goto unlock;

	req.name = name;
	req.name_len = a->name_len;
	req.flags = a->flags;
	req.max_bytes = a->max_bytes;
	req.max_entries = a->max_entries;
	req.max_classes = a->max_classes;
	ret = uniqd_pool_attach(&req, &pool, &created);
	if (ret)
		goto unlock;
	/* Set once; pairs with the acquire in uniqd_ioctl(). */
	smp_store_release(&uf->pool, pool);

	a->max_bytes = pool->max_bytes;
	a->max_entries = pool->max_entries;
	a->max_classes = pool->max_classes;
	a->status = created ? UNIQD_ATTACH_CREATED : 0;
	a->owner_uid = from_kuid_munged(current_user_ns(), pool->owner);
	a->mode = pool->mode;
unlock:
	mutex_unlock(&uf->attach_lock);
	return ret;
}

static int uniqd_ioc_class(struct uniqd_file *uf, struct uniqd_pool *pool,
			   void *arg)
{
	struct uniqd_class *c = arg;
	u8 name[UNIQD_CLASS_NAME_MAX];
	bool created;
	int ret;

	if (c->flags & ~UNIQD_CLASS_EXISTING)
		return -EINVAL;
	ret = uniqd_check_name_len(c->name_len, UNIQD_CLASS_NAME_MAX);
	if (ret)
		return ret;
	if (copy_from_user(name, u64_to_user_ptr(c->name), c->name_len))
		return -EFAULT;
	ret = uniqd_class_get(pool, name, c->name_len,
			      !(c->flags & UNIQD_CLASS_EXISTING),
			      &c->class_id, &created);
	if (ret)
		return ret;
	c->status = created ? UNIQD_STATUS_NEW : 0;
	return 0;
}

/* One key of INTERN, LOOKUP or INTERN_BATCH. */
static int uniqd_do_key(struct uniqd_pool *pool, struct uniqd_key *k,
			bool create)
{
	struct uniqd_kclass *cls;
	bool created;
	int ret;

	if (k->flags)
		return -EINVAL;
	if (k->len > uniqd_max_key_len)
		return -EMSGSIZE;
	cls = uniqd_class_find(pool, k->class_id);
	if (!cls)
		return -UNIQD_ENOCLASS;
	ret = uniqd_intern(pool, cls, u64_to_user_ptr(k->data), k->len,
			   create, &k->handle, &created);
	if (ret)
		return ret;
	k->status = created ? UNIQD_STATUS_NEW : 0;
	return 0;
}

static int uniqd_ioc_intern(struct uniqd_file *uf, struct uniqd_pool *pool,
			    void *arg)
{
	return uniqd_do_key(pool, arg, true);
}

static int uniqd_ioc_lookup(struct uniqd_file *uf, struct uniqd_pool *pool,
			    void *arg)
{
	return uniqd_do_key(pool, arg, false);
}

static int uniqd_ioc_batch(struct uniqd_file *uf, struct uniqd_pool *pool,
			   void *arg)
{
	struct uniqd_batch *b = arg;
	struct uniqd_key __user *ukeys = u64_to_user_ptr(b->keys);
	bool create = !(b->flags & UNIQD_BATCH_LOOKUP);
	u32 first = b->done;
	struct uniqd_key k;
	int ret = 0;
	u32 i;

	if (b->reserved || (b->flags & ~UNIQD_BATCH_LOOKUP))
		return -EINVAL;
	if (b->key_size != sizeof(struct uniqd_key))
		return -EINVAL;
	if (b->count > UNIQD_BATCH_MAX)
		return -E2BIG;
	if (b->done > b->count)
		return -EINVAL;
	/* created counts from done == 0, across restarts of one batch. */
	if (!b->done)
		b->created = 0;

	for (i = first; i < b->count; i++) {
		if (i != first) {
			/* done is written back: a restart goes on from here. */
			if (signal_pending(current)) {
				ret = -ERESTARTSYS;
				break;
			}
			cond_resched();
		}
		if (copy_from_user(&k, &ukeys[i], sizeof(k))) {
			ret = -EFAULT;
			break;
		}
		ret = uniqd_do_key(pool, &k, create);
		if (ret)
			break;
		if (put_user(k.status, &ukeys[i].status) ||
		    put_user(k.handle, &ukeys[i].handle)) {
			ret = -EFAULT;
			break;
		}
		if (k.status & UNIQD_STATUS_NEW)
			b->created++;
		b->done = i + 1;
	}
	return ret;
}

static int uniqd_ioc_resolve(struct uniqd_file *uf, struct uniqd_pool *pool,
			     void *arg)
{
	struct uniqd_resolve *r = arg;
	struct uniqd_rec *rec;

	if (r->reserved)
		return -EINVAL;
	rec = uniqd_resolve(pool, r->handle);
	if (IS_ERR(rec))
		return PTR_ERR(rec);
	r->class_id = rec->class_id;
	r->len = rec->len;
	if (!r->buf_len)
		return 0;
	if (r->buf_len < rec->len)
		return -ERANGE;
	if (copy_to_user(u64_to_user_ptr(r->buf), rec->data, rec->len))
		return -EFAULT;
	return 0;
}

static int uniqd_ioc_digest(struct uniqd_file *uf, struct uniqd_pool *pool,
			    void *arg)
{
	struct uniqd_digest *d = arg;
	struct uniqd_kclass *cls;
	struct uniqd_rec *rec;

	rec = uniqd_resolve(pool, d->handle);
	if (IS_ERR(rec))
		return PTR_ERR(rec);
	cls = uniqd_class_find(pool, rec->class_id);
	if (WARN_ON_ONCE(!cls))
		return -EIO;
	return uniqd_keys_digest(pool->digest_tfm, cls->name->data,
				 cls->name->len, rec->data, rec->len,
				 d->digest);
}

static int uniqd_ioc_stats(struct uniqd_file *uf, struct uniqd_pool *pool,
			   void *arg)
{
	uniqd_pool_stats(pool, arg);
	return 0;
}

static int uniqd_ioc_class_info(struct uniqd_file *uf, struct uniqd_pool *pool,
				void *arg)
{
	struct uniqd_class_info *ci = arg;
	struct uniqd_kclass *cls;

	if (ci->reserved)
		return -EINVAL;
	cls = uniqd_class_find(pool, ci->class_id);
	if (!cls)
		return -UNIQD_ENOCLASS;
	ci->name_len = cls->name->len;
	ci->entries = atomic64_read(&cls->entries);
	if (!ci->name || !ci->name_buf_len)
		return 0;
	if (ci->name_buf_len < cls->name->len)
		return -ERANGE;
	if (copy_to_user(u64_to_user_ptr(ci->name), cls->name->data,
			 cls->name->len))
		return -EFAULT;
	return 0;
}

#define UNIQD_IOCTL_MIN(_cmd, _min, _fn, _pool, _out_on_err, _out_first) \
	[_IOC_NR(_cmd)] = {						\
		.cmd = _cmd, .min_size = _min,				\
		.needs_pool = _pool, .copy_out_on_error = _out_on_err,	\
		.copy_out_first = _out_first, .fn = _fn,		\
	}
#define UNIQD_IOCTL(_cmd, _fn, _pool, _out_on_err, _out_first)		\
	UNIQD_IOCTL_MIN(_cmd, _IOC_SIZE(_cmd), _fn, _pool, _out_on_err,	\
			_out_first)

static_assert(offsetof(struct uniqd_stats, map_bytes) == UNIQD_STATS_SIZE_VER0);

static const struct uniqd_ioctl_desc uniqd_ioctls[] = {
	UNIQD_IOCTL(UNIQD_IOC_VERSION, uniqd_ioc_version, false, false, false),
	/* Attaching cannot be undone: fail before it if the result cannot go out. */
	UNIQD_IOCTL(UNIQD_IOC_ATTACH, uniqd_ioc_attach, false, false, true),
	UNIQD_IOCTL(UNIQD_IOC_CLASS, uniqd_ioc_class, true, false, false),
	UNIQD_IOCTL(UNIQD_IOC_INTERN, uniqd_ioc_intern, true, false, false),
	UNIQD_IOCTL(UNIQD_IOC_LOOKUP, uniqd_ioc_lookup, true, false, false),
	UNIQD_IOCTL(UNIQD_IOC_INTERN_BATCH, uniqd_ioc_batch, true, true, false),
	UNIQD_IOCTL(UNIQD_IOC_RESOLVE, uniqd_ioc_resolve, true, true, false),
	UNIQD_IOCTL(UNIQD_IOC_DIGEST, uniqd_ioc_digest, true, false, false),
	/* The map_* fields came later: the first STATS is still served. */
	UNIQD_IOCTL_MIN(UNIQD_IOC_STATS, UNIQD_STATS_SIZE_VER0,
			uniqd_ioc_stats, true, false, false),
	UNIQD_IOCTL(UNIQD_IOC_CLASS_INFO, uniqd_ioc_class_info, true, true, false),
};

long uniqd_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct uniqd_file *uf = file->private_data;
	const struct uniqd_ioctl_desc *desc;
	void __user *uarg = (void __user *)arg;
	union uniqd_ioctl_arg karg;
	unsigned int nr = _IOC_NR(cmd);
	unsigned int usize = _IOC_SIZE(cmd);
	struct uniqd_pool *pool = NULL;
	unsigned int ksize;
	int ret;

	if (_IOC_TYPE(cmd) != UNIQD_IOC_MAGIC || nr >= ARRAY_SIZE(uniqd_ioctls))
		return -ENOTTY;
	desc = &uniqd_ioctls[nr];
	if (!desc->fn || _IOC_DIR(cmd) != _IOC_DIR(desc->cmd))
		return -ENOTTY;
	/* Older, shorter structs than the first published one never existed. */
	if (usize < desc->min_size)
		return -EINVAL;

	ksize = _IOC_SIZE(desc->cmd);
	if (_IOC_DIR(cmd) & _IOC_WRITE) {
		ret = copy_struct_from_user(&karg, ksize, uarg, usize);
		if (ret)
			return ret;
	} else {
		memset(&karg, 0, ksize);
	}

	if (desc->needs_pool) {
		/* Pairs with the release in uniqd_ioc_attach(). */
		pool = smp_load_acquire(&uf->pool);
		if (!pool)
			return -EBADFD;
	}
	if (desc->copy_out_first && copy_to_user(uarg, &karg, min(usize, ksize)))
		return -EFAULT;

	ret = desc->fn(uf, pool, &karg);

	if ((_IOC_DIR(cmd) & _IOC_READ) && (!ret || desc->copy_out_on_error)) {
		if (copy_to_user(uarg, &karg, min(usize, ksize)))
			return -EFAULT;
	}
	return ret;
}
