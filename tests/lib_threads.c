// SPDX-License-Identifier: GPL-2.0
/*
 * libuniqd's per-thread cache under load, against the module: many threads
 * and processes interning overlapping keys through one pool handle (and
 * several), every handle checked against RESOLVE and against every other
 * thread's; batches interrupted by signals; caches freed at thread exit.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/uniqd.h>

#include "harness.h"
#include "libuniqd.h"
#include "uniqd_test.h"

#define KEYS 6000	/* more than the cache's first 4096 slots: evictions, growth */
#define THREADS 8
#define ROUNDS 3	/* 1 in the run without the mapping: every miss is a syscall */

static uniqd_pool *pool;
static uint32_t cls[3];
static uint64_t want[KEYS];	/* filled by the main thread first */

/* Key I: lengths 0..299, so inline, heap-copied and uncached keys. */
static size_t key_of(char *buf, unsigned int i)
{
	size_t len = (i * 37) % 300;

	for (size_t j = 0; j < len; j++)
		buf[j] = (char)('A' + (i + j * 7) % 50);
	if (len >= 6)
		memcpy(buf, &i, sizeof(i));	/* distinct keys */
	else if (len)
		buf[0] = (char)i;
	return len;
}

/* Keys shorter than 6 bytes may repeat; the table is by content. */
static uint32_t key_class(unsigned int i)
{
	return cls[i % 3];
}

static int check_handle(uniqd_pool *p, uint64_t h, unsigned int i, char *why,
			size_t why_len)
{
	char key[300], got[300];
	size_t len = key_of(key, i);
	uint32_t c = 0;
	ssize_t n = uniqd_resolve(p, h, got, sizeof(got), &c);

	if (n != (ssize_t)len || c != key_class(i) || memcmp(got, key, len)) {
		snprintf(why, why_len, "key %u: handle %#llx resolves to %zd bytes of class %u (%s)",
			 i, (unsigned long long)h, n, c, n < 0 ? uniqd_last_error() : "-");
		return -1;
	}
	return 0;
}

struct worker {
	pthread_t t;
	uniqd_pool *p;		/* the shared handle, or a private one */
	unsigned int id;
	unsigned long bad, checked;
	char why[300];
};

static void worker_fail(struct worker *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void worker_fail(struct worker *w, const char *fmt, ...)
{
	va_list ap;

	if (w->bad++)
		return;
	va_start(ap, fmt);
	vsnprintf(w->why, sizeof(w->why), fmt, ap);
	va_end(ap);
}

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	struct uniqd_item items[64];
	char keys[64][300];

	for (unsigned int r = 0; r < (ut_nomap() ? 1U : ROUNDS); r++) {
		for (unsigned int k = 0; k < KEYS; k++) {
			/* Every thread walks all keys, each in its own order. */
			unsigned int i = (k * (2 * w->id + 1) + r * 977 + w->id * 131) % KEYS;
			char key[300];
			size_t len = key_of(key, i);
			uint64_t h;

			switch ((r + k) % 4) {
			case 0:
			case 1:
				h = uniqd_intern(w->p, key_class(i), key, len);
				break;
			case 2:
				h = uniqd_lookup(w->p, key_class(i), key, len);
				break;
			default: {
				/* Gather a few keys into one batch. */
				unsigned int m = 0;

				for (; m < 64 && k + m < KEYS; m++) {
					unsigned int j = (i + m * 61) % KEYS;

					items[m] = (struct uniqd_item){
						.data = keys[m], .len = key_of(keys[m], j),
						.class_id = key_class(j) };
				}
				if (uniqd_intern_many(w->p, items, m, 0) != m) {
					worker_fail(w, "batch: %s", uniqd_last_error());
					continue;
				}
				for (unsigned int x = 0; x < m; x++) {
					unsigned int j = (i + x * 61) % KEYS;

					if (items[x].handle != want[j])
						worker_fail(w, "batch key %u: %#llx want %#llx", j,
							    (unsigned long long)items[x].handle,
							    (unsigned long long)want[j]);
				}
				h = items[0].handle;
				break;
			}
			}
			w->checked++;
			if (h != want[i]) {
				worker_fail(w, "thread %u key %u: %#llx want %#llx (%s)", w->id, i,
					    (unsigned long long)h, (unsigned long long)want[i],
					    h ? "-" : uniqd_last_error());
				continue;
			}
			/* Resolve one key in eight: RESOLVE is a system call each. */
			if (k % 8 == w->id % 8) {
				char why[300];

				if (check_handle(w->p, h, i, why, sizeof(why)))
					worker_fail(w, "%s", why);
			}
		}
	}
	return NULL;
}

