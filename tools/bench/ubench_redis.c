// SPDX-License-Identifier: GPL-2.0
/*
 * The benchmarks' Redis client: see ubench.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "ubench.h"

/* ---- Redis over a Unix socket (RESP) ------------------------------------ */

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
	int fd;
	char sha[41];
	char *w;
	size_t wlen, wcap;
	char *rb;
	size_t rlen, rpos, rcap;
};

struct ub_redis *ub_redis_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct ub_redis *r;
	int fd;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return NULL;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		ub_die("out of memory");
	r->fd = fd;
	r->wcap = r->rcap = 1 << 20;
	r->w = malloc(r->wcap);
	r->rb = malloc(r->rcap);
	if (!r->w || !r->rb)
		ub_die("out of memory");
	return r;
}

void ub_redis_close(struct ub_redis *r)
{
	if (!r)
		return;
	close(r->fd);
	free(r->w);
	free(r->rb);
	free(r);
}

static void ub_w(struct ub_redis *r, const void *p, size_t n)
{
	if (r->wlen + n > r->wcap) {
		while (r->wlen + n > r->wcap)
			r->wcap *= 2;
		r->w = realloc(r->w, r->wcap);
		if (!r->w)
			ub_die("out of memory");
	}
	memcpy(r->w + r->wlen, p, n);
	r->wlen += n;
}

static void ub_w_bulk(struct ub_redis *r, const void *p, size_t n)
{
	char hdr[32];
	int l = snprintf(hdr, sizeof(hdr), "$%zu\r\n", n);

	ub_w(r, hdr, l);
	ub_w(r, p, n);
	ub_w(r, "\r\n", 2);
}

static void ub_w_cmd(struct ub_redis *r, int argc, const char *const *argv,
		     const size_t *argl)
{
	char hdr[32];
	int i, l = snprintf(hdr, sizeof(hdr), "*%d\r\n", argc);

	ub_w(r, hdr, l);
	for (i = 0; i < argc; i++)
		ub_w_bulk(r, argv[i], argl ? argl[i] : strlen(argv[i]));
}

static int ub_flush(struct ub_redis *r)
{
	size_t off = 0;

	while (off < r->wlen) {
		ssize_t n = write(r->fd, r->w + off, r->wlen - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		off += n;
	}
	r->wlen = 0;
	return 0;
}

/* Make sure @need bytes from rpos are buffered. */
static int ub_fill(struct ub_redis *r, size_t need)
{
	if (r->rpos && r->rpos == r->rlen)
		r->rpos = r->rlen = 0;
	while (r->rlen - r->rpos < need) {
		ssize_t n;

		if (r->rpos) {
			memmove(r->rb, r->rb + r->rpos, r->rlen - r->rpos);
			r->rlen -= r->rpos;
			r->rpos = 0;
		}
		if (r->rlen + need > r->rcap || r->rlen == r->rcap) {
			r->rcap = (r->rlen + need) * 2;
			r->rb = realloc(r->rb, r->rcap);
			if (!r->rb)
				ub_die("out of memory");
		}
		n = read(r->fd, r->rb + r->rlen, r->rcap - r->rlen);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		r->rlen += n;
	}
	return 0;
}

/* One line (without CRLF), NUL-terminated in place; NULL on EOF. */
static char *ub_line(struct ub_redis *r)
{
	for (;;) {
		char *s = r->rb + r->rpos;
		char *e = memchr(s, '\n', r->rlen - r->rpos);

		if (e && e > s && e[-1] == '\r') {
			e[-1] = 0;
			r->rpos = e + 1 - r->rb;
			return s;
		}
		if (ub_fill(r, r->rlen - r->rpos + 1))
			return NULL;
	}
}

/*
 * Read one reply: integers into *num, bulk strings into @buf (up to @cap,
 * NUL-terminated); arrays are skipped. 0, or -1 on an error reply or EOF.
 */
static int ub_reply(struct ub_redis *r, long long *num, char *buf, size_t cap)
{
	char *l = ub_line(r);
	long long n;

	if (!l)
		return -1;
	switch (l[0]) {
	case ':':
		if (num)
			*num = strtoll(l + 1, NULL, 10);
		return 0;
	case '+':
		if (buf && cap)
			snprintf(buf, cap, "%s", l + 1);
		return 0;
	case '-':
		ub_out("error redis: %s", l);
		return -1;
	case '$':
		n = strtoll(l + 1, NULL, 10);
		if (n < 0)
			return 0;
		if (ub_fill(r, n + 2))
			return -1;
		if (buf && cap) {
			size_t c = (size_t)n < cap - 1 ? (size_t)n : cap - 1;

			memcpy(buf, r->rb + r->rpos, c);
			buf[c] = 0;
		}
		r->rpos += n + 2;
		return 0;
	case '*':
		n = strtoll(l + 1, NULL, 10);
		while (n-- > 0)
			if (ub_reply(r, NULL, NULL, 0))
				return -1;
		return 0;
	}
	ub_out("error redis: bad reply '%.40s'", l);
	return -1;
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
	ub_w_cmd(r, argc, argv, NULL);
	if (ub_flush(r))
		return -1;
	return ub_reply(r, NULL, NULL, 0);
}

int ub_redis_load(struct ub_redis *r)
{
	const char *argv[] = { "SCRIPT", "LOAD", ub_redis_script };

	ub_w_cmd(r, 3, argv, NULL);
	if (ub_flush(r) || ub_reply(r, NULL, r->sha, sizeof(r->sha)))
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

		ub_w_cmd(r, 6, argv, argl);
	}
	if (ub_flush(r))
		return -1;
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
	const char *argv[] = { "INFO", "memory" };
	char *buf = malloc(65536), *p;
	int64_t v = -1;

	if (!buf)
		return -1;
	ub_w_cmd(r, 2, argv, NULL);
	if (!ub_flush(r) && !ub_reply(r, NULL, buf, 65536)) {
		p = strstr(buf, "used_memory:");
		if (p)
			v = strtoll(p + 12, NULL, 10);
	}
	free(buf);
	return v;
}
