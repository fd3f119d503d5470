/* SPDX-License-Identifier: GPL-2.0 */
/*
 * uniqd's tracepoints: the administrator's window (Documentation/admin.rst
 * has the perf recipe). Pools are named by their id, the upper 32 bits of
 * their handles, never by an address; uids are in the initial user
 * namespace. The events are rare or cheap: a hit (INTERN of a present key,
 * a probe of the mapping) has none.
 *
 * trace.c instantiates them; uniqd_kunit.ko, which compiles the same
 * sources, builds with NOTRACE and gets empty stubs (one module owns the
 * "uniqd" event system).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM uniqd

#if !defined(_UNIQD_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _UNIQD_TRACE_H

#include <linux/ctype.h>
#include <linux/tracepoint.h>
#include <linux/uidgid.h>

/* Which limit refused a call (uniqd_refuse). */
#define UNIQD_LIMIT_POOLS	1	/* max_pools: -ENOSPC */
#define UNIQD_LIMIT_USER_POOLS	2	/* max_user_pools: -EDQUOT */
#define UNIQD_LIMIT_CLASSES	3	/* the pool's max_classes: -EDQUOT */
#define UNIQD_LIMIT_ENTRIES	4	/* the pool's max_entries: -EDQUOT */
#define UNIQD_LIMIT_BYTES	5	/* the pool's max_bytes: -EDQUOT */
#define UNIQD_LIMIT_USER_BYTES	6	/* max_user_bytes: -EDQUOT */
#define UNIQD_LIMIT_USER_ENTRIES 7	/* max_user_entries: -EDQUOT */

/* Pool names in events: 63 bytes at most, printable ASCII, else '?'. */
#define UNIQD_TRACE_NAME	64

#ifndef UNIQD_TRACE_HELPERS
#define UNIQD_TRACE_HELPERS
static inline void uniqd_trace_name(char *dst, const u8 *name, u32 len)
{
	u32 i;

	len = min_t(u32, len, UNIQD_TRACE_NAME - 1);
	for (i = 0; i < len; i++)
		dst[i] = isprint(name[i]) ? name[i] : '?';
	dst[len] = '\0';
}
#endif

TRACE_EVENT(uniqd_pool_create,
	TP_PROTO(u32 id, const u8 *name, u32 name_len, kuid_t owner, u32 mode,
		 u64 max_bytes, u64 max_entries, u32 max_classes),
	TP_ARGS(id, name, name_len, owner, mode, max_bytes, max_entries,
		max_classes),
	TP_STRUCT__entry(
		__field(u32, id)
		__field(u32, owner)
		__field(u32, mode)
		__field(u32, max_classes)
		__field(u64, max_bytes)
		__field(u64, max_entries)
		__array(char, name, UNIQD_TRACE_NAME)
	),
	TP_fast_assign(
		__entry->id = id;
		__entry->owner = __kuid_val(owner);
		__entry->mode = mode;
		__entry->max_classes = max_classes;
		__entry->max_bytes = max_bytes;
		__entry->max_entries = max_entries;
		uniqd_trace_name(__entry->name, name, name_len);
	),
	TP_printk("pool=%u name=%s owner=%u mode=0x%x max_bytes=%llu max_entries=%llu max_classes=%u",
		  __entry->id, __entry->name, __entry->owner, __entry->mode,
		  __entry->max_bytes, __entry->max_entries,
		  __entry->max_classes)
);

TRACE_EVENT(uniqd_pool_destroy,
	TP_PROTO(u32 id, u64 entries, u64 content_bytes, u64 reserved_bytes),
	TP_ARGS(id, entries, content_bytes, reserved_bytes),
	TP_STRUCT__entry(
		__field(u32, id)
		__field(u64, entries)
		__field(u64, content_bytes)
		/* pool->reserved_bytes, named as STATS (the ABI) names it */
		__field(u64, arena_bytes)
	),
	TP_fast_assign(
		__entry->id = id;
		__entry->entries = entries;
		__entry->content_bytes = content_bytes;
		__entry->arena_bytes = reserved_bytes;
	),
	TP_printk("pool=%u entries=%llu content_bytes=%llu bytes=%llu",
		  __entry->id, __entry->entries, __entry->content_bytes,
		  __entry->arena_bytes)
);

