// SPDX-License-Identifier: GPL-2.0
/*
 * Snapshots (Documentation/benchmarks.rst, "Snapshots"): a pool of N
 * entries of 4..32 bytes (ubench's keys, spread over C classes) written to
 * a file and read back, each way against what a program would do without
 * snapshots, all in one run so that the ratios hold whatever TCG does. A
 * round:
 *
 *   intern_batch  INTERN_BATCH (the raw ioctl, 256 keys a call, as
 *                 ub_micro's batch256_new) of every key into a new pool
 *   resolve       RESOLVE (the raw ioctl) of every handle, one call each,
 *                 in handle order: a dump without the mapping
 *   save          uniqd_save() of that pool to a file (on tmpfs)
 *                 (resolve and save alternate which goes first)
 *   restore       uniqd_restore() of the file, once the first pool is gone
 *                 (its id free again): the same handles
 *   merge         uniqd_merge() of the file into a new, empty pool under
 *                 another name
 *   walk_cold     one pass over the mapped entries, the mapping new to
 *   walk_warm     the process, then once more (uniqd_save() makes two)
 *   write         the file's bytes written to a new file, 64 KiB a write()
 *                 (as uniqd_save() writes)
 *   intern_batch_max  INTERN_BATCH of every key into another new pool,
 *                 UNIQD_BATCH_MAX (4096) keys a call, as uniqd_restore()
 *                 and uniqd_merge() call it; first in odd rounds, last
 *                 in even ones
 *   read          the file read into memory (read()), and
 *   checksum      BLAKE3 of all of it: two things restore and merge do
 *                 before interning, timed apart (save computes the same
 *                 checksum while it writes); checksum_IMPL: the same with
 *                 each BLAKE3 implementation the CPU has ("portable",
 *                 "sse41", "avx2", "avx512"), checksum the default one
 *
 *   UBENCH snapshot-setup n=N classes=C content=BYTES blake3=IMPL
 *   UBENCH snapshot round=R op=OP n=N ns=T
 *   UBENCH snapshot-file round=R entries=E content=B file=F classes=C
 *                        arena=A table=T map=M
 *
 * F: the snapshot's size; A, T, M: the first pool's arena, tables and
 * mapping (STATS), to set the file beside the pool it came from.
 *
 *   ub_snapshot [--n N] [--rounds R] [--classes C] [--file PATH]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blake3.h"
#include "blake3_impl.h"
#include "internal.h"	/* uq_map_slot(), for the walk */
#include "libuniqd.h"
#include "ubench.h"

#define POOL		"ubench-snap"
#define POOL_MERGE	"ubench-snap-merge"
#define POOL_B4K	"ubench-snap-batchmax"
#define BATCH		256

static struct ub_keys keys;
static uint32_t n, nclasses = 8;
static uint32_t *cls;		/* class id of key i */
static uint64_t *handles;	/* handle of key i in the first pool */
static uint64_t content;	/* the keys' bytes */

static void report(unsigned int round, const char *op, uint64_t t0)
{
	ub_out("snapshot round=%u op=%s n=%u ns=%llu", round, op, n,
	       (unsigned long long)(ub_now() - t0));
}

/*
 * Every key into the new pool on @fd, @batch a call; the handles into
 * handles[] for the first pool (@op "intern_batch").
 */
static void intern_all(int fd, uint32_t batch, const char *op,
		       unsigned int round)
{
	struct uniqd_key *keyv = ub_alloc(batch * sizeof(*keyv));
	bool keep = !strcmp(op, "intern_batch");
	uint64_t t0 = ub_now();

	for (uint32_t i = 0; i < n; i += batch) {
		uint32_t m = n - i < batch ? n - i : batch, len;

		memset(keyv, 0, m * sizeof(keyv[0]));
		for (uint32_t j = 0; j < m; j++) {
			keyv[j].class_id = cls[(i + j) % nclasses];
			keyv[j].data = (uintptr_t)ub_key(&keys, i + j, &len);
			keyv[j].len = len;
		}
		if (ut_batch(fd, keyv, m))
			ub_die("INTERN_BATCH: %s", strerror(errno));
		for (uint32_t j = 0; j < m; j++) {
			if (!(keyv[j].status & UNIQD_STATUS_NEW))
				ub_die("key %u was not new", i + j);
			if (keep)
				handles[i + j] = keyv[j].handle;
		}
	}
	report(round, op, t0);
	free(keyv);
}

