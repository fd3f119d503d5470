// SPDX-License-Identifier: GPL-2.0
/*
 * What the kernel gives back of the mapping, a class's retired index array
 * of a page or more (UNIQD_MAP_VERSION 2: smaller ones are packed several
 * to a page and kept, with what they held), it never writes again, never
 * maps again after the give-back returns, and gives back in its own pool's
 * mappings only:
 *
 * - a page of it held by a pipe (vmsplice()) reads as it was published,
 *   also while several pools give back arrays at once (an area freed by
 *   vfree() from an RCU callback went through vfree_atomic(), which stores
 *   a list node, 0 or another area's kernel address, in its first word);
 * - readers that drop (MADV_DONTNEED) and touch the index while another
 *   process grows it never see a given-back range non-zero once the growth
 *   has returned (a fault racing the unmap installed the old page after it);
 * - one pool's growth leaves another pool's mapped pages mapped (the
 *   unmap went through the device's one address_space, every pool's).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "harness.h"
#include "uniqd_map_test.h"

#define PG	4096UL
/* Entries that take a class's array past a page, and through its growth. */
#define GROW_KEYS	1200

/* Class 1 of @fd ("c"), and @n keys "k<base + i>" interned. */
static int fill(int fd, unsigned int base, unsigned int n)
{
	char key[32];
	unsigned int i;

	if (ut_class(fd, "c") != 1)
		return -1;
	for (i = 0; i < n; i++) {
		int len = snprintf(key, sizeof(key), "k%u", base + i);
		__u64 h;

		if (ut_intern(fd, 1, key, len, &h, NULL))
			return -1;
	}
	return 0;
}

/*
 * Keys "k<base + i>" of class 1 until its array (classes[1]) is a page or
 * more: its word, 0 if it never got there. The keys interned go to *@n.
 */
static __u64 grow_to_page(int fd, const struct ut_map *m, unsigned int base,
			  unsigned int *n)
{
	__u64 w = ut_map_class_word(m, 1);

	for (*n = 0; *n < GROW_KEYS && ut_map_array_bytes(w) < PG; (*n)++) {
		if (fill(fd, base + *n, 1))
			return 0;
		w = ut_map_class_word(m, 1);
	}
	/* Given back by pages: an array of a page or more starts on one. */
	return ut_map_array_bytes(w) >= PG && !(UNIQD_MAP_INDEX_OFF(w) % PG) ? w : 0;
}

/*
 * A key of class 1 whose home is slot 0 of an array of 2^@log2 slots, so
 * that the array's first word is published and not zero.
 */
static int key_at_slot0(const struct ut_map *m, unsigned int log2, char *key)
{
	unsigned int i;

	for (i = 0; i < 1U << 24; i++) {
		int len = snprintf(key, 32, "zero-%u", i);
		__u64 h = uniqd_maphash(m->h->hash_seed[0], m->h->hash_seed[1],
					1, key, len);

		if (!(h & ((1ULL << log2) - 1)))
			return len;
	}
	return -1;
}

/* A child that grows the index of a pool of its own, @rounds times. */
static void grower(int id, int rounds)
{
	char name[32];
	int r;

	for (r = 0; r < rounds; r++) {
		int fd;

		snprintf(name, sizeof(name), "giveback-g%d-%d", id, r);
		fd = ut_pool(name, UNIQD_ATTACH_NEW);
		if (fd < 0 || fill(fd, 0, GROW_KEYS))
			_exit(1);
		close(fd);
	}
	_exit(0);
}

