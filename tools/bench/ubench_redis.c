// SPDX-License-Identifier: GPL-2.0
/*
 * The benchmarks' Redis client: see ubench.h. Debian's hiredis speaks the
 * protocol, as it does for uniqd-farm (tools/farm/).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "ubench.h"

/* ---- Redis over a Unix socket (hiredis) --------------------------------- */

/*
 * Interning in Redis: per class a hash content -> id, ids from one counter
 * per "pool", atomically in a server-side script (one round trip per key;
 * pipelining sends many scripts per round trip).
 */
static const char ub_redis_script[] =
	"local v = redis.call('HGET', KEYS[1], ARGV[1]) "
	"if v then return tonumber(v) end "
	"local id = redis.call('INCR', KEYS[2]) "
	"redis.call('HSET', KEYS[1], ARGV[1], id) "
	"return id";

struct ub_redis {
	redisContext *c;
	char sha[41];
};

struct ub_redis *ub_redis_connect(const char *path)
{
	redisContext *c = redisConnectUnix(path);
	struct ub_redis *r;

	if (!c || c->err) {
		if (c)
			redisFree(c);
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		ub_die("out of memory");
	r->c = c;
	return r;
}

void ub_redis_close(struct ub_redis *r)
{
	if (!r)
		return;
	redisFree(r->c);
	free(r);
}

/*
 * The next reply: 0 and its integer in *@num or its text in @buf (either
 * may be NULL), or -1 on an error reply or a broken connection.
 */
static int ub_reply(struct ub_redis *r, long long *num, char *buf, size_t cap)
{
	redisReply *rep;
	int ret = 0;

	if (redisGetReply(r->c, (void **)&rep) != REDIS_OK || !rep) {
		ub_out("error redis: %s", r->c->errstr);
		return -1;
	}
	switch (rep->type) {
	case REDIS_REPLY_INTEGER:
		if (num)
			*num = rep->integer;
		break;
	case REDIS_REPLY_STATUS:
	case REDIS_REPLY_STRING:
		if (buf && cap)
			snprintf(buf, cap, "%.*s", (int)rep->len, rep->str);
		break;
	case REDIS_REPLY_ERROR:
		ub_out("error redis: -%s", rep->str);
		ret = -1;
		break;
	}
	freeReplyObject(rep);
	return ret;
}

int ub_redis_simple(struct ub_redis *r, const char *cmd)
{
	const char *argv[8];
	char copy[256], *save = NULL, *t;
	int argc = 0;

	snprintf(copy, sizeof(copy), "%s", cmd);
	for (t = strtok_r(copy, " ", &save); t && argc < 8;
	     t = strtok_r(NULL, " ", &save))
		argv[argc++] = t;
	if (redisAppendCommandArgv(r->c, argc, argv, NULL) != REDIS_OK)
		return -1;
	return ub_reply(r, NULL, NULL, 0);
}

int ub_redis_load(struct ub_redis *r)
{
	const char *argv[] = { "SCRIPT", "LOAD", ub_redis_script };

	if (redisAppendCommandArgv(r->c, 3, argv, NULL) != REDIS_OK ||
	    ub_reply(r, NULL, r->sha, sizeof(r->sha)))
		return -1;
	return strlen(r->sha) == 40 ? 0 : -1;
}

int ub_redis_intern(struct ub_redis *r, uint32_t cls, const uint8_t *const *data,
		    const uint32_t *len, uint32_t n, int64_t *ids)
{
	char key[24];
	uint32_t i;

	snprintf(key, sizeof(key), "c%u", cls);
	for (i = 0; i < n; i++) {
		const char *argv[] = { "EVALSHA", r->sha, "2", key, "ids",
				       (const char *)data[i] };
		size_t argl[] = { 7, 40, 1, strlen(key), 3, len[i] };

		if (redisAppendCommandArgv(r->c, 6, argv, argl) != REDIS_OK)
			return -1;
	}
	for (i = 0; i < n; i++) {
		long long v = 0;

		if (ub_reply(r, &v, NULL, 0))
			return -1;
		ids[i] = v;
	}
	return 0;
}

int ub_redis_intern_all(struct ub_redis *r, const struct ub_keys *k,
			uint32_t n)
{
	const uint8_t *data[256];
	uint32_t len[256], i, j;
	int64_t ids[256];

	for (i = 0; i < n; i += 256) {
		uint32_t m = n - i < 256 ? n - i : 256;

		for (j = 0; j < m; j++)
			data[j] = ub_key(k, i + j, &len[j]);
		if (ub_redis_intern(r, 1, data, len, m, ids))
			return -1;
	}
	return 0;
}

int64_t ub_redis_used_memory(struct ub_redis *r)
{
	redisReply *rep = redisCommand(r->c, "INFO memory");
	int64_t v = -1;
	char *p;

	if (!rep)
		return -1;
	if (rep->type == REDIS_REPLY_STRING) {
		p = strstr(rep->str, "used_memory:");
		if (p)
			v = strtoll(p + 12, NULL, 10);
	}
	freeReplyObject(rep);
	return v;
}
