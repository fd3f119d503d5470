// SPDX-License-Identifier: GPL-2.0
/*
 * ub_corpus's uniqd path replayed natively, for profiling where uniqd loses
 * to a private interner (Documentation/benchmarks.rst, "A parallel build").
 * The host cannot load the module, so libuniqd (its real code: the
 * per-thread cache, the probe of the mapping) runs against the native
 * tests' fake device (tests/native/fake/uniqd_fake.h; libuniqd.a's sys.o is
 * never linked in), set up as the module's pool would be: shared between
 * the processes, mapped, with the mapped index built by the kernel's rules
 * (fake_map.c: home = tag & mask, the first empty of UNIQD_MAP_PROBE
 * slots, doubled past half full; a record, then entries[idx], then the
 * slot, each published with release).
 *
 * An INTERN of the fake takes a process-shared mutex, finds or creates the
 * entry in a table of its own and, with --kernel-cost (the default), pays
 * what the module pays beyond that: a system call (getppid()) and a keyed
 * BLAKE3 of the key. It is a model of the costs, not of the module.
 *
 *   replay_native [--procs LIST] [--rounds N] [--modes LIST]
 *                 [--no-kernel-cost] [--analyze] CORPUS
 *
 * Modes: uniqd_lib (the mapping), uniqd_lib_nomap, private_fast, private.
 * Per run a line like ub_corpus's (ns from the start of the processes,
 * together, to the last one's end; each one's own time in the order they
 * ended: ub_procs_run()):
 *   UBENCH replay mode=M procs=N round=R tokens=T ns=W entries=E
 *          cache_hits=H cache_misses=X map_hits=MH map_misses=MM
 *          syscalls=S units=U proc_ns=W1,W2,..
 * --analyze first prints the corpus's shape: distinct keys in all and a
 * unit, how many a unit meets first in the build (N = 1), and how a
 * per-thread cache of the same construction as libuniqd's would do at
 * other sizes (simulated: 4-way sets, round-robin replacement).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "blake3.h"
#include "internal.h"
#include "libuniqd.h"
#include "corpus.h"
#include "native/fake/uniqd_fake.h"
#include "ubench.h"

#define MAXPROCS	8

static struct ub_corpus corpus;	/* corpus.h */
static bool kernel_cost = true;
static const uint8_t bkey[32] = "uniqd replay: a model's key....";

/*
 * What the module pays for an INTERN beyond the fake's table: a system
 * call and a keyed BLAKE3 of the key (the fake's fk_key_cost).
 */
static void pay_kernel_cost(const struct uniqd_key *k)
{
	uint8_t out[8];

	syscall(SYS_getppid);
	uniqd_blake3_hash(bkey, (const void *)(uintptr_t)k->data, k->len, out,
			  sizeof(out));
	__asm__ volatile("" : : "r"(out) : "memory");
}

/*
 * The fake device (tests/native/fake/), set up before the first call: its
 * pools shared with the processes forked after, mapped with the index,
 * room for every token of the corpus to be new.
 */
static void fake_setup(void)
{
	fk_shared = 1;
	fk_map = 1;
	fk_map_index = 1;
	fk_pool_entries = corpus.ntoks + 2;
	fk_pool_records = 256ULL << 20;
	if (kernel_cost)
		fk_key_cost = pay_kernel_cost;
}

/* ---- the runs ------------------------------------------------------------- */

enum mode { R_LIB, R_NOMAP, R_FAST, R_BLAKE3, R_COUNT };
static const char *const mode_name[R_COUNT] = {
	"uniqd_lib", "uniqd_lib_nomap", "private_fast", "private",
};

struct result {
	uint64_t ns, tokens, hits, misses, map_hits, map_misses, syscalls;
	uint64_t entries, sum;
	int ok;
};

static void compile(enum mode m, unsigned int me, unsigned int procs,
		    struct result *r)
{
	uniqd_pool *pool = NULL;
	struct ub_interner *local = NULL;
	struct uniqd_cache_stats cs = { 0 };
	struct uniqd_map_info mi = { 0 };
	uint32_t cls[3] = { 0, 1, 2 };
	uint64_t sum = 0, t0;