static int run_workers(unsigned int n, bool private_handles, char *why, size_t why_len)
{
	struct worker w[THREADS];
	int bad = 0;

	for (unsigned int i = 0; i < n; i++) {
		w[i] = (struct worker){ .id = i, .p = pool };
		if (private_handles) {
			w[i].p = uniqd_open("lib.threads", UNIQD_OPEN_EXISTING);
			if (!w[i].p) {
				snprintf(why, why_len, "open: %s", uniqd_last_error());
				return -1;
			}
		}
		if (pthread_create(&w[i].t, NULL, worker_run, &w[i])) {
			snprintf(why, why_len, "pthread_create");
			return -1;
		}
	}
	for (unsigned int i = 0; i < n; i++) {
		pthread_join(w[i].t, NULL);
		if (w[i].bad && !bad++)
			snprintf(why, why_len, "%lu bad of %lu: %s", w[i].bad, w[i].checked,
				 w[i].why);
		if (private_handles)
			uniqd_close(w[i].p);
	}
	return bad ? -1 : 0;
}

/* ---- signals ---------------------------------------------------------------- */

static atomic_int stop_signals;
static atomic_ulong signals_sent;

static void on_usr1(int sig)
{
	(void)sig;
}

struct pest {
	pthread_t target;
};

static void *pester(void *arg)
{
	struct pest *pe = arg;

	while (!atomic_load(&stop_signals)) {
		pthread_kill(pe->target, SIGUSR1);
		atomic_fetch_add(&signals_sent, 1);
		usleep(200);
	}
	return NULL;
}

/* ---- thread exit ------------------------------------------------------------ */

static void *short_lived(void *arg)
{
	char key[300];

	(void)arg;
	for (unsigned int i = 0; i < 300; i++) {
		size_t len = key_of(key, i);

		if (uniqd_intern(pool, key_class(i), key, len) != want[i])
			return (void *)1;
	}
	return NULL;
}

/*
 * A thread's cache, once the thread has exited, must be neither allocated
 * nor resident. What malloc still has allocated (mallinfo2(): in use in
 * every arena, and mapped chunks) is exact: a leaked cache is 256 KiB of
 * slots at least. Resident memory counts it too (its slots are zeroed, so
 * touched), but also memory no cache holds:
 *
 * - free memory malloc keeps: malloc_trim() gives back the free chunks of
 *   every arena first, though not the top of a thread's arena;
 * - huge pages: with transparent huge pages "always" (Debian's generic 6.1
 *   and 6.12; the RT builds have none), khugepaged collapses the first
 *   2 MiB of a thread arena's heap (64 MiB aligned, a few hundred KiB of it
 *   touched) into one huge page whenever it gets to it, 2 MiB resident an
 *   arena: the jumps of up to 12 MiB that runs saw, in the measurement or
 *   before it (Documentation/robustness.rst, "Two failures explained").
 *   main() turns them off for this process (PR_SET_THP_DISABLE).
 */
struct mem {
	size_t resident;
	size_t allocated;
};

