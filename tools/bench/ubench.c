// SPDX-License-Identifier: GPL-2.0
/*
 * Shared code of the userspace benchmarks: see ubench.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "blake3.h"
#include "ubench.h"

/* ---- output and time ---------------------------------------------------- */

static FILE *ub_results;

void ub_out(const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (!ub_results) {
		const char *p = getenv("UNIQD_RESULTS");

		ub_results = p ? fopen(p, "a") : NULL;
		if (!ub_results)
			ub_results = stdout;
		else
			setvbuf(ub_results, NULL, _IOLBF, 0);
	}
	fprintf(ub_results, "UBENCH %s\n", line);
	if (ub_results != stdout)
		printf("UBENCH %s\n", line);
	fflush(stdout);
}

void ub_die(const char *fmt, ...)
{
	char line[900];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	ub_out("error %s: %s", program_invocation_short_name, line);
	exit(1);
}

uint64_t ub_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

void *ub_alloc(size_t size)
{
	char *p = calloc(1, size ? size : 1);
	size_t i;

	if (!p)
		ub_die("out of memory (%zu bytes)", size);
	/* Fault every page in now, not while something is timed. */
	for (i = 0; i < size; i += 4096)
		p[i] = 0;
	return p;
}

/* ---- keys ---------------------------------------------------------------- */

