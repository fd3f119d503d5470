// SPDX-License-Identifier: GPL-2.0
/*
 * ub_corpus's uniqd path replayed natively, for profiling where uniqd loses
 * to a private interner (Documentation/benchmarks.rst, "A parallel build").
 * The host cannot load the module, so libuniqd (its real code: the
 * per-thread cache, the probe of the mapping) runs against a model of the
 * device defined here (uq_sys_open/uq_sys_ioctl/uq_sys_close: libuniqd.a's
 * sys.o is never linked in) and a model of the mapped pool in shared
 * memory, built by the kernel's rules (uniqd/index.c: home = tag & mask,
 * the first empty of UNIQD_MAP_PROBE slots, doubled past half full; a
 * record, then entries[idx], then the slot, each published with release).
 *
 * An INTERN of the model takes a process-shared mutex, finds or creates
 * the entry in a table of its own and, with --kernel-cost (the default),
 * pays what the module pays beyond that: a system call (getppid()) and a
 * keyed BLAKE3 of the key. It is a model of the costs, not of the module.
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
#include "ubench.h"

#define MAXPROCS	8
/* uniqd/map.h: the first index array, 2^10 slots. */
#define UNIQD_MAP_INDEX_MIN_LOG2	10U

static struct ub_corpus corpus;	/* corpus.h */

/* ---- the model of the device and its mapped pool --------------------------- */

#define M_ENTRIES	(1U << 21)		/* entries[] capacity */
#define M_KSLOTS	(1U << 23)		/* the "kernel" table */
#define M_INDEX_BYTES	(64ULL << 20)		/* every index array in turn */
#define M_REC_BYTES	(256ULL << 20)
#define M_PAGE		4096ULL

struct model {
	pthread_mutex_t lock;
	uint64_t created, interns;
	uint32_t log2;		/* current index array */
	uint64_t index_next;	/* bytes of the index region used */
	uint64_t rec_next;	/* bytes of the records region used */
	uint64_t overflow;
	uint32_t kslot[M_KSLOTS];	/* idx by a private hash, 0 empty */
	uint64_t khash[M_KSLOTS];
};

static struct model *mdl;
static uint8_t *mbase;		/* the "mapping": header page, entries, index, records */
static size_t msize;
static uint64_t entries_off, index_off, records_off;
static bool kernel_cost = true;
static const uint8_t bkey[32] = "uniqd replay: a model's key....";

#define HBASE	(5ULL << 32)

static struct uniqd_map_header *mhdr(void)
{
	return (struct uniqd_map_header *)mbase;
}

