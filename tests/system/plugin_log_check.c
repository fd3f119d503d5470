// SPDX-License-Identifier: GPL-2.0
/*
 * plugin_log_check: check the GCC plugin's logs against the pool they were
 * interned into (tests/system/gcc-plugin.sh, in the full-system guest).
 *
 *	plugin_log_check POOL LOG...
 *
 * Each log line is "<handle: 16 hex digits>\t<class name>\t<content hex>"
 * (Documentation/gcc-plugin.rst, log=FILE). Checks, and prints one line
 * for each:
 *   - every line parses;
 *   - one handle never stands for two (class, content) pairs, and one
 *     (class, content) pair never has two handles: the compilers agreed;
 *   - RESOLVE of every distinct handle gives the logged class and content;
 *   - for every class of the pool, its entry count equals the number of
 *     distinct contents the logs hold for it: the pool holds exactly what
 *     the units interned (with the logs complete, nothing else wrote to it).
 * Prints "class NAME: N distinct in the logs, M entries in the pool" per
 * class and a summary; exits 0 when every check held, 1 when one did not,
 * 2 on a usage or system error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libuniqd.h>

struct entry {
	uint64_t handle;
	uint32_t cls;		/* index into classes[] */
	uint32_t len;
	unsigned char *data;
};

static struct entry *entries;
static size_t nentries, capentries;
/* Open addressing, power-of-two sizes, 0 = empty (entry index + 1). */
static uint32_t *by_handle, *by_content;
static size_t tabsize;

static char *classes[64];
static size_t nclasses;
static uint64_t distinct_per_class[64];

static unsigned long bad_lines, handle_conflicts, content_conflicts, resolve_bad;
static unsigned long long lines;

static void die(const char *what)
{
	fprintf(stderr, "plugin_log_check: %s: %s\n", what, strerror(errno));
	exit(2);
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

static uint64_t content_hash(uint32_t cls, const unsigned char *d, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ cls;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ d[i]) * 0x100000001b3ULL;
	return mix(h);
}

static void rehash(void);

static uint32_t *slot_handle(uint64_t handle)
{
	size_t i = mix(handle) & (tabsize - 1);

	while (by_handle[i] && entries[by_handle[i] - 1].handle != handle)
		i = (i + 1) & (tabsize - 1);
	return &by_handle[i];
}

static uint32_t *slot_content(uint32_t cls, const unsigned char *d, size_t len)
{
	size_t i = content_hash(cls, d, len) & (tabsize - 1);

	while (by_content[i]) {
		const struct entry *e = &entries[by_content[i] - 1];

		if (e->cls == cls && e->len == len && !memcmp(e->data, d, len))
			break;
		i = (i + 1) & (tabsize - 1);
	}
	return &by_content[i];
}

static void rehash(void)
{
	size_t i;

	free(by_handle);
	free(by_content);
	tabsize = tabsize ? tabsize * 2 : 1 << 16;
	by_handle = calloc(tabsize, sizeof(*by_handle));
	by_content = calloc(tabsize, sizeof(*by_content));
	if (!by_handle || !by_content)
		die("calloc");
	for (i = 0; i < nentries; i++) {
		*slot_handle(entries[i].handle) = (uint32_t)(i + 1);
		*slot_content(entries[i].cls, entries[i].data, entries[i].len) = (uint32_t)(i + 1);
	}
}