/* A new pool @name with the classes; its fd. */
static int pool_new(const char *name)
{
	int fd = ub_uniqd_open(name);
	char cname[32];

	for (uint32_t c = 0; c < nclasses; c++) {
		snprintf(cname, sizeof(cname), "snap.class%u", c);
		cls[c] = ub_uniqd_class(fd, cname);
	}
	return fd;
}

/* RESOLVE of every handle, in handle order, one call each. */
static void resolve_all(int fd, unsigned int round)
{
	char buf[64];
	uint64_t t0 = ub_now();

	for (uint32_t i = 0; i < n; i++) {
		struct uniqd_resolve r = { .handle = handles[i],
					   .buf = (uintptr_t)buf,
					   .buf_len = sizeof(buf) };

		while (ioctl(fd, UNIQD_IOC_RESOLVE, &r))
			if (errno != EINTR)
				ub_die("RESOLVE 0x%llx: %s",
				       (unsigned long long)handles[i], strerror(errno));
		if (r.len != keys.len[i])
			ub_die("RESOLVE of key %u: %u bytes, not %u", i, r.len,
			       keys.len[i]);
	}
	report(round, "resolve", t0);
}

static int file_open(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC, 0600);

	if (fd < 0)
		ub_die("%s: %s", path, strerror(errno));
	return fd;
}

static void save(uniqd_pool *lib, const char *path, unsigned int round,
		 struct uniqd_snapshot_info *info)
{
	uint64_t t0 = ub_now();
	int fd = file_open(path, O_WRONLY | O_CREAT | O_TRUNC);

	if (uniqd_save(lib, fd, 0, info))
		ub_die("uniqd_save: %s", uniqd_last_error());
	if (close(fd))
		ub_die("%s: %s", path, strerror(errno));
	report(round, "save", t0);
	if (info->entries != n)
		ub_die("saved %llu entries, not %u",
		       (unsigned long long)info->entries, n);
}

/*
 * One pass over the mapped entries, as each of uniqd_save()'s two passes
 * makes it: entries[i], then the record's class and length. @name's pool
 * is opened again, so its mapping is new to this process: the first pass
 * (walk_cold) finds it untouched, the second (walk_warm) does not.
 */
static void walk(const char *name, unsigned int round)
{
	uniqd_pool *p = uniqd_open(name, UNIQD_OPEN_EXISTING | UNIQD_OPEN_NOCACHE);
	uint64_t sum = 0;

	if (!p)
		ub_die("uniqd_open: %s", uniqd_last_error());
	for (int pass = 0; pass < 2; pass++) {
		uint64_t t0 = ub_now();

		for (uint32_t i = 1; i <= n; i++) {
			const struct uniqd_map_rec *r;

			if (uq_map_slot(&p->map, i, &r) || !r)
				ub_die("entry %u is not mapped", i);
			sum += r->class_id + r->len;
		}
		report(round, pass ? "walk_warm" : "walk_cold", t0);
	}
	/* Keep the loads: their sum is used. */
	__asm__ volatile("" : : "r"(sum));
	uniqd_close(p);
}

