// SPDX-License-Identifier: GPL-2.0
/*
 * The mapped index under load and under attack.
 *
 * Growth: writer processes intern keys (through many doublings of the
 * index) while reader processes probe the mapping for them and for keys
 * nobody interns: every mapped hit must equal the kernel's LOOKUP, no absent
 * key may ever be found, and once the writers are done every key must be
 * found unless STATS counts it as left out of the index.
 *
 * Collisions: keys made with the pool's public hash to share a home slot
 * fill one probe window; the rest are left out of the index and are found
 * by the ioctl, exact as ever. The kernel's time per call for them is
 * printed, not judged; a pool with another seed is untouched.
 *
 * UNIQD_SCALE=full: 4 writers x 250,000 keys (1M) and 4 readers.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/mman.h>

#include "harness.h"
#include "uniqd_map_test.h"

static int nkeys(int i, char *buf, const char *tag)
{
	return sprintf(buf, "%s-%d-%x", tag, i, (unsigned int)(i * 2654435761u));
}

struct shared {
	volatile int writers_done;
	volatile long hits, wrong, false_hits, probes;
};

static int reader(int fd, __u32 cls, struct shared *sh, int total, int seed)
{
	struct ut_map m;
	char buf[64];
	unsigned int r = seed;
	long hits = 0, wrong = 0, falses = 0, probes = 0;

	if (ut_map(fd, &m))
		return 2;
	while (!sh->writers_done || probes < 20000) {
		int i = (r = r * 1103515245 + 12345) % total, n;
		__u64 h, k = 0;

		n = nkeys(i, buf, "key");
		h = ut_map_find(&m, cls, buf, n);
		probes++;
		if (h) {
			hits++;
			if (ut_lookup(fd, cls, buf, n, &k, NULL) || k != h)
				wrong++;
		}
		n = nkeys(i, buf, "absent");
		falses += ut_map_find(&m, cls, buf, n) != 0;
		if (probes > 50000000)
			break;
	}
	__atomic_add_fetch(&sh->hits, hits, __ATOMIC_RELAXED);
	__atomic_add_fetch(&sh->wrong, wrong, __ATOMIC_RELAXED);
	__atomic_add_fetch(&sh->false_hits, falses, __ATOMIC_RELAXED);
	__atomic_add_fetch(&sh->probes, probes, __ATOMIC_RELAXED);
	return 0;
}

/*
 * Keys whose index hashes share their low @bits bits: they share a home in
 * their class's array of up to 2^@bits slots (version 2: home = hash &
 * (slots - 1)).
 */
static int colliding(const struct ut_map *m, __u32 cls, int want, int bits,
		     char (*out)[32])
{
	__u32 target = 0, mask = (1U << bits) - 1;
	int n = 0;

	for (unsigned long i = 0; n < want && i < (80UL << bits) * want; i++) {
		int len = sprintf(out[n], "c%lx", i);
		__u64 h = uniqd_maphash(m->h->hash_seed[0], m->h->hash_seed[1],
					cls, out[n], len);

		if (!n)
			target = h & mask;
		if ((h & mask) == target)
			n++;
	}
	return n;
}