	if (m == R_LIB || m == R_NOMAP) {
		pool = uniqd_open("replay", m == R_NOMAP ? UNIQD_OPEN_NOMAP : 0);
		if (!pool)
			ub_die("uniqd_open: %s", uniqd_last_error());
		cls[1] = uniqd_class(pool, "ident");
		cls[2] = uniqd_class(pool, "string");
	} else {
		local = ub_interner_new(m == R_FAST ? UB_HASH_FAST : UB_HASH_BLAKE3);
	}
	t0 = ub_now();
	for (uint32_t f = me; f < corpus.nunits; f += procs) {
		for (uint64_t t = corpus.unit_first[f]; t < corpus.unit_first[f + 1]; t++) {
			const struct ub_tok *k = &corpus.toks[t];
			uint64_t h;
			bool created;

			if (pool)
				h = uniqd_intern(pool, cls[k->cls], k->data, k->len);
			else
				h = ub_intern_local(local, cls[k->cls], k->data,
						    k->len, &created);
			if (!h)
				ub_die("no handle");
			sum += h;
			r->tokens++;
		}
	}
	r->ns = ub_now() - t0;
	r->sum = sum;
	if (pool) {
		uniqd_cache_stats(&cs);
		uniqd_map_info(pool, &mi);
		r->hits = cs.hits;
		r->misses = cs.misses;
		r->map_hits = mi.hits;
		r->map_misses = mi.misses;
		r->syscalls = fk_calls(UNIQD_IOC_INTERN);
		uniqd_close(pool);
	} else {
		r->entries = ub_interner_entries(local);
	}
	r->ok = 1;
}

/* What each process of a run is given. */
struct job {
	enum mode m;
	unsigned int procs;
};

static int job_run(unsigned int p, void *arg, void *res)
{
	struct job *j = arg;
	struct result *r = res;

	compile(j->m, p, j->procs, r);
	return r->ok ? 0 : -1;
}

static void run(enum mode m, unsigned int procs, unsigned int round)
{
	struct result res[MAXPROCS], tot = { 0 };
	struct job job = { .m = m, .procs = procs };
	struct ub_procs pr = {
		.n = procs, .run = job_run, .arg = &job, .res_size = sizeof(res[0]),
	};
	char pn[MAXPROCS * 24] = "";
	size_t ln = 0;
	uint64_t ns;
	uniqd_pool *pool = NULL;
	struct uniqd_stats st = { 0 };

	/* A new pool for the run, which the processes attach to. */
	if (m == R_LIB || m == R_NOMAP) {
		pool = uniqd_open("replay", UNIQD_OPEN_NOMAP);
		if (!pool)
			ub_die("uniqd_open: %s", uniqd_last_error());
	}
	memset(res, 0, sizeof(res));
	ns = ub_procs_run(&pr, res);
	if (!ns)
		ub_die("a process failed");
	if (pool) {
		if (uq_ioctl(pool, UNIQD_IOC_STATS, &st))
			ub_die("stats: %s", strerror(errno));
		uniqd_close(pool);
	}
	for (unsigned int p = 0; p < procs; p++) {
		tot.tokens += res[p].tokens;
		tot.hits += res[p].hits;
		tot.misses += res[p].misses;
		tot.map_hits += res[p].map_hits;
		tot.map_misses += res[p].map_misses;
		tot.syscalls += res[p].syscalls;
		tot.entries += res[p].entries;
		ln += snprintf(pn + ln, sizeof(pn) - ln, "%s%llu", p ? "," : "",
			       (unsigned long long)res[p].ns);
	}
	if (pool)
		tot.entries = st.entries;
	ub_out("replay mode=%s procs=%u round=%u tokens=%llu ns=%llu entries=%llu cache_hits=%llu cache_misses=%llu map_hits=%llu map_misses=%llu syscalls=%llu units=%u kernel_cost=%d overflow=%llu proc_ns=%s",
	       mode_name[m], procs, round, (unsigned long long)tot.tokens,
	       (unsigned long long)ns, (unsigned long long)tot.entries,
	       (unsigned long long)tot.hits, (unsigned long long)tot.misses,
	       (unsigned long long)tot.map_hits, (unsigned long long)tot.map_misses,
	       (unsigned long long)tot.syscalls, corpus.nunits, kernel_cost,
	       (unsigned long long)st.map_overflow, pn);
}

/* ---- --analyze ------------------------------------------------------------ */

/* Ids of distinct (class, content), dense from 1, by a private interner. */
static uint32_t *ids;
static uint32_t nids;

static void make_ids(void)
{
	struct ub_interner *in = ub_interner_new(UB_HASH_FAST);

	ids = ub_alloc(corpus.ntoks * sizeof(*ids));
	for (uint64_t t = 0; t < corpus.ntoks; t++) {
		bool c;

		ids[t] = (uint32_t)ub_intern_local(in, corpus.toks[t].cls, corpus.toks[t].data,
						   corpus.toks[t].len, &c);
	}
	nids = (uint32_t)ub_interner_entries(in);
}