/* A sample of the restored pool's handles, resolved through its mapping. */
static void check_restored(uniqd_pool *p)
{
	char buf[64];

	for (uint32_t i = 0; i < n; i += n / 1000 + 1) {
		uint32_t c, len;
		const uint8_t *k = ub_key(&keys, i, &len);
		ssize_t got = uniqd_resolve(p, handles[i], buf, sizeof(buf), &c);

		if (got != (ssize_t)len || memcmp(buf, k, len) ||
		    c != cls[i % nclasses])
			ub_die("restored handle 0x%llx is not key %u",
			       (unsigned long long)handles[i], i);
	}
}

static void restore(const char *path, unsigned int round)
{
	struct uniqd_snapshot_info info;
	uniqd_pool *p = NULL;
	uint64_t t0 = 0;

	/* The first pool was freed at its last close; allow for a late one. */
	for (int tries = 0; !p && tries < 50; tries++) {
		int fd = file_open(path, O_RDONLY);

		t0 = ub_now();
		p = uniqd_restore(NULL, fd, UNIQD_OPEN_NOCACHE, &info);
		close(fd);
		if (!p && errno != EADDRINUSE && errno != EEXIST)
			ub_die("uniqd_restore: %s", uniqd_last_error());
		if (!p)
			usleep(100000);
	}
	if (!p)
		ub_die("uniqd_restore: %s", uniqd_last_error());
	report(round, "restore", t0);
	check_restored(p);
	uniqd_close(p);
}

static void merge(const char *path, unsigned int round)
{
	struct uniqd_snapshot_info info;
	uniqd_pool *p = uniqd_open(POOL_MERGE, UNIQD_OPEN_NEW | UNIQD_OPEN_NOCACHE);
	uint64_t *map = NULL, t0;
	int fd;

	if (!p)
		ub_die("uniqd_open %s: %s", POOL_MERGE, uniqd_last_error());
	fd = file_open(path, O_RDONLY);
	t0 = ub_now();
	if (uniqd_merge(p, fd, 0, &map, &info))
		ub_die("uniqd_merge: %s", uniqd_last_error());
	report(round, "merge", t0);
	close(fd);
	if (info.entries != n)
		ub_die("merged %llu entries, not %u",
		       (unsigned long long)info.entries, n);
	/* A new pool, its own id: every entry new, in the snapshot's order. */
	for (uint32_t i = 1; i <= n; i++)
		if ((map[i] & 0xffffffffULL) != i)
			ub_die("merged entry %u got handle 0x%llx", i,
			       (unsigned long long)map[i]);
	free(map);
	uniqd_close(p);
}

/* What restore and merge do before interning: read, then BLAKE3 of all. */
static void read_and_hash(const char *path, unsigned int round)
{
	struct stat st;
	uint8_t sum[32], *buf;
	uint64_t t0;
	size_t got = 0;
	int fd = file_open(path, O_RDONLY);

	if (fstat(fd, &st))
		ub_die("%s: %s", path, strerror(errno));
	buf = malloc(st.st_size);
	if (!buf)
		ub_die("out of memory");
	t0 = ub_now();
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, st.st_size - got);

		if (r <= 0)
			ub_die("%s: %s", path, r ? strerror(errno) : "short");
		got += r;
	}
	report(round, "read", t0);
	{
		char tmp[4096];
		int out;

		snprintf(tmp, sizeof(tmp), "%s.copy", path);
		out = file_open(tmp, O_WRONLY | O_CREAT | O_TRUNC);
		t0 = ub_now();
		for (size_t off = 0; off < got;) {
			ssize_t w = write(out, buf + off, got - off > 65536 ? 65536 : got - off);

			if (w <= 0)
				ub_die("%s: %s", tmp, w ? strerror(errno) : "short");
			off += w;
		}
		close(out);
		report(round, "write", t0);
		unlink(tmp);
	}
	t0 = ub_now();
	uniqd_blake3_hash(NULL, buf, got, sum, sizeof(sum));
	report(round, "checksum", t0);
	/* Each implementation this CPU has: TCG's SIMD is no guide to real. */
	for (unsigned int i = 0; uniqd_blake3_impl_nth(i); i++) {
		const struct uniqd_blake3_impl *impl = uniqd_blake3_impl_nth(i);
		struct uniqd_blake3_hasher h;
		char op[48];

		if (!uniqd_blake3_impl_usable(impl))
			continue;
		snprintf(op, sizeof(op), "checksum_%s", impl->name);
		uniqd_blake3_init(&h);
		t0 = ub_now();
		uniqd_blake3_update_impl(impl, &h, buf, got);
		uniqd_blake3_final(&h, sum, sizeof(sum));
		report(round, op, t0);
	}
	close(fd);
	free(buf);
}