static void mem_now(struct mem *m)
{
	unsigned long size = 0, resident = 0;
	struct mallinfo2 mi;
	FILE *f;

	malloc_trim(0);
	mi = mallinfo2();
	m->allocated = mi.uordblks + mi.hblkhd;
	f = fopen("/proc/self/statm", "r");
	if (f) {
		if (fscanf(f, "%lu %lu", &size, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	m->resident = resident * (size_t)sysconf(_SC_PAGESIZE);
}

int main(int argc, char **argv)
{
	char why[400];

	/* No huge pages in this process, before it has a thread: struct mem. */
	int thp_off = prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) ? errno : 0;

	(void)argc;
	th_init(ut_nomap() ? "lib-threads-nomap" : "lib-threads");
	pool = uniqd_open("lib.threads", UNIQD_OPEN_NEW);
	th_case("setup") {
		char key[300];

		CHECK(thp_off == 0, "PR_SET_THP_DISABLE: errno %d", thp_off);
		CHECK(pool != NULL, "%s", uniqd_last_error());
		if (!pool)
			break;
		cls[0] = uniqd_class(pool, "t.one");
		cls[1] = uniqd_class(pool, "t.two");
		cls[2] = uniqd_class(pool, "t.three");
		CHECK(cls[0] && cls[1] && cls[2], "%s", uniqd_last_error());
		/* The truth: straight from the kernel, no cache involved. */
		for (unsigned int i = 0; i < KEYS; i++) {
			size_t len = key_of(key, i);

			want[i] = uniqd_intern_ex(pool, key_class(i), key, len,
						  UNIQD_NOCACHE, NULL);
			if (!want[i])
				CHECK(0, "key %u: %s", i, uniqd_last_error());
			if (check_handle(pool, want[i], i, why, sizeof(why)))
				CHECK(0, "%s", why);
		}
	}
	if (!pool || th_failed)
		return th_finish();

	th_case("threads share one pool handle") {
		CHECK(run_workers(THREADS, false, why, sizeof(why)) == 0, "%s", why);
	}

	th_case("threads with a handle each") {
		CHECK(run_workers(THREADS, true, why, sizeof(why)) == 0, "%s", why);
	}

	th_case("processes agree") {
		pid_t pids[3];
		int st, bad = 0;

		fflush(stdout);
		for (int i = 0; i < 3; i++) {
			pids[i] = fork();
			if (pids[i] == 0) {
				/* A forked child keeps the attachment and its cache... */
				if (i == 0)
					_exit(run_workers(4, false, why, sizeof(why)) ? 1 : 0);
				/* ...or attaches anew. */
				pool = uniqd_open("lib.threads", UNIQD_OPEN_EXISTING);
				if (!pool)
					_exit(2);
				if (run_workers(4, i == 2, why, sizeof(why))) {
					printf("  child %d: %s\n", i, why);
					_exit(1);
				}
				_exit(0);
			}
		}
		for (int i = 0; i < 3; i++) {
			if (waitpid(pids[i], &st, 0) != pids[i] || !WIFEXITED(st) ||
			    WEXITSTATUS(st))
				bad++;
		}
		CHECK(bad == 0, "%d children failed", bad);
	}

	th_case("batches interrupted by signals complete") {
		enum { N = 4096 * 3 };
		static struct uniqd_item it[N];
		static char keys[N][300];
		struct sigaction sa;
		struct pest pe = { .target = pthread_self() };
		pthread_t t;
		size_t n;
		unsigned int bad = 0;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_usr1;	/* no SA_RESTART: the ioctl sees EINTR */
		sigaction(SIGUSR1, &sa, NULL);
		for (unsigned int round = 0; round < 3; round++) {
			for (unsigned int i = 0; i < N; i++) {
				unsigned int k = (i * 7 + round) % KEYS;

				it[i] = (struct uniqd_item){ .data = keys[i],
							     .len = key_of(keys[i], k),
							     .class_id = key_class(k) };
			}
			atomic_store(&stop_signals, 0);
			pthread_create(&t, NULL, pester, &pe);
			n = uniqd_intern_many(pool, it, N, UNIQD_NOCACHE);
			atomic_store(&stop_signals, 1);
			pthread_join(t, NULL);
			CHECK(n == N, "round %u: %zu done: %s", round, n, uniqd_last_error());
			for (unsigned int i = 0; i < N; i++)
				if (it[i].handle != want[(i * 7 + round) % KEYS])
					bad++;
		}
		CHECK(bad == 0, "%u wrong handles", bad);
		CHECK(atomic_load(&signals_sent) > 0, "no signal was sent");
		printf("  %lu signals during the batches\n", atomic_load(&signals_sent));
		signal(SIGUSR1, SIG_IGN);
	}

	th_case("thread caches are freed at exit") {
		struct mem before, after;
		pthread_t t[4];
		void *ret;
		int bad = 0;

		/* Warm up malloc's arenas, then measure. */
		for (int i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, short_lived, NULL);
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
		mem_now(&before);
		for (int round = 0; round < 50; round++) {
			for (int i = 0; i < 4; i++)
				pthread_create(&t[i], NULL, short_lived, NULL);
			for (int i = 0; i < 4; i++) {
				pthread_join(t[i], &ret);
				bad += ret != NULL;
			}
		}
		mem_now(&after);
		CHECK(bad == 0, "%d threads got wrong handles", bad);
		/*
		 * Not one cache of the 200 (256 KiB each) is left allocated,
		 * nor eight resident: what is left is malloc's and the
		 * stacks' (up to 420 KiB on 6.1, 6.12 and 6.1-rt).
		 */
		CHECK(after.allocated < before.allocated + (64 << 10), "allocated %zu -> %zu",
		      before.allocated, after.allocated);
		CHECK(before.resident && after.resident < before.resident + (2 << 20),
		      "resident %zu -> %zu", before.resident, after.resident);
		printf("  resident %zu KiB -> %zu KiB, allocated %zu KiB -> %zu KiB over 200 threads\n",
		       before.resident >> 10, after.resident >> 10, before.allocated >> 10,
		       after.allocated >> 10);
	}

	th_case("close") {
		CHECK(uniqd_close(pool) == 0, "close");
	}
	{
		int ret = th_finish();

		return ut_nomap() ? ret : ret | ut_rerun_nomap(argv);
	}
}
