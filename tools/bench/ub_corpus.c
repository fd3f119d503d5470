// SPDX-License-Identifier: GPL-2.0
/*
 * A real workload nobody here wrote: every identifier and string literal of
 * the Linux headers tree (the corpus, tools/bench/tokenize.c), interned by
 * N "compiler" processes that each take a share of the files (file i goes
 * to process i % N) and intern every token, in file order, under the class
 * "ident" or "string":
 *
 *   uniqd_lib        libuniqd's uniqd_intern() per token (its per-thread
 *                    cache in front of the kernel), all into one pool
 *   uniqd_lib_nomap  the same with UNIQD_OPEN_NOMAP: no mapped pool, a
 *                    cache miss is an INTERN (uniqd before the mapping)
 *   uniqd_lib_warm   uniqd_lib into a pool that already holds every key
 *                    of the corpus (interned by the parent before the
 *                    run, untimed): nothing is created, so against
 *                    uniqd_lib it shows what creating costs
 *   uniqd_lib_many   libuniqd's uniqd_intern_many() per file
 *   uniqd_ioctl      a raw INTERN ioctl per token (no cache)
 *   private          each process its own in-process interner (keyed
 *                    BLAKE3): what compilers do today, nothing shared
 *   private_fast     the same with a cheap multiply-mix hash
 *   lmdb             LMDB, the peer: all processes into one environment
 *                    on a tmpfs (tools/bench/ubench_lmdb.c); per file,
 *                    the tokens looked up in one read transaction, then
 *                    the misses put in one write transaction
 *
 * The same program runs the "parallel build" corpus
 * (tools/bench/mkcorpus-build.sh): there a "file" is one translation unit
 * after the preprocessor, headers and all, so process i takes every N-th
 * unit, as the compiler processes of `make -j` do; --kind build names its
 * lines "build", "build-check" etc. instead of "corpus".
 *
 * Every run starts from an empty pool. Per run:
 *   UBENCH corpus mode=M procs=N round=R tokens=T ns=W entries=E bytes=B
 *                 arena=A table=S cache_hits=H cache_misses=X units=U
 *                 map_hits=MH map_misses=MM syscalls=SC
 *                 proc_tokens=T1,T2,.. proc_ns=W1,W2,..
 * entries: distinct entries of the pool (uniqd) or the sum of the private
 * tables' entries. W is the wall time of the whole run; Tp and Wp each
 * process's share of the tokens and its own time (tokens/s per process).
 * map_hits / map_misses: libuniqd's probes of the mapped pool
 * (uniqd_map_info()); syscalls: the calls that reached the kernel (for
 * uniqd_intern(): the probes that missed, or without a mapping every cache
 * miss; not counted for uniqd_lib_many). For lmdb, cache_hits / cache_misses count the tokens
 * found by the read transactions / left to the write transactions, and a
 * second line gives the store's size:
 *   UBENCH corpus-lmdb procs=N round=R entries=E map_bytes=M tmpfs=0|1
 * After the last round, per mode and N, each process's tokens and the sum
 * of its units' least times over the rounds (each unit timed alone):
 *   UBENCH corpus-best mode=M procs=N rounds=R proc_tokens=T1,.. proc_ns=W1,..
 * In round 0 every uniqd and lmdb run is checked: every process
 * wrote its handles, and the same (class, content) must have the same
 * handle in every process and different ones different handles:
 *   UBENCH corpus-check mode=M procs=N tokens=T distinct=D mismatches=X
 *                       collisions=Y ok=0|1
 *
 *   ub_corpus [--rounds N] [--round-base R] [--procs LIST] [--modes LIST]
 *             [--kind NAME] CORPUS
 *
 * --round-base R numbers the rounds from R (round 0 is the checked one), so
 * that a caller can alternate this program with another round by round.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libuniqd.h"
#include "corpus.h"
#include "ubench.h"
#include "ubench_lmdb.h"

#define MAXPROCS	8

/*
 * UB_LIB_VARIANT: a suffix for the libuniqd modes' names when this program
 * is linked with a variant of libuniqd built for a comparison (mk/bench.mk:
 * ub_corpus_c4k, its thread cache kept at 4096 slots).
 */
#ifndef UB_LIB_VARIANT
#define UB_LIB_VARIANT ""
#endif

enum mode { M_LIB, M_MANY, M_IOCTL, M_PRIVATE, M_PRIVATE_FAST, M_LMDB,
	    M_LIB_NOMAP, M_LIB_WARM, M_COUNT };