/* INTERN_BATCH as uniqd_restore() calls it, UNIQD_BATCH_MAX a call. */
static void intern_max(unsigned int round)
{
	int fd = pool_new(POOL_B4K);

	intern_all(fd, UNIQD_BATCH_MAX, "intern_batch_max", round);
	close(fd);
}

int main(int argc, char **argv)
{
	const char *path = "/tmp/ub-snapshot/pool.snap";
	unsigned int rounds = 5;

	n = 1000000;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--n") && i + 1 < argc)
			n = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--classes") && i + 1 < argc)
			nclasses = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--file") && i + 1 < argc)
			path = argv[++i];
		else
			ub_die("usage: ub_snapshot [--n N] [--rounds R] [--classes C] [--file PATH]");
	}
	if (!n || !nclasses || nclasses > 1000)
		ub_die("--n and --classes (1..1000) must not be 0");
	ub_keys_make(&keys, n, 0, 61);
	for (uint32_t i = 0; i < n; i++)
		content += keys.len[i];
	handles = ub_alloc((size_t)n * sizeof(*handles));
	cls = ub_alloc(nclasses * sizeof(*cls));
	ub_out("snapshot-setup n=%u classes=%u content=%llu blake3=%s", n,
	       nclasses, (unsigned long long)content,
	       uniqd_blake3_impl_default()->name);

	for (unsigned int r = 0; r < rounds; r++) {
		struct uniqd_snapshot_info info;
		struct uniqd_stats st;
		uniqd_pool *lib;
		int fd;

		/*
		 * INTERN_BATCH 4096 a call first in odd rounds, last in even
		 * ones: where it stands in the round must not decide.
		 */
		if (r % 2)
			intern_max(r);
		/* A new pool (the last round's, and its restored copy, are gone). */
		fd = pool_new(POOL);
		intern_all(fd, BATCH, "intern_batch", r);
		lib = uniqd_open(POOL, UNIQD_OPEN_EXISTING | UNIQD_OPEN_NOCACHE);
		if (!lib)
			ub_die("uniqd_open: %s", uniqd_last_error());
		if (r % 2) {
			save(lib, path, r, &info);
			resolve_all(fd, r);
		} else {
			resolve_all(fd, r);
			save(lib, path, r, &info);
		}
		if (ut_stats(fd, &st))
			ub_die("STATS: %s", strerror(errno));
		ub_out("snapshot-file round=%u entries=%llu content=%llu file=%llu classes=%u arena=%llu table=%llu map=%llu",
		       r, (unsigned long long)info.entries,
		       (unsigned long long)info.content_bytes,
		       (unsigned long long)info.file_bytes, info.classes,
		       (unsigned long long)st.arena_bytes,
		       (unsigned long long)st.table_bytes,
		       (unsigned long long)st.map_bytes);
		walk(POOL, r);
		if (info.content_bytes != content)
			ub_die("saved %llu content bytes, not %llu",
			       (unsigned long long)info.content_bytes,
			       (unsigned long long)content);
		/* The pool's last file: it is freed, its id free again. */
		uniqd_close(lib);
		close(fd);
		restore(path, r);
		merge(path, r);
		if (!(r % 2))
			intern_max(r);
		read_and_hash(path, r);
		unlink(path);
	}
	return 0;
}
