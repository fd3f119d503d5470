// SPDX-License-Identifier: GPL-2.0
/*
 * uniqd-farm: a build farm's machines share what their pools hold through
 * Redis Cluster, by each entry's DIGEST, the one identity a handle has
 * beyond its machine (Documentation/design.rst, "Beyond one machine").
 *
 *   uniqd-farm [-s HOST:PORT] [-p POOL] [--user U] [--pass P] push MACHINE
 *   uniqd-farm [-s HOST:PORT] [-p POOL] [--user U] [--pass P] pull MACHINE [MAP]
 *
 * AUTH [user] pass goes on every connection when a password is given
 * (--pass, else REDISCLI_AUTH, as redis-cli takes them).
 *
 * What the cluster holds:
 *   uniqd:e:<digest, hex>   le32(class name length) | class name | content:
 *                           exactly the bytes whose BLAKE3 is the digest;
 *                           SET NX, so each content is held once
 *   uniqd:m:{MACHINE/POOL}  MACHINE's manifest: a list of blobs, each a run
 *                           of 40-byte records le64(handle) | digest in
 *                           handle order
 *   uniqd:b:{MACHINE/POOL}  the handle base the manifest is of (a new pool
 *                           behind the same name starts a new manifest)
 *
 * push sends the entries MACHINE's pool gained since its last push, entries
 * before the manifest that names them. pull reads MACHINE's manifest and
 * fetches every entry, checks each against its digest, and only when all
 * are there and sound interns them into the local pool and writes MAP: one
 * line "REMOTE-HANDLE LOCAL-HANDLE" per entry. A pull that fails leaves the
 * pool as it was.
 *
 * The records of the classes --refs names (default gcc.use, the GCC
 * plugin's (unit, tag, layout) records) are runs of little-endian 64-bit
 * handles of MACHINE's pool: pull checks that each names an entry of the
 * manifest before it and interns the record with the local handles instead.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libuniqd.h>
#include <linux/uniqd.h>

#include "blake3.h"
#include "cluster.h"
#include "uniqd_le.h"

#define REC		(8 + UNIQD_DIGEST_SIZE)
#define CHUNK		1024	/* entries a round trip */
#define HEX		(2 * UNIQD_DIGEST_SIZE)

static const char *prog = "uniqd-farm";
static const char *server = "127.0.0.1:6379";
static const char *pool_name;
static const char *refs = "gcc.use";	/* comma-separated class names */

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(3);
}

/* --help: the text on standard output, exit 0; a usage error: on standard
 * error, exit 2. */
static void usage(FILE *f, int status)
{
	fprintf(f,
		"usage: %s [options] push MACHINE\n"
		"       %s [options] pull MACHINE [MAP]\n"
		"\n"
		"push: send what this machine's pool gained since its last push to the\n"
		"cluster, as MACHINE's. pull: fetch MACHINE's entries, check each against\n"
		"its digest, intern them all (or none) and write 'REMOTE LOCAL' handle\n"
		"pairs to MAP (default standard output).\n"
		"\n"
		"options:\n"
		"  -s, --server HOST:PORT  a node of the cluster (default 127.0.0.1:6379)\n"
		"  -p, --pool NAME         the pool (default $UNIQD_POOL, else \"default\")\n"
		"  -r, --refs LIST         pull: the classes whose records are handles,\n"
		"                          translated (default gcc.use; '': none)\n"
		"      --user USER         the Redis ACL user to AUTH as (needs a password)\n"
		"  -a, --pass PASSWORD     AUTH [USER] PASSWORD on each connection; the\n"
		"                          environment's REDISCLI_AUTH is safer (another\n"
		"                          user's ps(1) shows a command line)\n"
		"  -h, --help              this text\n"
		"  -V, --version           the version\n"
		"\n"
		"Exit status: 0 ok, 2 usage, 3 failed (the message says why).\n",
		prog, prog);
	exit(status);
}

