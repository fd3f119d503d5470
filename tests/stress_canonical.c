// SPDX-License-Identifier: GPL-2.0
/*
 * Canonicality under load: P processes of T threads each intern
 * overlapping key sets into one pool at the same time (keys shared by
 * everyone, keys of one process, random keys from a tiny alphabet that
 * collide by chance, sizes from 0 bytes to max_key_len), with single
 * INTERNs, batches and LOOKUP-then-INTERN, some threads on the process's
 * file and some on a file of their own. Then every process checks every
 * handle it got against RESOLVE, LOOKUP and every other process's handles
 * (all results are in a MAP_SHARED mapping): equal (class, content) <=>
 * equal handle, without a single exception. The parent checks the pool's
 * counters against what the processes saw.
 *
 * UNIQD_SCALE=full makes it larger; UNIQD_SEED overrides the seed.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/mman.h>
#include <time.h>

#include "harness.h"
#include "uniqd_test.h"

#include "blake3.h"	/* the module's BLAKE3, built for userspace */

#define POOL	"stress-canonical"
#define NCLASS	3
#define BATCH	64

static const char *const class_names[NCLASS] = {
	"stress/type", "stress/decl", "stress/loc",
};

/* Sizes of one run. */
static int nproc, nthread, nkeys, nshared, nperproc;
static __u32 max_key_len;
static unsigned long long seed;

enum { K_SHARED, K_PERPROC, K_RANDOM, K_TINY };

/* One interned key as some thread saw it. */
struct rec {
	__u64 gen;		/* content generator seed */
	__u64 handle;
	__u32 len;
	__u8 cls;		/* index into class_names */
	__u8 kind;		/* K_* (for the report only) */
	__u8 tiny;		/* content from the two-letter alphabet */
	__u8 pad;
	__u8 dig[16];		/* BLAKE3 of the content, truncated */
};

struct proc_info {
	__u32 class_id[NCLASS];
	__u64 ops;		/* key operations that reached the kernel */
	__u64 created;		/* keys reported UNIQD_STATUS_NEW */
	__u64 lookup_miss;	/* LOOKUP that got ENOENT */
	__u64 big;		/* keys longer than 8184 bytes (mapped pages of their own) */
	__u64 bytes;		/* content bytes sent */
	__u64 checked;		/* records checked by this process */
	__u64 bad;
	char why[160];
};

struct shared {
	int start;		/* barrier counters */
	int interned;
	int checked;
	int abort;		/* a process failed: nobody waits any more */
	struct proc_info proc[];
};

static struct shared *sh;
static struct rec *recs;	/* [nproc][nthread][nkeys] */

static struct rec *rec_at(int p, int t, int k)
{
	return &recs[((size_t)p * nthread + t) * nkeys + k];
}

/* ---- deterministic randomness ---------------------------------------- */