static uint32_t class_index(const char *name)
{
	size_t i;

	for (i = 0; i < nclasses; i++)
		if (!strcmp(classes[i], name))
			return (uint32_t)i;
	if (nclasses == sizeof(classes) / sizeof(classes[0])) {
		fprintf(stderr, "plugin_log_check: more than %zu classes\n", nclasses);
		exit(2);
	}
	classes[nclasses] = strdup(name);
	return (uint32_t)nclasses++;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decode HEX (LEN digits) into OUT; returns the byte count or -1. */
static long unhex(const char *hex, size_t len, unsigned char *out)
{
	size_t i;

	if (len % 2)
		return -1;
	for (i = 0; i < len; i += 2) {
		int hi = hexval(hex[i]), lo = hexval(hex[i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i / 2] = (unsigned char)(hi << 4 | lo);
	}
	return (long)(len / 2);
}

static void one_line(char *line, size_t n, const char *file)
{
	char *t1, *t2, *end;
	unsigned char *buf;
	uint64_t handle;
	uint32_t cls, *sh, *sc;
	long len;

	lines++;
	if (n && line[n - 1] == '\n')
		line[--n] = '\0';
	t1 = memchr(line, '\t', n);
	t2 = t1 ? memchr(t1 + 1, '\t', n - (size_t)(t1 + 1 - line)) : NULL;
	if (!t1 || !t2 || t1 - line != 16)
		goto bad;
	*t1 = *t2 = '\0';
	errno = 0;
	handle = strtoull(line, &end, 16);
	if (errno || end != t1 || !handle)
		goto bad;
	buf = malloc(n / 2 + 1);
	if (!buf)
		die("malloc");
	len = unhex(t2 + 1, strlen(t2 + 1), buf);
	if (len < 0) {
		free(buf);
		goto bad;
	}
	cls = class_index(t1 + 1);

	if (nentries * 2 >= tabsize)
		rehash();
	sh = slot_handle(handle);
	sc = slot_content(cls, buf, (size_t)len);
	if (*sh) {
		const struct entry *e = &entries[*sh - 1];

		if (e->cls != cls || e->len != (uint32_t)len || memcmp(e->data, buf, (size_t)len)) {
			if (handle_conflicts++ < 5)
				fprintf(stderr, "%s: handle %016" PRIx64 " is %s here, %s earlier\n",
					file, handle, classes[cls], classes[e->cls]);
		}
		free(buf);
		return;
	}
	if (*sc) {
		if (content_conflicts++ < 5)
			fprintf(stderr, "%s: one %s key has handles %016" PRIx64 " and %016" PRIx64 "\n",
				file, classes[cls], handle, entries[*sc - 1].handle);
		free(buf);
		return;
	}
	if (nentries == capentries) {
		capentries = capentries ? capentries * 2 : 1 << 16;
		entries = realloc(entries, capentries * sizeof(*entries));
		if (!entries)
			die("realloc");
	}
	entries[nentries] = (struct entry){ handle, cls, (uint32_t)len, buf };
	nentries++;
	*sh = *sc = (uint32_t)nentries;
	distinct_per_class[cls]++;
	return;
bad:
	if (bad_lines++ < 5)
		fprintf(stderr, "%s: line %llu does not parse\n", file, lines);
}

int main(int argc, char **argv)
{
	unsigned long class_bad = 0;
	uniqd_pool *pool;
	uint32_t pool_cls[64];
	size_t i, linecap = 0;
	char *line = NULL;
	int a;

	if (argc < 3) {
		fprintf(stderr, "usage: plugin_log_check POOL LOG...\n");
		return 2;
	}
	for (a = 2; a < argc; a++) {
		FILE *f = fopen(argv[a], "r");
		ssize_t n;

		if (!f)
			die(argv[a]);
		while ((n = getline(&line, &linecap, f)) > 0)
			one_line(line, (size_t)n, argv[a]);
		fclose(f);
	}
	printf("%llu log lines, %zu distinct handles, %lu lines unparsed, %lu handles with two keys, %lu keys with two handles\n",
	       lines, nentries, bad_lines, handle_conflicts, content_conflicts);

	pool = uniqd_open(argv[1], UNIQD_OPEN_EXISTING);
	if (!pool)
		die(argv[1]);
	/* The logged class names, as ids of this pool (0: the pool has none). */
	for (i = 0; i < nclasses; i++) {
		pool_cls[i] = uniqd_class_n(pool, classes[i], strlen(classes[i]), UNIQD_CLASS_FIND);
		if (!pool_cls[i]) {
			printf("class %s: in the logs, not in the pool\n", classes[i]);
			class_bad++;
		}
	}
	for (i = 0; i < nentries; i++) {
		const struct entry *e = &entries[i];
		uint32_t got_cls = 0;
		size_t got_len = 0;
		void *got = uniqd_resolve_alloc(pool, e->handle, &got_len, &got_cls);

		if (!got || got_cls != pool_cls[e->cls] || got_len != e->len ||
		    memcmp(got, e->data, e->len)) {
			if (resolve_bad++ < 5)
				fprintf(stderr, "RESOLVE %016" PRIx64 " (%s): %s\n", e->handle,
					classes[e->cls], got ? "another class or content" : strerror(errno));
		}
		free(got);
	}
	printf("RESOLVE: %lu of %zu handles disagree with the logs\n", resolve_bad, nentries);

	/* Every class of the pool: exactly the distinct keys the logs hold. */
	for (uint32_t id = 1;; id++) {
		struct uniqd_class_desc d;
		uint64_t logged = 0;

		if (uniqd_class_info(pool, id, &d) < 0)
			break;
		for (i = 0; i < nclasses; i++)
			if (pool_cls[i] == id)
				logged = distinct_per_class[i];
		printf("class %s: %" PRIu64 " distinct in the logs, %" PRIu64 " entries in the pool\n",
		       d.name, logged, (uint64_t)d.entries);
		if (logged != d.entries)
			class_bad++;
	}
	uniqd_close(pool);
	if (bad_lines || handle_conflicts || content_conflicts || resolve_bad || class_bad || !nentries) {
		printf("FAIL\n");
		return 1;
	}
	printf("OK\n");
	return 0;
}