static void hexify(const uint8_t *d, char *out)
{
	for (int i = 0; i < UNIQD_DIGEST_SIZE; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

static void digest_of(const void *buf, size_t len, uint8_t *out)
{
	if (uniqd_blake3_hash(NULL, buf, len, out, UNIQD_DIGEST_SIZE))
		die("BLAKE3 of %zu bytes failed", len);
}

static char key_m[600], key_b[600];

static void manifest_keys(const char *machine)
{
	if (!*machine || strchr(machine, '{') || strchr(machine, '}') ||
	    strlen(machine) > 255)
		die("a machine name is 1 to 255 bytes without braces");
	snprintf(key_m, sizeof(key_m), "uniqd:m:{%s/%s}", machine, pool_name);
	snprintf(key_b, sizeof(key_b), "uniqd:b:{%s/%s}", machine, pool_name);
}

/* One command with @argc arguments, answered (or the tool stops). */
static redisReply *one(struct fc_cluster *cl, struct fc_cmd *cmd)
{
	if (fc_run(cl, cmd, 1))
		die("%s: %s", cmd->argv[0], cl->err);
	if (cmd->reply->type == REDIS_REPLY_ERROR)
		die("%s %s: %s", cmd->argv[0], cmd->argv[1], cmd->reply->str);
	return cmd->reply;
}

static struct fc_cmd cmd2(const char *a0, const char *a1)
{
	return (struct fc_cmd){ .argc = 2, .argv = { a0, a1 },
				.argvlen = { strlen(a0), strlen(a1) } };
}

/* ---- push ------------------------------------------------------------------ */

struct push {
	struct fc_cluster *cl;
	uniqd_pool *pool;
	uint64_t after;		/* entries up to this handle were pushed */
	uint64_t base;
	char (*names)[256];	/* class id -> name */
	uint32_t *name_len;
	uint32_t nr_names;
	/* The chunk being gathered. */
	size_t n;
	uint8_t *vals[CHUNK];
	size_t val_len[CHUNK];
	char keys[CHUNK][8 + HEX + 1];
	uint8_t recs[CHUNK * REC];
	uint64_t pushed, sent_bytes, existed;
};

static const char *class_name(struct push *p, uint32_t id, uint32_t *len)
{
	struct uniqd_class_desc d;

	if (id >= p->nr_names) {
		uint32_t n = id + 64;

		p->names = realloc(p->names, n * sizeof(*p->names));
		p->name_len = realloc(p->name_len, n * sizeof(*p->name_len));
		if (!p->names || !p->name_len)
			die("out of memory");
		memset(p->name_len + p->nr_names, 0, (n - p->nr_names) * sizeof(*p->name_len));
		p->nr_names = n;
	}
	if (!p->name_len[id]) {
		if (uniqd_class_info(p->pool, id, &d))
			die("class %u: %s", id, uniqd_strerror(errno));
		memcpy(p->names[id], d.name, d.name_len);
		p->name_len[id] = d.name_len;
	}
	*len = p->name_len[id];
	return p->names[id];
}

/* Entries first (SET NX), then the manifest blob that names them. */
static void push_flush(struct push *p)
{
	static struct fc_cmd cmds[CHUNK + 1];
	size_t i;

	if (!p->n)
		return;
	for (i = 0; i < p->n; i++)
		cmds[i] = (struct fc_cmd){ .argc = 4,
			.argv = { "SET", p->keys[i], (const char *)p->vals[i], "NX" },
			.argvlen = { 3, strlen(p->keys[i]), p->val_len[i], 2 } };
	if (fc_run(p->cl, cmds, p->n))
		die("push: %s (what was pushed before stays; push again)", p->cl->err);
	for (i = 0; i < p->n; i++) {
		if (cmds[i].reply->type == REDIS_REPLY_ERROR)
			die("SET %s: %s", p->keys[i], cmds[i].reply->str);
		p->existed += cmds[i].reply->type == REDIS_REPLY_NIL;
		p->sent_bytes += p->val_len[i];
	}
	fc_cmds_free(cmds, p->n);
	cmds[0] = (struct fc_cmd){ .argc = 3,
		.argv = { "RPUSH", key_m, (const char *)p->recs },
		.argvlen = { 5, strlen(key_m), p->n * REC } };
	one(p->cl, &cmds[0]);
	fc_cmds_free(cmds, 1);
	p->sent_bytes += p->n * REC;
	p->pushed += p->n;
	for (i = 0; i < p->n; i++)
		free(p->vals[i]);
	p->n = 0;
}

static int push_one(void *arg, uint64_t handle, uint32_t class_id,
		    const void *data, size_t len)
{
	struct push *p = arg;
	uint8_t digest[UNIQD_DIGEST_SIZE];
	const char *name;
	uint32_t nlen;
	uint8_t *v;

	if (handle <= p->after)
		return 0;
	name = class_name(p, class_id, &nlen);
	v = malloc(4 + nlen + len);
	if (!v)
		die("out of memory");
	uq_le_put32(v, nlen);
	memcpy(v + 4, name, nlen);
	memcpy(v + 4 + nlen, data, len);
	digest_of(v, 4 + nlen + len, digest);
	memcpy(p->keys[p->n], "uniqd:e:", 8);
	hexify(digest, p->keys[p->n] + 8);
	p->vals[p->n] = v;
	p->val_len[p->n] = 4 + nlen + len;
	uq_le_put64(p->recs + p->n * REC, handle);
	memcpy(p->recs + p->n * REC + 8, digest, UNIQD_DIGEST_SIZE);
	if (++p->n == CHUNK)
		push_flush(p);
	return 0;
}

/* The last handle of the manifest, 0 if it is empty. */
static uint64_t manifest_last(struct fc_cluster *cl)
{
	struct fc_cmd c = { .argc = 3, .argv = { "LINDEX", key_m, "-1" },
			    .argvlen = { 6, strlen(key_m), 2 } };
	redisReply *r = one(cl, &c);
	uint64_t h = 0;

	if (r->type == REDIS_REPLY_STRING) {
		if (r->len < REC || r->len % REC)
			die("%s: a blob of %zu bytes is not a run of records", key_m, r->len);
		h = uq_le_get64((const uint8_t *)r->str + r->len - REC);
	}
	fc_cmds_free(&c, 1);
	return h;
}

static int first_entry(void *arg, uint64_t handle, uint32_t class_id,
		       const void *data, size_t len)
{
	(void)class_id;
	(void)data;
	(void)len;
	*(uint64_t *)arg = handle;
	return 1;
}

static int cmd_push(struct fc_cluster *cl, const char *machine)
{
	struct push p = { .cl = cl };
	uint64_t h0 = 0, stored = 0;
	struct fc_cmd c;
	char base[32];
	redisReply *r;

	manifest_keys(machine);
	p.pool = uniqd_open(pool_name, UNIQD_OPEN_EXISTING);
	if (!p.pool)
		die("pool '%s': %s", pool_name, uniqd_strerror(errno));
	if (uniqd_foreach(p.pool, 0, 0, first_entry, &h0) < 0)
		die("pool '%s': %s", pool_name, uniqd_strerror(errno));
	p.base = h0 >> 32 << 32;
	c = cmd2("GET", key_b);
	r = one(cl, &c);
	if (r->type == REDIS_REPLY_STRING)
		stored = strtoull(r->str, NULL, 0);
	fc_cmds_free(&c, 1);
	if (stored == p.base) {
		p.after = manifest_last(cl);
	} else {
		/* Another pool behind the name since the last push: a new manifest. */
		c = cmd2("DEL", key_m);
		one(cl, &c);
		fc_cmds_free(&c, 1);
	}
	if (uniqd_foreach(p.pool, 0, 0, push_one, &p) < 0)
		die("pool '%s': %s", pool_name, uniqd_strerror(errno));
	push_flush(&p);
	if (p.base && stored != p.base) {
		snprintf(base, sizeof(base), "0x%" PRIx64, p.base);
		c = (struct fc_cmd){ .argc = 3, .argv = { "SET", key_b, base },
				     .argvlen = { 3, strlen(key_b), strlen(base) } };
		one(cl, &c);
		fc_cmds_free(&c, 1);
	}
	printf("pushed %" PRIu64 " entries of pool '%s' as %s (%" PRIu64
	       " of them already in the cluster), %" PRIu64 " bytes\n",
	       p.pushed, pool_name, machine, p.existed, p.sent_bytes);
	uniqd_close(p.pool);
	return 0;
}

/* ---- pull ------------------------------------------------------------------ */

struct pulled {
	uint64_t handle;	/* on MACHINE */
	uint8_t digest[UNIQD_DIGEST_SIZE];
	redisReply *val;	/* le32 name length | name | content */
};

/* MACHINE's manifest, every record in handle order, once. */
static struct pulled *manifest_read(struct fc_cluster *cl, size_t *np)
{
	struct fc_cmd c = cmd2("LLEN", key_m);
	struct pulled *v = NULL;
	size_t n = 0, cap = 0;
	uint64_t last = 0;
	long long blobs;
	char a[24], b[24];

	blobs = one(cl, &c)->integer;
	fc_cmds_free(&c, 1);
	for (long long i = 0; i < blobs; i++) {
		const uint8_t *q;
		redisReply *r;

		snprintf(a, sizeof(a), "%lld", i);
		snprintf(b, sizeof(b), "%lld", i);
		c = (struct fc_cmd){ .argc = 4, .argv = { "LRANGE", key_m, a, b },
				     .argvlen = { 6, strlen(key_m), strlen(a), strlen(b) } };
		r = one(cl, &c);
		if (r->type != REDIS_REPLY_ARRAY || r->elements != 1 ||
		    r->element[0]->type != REDIS_REPLY_STRING ||
		    !r->element[0]->len || r->element[0]->len % REC)
			die("%s: element %lld is not a run of records", key_m, i);
		q = (const uint8_t *)r->element[0]->str;
		for (size_t k = 0; k < r->element[0]->len / REC; k++, q += REC) {
			uint64_t h = uq_le_get64(q);

			/* A blob sent twice (its reply was lost) repeats handles. */
			if (h <= last)
				continue;
			last = h;
			if (n == cap) {
				cap = cap ? 2 * cap : 4096;
				v = realloc(v, cap * sizeof(*v));
				if (!v)
					die("out of memory");
			}
			v[n].handle = h;
			memcpy(v[n].digest, q + 8, UNIQD_DIGEST_SIZE);
			v[n].val = NULL;
			n++;
		}
		fc_cmds_free(&c, 1);
	}
	*np = n;
	return v;
}

/* Every entry fetched and checked against its digest, or the tool stops. */
static void fetch(struct fc_cluster *cl, struct pulled *v, size_t n,
		  uint32_t max_key_len, uint64_t *bytes)
{
	static struct fc_cmd cmds[CHUNK];
	static char keys[CHUNK][8 + HEX + 1];

	for (size_t base = 0; base < n; base += CHUNK) {
		size_t m = n - base < CHUNK ? n - base : CHUNK;

		for (size_t i = 0; i < m; i++) {
			memcpy(keys[i], "uniqd:e:", 8);
			hexify(v[base + i].digest, keys[i] + 8);
			cmds[i] = cmd2("GET", keys[i]);
		}
		if (fc_run(cl, cmds, m))
			die("pull: %s; nothing was interned", cl->err);
		for (size_t i = 0; i < m; i++) {
			redisReply *r = cmds[i].reply;
			uint8_t d[UNIQD_DIGEST_SIZE];
			uint32_t nlen;

			if (r->type != REDIS_REPLY_STRING)
				die("%s: %s; nothing was interned", keys[i],
				    r->type == REDIS_REPLY_NIL ? "absent from the cluster" :
				    r->type == REDIS_REPLY_ERROR ? r->str : "not a string");
			nlen = r->len >= 4 ? uq_le_get32((const uint8_t *)r->str) : 0;
			if (r->len < 4 || !nlen || nlen > UNIQD_CLASS_NAME_MAX ||
			    r->len - 4 < nlen || r->len - 4 - nlen > max_key_len)
				die("%s: not an entry (%zu bytes); nothing was interned",
				    keys[i], r->len);
			digest_of(r->str, r->len, d);
			if (memcmp(d, v[base + i].digest, UNIQD_DIGEST_SIZE))
				die("%s: its content does not have that digest; nothing was interned",
				    keys[i]);
			v[base + i].val = r;
			*bytes += r->len;
			cmds[i].reply = NULL;
		}
	}
}

/* Is the class NAME (LEN bytes) one of --refs? */
static bool is_ref_class(const char *name, size_t len)
{
	for (const char *r = refs; *r; ) {
		size_t l = strcspn(r, ",");

		if (l == len && !memcmp(r, name, len))
			return true;
		r += l + (r[l] == ',');
	}
	return false;
}

/* The index in V of MACHINE's handle H, or N. */
static size_t pulled_index(const struct pulled *v, size_t n, uint64_t h)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].handle == h)
			return mid;
		if (v[mid].handle < h)
			lo = mid + 1;
		else
			hi = mid;
	}
	return n;
}