static const char *const mode_name[M_COUNT] = {
	"uniqd_lib" UB_LIB_VARIANT, "uniqd_lib_many" UB_LIB_VARIANT,
	"uniqd_ioctl", "private", "private_fast", "lmdb",
	"uniqd_lib_nomap" UB_LIB_VARIANT, "uniqd_lib_warm" UB_LIB_VARIANT,
};

static struct ub_corpus corpus;	/* its units: the files of the corpus */

/*
 * Each unit's time in the run going on (shared with the processes, which
 * write their own units' entries), and per mode and N the least time of
 * each unit over the rounds: see the "-best" line.
 */
static uint64_t *unit_ns;
static uint64_t *unit_best[M_COUNT][MAXPROCS + 1];

struct result {
	char status;		/* 'k' or 'f' */
	uint64_t entries;
	uint64_t cache_hits, cache_misses;
	uint64_t map_hits, map_misses;	/* probes of the mapping */
	uint64_t syscalls;	/* uniqd: calls that reached the kernel */
	uint64_t tokens, ns;	/* this process's share and its own time */
};

/* "corpus", or --kind: the prefix of every output line. */
static const char *kind = "corpus";

static char pool_name[64];

static bool uses_pool(enum mode m)
{
	return m != M_PRIVATE && m != M_PRIVATE_FAST && m != M_LMDB;
}

/* ---- LMDB, the peer --------------------------------------------------------- */

static char lmdb_path[128];
static bool lmdb_tmpfs;

/* compile() for LMDB: a file's tokens a read transaction, its misses a write one. */
static int compile_lmdb(unsigned int me, unsigned int procs, int hfd,
			struct result *res)
{
	uint64_t most = 0, *h;
	const uint8_t **data;
	struct ub_lmdb db;
	uint32_t *len, f;
	uint8_t *cls;
	int ret = 0;

	for (f = me; f < corpus.nunits; f += procs)
		if (corpus.unit_first[f + 1] - corpus.unit_first[f] > most)
			most = corpus.unit_first[f + 1] - corpus.unit_first[f];
	data = malloc((most + 1) * sizeof(*data));
	len = malloc((most + 1) * sizeof(*len));
	cls = malloc(most + 1);
	h = malloc((most + 1) * sizeof(*h));
	if (!data || !len || !cls || !h)
		return -1;
	ub_lmdb_open(&db, lmdb_path);
	for (f = me; f < corpus.nunits && !ret; f += procs) {
		uint64_t a = corpus.unit_first[f], n = corpus.unit_first[f + 1] - a, i;
		uint64_t u0 = ub_now();
		long miss;

		for (i = 0; i < n; i++) {
			data[i] = corpus.toks[a + i].data;
			len[i] = corpus.toks[a + i].len;
			cls[i] = corpus.toks[a + i].cls;
		}
		miss = ub_lmdb_intern_many(&db, cls, data, len, n, h);
		if (miss < 0) {
			ret = -1;
			break;
		}
		res->cache_hits += n - miss;
		res->cache_misses += miss;
		for (i = 0; i < n; i++)
			if (!h[i])
				ret = -1;
		if (hfd >= 0 && n &&
		    write(hfd, h, n * sizeof(*h)) != (ssize_t)(n * sizeof(*h)))
			ret = -1;
		unit_ns[f] = ub_now() - u0;
	}
	ub_lmdb_close(&db);
	free(data);
	free(len);
	free(cls);
	free(h);
	return ret;
}

/* A fresh environment for a run. */
static void lmdb_prepare(unsigned int procs, unsigned int round)
{
	snprintf(lmdb_path, sizeof(lmdb_path), "%s/ub_corpus-%u-%u.lmdb",
		 ub_lmdb_dir(&lmdb_tmpfs), round, procs);
	ub_lmdb_remove(lmdb_path);
}

/* After a run: the store's entries (for the corpus line), then remove it. */
static uint64_t lmdb_finish(unsigned int procs, unsigned int round, bool ok)
{
	uint64_t entries = 0, bytes = 0;
	struct ub_lmdb db;

	if (ok) {
		ub_lmdb_open(&db, lmdb_path);
		ub_lmdb_usage(&db, &entries, &bytes);
		ub_lmdb_close(&db);
		ub_out("%s-lmdb procs=%u round=%u entries=%llu map_bytes=%llu tmpfs=%d",
		       kind, procs, round, (unsigned long long)entries,
		       (unsigned long long)bytes, lmdb_tmpfs);
	}
	ub_lmdb_remove(lmdb_path);
	return entries;
}