/* A file attached to a pool; @created: this call created it. */
TRACE_EVENT(uniqd_attach,
	TP_PROTO(u32 id, bool created),
	TP_ARGS(id, created),
	TP_STRUCT__entry(
		__field(u32, id)
		__field(u32, uid)
		__field(bool, created)
	),
	TP_fast_assign(
		__entry->id = id;
		__entry->uid = __kuid_val(current_fsuid());
		__entry->created = created;
	),
	TP_printk("pool=%u uid=%u created=%d", __entry->id, __entry->uid,
		  __entry->created)
);

/* The last close of an attached file (the pool may live on). */
TRACE_EVENT(uniqd_detach,
	TP_PROTO(u32 id),
	TP_ARGS(id),
	TP_STRUCT__entry(
		__field(u32, id)
		__field(u32, uid)
	),
	TP_fast_assign(
		__entry->id = id;
		__entry->uid = __kuid_val(current_fsuid());
	),
	TP_printk("pool=%u uid=%u", __entry->id, __entry->uid)
);

TRACE_EVENT(uniqd_entry_create,
	TP_PROTO(u64 handle, u32 class_id, u32 len),
	TP_ARGS(handle, class_id, len),
	TP_STRUCT__entry(
		__field(u64, handle)
		__field(u32, class_id)
		__field(u32, len)
	),
	TP_fast_assign(
		__entry->handle = handle;
		__entry->class_id = class_id;
		__entry->len = len;
	),
	TP_printk("pool=%llu handle=0x%llx class=%u len=%u",
		  __entry->handle >> 32, __entry->handle, __entry->class_id,
		  __entry->len)
);

/* The mapped index moved to a new array (@ok) or could not (its errno). */
TRACE_EVENT(uniqd_index_grow,
	TP_PROTO(u32 id, u32 old_log2, u32 new_log2, u64 indexed, int err),
	TP_ARGS(id, old_log2, new_log2, indexed, err),
	TP_STRUCT__entry(
		__field(u32, id)
		__field(u32, old_log2)
		__field(u32, new_log2)
		__field(int, err)
		__field(u64, indexed)
	),
	TP_fast_assign(
		__entry->id = id;
		__entry->old_log2 = old_log2;
		__entry->new_log2 = new_log2;
		__entry->err = err;
		__entry->indexed = indexed;
	),
	TP_printk("pool=%u slots=%llu->%llu indexed=%llu err=%d",
		  __entry->id,
		  __entry->old_log2 ? 1ULL << __entry->old_log2 : 0ULL,
		  1ULL << __entry->new_log2, __entry->indexed, __entry->err)
);

/* REVOKE took pool @id out of the registry; what still holds it. */
TRACE_EVENT(uniqd_pool_revoke,
	TP_PROTO(u32 id, u32 attached, u32 mapped),
	TP_ARGS(id, attached, mapped),
	TP_STRUCT__entry(
		__field(u32, id)
		__field(u32, uid)
		__field(u32, attached)
		__field(u32, mapped)
	),
	TP_fast_assign(
		__entry->id = id;
		__entry->uid = __kuid_val(current_fsuid());
		__entry->attached = attached;
		__entry->mapped = mapped;
	),
	TP_printk("pool=%u uid=%u attached=%u mapped=%u", __entry->id,
		  __entry->uid, __entry->attached, __entry->mapped)
);

/* A limit refused a call: @id is 0 when no pool exists yet. */
TRACE_EVENT(uniqd_refuse,
	TP_PROTO(u32 id, int limit, int err),
	TP_ARGS(id, limit, err),
	TP_STRUCT__entry(
		__field(u32, id)
		__field(u32, uid)
		__field(int, limit)
		__field(int, err)
	),
	TP_fast_assign(
		__entry->id = id;
		__entry->uid = __kuid_val(current_fsuid());
		__entry->limit = limit;
		__entry->err = err;
	),
	TP_printk("pool=%u uid=%u limit=%s err=%d", __entry->id, __entry->uid,
		  __print_symbolic(__entry->limit,
				   { UNIQD_LIMIT_POOLS, "max_pools" },
				   { UNIQD_LIMIT_USER_POOLS, "max_user_pools" },
				   { UNIQD_LIMIT_CLASSES, "max_classes" },
				   { UNIQD_LIMIT_ENTRIES, "max_entries" },
				   { UNIQD_LIMIT_BYTES, "max_bytes" },
				   { UNIQD_LIMIT_USER_BYTES, "max_user_bytes" },
				   { UNIQD_LIMIT_USER_ENTRIES, "max_user_entries" }),
		  __entry->err)
);

#endif /* _UNIQD_TRACE_H */

/* define_trace.h includes this file again as uniqd/ + trace + .h. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH uniqd
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