/* uniqd_intern_refs()'s lookup: the index in the manifest, the handle kept. */
struct ref_lookup {
	const struct pulled *v;
	size_t n;
	uint64_t last;		/* the handle asked about last: a refused one */
};

static size_t ref_index(void *arg, uint64_t h)
{
	struct ref_lookup *l = arg;

	l->last = h;
	return pulled_index(l->v, l->n, h);
}

static int cmd_pull(struct fc_cluster *cl, const char *machine, const char *map)
{
	struct ref_lookup look;
	unsigned char *ref;
	uint64_t bytes = 0, created = 0;
	struct uniqd_device_info dev;
	struct uniqd_item *items;
	struct pulled *v;
	uniqd_pool *pool;
	FILE *out = NULL;
	size_t n, done;

	manifest_keys(machine);
	if (uniqd_device_info(NULL, &dev))
		die("/dev/uniqd: %s", uniqd_strerror(errno));
	v = manifest_read(cl, &n);
	fetch(cl, v, n, dev.max_key_len, &bytes);

	/* All of it is here and sound: now the pool. */
	pool = uniqd_open(pool_name, 0);
	if (!pool)
		die("pool '%s': %s", pool_name, uniqd_strerror(errno));
	if (map && !(out = fopen(map, "w")))
		die("%s: %s", map, strerror(errno));
	items = calloc(n ? n : 1, sizeof(*items));
	ref = calloc(n ? n : 1, sizeof(*ref));
	if (!items || !ref)
		die("out of memory");
	for (size_t i = 0; i < n; i++) {
		const char *s = v[i].val->str;
		uint32_t nlen = uq_le_get32((const uint8_t *)s);

		items[i].class_id = uniqd_class_n(pool, s + 4, nlen, 0);
		if (!items[i].class_id)
			die("class of %zu bytes: %s", (size_t)nlen, uniqd_strerror(errno));
		items[i].data = s + 4 + nlen;
		items[i].len = v[i].val->len - 4 - nlen;
		ref[i] = is_ref_class(s + 4, nlen);
	}
	/* Every record is checked before the pool gets an entry. */
	look = (struct ref_lookup){ .v = v, .n = n };
	done = uniqd_intern_refs(pool, items, n, ref, ref_index, &look, 0);
	if (done < n && errno == EBADMSG && items[done].len % 8)
		die("entry 0x%016" PRIx64 ": a record of handles of %zu bytes; nothing was interned",
		    v[done].handle, (size_t)items[done].len);
	if (done < n && errno == EBADMSG)
		die("entry 0x%016" PRIx64 " names 0x%016" PRIx64
		    ", no entry before it; nothing was interned",
		    v[done].handle, look.last);
	if (done < n)
		die("intern into '%s': %s (the entries before it are in the pool)",
		    pool_name, uniqd_strerror(errno));
	for (size_t i = 0; i < n; i++) {
		created += !!(items[i].status & UNIQD_CREATED);
		if (out)
			fprintf(out, "0x%016" PRIx64 " 0x%016" PRIx64 "\n",
				v[i].handle, items[i].handle);
		freeReplyObject(v[i].val);
	}
	if (out && fclose(out))
		die("%s: %s", map, strerror(errno));
	printf("pulled %zu entries of %s's pool '%s' (%" PRIu64 " new here), %" PRIu64
	       " bytes\n", n, machine, pool_name, created, bytes + n * REC);
	free(ref);
	free(items);
	free(v);
	uniqd_close(pool);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "server", required_argument, NULL, 's' },
		{ "pool", required_argument, NULL, 'p' },
		{ "refs", required_argument, NULL, 'r' },
		{ "user", required_argument, NULL, 'U' },
		{ "pass", required_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const char *user = NULL, *pass = NULL;
	struct fc_cluster cl;
	int c, rc;

	pool_name = getenv("UNIQD_POOL");
	if (!pool_name || !*pool_name)
		pool_name = "default";
	while ((c = getopt_long(argc, argv, "+s:p:r:a:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			server = optarg;
			break;
		case 'p':
			pool_name = optarg;
			break;
		case 'r':
			refs = optarg;
			break;
		case 'U':
			user = optarg;
			break;
		case 'a':
			pass = optarg;
			break;
		case 'h':
			usage(stdout, 0);
			break;
		case 'V':
			printf("uniqd-farm %s (libuniqd %s)\n", UNIQD_VERSION, uniqd_version());
			return 0;
		default:
			usage(stderr, 2);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 2 || (strcmp(argv[0], "push") && strcmp(argv[0], "pull")) ||
	    argc > (strcmp(argv[0], "pull") ? 2 : 3))
		usage(stderr, 2);
	/* As redis-cli: --pass (-a) first, else REDISCLI_AUTH; --user needs one. */
	if (!pass && getenv("REDISCLI_AUTH") && *getenv("REDISCLI_AUTH"))
		pass = getenv("REDISCLI_AUTH");
	if (user && !pass) {
		fprintf(stderr, "%s: --user %s needs a password (--pass or REDISCLI_AUTH)\n",
			prog, user);
		exit(2);
	}
	if (!*pool_name || strlen(pool_name) > UNIQD_POOL_NAME_MAX ||
	    strchr(pool_name, '}'))
		die("a pool name is 1 to %d bytes without '}'", UNIQD_POOL_NAME_MAX);
	if (fc_connect(&cl, server, user, pass))
		die("%s: %s%s", server, cl.err,
		    strstr(cl.err, "NOAUTH") ? " (the cluster wants a password: --pass, or "
						"REDISCLI_AUTH, and --user for an ACL user)" :
		    strstr(cl.err, "WRONGPASS") || strstr(cl.err, "AUTH") ?
						" (check --user and --pass or REDISCLI_AUTH)" : "");
	if (!strcmp(argv[0], "push"))
		rc = cmd_push(&cl, argv[1]);
	else
		rc = cmd_pull(&cl, argv[1], argc == 3 ? argv[2] : NULL);
	fc_close(&cl);
	return rc;
}