/* One process's share; handles written to @hfd (if >= 0) in token order. */
static int compile(enum mode m, unsigned int me, unsigned int procs, int hfd,
		   struct result *res)
{
	uniqd_pool *pool = NULL;
	struct ub_interner *local = NULL;
	uint32_t cls[3] = { 0 };
	uint64_t *hbuf = NULL, nh = 0;
	struct uniqd_item *items = NULL;
	struct uniqd_cache_stats cs0 = { 0 }, cs1 = { 0 };
	struct uniqd_map_info mi0 = { 0 }, mi1 = { 0 };
	uint64_t uncached = 0;	/* longer than the cache keeps */
	int fd = -1;
	uint32_t f;

	for (f = me; f < corpus.nunits; f += procs)
		res->tokens += corpus.unit_first[f + 1] - corpus.unit_first[f];
	if (m == M_LMDB)
		return compile_lmdb(me, procs, hfd, res);
	if (m == M_PRIVATE || m == M_PRIVATE_FAST) {
		local = ub_interner_new(m == M_PRIVATE ? UB_HASH_BLAKE3 : UB_HASH_FAST);
		cls[1] = 1;
		cls[2] = 2;
	} else if (m == M_IOCTL) {
		fd = ub_uniqd_open(pool_name);
		cls[1] = ub_uniqd_class(fd, "ident");
		cls[2] = ub_uniqd_class(fd, "string");
	} else {
		/* uniqd_lib_nomap: the same calls, without the mapped pool. */
		pool = uniqd_open(pool_name, UNIQD_OPEN_EXISTING |
				  (m == M_LIB_NOMAP ? UNIQD_OPEN_NOMAP : 0));
		if (!pool)
			return -1;
		cls[1] = uniqd_class(pool, "ident");
		cls[2] = uniqd_class(pool, "string");
		if (!cls[1] || !cls[2])
			return -1;
		uniqd_cache_clear();
		uniqd_cache_stats(&cs0);
		uniqd_map_info(pool, &mi0);
	}
	if (hfd >= 0)
		hbuf = malloc(1 << 20);
	if (m == M_MANY)
		items = malloc(65536 * sizeof(*items));

	for (f = me; f < corpus.nunits; f += procs) {
		uint64_t t, a = corpus.unit_first[f], b = corpus.unit_first[f + 1];
		uint64_t u0 = ub_now();

		if (m == M_MANY) {
			for (t = a; t < b;) {
				size_t n = b - t < 65536 ? b - t : 65536, i;

				for (i = 0; i < n; i++) {
					items[i].data = corpus.toks[t + i].data;
					items[i].len = corpus.toks[t + i].len;
					items[i].class_id = cls[corpus.toks[t + i].cls];
				}
				if (uniqd_intern_many(pool, items, n, 0) != n)
					return -1;
				for (i = 0; i < n && hbuf; i++) {
					hbuf[nh++] = items[i].handle;
					if (nh == (1 << 17)) {
						if (write(hfd, hbuf, nh * 8) != (ssize_t)(nh * 8))
							return -1;
						nh = 0;
					}
				}
				t += n;
			}
			unit_ns[f] = ub_now() - u0;
			continue;
		}
		for (t = a; t < b; t++) {
			const struct ub_tok *k = &corpus.toks[t];
			__u64 h;
			bool created;

			switch (m) {
			case M_LIB:
			case M_LIB_NOMAP:
			case M_LIB_WARM:
				h = uniqd_intern(pool, cls[k->cls], k->data, k->len);
				uncached += k->len > 256;
				break;
			case M_IOCTL:
				if (ut_intern(fd, cls[k->cls], k->data, k->len, &h, NULL))
					h = 0;
				break;
			default:
				h = ub_intern_local(local, cls[k->cls], k->data,
						    k->len, &created);
				break;
			}
			if (!h)
				return -1;
			if (hbuf) {
				hbuf[nh++] = h;
				if (nh == (1 << 17)) {
					if (write(hfd, hbuf, nh * 8) != (ssize_t)(nh * 8))
						return -1;
					nh = 0;
				}
			}
		}
		unit_ns[f] = ub_now() - u0;
	}
	if (hbuf && nh && write(hfd, hbuf, nh * 8) != (ssize_t)(nh * 8))
		return -1;
	if (local)
		res->entries = ub_interner_entries(local);
	if (pool) {
		uniqd_cache_stats(&cs1);
		uniqd_map_info(pool, &mi1);
		res->cache_hits = cs1.hits - cs0.hits;
		res->cache_misses = cs1.misses - cs0.misses;
		res->map_hits = mi1.hits - mi0.hits;
		res->map_misses = mi1.misses - mi0.misses;
		/*
		 * uniqd_intern(): a cache miss (or a key too long for the
		 * cache) is a probe of the mapping when there is one, and each
		 * probe that misses, or each miss without a mapping, an INTERN.
		 */
		if (m != M_MANY)
			res->syscalls = mi1.addr ? res->map_misses :
					res->cache_misses + uncached;
	} else if (m == M_IOCTL) {
		res->syscalls = res->tokens;
	}
	return 0;
}