/* One round: 0 if the pipe's page reads as published, else 1 (-1: setup). */
static int pipe_round(int round, int growers)
{
	char name[32], key[32], page[PG], back[PG];
	struct ut_map m;
	int fd, p[2], len, i, ret = -1, st;
	unsigned int n;
	struct iovec iov;
	__u64 w, h;
	pid_t pid[4];

	snprintf(name, sizeof(name), "giveback-pipe-%d", round);
	fd = ut_pool(name, UNIQD_ATTACH_NEW);
	if (fd < 0 || ut_class(fd, "c") != 1 || ut_map(fd, &m))
		return -1;
	/* The class's first arrays are under a page: grow it to one. */
	w = grow_to_page(fd, &m, 1000000, &n);
	if (!w)
		goto out;
	len = key_at_slot0(&m, UNIQD_MAP_INDEX_LOG2(w), key);
	if (len < 0 || ut_intern(fd, 1, key, len, &h, NULL))
		goto out;
	memcpy(page, m.base + UNIQD_MAP_INDEX_OFF(w), PG);
	if (!*(__u64 *)page)
		goto out;
	if (pipe(p))
		goto out;
	iov.iov_base = (void *)(m.base + UNIQD_MAP_INDEX_OFF(w));
	iov.iov_len = PG;
	if (vmsplice(p[1], &iov, 1, 0) != (ssize_t)PG)
		goto close_pipe;
	/* Others give back arrays at the same time. */
	fflush(stdout);
	for (i = 0; i < growers; i++) {
		pid[i] = fork();
		if (!pid[i])
			grower(round * 10 + i, 2);
	}
	/*
	 * Keys one by one until the index grows: the page as it was right
	 * before the call that retired it is what the pipe must still read
	 * (its empty slots fill until then; a published slot never changes).
	 */
	for (i = 0; i < 4 * GROW_KEYS && ut_map_class_word(&m, 1) == w; i++) {
		int klen = snprintf(key, sizeof(key), "k%d", i);

		memcpy(page, m.base + UNIQD_MAP_INDEX_OFF(w), PG);
		if (ut_intern(fd, 1, key, klen, &h, NULL))
			break;
	}
	for (i = 0; i < growers; i++)
		waitpid(pid[i], &st, 0);
	if (ut_map_class_word(&m, 1) == w)
		goto close_pipe;	/* did not grow: setup */
	if (read(p[0], back, PG) != (ssize_t)PG)
		goto close_pipe;
	ret = memcmp(page, back, PG) != 0;
	if (ret)
		printf("# round %d: first word %#llx, now %#llx\n", round,
		       (unsigned long long)*(__u64 *)page,
		       (unsigned long long)*(__u64 *)back);
close_pipe:
	close(p[0]);
	close(p[1]);
out:
	ut_unmap(&m);
	close(fd);
	return ret;
}

/* ---- faults racing give-backs ------------------------------------------ */

struct race {
	const struct ut_map *m;
	volatile int stop;
	/* The word of the array given back last, and a count of growths. */
	volatile __u64 retired;
	volatile unsigned int gen;
	unsigned long touched;
};

static void *toucher(void *arg)
{
	struct race *r = arg;
	unsigned long sum = 0;

	while (!r->stop) {
		__u64 w = ut_map_class_word(r->m, 1);
		const __u8 *a = r->m->base + UNIQD_MAP_INDEX_OFF(w);
		size_t bytes = ut_map_array_bytes(w), o;

		/* Small arrays share pages with others, kept: page-sized only. */
		if (bytes < PG)
			continue;
		madvise((void *)a, bytes, MADV_DONTNEED);
		for (o = 0; o < bytes; o += PG)
			sum += *(volatile const __u8 *)(a + o);
		r->touched++;
	}
	return (void *)sum;
}

/* Every byte of the array of word @w reads zero. */
static int all_zero(const struct ut_map *m, __u64 w)
{
	const __u64 *s = (const __u64 *)(m->base + UNIQD_MAP_INDEX_OFF(w));
	size_t i, n = 1UL << UNIQD_MAP_INDEX_LOG2(w);

	for (i = 0; i < n; i++)
		if (UT_ACQ(&s[i]))
			return 0;
	return 1;
}

/* ---- another pool's mappings ------------------------------------------- */

/* Whether the page at @addr is present in this process (pagemap bit 63). */
static int present(const void *addr)
{
	__u64 e = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0)
		return -1;
	if (pread(fd, &e, sizeof(e), (uintptr_t)addr / PG * sizeof(e)) !=
	    sizeof(e))
		e = 0;
	close(fd);
	return !!(e >> 63);
}