uint64_t ub_rand(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

void ub_shuffle(uint32_t *a, uint32_t n, uint64_t seed)
{
	uint32_t i;

	seed |= 1;
	for (i = n; i > 1; i--) {
		uint32_t j = ub_rand(&seed) % i, t = a[i - 1];

		a[i - 1] = a[j];
		a[j] = t;
	}
}

static const char ub_chars[] =
	"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_";

void ub_keys_make(struct ub_keys *k, uint32_t n, uint32_t base, uint64_t seed)
{
	uint64_t off = 0;
	uint32_t i;

	seed |= 1;
	k->n = n;
	k->bytes = ub_alloc((size_t)n * 32);
	k->off = ub_alloc((size_t)n * sizeof(*k->off));
	k->len = ub_alloc((size_t)n * sizeof(*k->len));
	for (i = 0; i < n; i++) {
		uint32_t len = 4 + ub_rand(&seed) % 29, j, v = base + i;
		uint8_t *p = k->bytes + off;

		for (j = 0; j < len - 4; j++)
			p[j] = ub_chars[ub_rand(&seed) % 63];
		/* 62^4 > 14.7 million distinct tails: bases stay below that. */
		for (j = len - 4; j < len; j++, v /= 62)
			p[j] = ub_chars[v % 62];
		k->off[i] = (uint32_t)off;
		k->len[i] = (uint16_t)len;
		off += len;
	}
}

/* ---- interleaved timing ------------------------------------------------- */

void ub_compare(struct ub_case *cases, unsigned int n, unsigned int rounds,
		double round_ms, double slice_ms)
{
	uint64_t slice_ns = (uint64_t)(slice_ms * 1e6);
	unsigned int nslices = (unsigned int)(round_ms / slice_ms);
	unsigned int c, r, s;

	if (!nslices)
		nslices = 1;
	/* Calibrate (and warm up): a burst of about one slice per case. */
	for (c = 0; c < n; c++) {
		struct ub_case *k = &cases[c];
		uint64_t t = 0, b = k->unit ? k->unit : 1;

		if (!k->unit)
			k->unit = 1;
		for (;;) {
			unsigned int i;

			/*
			 * The fastest of three tries: one preempted try on a
			 * busy host would otherwise leave a burst of a few ops.
			 */
			t = UINT64_MAX;
			for (i = 0; i < 3 && !k->dead; i++) {
				uint64_t t0 = ub_now(), t1;

				if (k->run(k->ctx, b)) {
					ub_out("error case %s failed while calibrating",
					       k->name);
					k->dead = true;
				}
				t1 = ub_now() - t0;
				if (t1 < t)
					t = t1;
			}
			if (k->dead || t >= slice_ns / 4 || b >= (1ULL << 40))
				break;
			b *= 2;
		}
		if (k->dead)
			continue;
		b = t ? (uint64_t)((double)b * slice_ns / t) : b;
		b = (b + k->unit - 1) / k->unit * k->unit;
		k->burst = b ? b : k->unit;
	}

	for (r = 0; r < rounds; r++) {
		uint64_t ops[64] = { 0 }, ns[64] = { 0 }, best[64];

		if (n > 64)
			ub_die("too many cases");
		for (c = 0; c < n; c++)
			best[c] = UINT64_MAX;
		for (s = 0; s < nslices; s++) {
			for (c = 0; c < n; c++) {
				struct ub_case *k = &cases[(c + s) % n];
				unsigned int i = (c + s) % n;
				uint64_t t0, t;

				if (k->dead)
					continue;
				t0 = ub_now();
				if (k->run(k->ctx, k->burst)) {
					ub_out("error case %s failed in round %u",
					       k->name, r);
					k->dead = true;
					continue;
				}
				t = ub_now() - t0;
				ops[i] += k->burst;
				ns[i] += t;
				if (t * 1000 / k->burst < best[i])
					best[i] = t * 1000 / k->burst;
			}
		}
		for (c = 0; c < n; c++) {
			if (!ops[c])
				continue;
			ub_out("op name=%s round=%u ops=%llu ns=%llu best_ps=%llu",
			       cases[c].name, r, (unsigned long long)ops[c],
			       (unsigned long long)ns[c],
			       (unsigned long long)best[c]);
		}
	}
}

/* ---- processes started together ---------------------------------------- */

uint64_t ub_procs_run(const struct ub_procs *pr, void *res)
{
	/* The result, then a status byte: 'k' or 'f'. */
	size_t msg = pr->res_size + 1;
	char *buf = ub_alloc(msg);
	pid_t *pid = ub_alloc(pr->n * sizeof(*pid));
	int go[2], done[2];
	uint64_t t0, t1;
	unsigned int p;
	bool ok = true;

	if (pipe(go) || pipe(done))
		ub_die("pipe: %s", strerror(errno));
	for (p = 0; p < pr->n; p++) {
		pid[p] = fork();
		if (pid[p] < 0)
			ub_die("fork: %s", strerror(errno));
		if (!pid[p]) {
			char c;
			int ret;

			close(go[1]);
			close(done[0]);
			if (pr->setup && pr->setup(p, pr->arg))
				_exit(2);
			if (read(go[0], &c, 1) != 1)
				_exit(2);
			ret = pr->run(p, pr->arg, buf);
			buf[pr->res_size] = ret ? 'f' : 'k';
			if (write(done[1], buf, msg) != (ssize_t)msg)
				_exit(2);
			_exit(ret ? 1 : 0);
		}
	}
	close(go[0]);
	close(done[1]);
	/* Let the children settle into read() before the start. */
	usleep(50000);
	t0 = ub_now();
	for (p = 0; p < pr->n; p++)
		if (write(go[1], "g", 1) != 1)
			ok = false;
	for (p = 0; p < pr->n; p++) {
		if (read(done[0], buf, msg) != (ssize_t)msg || buf[pr->res_size] != 'k')
			ok = false;
		else if (pr->res_size)
			memcpy((char *)res + p * pr->res_size, buf, pr->res_size);
	}
	t1 = ub_now();
	close(go[1]);
	close(done[0]);
	for (p = 0; p < pr->n; p++) {
		int st;

		waitpid(pid[p], &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			ok = false;
	}
	free(pid);
	free(buf);
	return ok ? t1 - t0 : 0;
}

/* ---- uniqd ioctls ------------------------------------------------------ */

int ub_uniqd_open(const char *pool)
{
	int fd = ut_open();

	if (fd < 0)
		ub_die("open %s: %s", UNIQD_DEVICE_PATH, strerror(errno));
	if (ut_attach(fd, pool, 0))
		ub_die("attach %s: %s", pool, strerror(errno));
	return fd;
}

uint32_t ub_uniqd_class(int fd, const char *name)
{
	__u32 id;

	if (ut_class_full(fd, name, 0, &id, NULL))
		ub_die("class %s: %s", name, strerror(errno));
	return id;
}

void ub_uniqd_intern_all(int fd, uint32_t cls, const struct ub_keys *k,
			 uint32_t n)
{
	struct uniqd_key batch[256];
	uint32_t i, j, len;

	for (i = 0; i < n; i += 256) {
		uint32_t m = n - i < 256 ? n - i : 256;

		memset(batch, 0, sizeof(batch));
		for (j = 0; j < m; j++) {
			batch[j].class_id = cls;
			batch[j].data = (uintptr_t)ub_key(k, i + j, &len);
			batch[j].len = len;
		}
		if (ut_batch(fd, batch, m))
			ub_die("INTERN_BATCH: %s", strerror(errno));
	}
}

/* ---- the in-process interner -------------------------------------------- */

struct ub_rec {
	uint32_t idx;
	uint32_t cls;
	uint32_t len;
	uint32_t flags;
	uint8_t data[];
};

struct ub_slot {
	uint64_t hash;
	struct ub_rec *rec;
};

struct ub_ltable {
	struct ub_slot *slot;
	uint32_t mask;
	uint32_t used;
};

#define UB_MAX_CLASSES	16
#define UB_CHUNK	65536

struct ub_interner {
	enum ub_hash_kind kind;
	uint8_t key[32];
	struct ub_ltable t[UB_MAX_CLASSES];
	uint8_t *chunk;
	size_t chunk_used;
	uint64_t entries, bytes;
};

struct ub_interner *ub_interner_new(enum ub_hash_kind kind)
{
	struct ub_interner *t = calloc(1, sizeof(*t));
	uint64_t s = 0x9e3779b97f4a7c15ULL ^ (uint64_t)getpid();
	unsigned int i;

	if (!t)
		ub_die("out of memory");
	t->kind = kind;
	for (i = 0; i < sizeof(t->key); i++)
		t->key[i] = (uint8_t)ub_rand(&s);
	return t;
}

void ub_interner_free(struct ub_interner *t)
{
	/* Chunks are leaked on purpose: the programs exit right after. */
	unsigned int i;

	for (i = 0; i < UB_MAX_CLASSES; i++)
		free(t->t[i].slot);
	free(t);
}

static uint64_t ub_local_hash(struct ub_interner *t, const void *data,
			      uint32_t len)
{
	uint8_t out[8];
	uint64_t h;

	if (t->kind == UB_HASH_FAST)
		return uniqd_maphash(0x5bd1e9955bd1e995ULL, 0, 0, data, len);
	uniqd_blake3_hash(t->key, data, len, out, sizeof(out));
	memcpy(&h, out, sizeof(h));
	return h;
}

static void ub_ltable_grow(struct ub_ltable *lt)
{
	uint32_t n = lt->slot ? (lt->mask + 1) * 2 : 64, i;
	struct ub_slot *ns = calloc(n, sizeof(*ns));

	if (!ns)
		ub_die("out of memory");
	for (i = 0; lt->slot && i <= lt->mask; i++) {
		struct ub_slot *s = &lt->slot[i];
		uint32_t j;

		if (!s->rec)
			continue;
		for (j = (uint32_t)s->hash & (n - 1); ns[j].rec; j = (j + 1) & (n - 1))
			;
		ns[j] = *s;
	}
	free(lt->slot);
	lt->slot = ns;
	lt->mask = n - 1;
}

uint64_t ub_intern_local(struct ub_interner *t, uint32_t cls, const void *data,
			 uint32_t len, bool *created)
{
	struct ub_ltable *lt = &t->t[cls % UB_MAX_CLASSES];
	uint64_t h = ub_local_hash(t, data, len);
	size_t size = (sizeof(struct ub_rec) + len + 7) & ~(size_t)7;
	struct ub_rec *rec;
	uint32_t i;

	*created = false;
	if (!lt->slot)
		ub_ltable_grow(lt);
	for (i = (uint32_t)h & lt->mask; lt->slot[i].rec; i = (i + 1) & lt->mask) {
		rec = lt->slot[i].rec;
		if (lt->slot[i].hash == h && rec->len == len &&
		    !memcmp(rec->data, data, len))
			return rec->idx;
	}
	if ((uint64_t)(lt->used + 1) * 4 > (uint64_t)(lt->mask + 1) * 3) {
		ub_ltable_grow(lt);
		for (i = (uint32_t)h & lt->mask; lt->slot[i].rec; i = (i + 1) & lt->mask)
			;
	}
	if (!t->chunk || t->chunk_used + size > UB_CHUNK) {
		t->chunk = malloc(size > UB_CHUNK ? size : UB_CHUNK);
		if (!t->chunk)
			ub_die("out of memory");
		t->chunk_used = 0;
	}
	rec = (struct ub_rec *)(t->chunk + t->chunk_used);
	t->chunk_used += size;
	rec->idx = (uint32_t)++t->entries;
	rec->cls = cls;
	rec->len = len;
	rec->flags = 0;
	memcpy(rec->data, data, len);
	t->bytes += len;
	lt->slot[i].hash = h;
	lt->slot[i].rec = rec;
	lt->used++;
	*created = true;
	return rec->idx;
}

uint64_t ub_interner_entries(const struct ub_interner *t)
{
	return t->entries;
}

uint64_t ub_interner_bytes(const struct ub_interner *t)
{
	return t->bytes;
}

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