int main(void)
{
	const char *scale = getenv("UNIQD_SCALE");
	int full = scale && !strcmp(scale, "full");
	int nw = full ? 4 : 2, nr = full ? 4 : 2, per = full ? 250000 : 15000;
	struct shared *sh;
	struct uniqd_stats st;
	__u32 cls;
	int fd;

	th_init("map_stress");
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	fd = ut_pool("map-stress", 0);
	if (fd < 0 || sh == MAP_FAILED) {
		perror("setup");
		return 1;
	}
	cls = ut_class(fd, "ident");

	th_case("readers probe while writers grow the index") {
		pid_t kids[16];
		int k, wst, bad = 0, missing = 0;
		struct ut_map m;
		char buf[64];
		double t0 = ut_now();

		for (k = 0; k < nr + nw; k++) {
			fflush(stdout);
			kids[k] = fork();
			if (kids[k])
				continue;
			if (k < nr)
				_exit(reader(fd, cls, sh, nw * per, k + 1));
			for (int i = 0; i < per; i++) {
				/* Writers overlap: every key is raced by two. */
				int id = ((k - nr) * per + i * 7) % (nw * per), n;
				__u64 h;

				n = nkeys(id, buf, "key");
				if (ut_intern(fd, cls, buf, n, &h, NULL))
					_exit(3);
			}
			_exit(0);
		}
		for (k = nr; k < nr + nw; k++) {
			waitpid(kids[k], &wst, 0);
			bad += !WIFEXITED(wst) || WEXITSTATUS(wst);
		}
		sh->writers_done = 1;
		for (k = 0; k < nr; k++) {
			waitpid(kids[k], &wst, 0);
			bad += !WIFEXITED(wst) || WEXITSTATUS(wst);
		}
		CHECK(!bad, "%d children failed", bad);
		CHECK(!sh->wrong, "%ld mapped hits differ from LOOKUP", sh->wrong);
		CHECK(!sh->false_hits, "%ld absent keys found", sh->false_hits);
		CHECK_OK(ut_stats(fd, &st));
		CHECK_OK(ut_map(fd, &m));
		for (int i = 0; i < nw * per; i++) {
			int n = nkeys(i, buf, "key");
			__u64 h = ut_map_find(&m, cls, buf, n), k2 = 0;

			if (!h)
				missing++;
			else if (ut_lookup(fd, cls, buf, n, &k2, NULL) || k2 != h)
				bad++;
		}
		ut_unmap(&m);
		CHECK(!bad, "%d wrong after the writers", bad);
		CHECK(missing == (int)st.map_overflow, "%d not found, %llu left out",
		      missing, (unsigned long long)st.map_overflow);
		printf("# %d keys by %d writers, %d readers: %ld probes, %ld hits, "
		       "index %llu slots, %llu left out, %.1fs\n", nw * per, nw, nr,
		       sh->probes, sh->hits, (unsigned long long)st.index_slots,
		       (unsigned long long)st.map_overflow, ut_now() - t0);
	}

	th_case("keys colliding under the public hash only leave the index") {
		static char keys[48][32];
		struct uniqd_stats sa, sb;
		struct ut_map m;
		int a = ut_pool("map-collide-a", 0), b = ut_pool("map-collide-b", 0);
		__u32 ca = ut_class(a, "ident"), cb = ut_class(b, "ident");
		int n, wrong = 0, found = 0;
		double t0, t1, t2;
		__u64 h[48], x;

		CHECK_OK(ut_map(a, &m));
		n = colliding(&m, ca, 48, 16, keys);
		CHECK(n == 48, "found %d colliding keys", n);
		t0 = ut_now();
		for (int i = 0; i < n; i++)
			CHECK_OK(ut_intern(a, ca, keys[i], strlen(keys[i]), &h[i], NULL));
		t1 = ut_now();
		for (int i = 0; i < n; i++) {
			char other[32];

			sprintf(other, "plain-%d", i);
			CHECK_OK(ut_intern(a, ca, other, strlen(other), &x, NULL));
			CHECK_OK(ut_intern(b, cb, keys[i], strlen(keys[i]), &x, NULL));
		}
		t2 = ut_now();
		for (int i = 0; i < n; i++) {
			__u64 mh = ut_map_find(&m, ca, keys[i], strlen(keys[i]));

			found += mh != 0;
			wrong += mh && mh != h[i];
			CHECK_OK(ut_lookup(a, ca, keys[i], strlen(keys[i]), &x, NULL));
			wrong += x != h[i];
		}
		CHECK_OK(ut_stats(a, &sa));
		CHECK_OK(ut_stats(b, &sb));
		CHECK(!wrong, "%d wrong handles", wrong);
		CHECK(found <= UNIQD_MAP_PROBE, "%d in one window", found);
		CHECK(sa.map_overflow >= (__u64)n - UNIQD_MAP_PROBE,
		      "left out %llu", (unsigned long long)sa.map_overflow);
		CHECK(sb.map_overflow == 0, "the other pool left out %llu",
		      (unsigned long long)sb.map_overflow);
		printf("# colliding INTERN %.0f ns/call, plain (two pools) %.0f ns/call; "
		       "%d of %d in the index\n", (t1 - t0) * 1e9 / n,
		       (t2 - t1) * 1e9 / (2 * n), found, n);
		ut_unmap(&m);
		close(a);
		close(b);
	}
	close(fd);
	return th_finish();
}