/* ---- the agreement check -------------------------------------------------- */

struct hmap {
	uint64_t *key;
	uint32_t *val;
	uint64_t mask;
};

static void hmap_init(struct hmap *m, uint64_t n)
{
	uint64_t size = 1;

	while (size < 2 * n)
		size <<= 1;
	m->key = ub_alloc(size * sizeof(*m->key));
	m->val = ub_alloc(size * sizeof(*m->val));
	m->mask = size - 1;
}

/* The value stored for @k, storing @v if there is none. */
static uint32_t hmap_get_put(struct hmap *m, uint64_t k, uint32_t v)
{
	uint64_t i = (k * 0x9E3779B97F4A7C15ULL) >> 20;

	for (i &= m->mask; m->key[i]; i = (i + 1) & m->mask)
		if (m->key[i] == k)
			return m->val[i];
	m->key[i] = k;
	m->val[i] = v;
	return v;
}

static void check(enum mode m, unsigned int procs)
{
	struct ub_interner *ids = ub_interner_new(UB_HASH_FAST);
	uint64_t *first = ub_alloc((corpus.ntoks + 1) * sizeof(uint64_t));
	uint64_t mismatches = 0, collisions = 0, seen = 0;
	struct hmap rev;
	unsigned int p;

	hmap_init(&rev, corpus.ntoks);
	for (p = 0; p < procs; p++) {
		char path[64];
		FILE *fp;
		uint32_t f;

		snprintf(path, sizeof(path), "/tmp/ub_corpus.%u", p);
		fp = fopen(path, "rb");
		if (!fp)
			ub_die("%s: %s", path, strerror(errno));
		for (f = p; f < corpus.nunits; f += procs) {
			uint64_t t;

			for (t = corpus.unit_first[f]; t < corpus.unit_first[f + 1]; t++) {
				uint64_t h = 0;
				bool created;
				uint32_t id;

				if (fread(&h, 8, 1, fp) != 1)
					ub_die("%s: short", path);
				id = (uint32_t)ub_intern_local(ids, corpus.toks[t].cls,
							       corpus.toks[t].data,
							       corpus.toks[t].len, &created);
				seen++;
				if (!first[id]) {
					first[id] = h;
					/* A handle already given to other content? */
					if (hmap_get_put(&rev, h, id) != id)
						collisions++;
				} else if (first[id] != h) {
					mismatches++;
				}
			}
		}
		fclose(fp);
		unlink(path);
	}
	ub_out("%s-check mode=%s procs=%u tokens=%llu distinct=%llu mismatches=%llu collisions=%llu ok=%d",
	       kind, mode_name[m], procs, (unsigned long long)seen,
	       (unsigned long long)ub_interner_entries(ids),
	       (unsigned long long)mismatches, (unsigned long long)collisions,
	       !mismatches && !collisions && seen == corpus.ntoks);
	free(rev.key);
	free(rev.val);
	free(first);
	ub_interner_free(ids);
}

/* Every distinct key of the corpus into the pool of @fd, 256 a batch. */
static void warm(int fd)
{
	struct ub_interner *seen = ub_interner_new(UB_HASH_FAST);
	uint32_t cls[3] = { 0, ub_uniqd_class(fd, "ident"), ub_uniqd_class(fd, "string") };
	struct uniqd_key batch[256];
	uint32_t n = 0;

	for (uint64_t t = 0; t <= corpus.ntoks; t++) {
		bool created = false;

		if (t < corpus.ntoks)
			ub_intern_local(seen, corpus.toks[t].cls, corpus.toks[t].data, corpus.toks[t].len,
					&created);
		if (created) {
			memset(&batch[n], 0, sizeof(batch[n]));
			batch[n].class_id = cls[corpus.toks[t].cls];
			batch[n].data = (uintptr_t)corpus.toks[t].data;
			batch[n].len = corpus.toks[t].len;
			n++;
		}
		if (n == 256 || (t == corpus.ntoks && n)) {
			if (ut_batch(fd, batch, n))
				ub_die("INTERN_BATCH: %s", strerror(errno));
			n = 0;
		}
	}
	ub_interner_free(seen);
}

