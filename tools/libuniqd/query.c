// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libuniqd: from handles back to content and digests; statistics and class
 * information.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

ssize_t uniqd_resolve(uniqd_pool *pool, uint64_t handle, void *buf,
		      size_t buf_len, uint32_t *class_id)
{
	const struct uniqd_map_rec *mr;
	struct uniqd_resolve r;

	if (!pool || (!buf && buf_len))
		return uq_fail(UQ_CALL_RESOLVE, EINVAL,
			       &(struct uq_failure){ .pool = pool, .num = handle });
	/* From the mapping when it has the entry: no system call. */
	mr = uq_map_rec(pool, handle);
	if (mr) {
		if (class_id)
			*class_id = mr->class_id;
		if (buf_len >= mr->len && mr->len)
			memcpy(buf, mr->data, mr->len);
		return mr->len;
	}
	memset(&r, 0, sizeof(r));
	r.handle = handle;
	r.buf = (uintptr_t)buf;
	r.buf_len = buf_len > UINT32_MAX ? UINT32_MAX : (uint32_t)buf_len;
	if (uq_ioctl(pool, UNIQD_IOC_RESOLVE, &r) < 0) {
		/* Too short a buffer: the length needed is the answer. */
		if (errno == ERANGE && r.len > r.buf_len) {
			if (class_id && r.class_id)
				*class_id = r.class_id;
			return r.len;
		}
		return uq_fail(UQ_CALL_RESOLVE, errno,
			       &(struct uq_failure){ .pool = pool, .num = handle });
	}
	if (class_id)
		*class_id = r.class_id;
	return r.len;
}

void *uniqd_resolve_alloc(uniqd_pool *pool, uint64_t handle, size_t *len,
			  uint32_t *class_id)
{
	char small[256];
	ssize_t n, m;
	char *buf;

	/* One call for short content, two for long. */
	n = uniqd_resolve(pool, handle, small, sizeof(small), class_id);
	if (n < 0)
		return NULL;
	buf = malloc((size_t)n + 1);
	if (!buf) {
		uq_fail(UQ_CALL_MEMORY, ENOMEM, &(struct uq_failure){ .pool = pool });
		return NULL;
	}
	if ((size_t)n <= sizeof(small)) {
		memcpy(buf, small, (size_t)n);
	} else {
		m = uniqd_resolve(pool, handle, buf, (size_t)n, class_id);
		if (m != n) {	/* content is immutable: m == n or an error */
			int err = m < 0 ? errno : EPROTO;

			free(buf);
			if (m >= 0)
				uq_fail(UQ_CALL_RESOLVE, err,
					&(struct uq_failure){ .pool = pool, .num = handle });
			errno = err;
			return NULL;
		}
	}
	buf[n] = '\0';
	if (len)
		*len = (size_t)n;
	return buf;
}

int uniqd_digest(uniqd_pool *pool, uint64_t handle,
		 uint8_t digest[UNIQD_DIGEST_SIZE])
{
	struct uniqd_digest d;

	if (!pool || !digest)
		return uq_fail(UQ_CALL_DIGEST, EINVAL,
			       &(struct uq_failure){ .pool = pool, .num = handle });
	memset(&d, 0, sizeof(d));
	d.handle = handle;
	if (uq_ioctl(pool, UNIQD_IOC_DIGEST, &d) < 0)
		return uq_fail(UQ_CALL_DIGEST, errno,
			       &(struct uq_failure){ .pool = pool, .num = handle });
	memcpy(digest, d.digest, UNIQD_DIGEST_SIZE);
	return 0;
}

int uniqd_stats(uniqd_pool *pool, struct uniqd_pool_stats *st)
{
	struct uniqd_stats s;

	if (!pool || !st)
		return uq_fail(UQ_CALL_STATS, EINVAL,
			       &(struct uq_failure){ .pool = pool });
	memset(&s, 0, sizeof(s));
	if (uq_ioctl(pool, UNIQD_IOC_STATS, &s) < 0)
		return uq_fail(UQ_CALL_STATS, errno,
			       &(struct uq_failure){ .pool = pool });
	st->entries = s.entries;
	st->bytes = s.bytes;
	st->arena_bytes = s.arena_bytes;
	st->table_bytes = s.table_bytes;
	st->hits = s.hits;
	st->misses = s.misses;
	st->table_slots = s.table_slots;
	st->max_bytes = s.max_bytes;
	st->max_entries = s.max_entries;
	st->classes = s.classes;
	st->max_classes = s.max_classes;
	st->class_slots = s.class_slots;
	st->attached = s.attached;
	return 0;
}

int uniqd_class_info(uniqd_pool *pool, uint32_t class_id,
		     struct uniqd_class_desc *desc)
{
	struct uniqd_class_info ci;

	if (!pool || !desc)
		return uq_fail(UQ_CALL_CLASS_INFO, EINVAL,
			       &(struct uq_failure){ .pool = pool, .num = class_id });
	memset(desc, 0, sizeof(*desc));
	memset(&ci, 0, sizeof(ci));
	ci.class_id = class_id;
	ci.name = (uintptr_t)desc->name;
	ci.name_buf_len = sizeof(desc->name) - 1;
	if (uq_ioctl(pool, UNIQD_IOC_CLASS_INFO, &ci) < 0)
		return uq_fail(UQ_CALL_CLASS_INFO, errno,
			       &(struct uq_failure){ .pool = pool, .num = class_id });
	if (ci.name_len >= sizeof(desc->name))
		return uq_fail(UQ_CALL_CLASS_INFO, EPROTO,
			       &(struct uq_failure){ .pool = pool, .num = class_id });
	desc->class_id = class_id;
	desc->name_len = ci.name_len;
	desc->name[ci.name_len] = '\0';
	desc->entries = ci.entries;
	return 0;
}