int main(void)
{
	int fd, i, bad, st;

	th_init("map_giveback");
	if (access(UNIQD_DEVICE_PATH, R_OK | W_OK) ||
	    sysconf(_SC_PAGESIZE) != (long)PG) {
		th_skip("all", "no /dev/uniqd, or pages other than 4 KiB");
		return th_finish();
	}

	th_case("a class's retired arrays: under a page kept, a page or more zeroes") {
		struct ut_map m;
		__u64 words[24], *copies[24] = { 0 }, w, kept = 0, h0 = 0;
		unsigned int nw = 0, k, bad_kept = 0, bad_gone = 0;
		struct uniqd_stats st;

		fd = ut_pool("giveback-class", UNIQD_ATTACH_NEW);
		CHECK(fd >= 0 && !fill(fd, 0, 1) && !ut_map(fd, &m), "setup: %s",
		      strerror(errno));
		CHECK_OK(ut_intern(fd, 1, "k0", 2, &h0, NULL));
		/* 4096 keys: the class's array grows to 8192 slots, 64 KiB. */
		for (k = 1; k < 4096 && nw < 24; k++) {
			w = ut_map_class_word(&m, 1);
			/* A new array: the copy of the one before stays. */
			if (!nw || words[nw - 1] != w)
				words[nw++] = w;
			/* The current array as it is before each new key. */
			free(copies[nw - 1]);
			copies[nw - 1] = malloc(ut_map_array_bytes(w));
			if (copies[nw - 1])
				memcpy(copies[nw - 1], m.base + UNIQD_MAP_INDEX_OFF(w),
				       ut_map_array_bytes(w));
			if (fill(fd, k, 1))
				break;
		}
		w = ut_map_class_word(&m, 1);
		if (nw && words[nw - 1] != w && nw < 24)
			words[nw++] = w;
		CHECK(nw >= 2 && ut_map_array_bytes(w) >= 4 * PG,
		      "%u arrays, now %#llx", nw, (unsigned long long)w);
		for (k = 0; k + 1 < nw; k++) {
			__u64 b = ut_map_array_bytes(words[k]);
			const __u64 *o = (const __u64 *)(m.base + UNIQD_MAP_INDEX_OFF(words[k]));

			if (b < PG) {
				/* Kept as it was when retired, and still finds. */
				kept += b;
				bad_kept += !copies[k] || memcmp(copies[k], o, b) ||
					    ut_map_find_in(&m, words[k], 1, "k0", 2) != h0;
			} else {
				bad_gone += !all_zero(&m, words[k]) ||
					    ut_map_find_in(&m, words[k], 1, "k0", 2);
			}
			CHECK(UNIQD_MAP_INDEX_LOG2(words[k + 1]) ==
			      UNIQD_MAP_INDEX_LOG2(words[k]) + 1,
			      "array %u: %#llx -> %#llx: not doubled", k,
			      (unsigned long long)words[k],
			      (unsigned long long)words[k + 1]);
		}
		CHECK(!bad_kept, "%u retired arrays under a page changed", bad_kept);
		CHECK(!bad_gone, "%u retired arrays of a page or more not zeroes", bad_gone);
		CHECK(ut_map_find(&m, 1, "k0", 2) == h0, "the current array misses");
		CHECK_OK(ut_stats(fd, &st));
		CHECK(st.index_slots == 1ULL << UNIQD_MAP_INDEX_LOG2(w) &&
		      st.index_bytes == kept + ut_map_array_bytes(w),
		      "index_slots %llu index_bytes %llu: current %llu bytes, kept %llu",
		      (unsigned long long)st.index_slots,
		      (unsigned long long)st.index_bytes,
		      (unsigned long long)ut_map_array_bytes(w),
		      (unsigned long long)kept);
		for (k = 0; k < 24; k++)
			free(copies[k]);
		ut_unmap(&m);
		close(fd);
	}

	th_case("a given-back index page held by a pipe never changes") {
		for (i = 0, bad = 0; i < 12; i++) {
			int r = pipe_round(i, i % 2 ? 3 : 0);

			CHECK(r >= 0, "round %d: setup failed: %s", i,
			      strerror(errno));
			bad += r > 0;
		}
		CHECK(!bad, "%d of 12 rounds read a changed page", bad);
	}

	th_case("a fault racing a give-back never maps the old page after it") {
		struct race r = { 0 };
		struct ut_map m;
		pthread_t t[2];
		unsigned int g, fails = 0, checked = 0;
		__u64 *shared;
		pid_t pid;

		fd = ut_pool("giveback-race", UNIQD_ATTACH_NEW);
		CHECK(fd >= 0 && ut_class(fd, "c") == 1 && !ut_map(fd, &m),
		      "setup: %s", strerror(errno));
		shared = mmap(NULL, PG, PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		r.m = &m;
		fill(fd, 0, 1);
		for (i = 0; i < 2; i++)
			pthread_create(&t[i], NULL, toucher, &r);
		fflush(stdout);
		pid = fork();
		if (!pid) {
			/*
			 * The creator: grows class 1 from its first array
			 * to 32768 slots, reporting each growth.
			 */
			int cfd = ut_pool("giveback-race", 0);
			struct ut_map cm;
			unsigned int k;

			if (cfd < 0 || ut_class(cfd, "c") != 1 || ut_map(cfd, &cm))
				_exit(1);
			for (k = 1; k < 16000; k++) {
				__u64 before = ut_map_class_word(&cm, 1), h;
				char key[32];
				int len = snprintf(key, sizeof(key), "r%u", k);

				if (ut_intern(cfd, 1, key, len, &h, NULL))
					_exit(2);
				if (ut_map_class_word(&cm, 1) != before) {
					/* Returned: the old array is given back. */
					__atomic_store_n(&shared[0], before,
							 __ATOMIC_RELEASE);
					__atomic_add_fetch(&shared[1], 1,
							   __ATOMIC_RELEASE);
				}
			}
			_exit(0);
		}
		for (g = 0; ;) {
			if (__atomic_load_n(&shared[1], __ATOMIC_ACQUIRE) != g) {
				__u64 old = __atomic_load_n(&shared[0],
							    __ATOMIC_ACQUIRE);

				g = __atomic_load_n(&shared[1], __ATOMIC_ACQUIRE);
				/* Arrays under a page are kept, not given back. */
				if (ut_map_array_bytes(old) < PG)
					continue;
				checked++;
				fails += !all_zero(&m, old);
			}
			if (waitpid(pid, &st, WNOHANG) == pid)
				break;
		}
		r.stop = 1;
		for (i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
		CHECK(WIFEXITED(st) && !WEXITSTATUS(st), "creator: status %d",
		      st);
		CHECK(checked > 0, "no growth checked");
		CHECK(!fails, "%u of %u given-back arrays read non-zero", fails,
		      checked);
		printf("# %u growths checked, %lu touches\n", checked,
		       r.touched);
		ut_unmap(&m);
		close(fd);
	}

	th_case("one pool's growth leaves another pool's mappings alone") {
		struct ut_map ma, mb;
		int fa = ut_pool("giveback-a", UNIQD_ATTACH_NEW);
		int fb = ut_pool("giveback-b", UNIQD_ATTACH_NEW);
		const __u8 *pb;
		unsigned int na = 0, nb = 0;
		__u64 wa = 0, wb = 0;

		CHECK(fa >= 0 && fb >= 0 && !fill(fa, 0, 1) && !fill(fb, 0, 1) &&
		      !ut_map(fa, &ma) && !ut_map(fb, &mb), "setup: %s",
		      strerror(errno));
		/* Both classes' arrays a page: a's next growth gives its back. */
		if (fa >= 0 && fb >= 0) {
			wa = grow_to_page(fa, &ma, 1, &na);
			wb = grow_to_page(fb, &mb, 1, &nb);
		}
		CHECK(wa && wb, "no page-sized array: a %#llx b %#llx",
		      (unsigned long long)wa, (unsigned long long)wb);
		/* Same limits, same history, same layout: b's array is where a's is. */
		CHECK(wb == wa, "a %#llx b %#llx", (unsigned long long)wa,
		      (unsigned long long)wb);
		pb = mb.base + UNIQD_MAP_INDEX_OFF(wa);
		(void)*(volatile const __u8 *)pb;
		CHECK(present(pb) == 1, "b's page not present after a read");
		CHECK(!fill(fa, 1 + na, GROW_KEYS), "grow a: %s", strerror(errno));
		CHECK(ut_map_class_word(&ma, 1) != wa, "a did not grow");
		CHECK(present(pb) == 1, "a's growth unmapped b's page");
		CHECK(*(const __u64 *)pb == *(const __u64 *)pb,
		      "b reads its page");
		ut_unmap(&ma);
		ut_unmap(&mb);
		close(fa);
		close(fb);
	}
	return th_finish();
}
