// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libuniqd: opening and closing pools, device and pool information, and
 * classes (uniqd_class() and the UNIQD_CLASS() slow path, through the
 * handle's cache of class names, class_cache.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#define UQ_OPEN_FLAGS (UNIQD_OPEN_EXISTING | UNIQD_OPEN_NEW | \
		       UNIQD_OPEN_SHARE_GROUP | UNIQD_OPEN_SHARE_ALL | \
		       UNIQD_OPEN_OWNED | UNIQD_OPEN_OVERRIDE | \
		       UNIQD_OPEN_NOCACHE | UNIQD_OPEN_NOMAP)

/* The library flags are the kernel's where they overlap. */
_Static_assert(UNIQD_OPEN_EXISTING == UNIQD_ATTACH_EXISTING, "flag");
_Static_assert(UNIQD_OPEN_NEW == UNIQD_ATTACH_NEW, "flag");
_Static_assert(UNIQD_OPEN_SHARE_GROUP == UNIQD_ATTACH_SHARE_GROUP, "flag");
_Static_assert(UNIQD_OPEN_SHARE_ALL == UNIQD_ATTACH_SHARE_ALL, "flag");
_Static_assert(UNIQD_OPEN_OWNED == UNIQD_ATTACH_OWNED, "flag");
_Static_assert(UNIQD_OPEN_OVERRIDE == UNIQD_ATTACH_OVERRIDE, "flag");

static uint64_t uq_serial_counter;

uint32_t uq_new_serial(void)
{
	uint64_t s = __atomic_add_fetch(&uq_serial_counter, 1, __ATOMIC_RELAXED);

	/* Never reuse a serial: a cached class id or handle would go stale. */
	return s > UINT32_MAX ? 0 : (uint32_t)s;
}

int uq_ioctl(const uniqd_pool *pool, unsigned long request, void *arg)
{
	int r;

	do
		r = uq_sys_ioctl(pool->fd, request, arg);
	while (r < 0 && errno == EINTR);
	return r;
}

static int uq_version(int fd, struct uniqd_device_info *info)
{
	struct uniqd_version v;
	int r;

	memset(&v, 0, sizeof(v));
	do
		r = uq_sys_ioctl(fd, UNIQD_IOC_VERSION, &v);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -1;
	info->abi_version = v.abi_version;
	info->max_key_len = v.max_key_len;
	info->features = v.features;
	info->max_pool_name = v.max_pool_name;
	info->max_class_name = v.max_class_name;
	info->max_batch = v.max_batch;
	info->reserved = 0;
	return 0;
}

const char *uq_device(const char *device)
{
	return device && *device ? device : UNIQD_DEVICE_PATH;
}

int uq_open_device(const char *dev)
{
	int fd = uq_sys_open(dev, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return uq_fail(UQ_CALL_OPEN_DEVICE, errno,
			       &(struct uq_failure){ .device = dev });
	return fd;
}

int uniqd_device_info(const char *device, struct uniqd_device_info *info)
{
	const char *dev = uq_device(device);
	int fd, err;

	if (!info)
		return uq_fail(UQ_CALL_ARGS, EINVAL, NULL);
	fd = uq_open_device(dev);
	if (fd < 0)
		return -1;
	if (uq_version(fd, info) < 0) {
		err = errno;
		uq_sys_close(fd);
		return uq_fail(UQ_CALL_VERSION, err,
			       &(struct uq_failure){ .device = dev });
	}
	uq_sys_close(fd);
	return 0;
}

uniqd_pool *uniqd_open(const char *name, unsigned int flags)
{
	if (!name) {
		uq_fail(UQ_CALL_ARGS, EINVAL, NULL);
		return NULL;
	}
	return uniqd_open_ex(NULL, name, strlen(name), flags, NULL);
}

uniqd_pool *uniqd_open_ex(const char *device, const void *name,
			  size_t name_len, unsigned int flags,
			  const struct uniqd_limits *limits)
{
	return uq_open(device, name, name_len, flags, limits, 0);
}

uniqd_pool *uq_open(const char *device, const void *name, size_t name_len,
		    unsigned int flags, const struct uniqd_limits *limits,
		    uint32_t restore_id)
{
	const char *dev = uq_device(device);
	struct uq_failure f = { .name = name, .name_len = name_len, .device = dev };
	struct uniqd_attach a;
	struct uniqd_pool *p;
	bool old_module;
	const char *env;
	int err;

	/* What the module would say; the name is copied below. */
	if (!name || name_len == 0 || name_len > UNIQD_POOL_NAME_MAX ||
	    (flags & ~UQ_OPEN_FLAGS) || (limits && limits->reserved) ||
	    ((flags & UNIQD_OPEN_EXISTING) && (flags & UNIQD_OPEN_NEW))) {
		err = name_len > UNIQD_POOL_NAME_MAX ? ENAMETOOLONG : EINVAL;
		if (name_len > UNIQD_POOL_NAME_MAX)
			f.name_len = UNIQD_POOL_NAME_MAX;
		uq_fail(UQ_CALL_ATTACH, err, &f);
		return NULL;
	}

	p = calloc(1, sizeof(*p));
	if (!p) {
		uq_fail(UQ_CALL_MEMORY, ENOMEM, &f);
		return NULL;
	}
	p->head.serial_ = uq_new_serial();
	if (!p->head.serial_) {
		free(p);
		uq_fail(UQ_CALL_ARGS, EMFILE, &f);
		return NULL;
	}
	memcpy(p->info.name, name, name_len);
	p->info.name_len = (uint32_t)name_len;
	p->nocache = flags & UNIQD_OPEN_NOCACHE;
	env = getenv("UNIQD_NOCACHE");
	if (env && *env && strcmp(env, "0"))
		p->nocache = true;

	p->fd = uq_sys_open(dev, O_RDWR | O_CLOEXEC);
	if (p->fd < 0) {
		uq_fail(UQ_CALL_OPEN_DEVICE, errno, &f);
		goto free_pool;
	}
	if (uq_version(p->fd, &p->info.device) < 0) {
		uq_fail(UQ_CALL_VERSION, errno, &f);
		goto close_fd;
	}
	if (p->info.device.abi_version != UNIQD_ABI_VERSION) {
		uq_fail(UQ_CALL_VERSION, EPROTONOSUPPORT, &f);
		goto close_fd;
	}
	p->max_key_len = p->info.device.max_key_len;
	p->max_batch = p->info.device.max_batch;
	if (!p->max_batch || p->max_batch > UNIQD_BATCH_MAX)
		p->max_batch = UNIQD_BATCH_MAX;

	memset(&a, 0, sizeof(a));
	a.name = (uintptr_t)name;
	a.name_len = (uint32_t)name_len;
	a.flags = flags & UNIQD_ATTACH_FLAGS;
	/*
	 * A module before UNIQD_FEAT_ATTACH_OWNER refuses the two flags: it
	 * always let CAP_DAC_OVERRIDE in, and OWNED is checked below.
	 */
	old_module = !(p->info.device.features & UNIQD_FEAT_ATTACH_OWNER);
	if (old_module)
		a.flags &= ~(UNIQD_ATTACH_OWNED | UNIQD_ATTACH_OVERRIDE);
	if (restore_id) {
		if (!(p->info.device.features & UNIQD_FEAT_RESTORE)) {
			errno = EOPNOTSUPP;
			uq_fail(UQ_CALL_ATTACH, errno, &f);
			goto close_fd;
		}
		a.flags |= UNIQD_ATTACH_RESTORE;
		a.pool_id = restore_id;
	}
	if (limits) {
		a.max_bytes = limits->max_bytes;
		a.max_entries = limits->max_entries;
		a.max_classes = limits->max_classes;
	}
	if (uq_ioctl(p, UNIQD_IOC_ATTACH, &a) < 0) {
		uq_fail(UQ_CALL_ATTACH, errno, &f);
		goto close_fd;
	}
	p->info.max_bytes = a.max_bytes;
	p->info.max_entries = a.max_entries;
	p->info.max_classes = a.max_classes;
	p->info.owner_uid = a.owner_uid;
	p->info.mode = a.mode;
	p->info.created = !!(a.status & UNIQD_ATTACH_CREATED);
	p->pool_id = a.pool_id;
	if (old_module && (flags & UNIQD_OPEN_OWNED) && a.owner_uid != (__u32)geteuid()) {
		errno = EPERM;
		uq_fail(UQ_CALL_ATTACH, errno, &f);
		goto close_fd;
	}

	if (uq_class_cache_init(&p->classes)) {
		uq_fail(UQ_CALL_MEMORY, ENOMEM, &f);
		goto close_fd;
	}
	/* Best effort: without the mapping every call asks the kernel. */
	uq_map_open(p, flags & UNIQD_OPEN_NOMAP);
	return p;

close_fd:
	err = errno;
	uq_sys_close(p->fd);
	errno = err;
free_pool:
	free(p);
	return NULL;
}

int uniqd_close(uniqd_pool *pool)
{
	int r;

	if (!pool)
		return 0;
	uq_map_close(pool);
	r = uq_sys_close(pool->fd);
	uq_class_cache_destroy(&pool->classes);
	free(pool);
	return r;
}

int uniqd_fd(const uniqd_pool *pool)
{
	if (!pool) {
		errno = EINVAL;
		return -1;
	}
	return pool->fd;
}

int uniqd_pool_info(const uniqd_pool *pool, struct uniqd_pool_info *info)
{
	if (!pool || !info)
		return uq_fail(UQ_CALL_ARGS, EINVAL, NULL);
	*info = pool->info;
	return 0;
}

/* ---- classes ------------------------------------------------------------- */

uint32_t uniqd_class_n(uniqd_pool *pool, const void *name, size_t len,
		       unsigned int flags)
{
	enum uq_call call = flags & UNIQD_CLASS_FIND ? UQ_CALL_CLASS_FIND
						     : UQ_CALL_CLASS;
	struct uq_failure f = { .pool = pool, .subject = name, .subject_len = len };
	struct uniqd_class c;
	uint64_t hash;
	uint32_t id;

	if (!pool || !name || len == 0 || len > UNIQD_CLASS_NAME_MAX ||
	    (flags & ~UNIQD_CLASS_FIND)) {
		if (len > UNIQD_CLASS_NAME_MAX)
			f.subject_len = UNIQD_CLASS_NAME_MAX;
		uq_fail(call, pool && name && len > UNIQD_CLASS_NAME_MAX ?
			ENAMETOOLONG : EINVAL, &f);
		return 0;
	}
	/* The library's one hash (the uapi header's), without seed or class. */
	hash = uniqd_maphash(0, 0, 0, name, (uint32_t)len);
	id = uq_class_cache_get(&pool->classes, hash, name, (uint32_t)len);
	if (id)
		return id;

	memset(&c, 0, sizeof(c));
	c.name = (uintptr_t)name;
	c.name_len = (uint32_t)len;
	c.flags = flags & UNIQD_CLASS_FIND ? UNIQD_CLASS_EXISTING : 0;
	if (uq_ioctl(pool, UNIQD_IOC_CLASS, &c) < 0) {
		uq_fail(call, errno, &f);
		return 0;
	}
	if (!c.class_id) {	/* the ABI promises non-zero */
		uq_fail(call, EPROTO, &f);
		return 0;
	}
	uq_class_cache_put(&pool->classes, hash, name, (uint32_t)len, c.class_id);
	return c.class_id;
}

uint32_t uniqd_class(uniqd_pool *pool, const char *name)
{
	if (!name) {
		uq_fail(UQ_CALL_CLASS, EINVAL, &(struct uq_failure){ .pool = pool });
		return 0;
	}
	return uniqd_class_n(pool, name, strlen(name), 0);
}

uint32_t uniqd_class_cached_slow_(uniqd_pool *pool,
				  struct uniqd_class_slot *slot,
				  const char *name)
{
	uint32_t id;

	if (!pool || !slot) {
		uq_fail(UQ_CALL_CLASS, EINVAL, NULL);
		return 0;
	}
	id = uniqd_class(pool, name);
	/*
	 * Registering is idempotent, so threads racing here all store the same
	 * word; the release pairs with the acquire in uniqd_class_cached().
	 */
	if (id)
		__atomic_store_n(&slot->word,
				 (uint64_t)pool->head.serial_ << 32 | id,
				 __ATOMIC_RELEASE);
	return id;
}

const char *uniqd_version(void)
{
	return LIBUNIQD_VERSION_STRING;
}