/* libuniqd's cache, simulated by id: 2^sets sets of 4 ways, round robin. */
static double sim_cache(unsigned int set_bits, unsigned int procs)
{
	uint32_t sets = 1U << set_bits, *slot = calloc((size_t)sets * 4, 4);
	uint8_t *turn = calloc(sets, 1);
	uint64_t hits = 0, all = 0;

	for (unsigned int p = 0; p < procs; p++) {
		memset(slot, 0, (size_t)sets * 16);
		memset(turn, 0, sets);
		for (uint32_t f = p; f < corpus.nunits; f += procs)
			for (uint64_t t = corpus.unit_first[f]; t < corpus.unit_first[f + 1]; t++) {
				uint32_t id = ids[t];
				uint64_t hh = uniqd_maphash(42, 0, 0, &id, 4);
				uint32_t s = (uint32_t)(hh >> (64 - set_bits)), w;

				all++;
				for (w = 0; w < 4; w++)
					if (slot[s * 4 + w] == id)
						break;
				if (w < 4) {
					hits++;
					continue;
				}
				for (w = 0; w < 4 && slot[s * 4 + w]; w++)
					;
				if (w == 4) {
					w = turn[s];
					turn[s] = (turn[s] + 1) & 3;
				}
				slot[s * 4 + w] = id;
			}
	}
	free(slot);
	free(turn);
	return 100.0 * hits / all;
}

static void analyze(void)
{
	uint32_t *seen_unit, *first_unit;
	uint64_t dsum = 0, dmax = 0, newsum = 0;

	make_ids();
	seen_unit = ub_alloc(((size_t)nids + 1) * 4);
	first_unit = ub_alloc(((size_t)nids + 1) * 4);
	for (uint32_t f = 0; f < corpus.nunits; f++) {
		uint64_t d = 0;

		for (uint64_t t = corpus.unit_first[f]; t < corpus.unit_first[f + 1]; t++) {
			uint32_t id = ids[t];

			if (seen_unit[id] != f + 1) {
				seen_unit[id] = f + 1;
				d++;
			}
			if (!first_unit[id]) {
				first_unit[id] = f + 1;
				newsum++;
			}
		}
		dsum += d;
		dmax = d > dmax ? d : dmax;
	}
	ub_out("replay-shape units=%u tokens=%llu distinct=%u tokens_per_unit=%.0f distinct_per_unit=%.0f distinct_per_unit_max=%llu new_per_unit=%.1f recurrence=%.1f",
	       corpus.nunits, (unsigned long long)corpus.ntoks, nids, (double)corpus.ntoks / corpus.nunits,
	       (double)dsum / corpus.nunits, (unsigned long long)dmax,
	       (double)newsum / corpus.nunits, (double)corpus.ntoks / nids);
	for (unsigned int b = 8; b <= 14; b++)
		ub_out("replay-cachesim slots=%u kib=%u hit_n1=%.2f hit_n2=%.2f hit_n4=%.2f",
		       4U << b, (4U << b) * 64 / 1024, sim_cache(b, 1),
		       sim_cache(b, 2), sim_cache(b, 4));
	free(ids);
}

int main(int argc, char **argv)
{
	unsigned int rounds = 3, procs[MAXPROCS], nprocs = 0;
	bool want[R_COUNT] = { true, true, true, true }, do_analyze = false;
	const char *path = NULL;
	char *list = NULL, *modes = NULL;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--procs") && i + 1 < argc)
			list = argv[++i];
		else if (!strcmp(argv[i], "--modes") && i + 1 < argc)
			modes = argv[++i];
		else if (!strcmp(argv[i], "--no-kernel-cost"))
			kernel_cost = false;
		else if (!strcmp(argv[i], "--analyze"))
			do_analyze = true;
		else
			path = argv[i];
	}
	if (!path)
		ub_die("usage: replay_native [--procs LIST] [--rounds N] [--modes LIST] [--no-kernel-cost] [--analyze] CORPUS");
	for (char *s = strtok(list ? list : (char[]){ "1 2 4" }, " ,");
	     s && nprocs < MAXPROCS; s = strtok(NULL, " ,")) {
		procs[nprocs] = atoi(s);
		if (procs[nprocs] >= 1 && procs[nprocs] <= MAXPROCS)
			nprocs++;
	}
	if (modes) {
		for (int i = 0; i < R_COUNT; i++)
			want[i] = false;
		for (char *s = strtok(modes, " ,"); s; s = strtok(NULL, " ,"))
			for (int i = 0; i < R_COUNT; i++)
				if (!strcmp(s, mode_name[i]))
					want[i] = true;
	}
	ub_corpus_load(&corpus, path);
	if (do_analyze)
		analyze();
	fake_setup();
	for (unsigned int r = 0; r < rounds; r++)
		for (int i = 0; i < R_COUNT; i++)
			for (unsigned int j = 0; j < nprocs; j++)
				if (want[i])
					run(i, procs[(j + r) % nprocs], r);
	return 0;
}