/* What each process of a run is given; the child's own verify file. */
struct job {
	enum mode m;
	unsigned int procs;
	bool verify;
};
static int job_hfd = -1;

static int job_setup(unsigned int p, void *arg)
{
	struct job *j = arg;
	char path[64];

	if (!j->verify)
		return 0;
	snprintf(path, sizeof(path), "/tmp/ub_corpus.%u", p);
	job_hfd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	return job_hfd < 0 ? -1 : 0;
}

static int job_run(unsigned int p, void *arg, void *res)
{
	struct job *j = arg;
	struct result *r = res;

	r->status = 'k';
	r->ns = ub_now();
	if (compile(j->m, p, j->procs, job_hfd, r))
		r->status = 'f';
	r->ns = ub_now() - r->ns;
	return r->status == 'k' ? 0 : -1;
}

static void run(enum mode m, unsigned int procs, unsigned int round, bool verify)
{
	struct result res[MAXPROCS], total = { 0 };
	struct uniqd_stats st = { 0 };
	struct job job = { .m = m, .procs = procs };
	struct ub_procs pr = {
		.n = procs, .setup = job_setup, .run = job_run, .arg = &job,
		.res_size = sizeof(struct result),
	};
	uint64_t ns;
	unsigned int p;
	bool ok = true;
	int fd = -1;

	if (m == M_PRIVATE || m == M_PRIVATE_FAST)
		verify = false;
	job.verify = verify;
	snprintf(pool_name, sizeof(pool_name), "ubench-corpus-%u-%s-%u", round,
		 mode_name[m], procs);
	if (m == M_LMDB)
		lmdb_prepare(procs, round);
	if (uses_pool(m)) {
		/* The parent keeps the pool until the end, for its STATS. */
		fd = ub_uniqd_open(pool_name);
		ub_uniqd_class(fd, "ident");
		ub_uniqd_class(fd, "string");
		if (m == M_LIB_WARM)
			warm(fd);
	}
	memset(res, 0, sizeof(res));
	ns = ub_procs_run(&pr, res);
	if (!ns)
		ok = false;
	for (p = 0; p < procs; p++) {
		total.entries += res[p].entries;
		total.cache_hits += res[p].cache_hits;
		total.cache_misses += res[p].cache_misses;
		total.map_hits += res[p].map_hits;
		total.map_misses += res[p].map_misses;
		total.syscalls += res[p].syscalls;
	}
	if (fd >= 0) {
		if (ut_stats(fd, &st))
			ok = false;
		total.entries = st.entries;
		close(fd);
	}
	if (m == M_LMDB)
		total.entries = lmdb_finish(procs, round, ok);
	if (!ok) {
		ub_out("error %s mode=%s procs=%u round=%u failed", kind,
		       mode_name[m], procs, round);
		return;
	}
	{
		/* Each process's own tokens and time: "t1,t2,..." */
		char pt[MAXPROCS * 24] = "", pn[MAXPROCS * 24] = "";
		size_t lt = 0, ln = 0;

		for (p = 0; p < procs; p++) {
			lt += snprintf(pt + lt, sizeof(pt) - lt, "%s%llu", p ? "," : "",
				       (unsigned long long)res[p].tokens);
			ln += snprintf(pn + ln, sizeof(pn) - ln, "%s%llu", p ? "," : "",
				       (unsigned long long)res[p].ns);
		}
		ub_out("%s mode=%s procs=%u round=%u tokens=%llu ns=%llu entries=%llu bytes=%llu arena=%llu table=%llu cache_hits=%llu cache_misses=%llu units=%u map_hits=%llu map_misses=%llu syscalls=%llu proc_tokens=%s proc_ns=%s",
		       kind, mode_name[m], procs, round, (unsigned long long)corpus.ntoks,
		       (unsigned long long)ns, (unsigned long long)total.entries,
		       (unsigned long long)st.bytes, (unsigned long long)st.arena_bytes,
		       (unsigned long long)st.table_bytes,
		       (unsigned long long)total.cache_hits,
		       (unsigned long long)total.cache_misses, corpus.nunits,
		       (unsigned long long)total.map_hits,
		       (unsigned long long)total.map_misses,
		       (unsigned long long)total.syscalls, pt, pn);
	}
	if (!unit_best[m][procs]) {
		unit_best[m][procs] = ub_alloc(corpus.nunits * sizeof(uint64_t));
		memset(unit_best[m][procs], 0xff, corpus.nunits * sizeof(uint64_t));
	}
	for (uint32_t f = 0; f < corpus.nunits; f++)
		if (unit_ns[f] < unit_best[m][procs][f])
			unit_best[m][procs][f] = unit_ns[f];
	if (verify)
		check(m, procs);
}