static void model_new(void)
{
	struct uniqd_map_header *h;
	pthread_mutexattr_t a;

	mdl = mmap(NULL, sizeof(*mdl), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	entries_off = M_PAGE;
	index_off = entries_off + (((uint64_t)M_ENTRIES * 8 + M_PAGE - 1) & ~(M_PAGE - 1));
	records_off = index_off + M_INDEX_BYTES;
	msize = records_off + M_REC_BYTES;
	mbase = mmap(NULL, msize, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (mdl == MAP_FAILED || mbase == MAP_FAILED)
		ub_die("mmap: %s", strerror(errno));
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(&mdl->lock, &a);
	h = mhdr();
	h->magic = UNIQD_MAP_MAGIC;
	h->version = UNIQD_MAP_VERSION;
	h->header_size = sizeof(*h);
	h->page_size = M_PAGE;
	h->probe = UNIQD_MAP_PROBE;
	h->map_size = msize;
	h->handle_base = HBASE;
	h->hash_seed[0] = 0x0123456789abcdefULL;
	h->hash_seed[1] = 0xfedcba9876543210ULL;
	h->entries_off = entries_off;
	h->entries_cap = M_ENTRIES;
	h->index_off = index_off;
	h->index_size = M_INDEX_BYTES;
	h->records_off = records_off;
	h->records_size = M_REC_BYTES;
	h->entries_end = 1;
}

/* Empty the model for a new run (no process attached). */
static void model_reset(void)
{
	struct uniqd_map_header *h = mhdr();

	memset(mdl->kslot, 0, sizeof(mdl->kslot));
	mdl->created = mdl->interns = mdl->overflow = 0;
	mdl->log2 = 0;
	mdl->index_next = 0;
	mdl->rec_next = 0;
	madvise(mbase + entries_off, msize - entries_off, MADV_DONTNEED);
	h->entries_end = 1;
	h->index = 0;
	h->records_end = 0;
}

static bool index_place(uint64_t *slots, uint32_t log2, uint64_t v)
{
	uint64_t mask = (1ULL << log2) - 1;
	uint32_t home = v >> 32;

	for (uint32_t i = 0; i < UNIQD_MAP_PROBE; i++) {
		uint64_t *s = &slots[(home + i) & mask];

		if (!*s) {
			__atomic_store_n(s, v, __ATOMIC_RELEASE);
			return true;
		}
	}
	return false;
}

static void index_grow(uint32_t log2)
{
	uint64_t bytes = 8ULL << log2, off = index_off + mdl->index_next;
	uint64_t *slots = (uint64_t *)(mbase + off), *old;

	if (mdl->index_next + bytes > M_INDEX_BYTES)
		return;		/* the old array stays */
	if (mdl->log2) {
		old = (uint64_t *)(mbase + UNIQD_MAP_INDEX_OFF(mhdr()->index));
		for (uint64_t i = 0; i < (1ULL << mdl->log2); i++)
			if (old[i])
				index_place(slots, log2, old[i]);
	}
	mdl->index_next += (bytes + M_PAGE - 1) & ~(M_PAGE - 1);
	mdl->log2 = log2;
	__atomic_store_n(&mhdr()->index, off | log2, __ATOMIC_RELEASE);
}

/* INTERN in the model: the handle of (cls, data), created if new. */
static uint64_t model_intern(uint32_t cls, const uint8_t *data, uint32_t len,
			     bool *created)
{
	uint64_t h = uniqd_maphash(0x9e3779b97f4a7c15ULL, 0, cls, data, len), mh;
	uint32_t i, idx;
	struct uniqd_map_rec *r;
	uint64_t *entries = (uint64_t *)(mbase + entries_off);

	if (kernel_cost) {
		uint8_t out[8];

		syscall(SYS_getppid);
		uniqd_blake3_hash(bkey, data, len, out, sizeof(out));
		__asm__ volatile("" : : "r"(out) : "memory");
	}
	*created = false;
	pthread_mutex_lock(&mdl->lock);
	mdl->interns++;
	for (i = h & (M_KSLOTS - 1); mdl->kslot[i]; i = (i + 1) & (M_KSLOTS - 1)) {
		idx = mdl->kslot[i];
		r = (struct uniqd_map_rec *)(mbase + entries[idx]);
		if (mdl->khash[i] == h && r->class_id == cls && r->len == len &&
		    !memcmp(r->data, data, len)) {
			pthread_mutex_unlock(&mdl->lock);
			return HBASE | idx;
		}
	}
	idx = (uint32_t)mhdr()->entries_end;
	if (idx >= M_ENTRIES || mdl->rec_next + sizeof(*r) + len + 8 > M_REC_BYTES)
		ub_die("model full");
	r = (struct uniqd_map_rec *)(mbase + records_off + mdl->rec_next);
	r->class_id = cls;
	r->len = len;
	memcpy(r->data, data, len);
	entries[idx] = records_off + mdl->rec_next;
	mdl->rec_next += (sizeof(*r) + len + 7) & ~7ULL;
	__atomic_store_n(&mhdr()->records_end, records_off + mdl->rec_next,
			 __ATOMIC_RELEASE);
	__atomic_store_n(&mhdr()->entries_end, (uint64_t)idx + 1, __ATOMIC_RELEASE);
	mdl->kslot[i] = idx;
	mdl->khash[i] = h;
	mdl->created++;
	/* The mapped index: grown past half full, as index.c does. */
	if (!mdl->log2)
		index_grow(UNIQD_MAP_INDEX_MIN_LOG2);
	else if (mdl->created * 2 > (1ULL << mdl->log2))
		index_grow(mdl->log2 + 1);
	mh = uniqd_maphash(mhdr()->hash_seed[0], mhdr()->hash_seed[1], cls, data, len);
	if (!index_place((uint64_t *)(mbase + UNIQD_MAP_INDEX_OFF(mhdr()->index)),
			 mdl->log2, (mh >> 32) << 32 | idx))
		mdl->overflow++;
	pthread_mutex_unlock(&mdl->lock);
	*created = true;
	return HBASE | idx;
}

/* libuniqd's system calls, answered by the model. */
int uq_sys_open(const char *path, int flags);
int uq_sys_ioctl(int fd, unsigned long request, void *arg);
int uq_sys_close(int fd);
void *uq_sys_mmap(size_t len, int fd);
int uq_sys_munmap(const void *addr, size_t len);

int uq_sys_open(const char *path, int flags)
{
	(void)path;
	(void)flags;
	return 900;
}

int uq_sys_close(int fd)
{
	(void)fd;
	return 0;
}

/* Never called: VERSION reports no UNIQD_FEAT_MAP (the model is set up below). */
void *uq_sys_mmap(size_t len, int fd)
{
	(void)len;
	(void)fd;
	errno = EOPNOTSUPP;
	return MAP_FAILED;
}

int uq_sys_munmap(const void *addr, size_t len)
{
	(void)addr;
	(void)len;
	return 0;
}

static uint64_t my_syscalls, my_created;

int uq_sys_ioctl(int fd, unsigned long req, void *arg)
{
	(void)fd;
	if (req == UNIQD_IOC_VERSION) {
		struct uniqd_version *v = arg;

		memset(v, 0, sizeof(*v));
		v->abi_version = UNIQD_ABI_VERSION;
		v->max_key_len = 65535;
		v->max_batch = UNIQD_BATCH_MAX;
		v->max_pool_name = UNIQD_POOL_NAME_MAX;
		v->max_class_name = UNIQD_CLASS_NAME_MAX;
		return 0;	/* features 0: map.c maps nothing; we set it up */
	}
	if (req == UNIQD_IOC_ATTACH)
		return 0;
	if (req == UNIQD_IOC_CLASS) {
		struct uniqd_class *c = arg;
		const char *n = (const char *)(uintptr_t)c->name;

		c->class_id = c->name_len == 5 && !memcmp(n, "ident", 5) ? 1 : 2;
		c->status = 0;
		return 0;
	}
	if (req == UNIQD_IOC_INTERN) {
		struct uniqd_key *k = arg;
		bool created;

		my_syscalls++;
		k->handle = model_intern(k->class_id,
					 (const uint8_t *)(uintptr_t)k->data,
					 k->len, &created);
		k->status = created ? UNIQD_STATUS_NEW : 0;
		my_created += created;
		return 0;
	}
	errno = ENOTTY;
	return -1;
}

/* Point the pool's reader at the model's mapping (what uq_map_open() does). */
static void attach_map(uniqd_pool *p)
{
	struct uq_map *m = &p->map;
	struct uniqd_map_header *h = mhdr();

	m->base = mbase;
	m->size = msize;
	m->hdr = h;
	m->seed[0] = h->hash_seed[0];
	m->seed[1] = h->hash_seed[1];
	m->handle_base = h->handle_base;
	m->entries_off = entries_off;
	m->entries_cap = h->entries_cap;
	m->index_off = index_off;
	m->index_size = h->index_size;
	m->records_off = records_off;
	m->records_size = h->records_size;
	m->probe = h->probe;
	m->error = 0;
	m->off = false;
}

/* ---- the runs ------------------------------------------------------------- */

enum mode { R_LIB, R_NOMAP, R_FAST, R_BLAKE3, R_COUNT };
static const char *const mode_name[R_COUNT] = {
	"uniqd_lib", "uniqd_lib_nomap", "private_fast", "private",
};

struct result {
	uint64_t ns, tokens, hits, misses, map_hits, map_misses, syscalls, created;
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
		if (m == R_LIB)
			attach_map(pool);
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
		r->syscalls = my_syscalls;
		r->created = my_created;
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

	model_reset();
	memset(res, 0, sizeof(res));
	ns = ub_procs_run(&pr, res);
	if (!ns)
		ub_die("a process failed");
	for (unsigned int p = 0; p < procs; p++) {
		tot.tokens += res[p].tokens;
		tot.hits += res[p].hits;
		tot.misses += res[p].misses;
		tot.map_hits += res[p].map_hits;
		tot.map_misses += res[p].map_misses;
		tot.syscalls += res[p].syscalls;
		tot.created += res[p].created;
		tot.entries += res[p].entries;
		ln += snprintf(pn + ln, sizeof(pn) - ln, "%s%llu", p ? "," : "",
			       (unsigned long long)res[p].ns);
	}
	if (m == R_LIB || m == R_NOMAP)
		tot.entries = mdl->created;
	ub_out("replay mode=%s procs=%u round=%u tokens=%llu ns=%llu entries=%llu cache_hits=%llu cache_misses=%llu map_hits=%llu map_misses=%llu syscalls=%llu units=%u kernel_cost=%d overflow=%llu proc_ns=%s",
	       mode_name[m], procs, round, (unsigned long long)tot.tokens,
	       (unsigned long long)ns, (unsigned long long)tot.entries,
	       (unsigned long long)tot.hits, (unsigned long long)tot.misses,
	       (unsigned long long)tot.map_hits, (unsigned long long)tot.map_misses,
	       (unsigned long long)tot.syscalls, corpus.nunits, kernel_cost,
	       (unsigned long long)mdl->overflow, pn);
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
	model_new();
	for (unsigned int r = 0; r < rounds; r++)
		for (int i = 0; i < R_COUNT; i++)
			for (unsigned int j = 0; j < nprocs; j++)
				if (want[i])
					run(i, procs[(j + r) % nprocs], r);
	return 0;
}