static __u64 splitmix(__u64 *s)
{
	__u64 z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static __u64 mix(__u64 a, __u64 b)
{
	__u64 s = a ^ (b * 0xd6e8feb86659fd93ULL);

	return splitmix(&s);
}

/* A length from 0 to max_key_len, mostly short, with every boundary. */
static __u32 pick_len(__u64 *s)
{
	__u32 r = splitmix(s) % 1000;
	const __u32 edges[] = {
		0, 1, 7, 8, 9, 255, 256, 257, 8183, 8184, 8185,
		max_key_len - 8, max_key_len - 1, max_key_len,
	};

	if (r < 100)
		return splitmix(s) % 9;
	if (r < 500)
		return 9 + splitmix(s) % 56;
	if (r < 750)
		return 65 + splitmix(s) % 236;
	if (r < 860)
		return 300 + splitmix(s) % 1749;
	if (r < 940)
		return 2049 + splitmix(s) % 7000;
	if (r < 985)
		return edges[splitmix(s) % (sizeof(edges) / sizeof(edges[0]))];
	return 9000 + splitmix(s) % (max_key_len - 9000 + 1);
}

/* The content of a record: a function of (gen, len, tiny) only. */
static void gen_content(__u64 gen, __u32 len, int tiny, __u8 *buf)
{
	__u64 s = gen, w = 0;
	__u32 i;

	for (i = 0; i < len; i++) {
		if (!(i & 7))
			w = splitmix(&s);
		buf[i] = tiny ? "ab"[w & 1] : (__u8)w;
		w >>= tiny ? 1 : 8;
	}
}

static void digest16(const void *buf, __u32 len, __u8 out[16])
{
	uniqd_blake3_hash(NULL, buf, len, out, 16);
}

/* Key k of thread t of process p: which content it is. */
static void describe(struct rec *r, int p, int t, int k)
{
	__u64 s = mix(seed, ((__u64)p << 40) ^ ((__u64)t << 24) ^ (__u64)k);
	__u32 kind = splitmix(&s) % 100;
	__u64 id;

	memset(r, 0, sizeof(*r));
	if (kind < 45) {		/* shared by every process */
		id = splitmix(&s) % nshared;
		r->kind = K_SHARED;
		r->gen = mix(seed ^ 0x5348415245440000ULL, id);
	} else if (kind < 75) {		/* this process only */
		id = splitmix(&s) % nperproc;
		r->kind = K_PERPROC;
		r->gen = mix(seed ^ 0x50524f4300000000ULL, ((__u64)p << 32) | id);
	} else if (kind < 88) {		/* tiny alphabet: collides by chance */
		r->kind = K_TINY;
		r->tiny = 1;
		r->gen = splitmix(&s);
		r->len = splitmix(&s) % 7;
		r->cls = splitmix(&s) % NCLASS;
		return;
	} else {			/* random content, random size */
		r->kind = K_RANDOM;
		r->gen = splitmix(&s);
	}
	/* Shared and per-process keys: class and length follow the id. */
	s = r->gen;
	r->cls = splitmix(&s) % NCLASS;
	r->len = pick_len(&s);
}

/* ---- the interning phase --------------------------------------------- */

struct worker {
	int p, t, fd;
	__u32 *class_id;
	struct proc_info *info;
	pthread_mutex_t *lock;
	__u64 ops, created, lookup_miss, big, bytes;
	int failed;
	char why[160];
};

static void wfail(struct worker *w, const char *what, int err)
{
	if (!w->failed)
		snprintf(w->why, sizeof(w->why), "proc %d thread %d: %s: %s",
			 w->p, w->t, what, strerror(err));
	w->failed = 1;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	static __thread struct uniqd_key keys[BATCH];
	size_t cap = 4 * ((size_t)max_key_len + 1), off;
	__u8 *bufs = malloc(cap);
	__u64 s = mix(seed, 0x7468726561640000ULL ^ ((__u64)w->p << 16) ^ w->t);
	int k = 0, i, c;

	if (!bufs) {
		wfail(w, "malloc", ENOMEM);
		return NULL;
	}
	/* Racing registrations: every thread registers every class. */
	for (c = 0; c < NCLASS; c++) {
		__u32 id = ut_class(w->fd, class_names[c]);

		if (!id || (w->class_id[c] && id != w->class_id[c]))
			wfail(w, "class", errno);
		w->class_id[c] = id;
	}
	while (k < nkeys && !w->failed) {
		__u32 how = splitmix(&s) % 10;
		struct rec *r = rec_at(w->p, w->t, k);

		if (how < 4) {			/* one INTERN */
			__u32 st = 0;

			describe(r, w->p, w->t, k);
			gen_content(r->gen, r->len, r->tiny, bufs);
			digest16(bufs, r->len, r->dig);
			w->ops++;
			if (ut_intern(w->fd, w->class_id[r->cls], bufs, r->len,
				      &r->handle, &st)) {
				wfail(w, "intern", errno);
				break;
			}
			w->created += !!(st & UNIQD_STATUS_NEW);
			w->bytes += r->len;
			w->big += r->len > 8184;
			k++;
		} else if (how < 5) {		/* LOOKUP, then INTERN on a miss */
			__u32 st = 0;
			__u64 h = 0;

			describe(r, w->p, w->t, k);
			gen_content(r->gen, r->len, r->tiny, bufs);
			digest16(bufs, r->len, r->dig);
			w->ops++;
			if (ut_lookup(w->fd, w->class_id[r->cls], bufs, r->len,
				      &h, NULL)) {
				if (errno != ENOENT) {
					wfail(w, "lookup", errno);
					break;
				}
				w->lookup_miss++;
				w->ops++;
				if (ut_intern(w->fd, w->class_id[r->cls], bufs,
					      r->len, &h, &st)) {
					wfail(w, "intern after lookup", errno);
					break;
				}
				w->created += !!(st & UNIQD_STATUS_NEW);
			}
			r->handle = h;
			w->bytes += r->len;
			w->big += r->len > 8184;
			k++;
		} else {			/* a batch */
			struct uniqd_batch b;
			int n = 1 + splitmix(&s) % BATCH;

			if (n > nkeys - k)
				n = nkeys - k;
			/* Contents are packed; a batch ends early when full. */
			for (i = 0, off = 0; i < n; i++) {
				struct rec *ri = rec_at(w->p, w->t, k + i);

				describe(ri, w->p, w->t, k + i);
				if (off + ri->len > cap)
					break;
				gen_content(ri->gen, ri->len, ri->tiny, bufs + off);
				digest16(bufs + off, ri->len, ri->dig);
				memset(&keys[i], 0, sizeof(keys[i]));
				keys[i].class_id = w->class_id[ri->cls];
				keys[i].data = U64P(bufs + off);
				keys[i].len = ri->len;
				off += ri->len;
				w->bytes += ri->len;
				w->big += ri->len > 8184;
			}
			n = i;
			memset(&b, 0, sizeof(b));
			b.keys = U64P(keys);
			b.count = n;
			b.key_size = sizeof(keys[0]);
			w->ops += n;
			if (ioctl(w->fd, UNIQD_IOC_INTERN_BATCH, &b) ||
			    b.done != (__u32)n) {
				wfail(w, "batch", errno);
				break;
			}
			for (i = 0; i < n; i++) {
				rec_at(w->p, w->t, k + i)->handle = keys[i].handle;
				w->created += !!(keys[i].status & UNIQD_STATUS_NEW);
			}
			k += n;
		}
	}
	free(bufs);
	return NULL;
}

static int wait_count(int *ctr, int want)
{
	while (__atomic_load_n(ctr, __ATOMIC_ACQUIRE) < want) {
		if (__atomic_load_n(&sh->abort, __ATOMIC_ACQUIRE))
			return -1;
		usleep(2000);
	}
	return 0;
}

static void __attribute__((noreturn)) proc_abort(int status)
{
	__atomic_store_n(&sh->abort, 1, __ATOMIC_RELEASE);
	_exit(status);
}

/* ---- the checking phase ---------------------------------------------- */

static int cmp_content(const void *a, const void *b)
{
	const struct rec *x = *(const struct rec * const *)a;
	const struct rec *y = *(const struct rec * const *)b;

	if (x->cls != y->cls)
		return x->cls < y->cls ? -1 : 1;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return memcmp(x->dig, y->dig, sizeof(x->dig));
}

static int cmp_handle(const void *a, const void *b)
{
	const struct rec *x = *(const struct rec * const *)a;
	const struct rec *y = *(const struct rec * const *)b;

	if (x->handle != y->handle)
		return x->handle < y->handle ? -1 : 1;
	return 0;
}

static void pfail(struct proc_info *pi, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void pfail(struct proc_info *pi, const char *fmt, ...)
{
	va_list ap;

	if (!pi->bad++) {
		va_start(ap, fmt);
		vsnprintf(pi->why, sizeof(pi->why), fmt, ap);
		va_end(ap);
	}
}

/*
 * Process @p checks its own records: RESOLVE and LOOKUP of each, then the
 * same content in every process has its handle and its handle belongs to
 * no other content.
 */
static void check_own(int p, int fd)
{
	struct proc_info *pi = &sh->proc[p];
	size_t total = (size_t)nproc * nthread * nkeys, i;
	struct rec **byc = malloc(total * sizeof(*byc));
	struct rec **byh = malloc(total * sizeof(*byh));
	__u8 *want = malloc(max_key_len + 1), *got = malloc(max_key_len + 1);
	int t, k;

	if (!byc || !byh || !want || !got) {
		pfail(pi, "malloc");
		return;
	}
	for (i = 0; i < total; i++)
		byc[i] = byh[i] = &recs[i];
	qsort(byc, total, sizeof(*byc), cmp_content);
	qsort(byh, total, sizeof(*byh), cmp_handle);

	for (t = 0; t < nthread; t++) {
		for (k = 0; k < nkeys; k++) {
			struct rec *r = rec_at(p, t, k), key = *r, *kp = &key;
			struct rec **lo, **hi;
			__u32 len = 0, cls = 0;
			__u64 h = 0;

			pi->checked++;
			gen_content(r->gen, r->len, r->tiny, want);
			if (ut_resolve(fd, r->handle, got, max_key_len + 1, &len,
				       &cls)) {
				pfail(pi, "resolve %llx: %s",
				      (unsigned long long)r->handle, strerror(errno));
				continue;
			}
			if (len != r->len || cls != sh->proc[p].class_id[r->cls] ||
			    memcmp(got, want, len))
				pfail(pi, "resolve %llx: len %u/%u class %u: other content",
				      (unsigned long long)r->handle, len, r->len, cls);
			pi->ops++;
			if (ut_lookup(fd, sh->proc[p].class_id[r->cls], want,
				      r->len, &h, NULL) || h != r->handle)
				pfail(pi, "lookup: %llx, want %llx (%s)",
				      (unsigned long long)h,
				      (unsigned long long)r->handle, strerror(errno));

			/* Equal content => equal handle. */
			lo = bsearch(&kp, byc, total, sizeof(*byc), cmp_content);
			if (!lo) {
				pfail(pi, "own record not found");
				continue;
			}
			hi = lo;
			while (lo > byc && !cmp_content(lo - 1, &kp))
				lo--;
			while (hi + 1 < byc + total && !cmp_content(hi + 1, &kp))
				hi++;
			for (; lo <= hi; lo++)
				if ((*lo)->handle != r->handle)
					pfail(pi, "same content, handles %llx and %llx",
					      (unsigned long long)(*lo)->handle,
					      (unsigned long long)r->handle);
			/* Equal handle => equal content. */
			lo = bsearch(&kp, byh, total, sizeof(*byh), cmp_handle);
			if (!lo) {
				pfail(pi, "own handle not found");
				continue;
			}
			hi = lo;
			while (lo > byh && !cmp_handle(lo - 1, &kp))
				lo--;
			while (hi + 1 < byh + total && !cmp_handle(hi + 1, &kp))
				hi++;
			for (; lo <= hi; lo++)
				if (cmp_content(lo, &kp))
					pfail(pi, "handle %llx for two contents",
					      (unsigned long long)r->handle);
		}
	}
	free(byc);
	free(byh);
	free(want);
	free(got);
}

static void proc_main(int p)
{
	struct proc_info *pi = &sh->proc[p];
	struct worker *w = calloc(nthread, sizeof(*w));
	pthread_t *tid = calloc(nthread, sizeof(*tid));
	__u32 class_id[NCLASS] = { 0 };
	int fd, t, c, own;

	fd = ut_pool(POOL, UNIQD_ATTACH_EXISTING);
	if (fd < 0 || !w || !tid) {
		pfail(pi, "attach: %s", strerror(errno));
		proc_abort(1);
	}
	__atomic_add_fetch(&sh->start, 1, __ATOMIC_ACQ_REL);
	if (wait_count(&sh->start, nproc))
		_exit(2);
	for (t = 0; t < nthread; t++) {
		w[t].p = p;
		w[t].t = t;
		/* Odd threads have a file of their own, attached now. */
		own = t & 1;
		w[t].fd = own ? ut_pool(POOL, UNIQD_ATTACH_EXISTING) : fd;
		w[t].class_id = calloc(NCLASS, sizeof(__u32));
		if (w[t].fd < 0 || !w[t].class_id) {
			pfail(pi, "thread attach: %s", strerror(errno));
			proc_abort(1);
		}
		if (pthread_create(&tid[t], NULL, worker_main, &w[t])) {
			pfail(pi, "pthread_create");
			proc_abort(1);
		}
	}
	for (t = 0; t < nthread; t++) {
		pthread_join(tid[t], NULL);
		pi->ops += w[t].ops;
		pi->created += w[t].created;
		pi->lookup_miss += w[t].lookup_miss;
		pi->big += w[t].big;
		pi->bytes += w[t].bytes;
		if (w[t].failed)
			pfail(pi, "%s", w[t].why);
		for (c = 0; c < NCLASS; c++) {
			if (!class_id[c])
				class_id[c] = w[t].class_id[c];
			if (w[t].class_id[c] != class_id[c])
				pfail(pi, "class %d: ids %u and %u", c,
				      w[t].class_id[c], class_id[c]);
		}
		if (w[t].fd != fd)
			close(w[t].fd);
	}
	memcpy(pi->class_id, class_id, sizeof(class_id));
	if (pi->bad)
		proc_abort(1);
	__atomic_add_fetch(&sh->interned, 1, __ATOMIC_ACQ_REL);
	if (wait_count(&sh->interned, nproc))
		_exit(2);
	check_own(p, fd);
	close(fd);
	__atomic_add_fetch(&sh->checked, 1, __ATOMIC_ACQ_REL);
	_exit(pi->bad ? 1 : 0);
}

/* ---- threads racing ATTACH on one file --------------------------------------- */

struct arace {
	pthread_barrier_t go;
	int fd, attached, busy, other;
	__u64 want, wrong, badfd, interned;
};

static void *arace_attach(void *arg)
{
	struct arace *a = arg;

	pthread_barrier_wait(&a->go);
	if (!ut_attach(a->fd, POOL, UNIQD_ATTACH_EXISTING))
		__atomic_add_fetch(&a->attached, 1, __ATOMIC_RELAXED);
	else if (errno == EBUSY)
		__atomic_add_fetch(&a->busy, 1, __ATOMIC_RELAXED);
	else
		__atomic_add_fetch(&a->other, 1, __ATOMIC_RELAXED);
	return NULL;
}

/* INTERN on the file while it gets attached: EBADFD, then the right handle. */
static void *arace_intern(void *arg)
{
	struct arace *a = arg;
	int i;

	pthread_barrier_wait(&a->go);
	for (i = 0; i < 100000; i++) {
		__u64 h = 0;

		if (!ut_intern(a->fd, 1, "attach-race", 11, &h, NULL)) {
			if (h != a->want)
				__atomic_add_fetch(&a->wrong, 1, __ATOMIC_RELAXED);
			__atomic_add_fetch(&a->interned, 1, __ATOMIC_RELAXED);
			return NULL;
		}
		if (errno != EBADFD) {
			__atomic_add_fetch(&a->wrong, 1, __ATOMIC_RELAXED);
			return NULL;
		}
		__atomic_add_fetch(&a->badfd, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

int main(void)
{
	const char *scale = getenv("UNIQD_SCALE"), *env = getenv("UNIQD_SEED");
	int full = scale && !strcmp(scale, "full");
	struct uniqd_version v;
	struct uniqd_stats st;
	size_t total, shm_size, i;
	double t0, t1, t2;
	pid_t *pids;
	int fd, p, c;

	th_init("stress_canonical");
	seed = env ? strtoull(env, NULL, 0) : 0x5eedc0de0001ULL;
	nproc = full ? 8 : 4;
	nthread = full ? 8 : 4;
	nkeys = full ? 4000 : 2000;
	nshared = full ? 20000 : 1500;
	nperproc = full ? 4000 : 400;
	printf("# seed 0x%llx (UNIQD_SEED overrides), scale %s\n", seed,
	       full ? "full" : "quick");

	fd = ut_pool(POOL, UNIQD_ATTACH_NEW);
	memset(&v, 0, sizeof(v));
	th_case("setup") {
		CHECK(fd >= 0, "attach: %s", strerror(errno));
		CHECK_OK(ioctl(fd, UNIQD_IOC_VERSION, &v));
		CHECK(v.max_key_len >= 9001, "max_key_len %u", v.max_key_len);
	}
	if (fd < 0 || v.max_key_len < 9001)
		return th_finish();
	max_key_len = v.max_key_len;

	total = (size_t)nproc * nthread * nkeys;
	shm_size = sizeof(*sh) + nproc * sizeof(struct proc_info);
	sh = mmap(NULL, shm_size, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	recs = mmap(NULL, total * sizeof(*recs), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pids = calloc(nproc, sizeof(*pids));
	if (sh == MAP_FAILED || recs == MAP_FAILED || !pids) {
		th_case("shared memory")
			CHECK(0, "mmap: %s", strerror(errno));
		return th_finish();
	}

	t0 = ut_now();
	th_case("processes intern and check concurrently") {
		fflush(stdout);
		for (p = 0; p < nproc; p++) {
			pids[p] = fork();
			if (!pids[p])
				proc_main(p);
			CHECK(pids[p] > 0, "fork: %s", strerror(errno));
		}
		for (p = 0; p < nproc; p++) {
			int status = 0;

			if (pids[p] <= 0)
				continue;
			CHECK(waitpid(pids[p], &status, 0) == pids[p], "wait");
			CHECK(WIFEXITED(status) && !WEXITSTATUS(status),
			      "process %d: status %#x: %s", p, status,
			      sh->proc[p].why);
		}
	}
	t1 = ut_now();

	th_case("every process got the same class ids") {
		for (p = 1; p < nproc; p++)
			for (c = 0; c < NCLASS; c++)
				CHECK(sh->proc[p].class_id[c] == sh->proc[0].class_id[c],
				      "process %d class %d: %u, not %u", p, c,
				      sh->proc[p].class_id[c], sh->proc[0].class_id[c]);
	}

	th_case("equal content <=> equal handle, in every process") {
		__u64 bad = 0, checked = 0;

		for (p = 0; p < nproc; p++) {
			bad += sh->proc[p].bad;
			checked += sh->proc[p].checked;
			if (sh->proc[p].bad)
				printf("  process %d: %llu exceptions, first: %s\n", p,
				       (unsigned long long)sh->proc[p].bad,
				       sh->proc[p].why);
		}
		CHECK(!bad, "%llu exceptions", (unsigned long long)bad);
		CHECK(checked == total, "checked %llu of %zu records",
		      (unsigned long long)checked, total);
	}

	th_case("the pool's counters match what the processes saw") {
		struct rec **all = malloc(total * sizeof(*all));
		__u64 distinct = 0, created = 0, ops = 0, lmiss = 0, big = 0;
		__u64 bytes = 0, content_bytes = 0, per_class[NCLASS] = { 0 };
		__u64 kinds[4] = { 0 }, handles = 0;

		CHECK(all != NULL, "malloc");
		for (i = 0; all && i < total; i++)
			all[i] = &recs[i];
		if (all) {
			qsort(all, total, sizeof(*all), cmp_content);
			for (i = 0; i < total; i++) {
				kinds[all[i]->kind]++;
				if (i && !cmp_content(&all[i], &all[i - 1]))
					continue;
				distinct++;
				per_class[all[i]->cls]++;
				content_bytes += all[i]->len;
			}
			qsort(all, total, sizeof(*all), cmp_handle);
			for (i = 0; i < total; i++)
				if (!i || all[i]->handle != all[i - 1]->handle)
					handles++;
			free(all);
		}
		for (p = 0; p < nproc; p++) {
			created += sh->proc[p].created;
			ops += sh->proc[p].ops;
			lmiss += sh->proc[p].lookup_miss;
			big += sh->proc[p].big;
			bytes += sh->proc[p].bytes;
		}
		CHECK(handles == distinct, "%llu handles for %llu contents",
		      (unsigned long long)handles, (unsigned long long)distinct);
		CHECK(created == distinct, "created %llu, distinct %llu",
		      (unsigned long long)created, (unsigned long long)distinct);
		CHECK_OK(ut_stats(fd, &st));
		CHECK(st.entries == distinct, "STATS entries %llu, distinct %llu",
		      (unsigned long long)st.entries, (unsigned long long)distinct);
		CHECK(st.bytes == content_bytes, "STATS bytes %llu, want %llu",
		      (unsigned long long)st.bytes,
		      (unsigned long long)content_bytes);
		CHECK(st.classes == NCLASS, "classes %u", st.classes);
		CHECK(st.hits + st.misses == ops, "hits %llu + misses %llu != %llu ops",
		      (unsigned long long)st.hits, (unsigned long long)st.misses,
		      (unsigned long long)ops);
		CHECK(st.misses == created + lmiss, "misses %llu != created %llu + lookup misses %llu",
		      (unsigned long long)st.misses, (unsigned long long)created,
		      (unsigned long long)lmiss);
		CHECK(st.attached == 1, "attached %u", st.attached);
		for (c = 0; c < NCLASS; c++) {
			struct uniqd_class_info ci;

			memset(&ci, 0, sizeof(ci));
			ci.class_id = sh->proc[0].class_id[c];
			CHECK_OK(ioctl(fd, UNIQD_IOC_CLASS_INFO, &ci));
			CHECK(ci.entries == per_class[c], "class %d: %llu entries, want %llu",
			      c, (unsigned long long)ci.entries,
			      (unsigned long long)per_class[c]);
		}
		t2 = ut_now();
		printf("# stress_canonical: %d processes x %d threads, %zu keys interned "
		       "(%llu shared, %llu per-process, %llu random, %llu tiny-alphabet; "
		       "%llu over 8184 bytes, max_key_len %u, %.1f MiB of content sent), "
		       "%llu key operations, %llu distinct contents = %llu handles = "
		       "%llu created = STATS entries %llu; %llu buckets; "
		       "intern and check %.1fs, counting %.1fs\n",
		       nproc, nthread, total, (unsigned long long)kinds[K_SHARED],
		       (unsigned long long)kinds[K_PERPROC],
		       (unsigned long long)kinds[K_RANDOM],
		       (unsigned long long)kinds[K_TINY], (unsigned long long)big,
		       max_key_len, bytes / 1048576.0, (unsigned long long)ops,
		       (unsigned long long)distinct, (unsigned long long)handles,
		       (unsigned long long)created,
		       (unsigned long long)st.entries,
		       (unsigned long long)st.table_slots, t1 - t0, t2 - t1);
	}

	th_case("threads racing ATTACH on one file: one wins, the rest EBUSY or EBADFD") {
		int rounds = full ? 2000 : 200, r, t, won = 0, bad = 0;
		__u64 badfd = 0, interned = 0;
		struct arace a;
		pthread_t tid[4];

		memset(&a, 0, sizeof(a));
		CHECK(ut_class(fd, class_names[0]) == 1, "class");
		CHECK_OK(ut_intern(fd, 1, "attach-race", 11, &a.want, NULL));
		for (r = 0; r < rounds; r++) {
			a.fd = ut_open();
			a.attached = a.busy = a.other = 0;
			pthread_barrier_init(&a.go, NULL, 4);
			for (t = 0; t < 4; t++)
				pthread_create(&tid[t], NULL, t < 2 ? arace_attach : arace_intern, &a);
			for (t = 0; t < 4; t++)
				pthread_join(tid[t], NULL);
			pthread_barrier_destroy(&a.go);
			if (a.attached != 1 || a.busy != 1 || a.other)
				bad++;
			won += a.attached;
			close(a.fd);
		}
		badfd = a.badfd;
		interned = a.interned;
		CHECK(!bad, "%d rounds without exactly one ATTACH and one EBUSY", bad);
		CHECK(!a.wrong, "%llu INTERNs gave another handle or errno",
		      (unsigned long long)a.wrong);
		CHECK(interned == 2ULL * rounds, "%llu of %d INTERNs got through",
		      (unsigned long long)interned, 2 * rounds);
		CHECK_OK(ut_stats(fd, &st));
		CHECK(st.attached == 1, "attached %u after every racing file closed", st.attached);
		printf("# attach race: %d rounds, %d attached, %llu INTERNs saw EBADFD before the ATTACH\n",
		       rounds, won, (unsigned long long)badfd);
	}

	close(fd);
	return th_finish();
}