/*
 * Per mode and N, each process's tokens and the sum of its units' least
 * times over the rounds: the run as it would have gone had every unit met
 * its quietest moment (the host is shared; a unit takes tens of ms).
 */
static void best_out(unsigned int rounds)
{
	for (unsigned int m = 0; m < M_COUNT; m++)
		for (unsigned int n = 1; n <= MAXPROCS; n++) {
			char pt[MAXPROCS * 24] = "", pn[MAXPROCS * 24] = "";
			size_t lt = 0, ln = 0;

			if (!unit_best[m][n])
				continue;
			for (unsigned int p = 0; p < n; p++) {
				uint64_t ns = 0, tk = 0;

				for (uint32_t f = p; f < corpus.nunits; f += n) {
					ns += unit_best[m][n][f];
					tk += corpus.unit_first[f + 1] - corpus.unit_first[f];
				}
				lt += snprintf(pt + lt, sizeof(pt) - lt, "%s%llu",
					       p ? "," : "", (unsigned long long)tk);
				ln += snprintf(pn + ln, sizeof(pn) - ln, "%s%llu",
					       p ? "," : "", (unsigned long long)ns);
			}
			ub_out("%s-best mode=%s procs=%u rounds=%u proc_tokens=%s proc_ns=%s",
			       kind, mode_name[m], n, rounds, pt, pn);
		}
}

int main(int argc, char **argv)
{
	unsigned int rounds = 3, procs[MAXPROCS], nprocs = 0, r, i, j, base = 0;
	bool want[M_COUNT];
	const char *path = NULL;
	char *list = NULL, *modes = NULL;

	for (i = 0; i < M_COUNT; i++)
		want[i] = true;
	for (i = 1; i < (unsigned int)argc; i++) {
		if (!strcmp(argv[i], "--rounds") && i + 1 < (unsigned int)argc)
			rounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--procs") && i + 1 < (unsigned int)argc)
			list = argv[++i];
		else if (!strcmp(argv[i], "--modes") && i + 1 < (unsigned int)argc)
			modes = argv[++i];
		else if (!strcmp(argv[i], "--kind") && i + 1 < (unsigned int)argc)
			kind = argv[++i];
		else if (!strcmp(argv[i], "--round-base") && i + 1 < (unsigned int)argc)
			base = atoi(argv[++i]);
		else
			path = argv[i];
	}
	if (!path)
		ub_die("usage: ub_corpus [--rounds N] [--round-base R] [--procs LIST] [--modes LIST] [--kind NAME] CORPUS");
	for (char *s = strtok(list ? list : (char[]){ "1 2" }, " ,"); s && nprocs < MAXPROCS;
	     s = strtok(NULL, " ,")) {
		procs[nprocs] = atoi(s);
		if (procs[nprocs] >= 1 && procs[nprocs] <= MAXPROCS)
			nprocs++;
	}
	if (modes) {
		for (i = 0; i < M_COUNT; i++)
			want[i] = false;
		for (char *s = strtok(modes, " ,"); s; s = strtok(NULL, " ,"))
			for (i = 0; i < M_COUNT; i++)
				if (!strcmp(s, mode_name[i]))
					want[i] = true;
	}
	ub_corpus_load(&corpus, path);
	unit_ns = mmap(NULL, corpus.nunits * sizeof(uint64_t), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (unit_ns == MAP_FAILED)
		ub_die("mmap: %s", strerror(errno));
	ub_out("%s-setup files=%u tokens=%llu bytes=%llu", kind, corpus.nunits,
	       (unsigned long long)corpus.ntoks, (unsigned long long)corpus.bytes);
	for (r = base; r < base + rounds; r++)
		for (i = 0; i < M_COUNT; i++)
			for (j = 0; j < nprocs; j++) {
				/* Alternate the order of the process counts. */
				unsigned int n = procs[(j + r) % nprocs];

				if (want[i])
					run(i, n, r, r == 0);
			}
	best_out(rounds);
	return 0;
}
