// SPDX-License-Identifier: GPL-2.0
/*
 * A client that runs its pool into a limit, and keeps hammering it.
 *
 * For each of max_entries, max_bytes and max_classes: a pool with a small
 * limit is filled until EDQUOT (max_bytes to its very last record, with
 * keys from max_key_len down to 1 byte), then thousands of further calls
 * that would need a new entry or class (single keys up to max_key_len,
 * batches, new class names) must each get EDQUOT, while what is in the pool
 * keeps working, another process's pool keeps working at the same time,
 * and the memory cgroup the client runs in does not grow.
 *
 * Memory is read from memory.current of a child cgroup (cgroup2 is mounted
 * at /sys/fs/cgroup if it is not): it must grow roughly with the interned
 * bytes and stay within what the pool's limit allows (its record bytes,
 * STATS.arena_bytes, plus the table bytes STATS reports plus a per-entry
 * cost for entries[] and the index), and it must be
 * back at its baseline once the pool's last file is closed. Without a
 * cgroup2 memory controller the test falls back to Slab + VmallocUsed of
 * /proc/meminfo, with wider margins, and says so. (tests/pool_memcg.c
 * covers charging across cgroups and running into memory.max.)
 *
 * UNIQD_SCALE=full: larger pools and ten times the hammering.
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>

#include "harness.h"
#include "uniqd_test.h"

#define MYCG		"uniqd-limits"

static int have_memcg, mounted_cg;
static __u32 max_key_len;
static unsigned long long seed;

/* ---- memory ----------------------------------------------------------------- */

static long long meminfo(const char *field)
{
	char line[256];
	long long v = -1;
	size_t n = strlen(field);
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n) && line[n] == ':')
			v = strtoll(line + n + 1, NULL, 10) * 1024;
	fclose(f);
	return v;
}

/* Bytes of kernel memory as far as we can see them. */
static long long mem_now(void)
{
	if (!have_memcg)
		return meminfo("Slab") + meminfo("VmallocUsed");
	return ut_read_ll(UT_CG "/" MYCG "/memory.current");
}

/* Our own cgroup: cgroup2 mounted, the memory controller on, we inside. */
static int setup_memcg(void)
{
	return ut_memcg_make(MYCG, &mounted_cg) || ut_cgroup_join(MYCG);
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * Memory now, once it has settled: old table arrays are freed after an RCU
 * grace period and freed pages leave per-CPU charge caches lazily. Waits
 * (at most ~3 s) until it is at or below @want, else returns the last value.
 */
static long long mem_settled(long long want)
{
	long long v = mem_now();
	int i;

	for (i = 0; i < 30 && v > want; i++) {
		sleep_ms(100);
		v = mem_now();
	}
	return v;
}

/* ---- keys ------------------------------------------------------------------- */

static __u64 splitmix(__u64 *s)
{
	__u64 z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static __u8 *keybuf;

/* Key number @i of @len bytes: distinct for distinct i when len >= 8. */
static __u8 *key(__u64 i, __u32 len)
{
	__u64 s = seed ^ (i * 0x9e3779b97f4a7c15ULL);
	__u32 j;

	for (j = 0; j + 8 <= len; j += 8) {
		__u64 w = splitmix(&s);

		memcpy(keybuf + j, &w, 8);
	}
	for (; j < len; j++)
		keybuf[j] = (__u8)splitmix(&s);
	if (len >= 8)
		memcpy(keybuf, &i, 8);
	else
		memcpy(keybuf, &i, len);
	return keybuf;
}

static __u32 mixed_len(__u64 *s)
{
	__u32 r = splitmix(s) % 100;

	if (r < 40)
		return 8 + splitmix(s) % 56;
	if (r < 70)
		return 64 + splitmix(s) % 960;
	if (r < 90)
		return 1024 + splitmix(s) % 8192;
	return 9216 + splitmix(s) % (max_key_len - 9216 + 1);
}

static int pool_with(const char *name, __u64 max_bytes, __u64 max_entries,
		     __u32 max_classes)
{
	struct uniqd_attach a;
	int fd = ut_open();

	memset(&a, 0, sizeof(a));
	a.name = U64P(name);
	a.name_len = strlen(name);
	a.flags = UNIQD_ATTACH_NEW;
	a.max_bytes = max_bytes;
	a.max_entries = max_entries;
	a.max_classes = max_classes;
	if (fd < 0 || ioctl(fd, UNIQD_IOC_ATTACH, &a)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* ---- another pool, in another process, outside our cgroup ------------------- */

struct other {
	int done, bad;
	__u64 interned;
	char why[160];
};

static struct other *oth;

static pid_t start_other(int nkeys)
{
	pid_t pid;

	memset(oth, 0, sizeof(*oth));
	fflush(stdout);
	pid = fork();
	if (pid)
		return pid;
	ut_cgroup_join("");
	{
		__u64 *h = calloc(nkeys, sizeof(*h)), hh;
		__u8 *buf = malloc(max_key_len + 1);
		int fd = ut_pool("limits-other", 0), i, round;
		__u32 cls = fd >= 0 ? ut_class(fd, "other") : 0, len, gl, gc;

		if (!h || !buf || fd < 0 || !cls)
			_exit(10);
		for (round = 0; round < 3; round++) {
			for (i = 0; i < nkeys; i++) {
				len = 1 + (i * 37) % 2000;
				memcpy(buf, key(1000000 + i, len), len);
				if (ut_intern(fd, cls, buf, len, &hh, NULL) ||
				    (h[i] && hh != h[i])) {
					snprintf(oth->why, sizeof(oth->why),
						 "key %d: %s, %llx vs %llx", i,
						 strerror(errno), (unsigned long long)hh,
						 (unsigned long long)h[i]);
					oth->bad++;
					_exit(1);
				}
				h[i] = hh;
				oth->interned++;
				if (ut_resolve(fd, hh, buf, max_key_len + 1, &gl, &gc) ||
				    gl != len || gc != cls) {
					snprintf(oth->why, sizeof(oth->why),
						 "resolve %d: %s", i, strerror(errno));
					oth->bad++;
					_exit(1);
				}
			}
		}
		close(fd);
		oth->done = 1;
		_exit(0);
	}
}

static int wait_other(pid_t pid)
{
	int st = 0;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) && !WEXITSTATUS(st) && oth->done && !oth->bad ? 0 : -1;
}

/* ---- hammering a full pool -------------------------------------------------- */

struct hammer {
	__u64 calls, edquot, other_errno, hits;
	int first_bad;
};

/*
 * @n calls that would each need a new entry (single keys of every size, and
 * batches whose first keys exist and whose next one is new), mixed with
 * calls on what is there. Every new one must get EDQUOT.
 */
static void hammer(int fd, __u32 cls, __u64 n, __u64 fresh_from,
		   __u64 nold, __u32 (*old_len)(__u64), struct hammer *hm)
{
	static struct uniqd_key keys[8];
	static __u8 bufs[8][128];
	__u64 s = seed ^ 0x4a11, i, h;
	__u32 len;
	int j;

	memset(hm, 0, sizeof(*hm));
	for (i = 0; i < n; i++) {
		__u32 r = splitmix(&s) % (nold ? 10 : 8);

		hm->calls++;
		if (r < 6) {
			/* A new key: EDQUOT. */
			len = r < 3 ? 8 + splitmix(&s) % 100 : r < 5 ? 1024 +
			      splitmix(&s) % 8192 : max_key_len - splitmix(&s) % 8;
			if (!ut_intern(fd, cls, key(fresh_from + i, len), len, &h, NULL)) {
				hm->other_errno++;
			} else if (errno == EDQUOT) {
				hm->edquot++;
			} else {
				hm->other_errno++;
				if (!hm->first_bad)
					hm->first_bad = errno;
			}
		} else if (r < 8) {
			/* A batch: old keys, then a new one: done stops there. */
			struct uniqd_batch b;
			int nk = 1 + splitmix(&s) % 7;

			for (j = 0; j < nk; j++) {
				int old = j < nk - 1 && nold;
				__u64 k = old ? splitmix(&s) % nold :
					  fresh_from + i + (1ULL << 36) * j;

				len = old ? old_len(k) : 8 + splitmix(&s) % 100;
				memcpy(bufs[j], key(k, len), len);
				memset(&keys[j], 0, sizeof(keys[j]));
				keys[j].class_id = cls;
				keys[j].data = U64P(bufs[j]);
				keys[j].len = len;
			}
			memset(&b, 0, sizeof(b));
			b.keys = U64P(keys);
			b.count = nk;
			b.key_size = sizeof(keys[0]);
			if (!ioctl(fd, UNIQD_IOC_INTERN_BATCH, &b)) {
				hm->other_errno++;
			} else if (errno == EDQUOT && b.done < (__u32)nk) {
				hm->edquot++;
			} else {
				hm->other_errno++;
				if (!hm->first_bad)
					hm->first_bad = errno;
			}
		} else {
			/* Something that is there: a hit. */
			__u64 k = splitmix(&s) % nold;

			len = old_len(k);
			if (ut_intern(fd, cls, key(k, len), len, &h, NULL)) {
				hm->other_errno++;
				if (!hm->first_bad)
					hm->first_bad = errno;
			} else {
				hm->hits++;
			}
		}
	}
}

static __u32 entries_len(__u64 k)
{
	return 8 + (k * 13) % 120;
}

int main(void)
{
	const char *scale = getenv("UNIQD_SCALE"), *env = getenv("UNIQD_SEED");
	int full = scale && !strcmp(scale, "full");
	__u64 nhammer = full ? 50000 : 5000;
	struct uniqd_version v;
	struct uniqd_stats st, st2;
	const char *memsrc;
	long long m0, m1, m2, slack;
	struct hammer hm;
	pid_t other;
	int fd;

	th_init("limits_memory");
	seed = env ? strtoull(env, NULL, 0) : 0x5eed1111ULL;
	printf("# seed 0x%llx (UNIQD_SEED overrides), scale %s\n", seed,
	       full ? "full" : "quick");
	oth = mmap(NULL, sizeof(*oth), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	fd = ut_open();
	memset(&v, 0, sizeof(v));
	th_case("setup") {
		CHECK(oth != MAP_FAILED, "mmap");
		CHECK_OK(ioctl(fd, UNIQD_IOC_VERSION, &v));
		CHECK(v.max_key_len >= 16384, "max_key_len %u", v.max_key_len);
	}
	close(fd);
	if (oth == MAP_FAILED || v.max_key_len < 16384)
		return th_finish();
	max_key_len = v.max_key_len;
	keybuf = malloc(max_key_len + 8);
	memset(keybuf, 0, max_key_len + 8);
	have_memcg = setup_memcg() == 0;
	memsrc = have_memcg ? "memory.current of a child cgroup" :
		 "Slab + VmallocUsed of /proc/meminfo (no cgroup2 memory controller)";
	/* Per-CPU charge caches and RCU-deferred frees: what "flat" allows. */
	slack = have_memcg ? 1LL << 20 : 4LL << 20;
	printf("# memory from %s\n", memsrc);

	th_case("max_entries: EDQUOT at the limit and after, memory flat, another pool unaffected") {
		__u64 max = full ? 30000 : 3000, i, h;
		__u32 cls;

		fd = pool_with("limits-entries", 0, max, 0);
		CHECK(fd >= 0, "attach: %s", strerror(errno));
		cls = ut_class(fd, "e");
		for (i = 0; ; i++) {
			__u32 len = entries_len(i);

			if (ut_intern(fd, cls, key(i, len), len, &h, NULL)) {
				CHECK(errno == EDQUOT, "intern %llu: %s",
				      (unsigned long long)i, strerror(errno));
				break;
			}
		}
		CHECK(i == max, "EDQUOT after %llu entries, max %llu",
		      (unsigned long long)i, (unsigned long long)max);
		CHECK_OK(ut_stats(fd, &st));
		other = start_other(full ? 4000 : 800);
		m0 = mem_now();
		hammer(fd, cls, nhammer, 1ULL << 40, max, entries_len, &hm);
		CHECK(wait_other(other) == 0, "the other pool: %s", oth->why);
		m1 = mem_settled(m0 + slack);
		CHECK(hm.edquot == hm.calls - hm.hits && !hm.other_errno,
		      "%llu calls: %llu EDQUOT, %llu hits, %llu others (first %s)",
		      (unsigned long long)hm.calls, (unsigned long long)hm.edquot,
		      (unsigned long long)hm.hits, (unsigned long long)hm.other_errno,
		      strerror(hm.first_bad));
		CHECK_OK(ut_stats(fd, &st2));
		CHECK(st2.entries == max && st2.arena_bytes == st.arena_bytes &&
		      st2.bytes == st.bytes, "entries %llu arena %llu -> %llu",
		      (unsigned long long)st2.entries,
		      (unsigned long long)st.arena_bytes,
		      (unsigned long long)st2.arena_bytes);
		CHECK(m1 - m0 <= slack, "memory grew %lld bytes over %llu refused calls",
		      m1 - m0, (unsigned long long)hm.calls);
		printf("# max_entries %llu: %llu more calls, %llu EDQUOT, %llu hits; memory %+lld bytes; "
		       "the other process interned %llu keys meanwhile\n",
		       (unsigned long long)max, (unsigned long long)hm.calls,
		       (unsigned long long)hm.edquot, (unsigned long long)hm.hits,
		       m1 - m0, (unsigned long long)oth->interned);
		close(fd);
	}

	th_case("max_bytes: filled to the last record, memory bounded, flat, released") {
		__u64 max = full ? 32ULL << 20 : 4ULL << 20, s = seed, i = 0, h;
		__u64 content = 0, bound, fails;
		static const __u32 sizes[] = { 65536, 8192, 1024, 64, 8 };
		long long base, grown;
		__u32 cls, len;
		int k;

		base = mem_now();
		fd = pool_with("limits-bytes", max, 0, 0);
		CHECK(fd >= 0, "attach: %s", strerror(errno));
		cls = ut_class(fd, "b");
		/* Mixed sizes until the first EDQUOT, then ever smaller keys. */
		for (fails = 0; fails < 3; i++) {
			len = mixed_len(&s);
			if (ut_intern(fd, cls, key(i, len), len, &h, NULL)) {
				CHECK(errno == EDQUOT, "intern: %s", strerror(errno));
				fails++;
			} else {
				content += len;
			}
		}
		for (k = 0; k < 5; k++) {
			len = sizes[k] < max_key_len ? sizes[k] : max_key_len;
			for (;; i++) {
				if (ut_intern(fd, cls, key(i, len), len, &h, NULL)) {
					CHECK(errno == EDQUOT, "intern %u bytes: %s", len,
					      strerror(errno));
					break;
				}
				content += len;
			}
		}
		CHECK_OK(ut_stats(fd, &st));
		CHECK(st.arena_bytes <= max && max - st.arena_bytes < ut_rec_size(8),
		      "arena %llu of %llu", (unsigned long long)st.arena_bytes,
		      (unsigned long long)max);
		CHECK(st.bytes == content, "STATS bytes %llu, interned %llu",
		      (unsigned long long)st.bytes, (unsigned long long)content);
		m0 = mem_now();
		grown = m0 - base;
		/*
		 * What the limit allows: the records (in 64 KiB chunks), the
		 * tables STATS reports (old arrays may wait for RCU: twice),
		 * entries[] and the index (well under 64 bytes an entry),
		 * the pool itself.
		 */
		bound = st.arena_bytes + 65536 * 2 + 2 * st.table_bytes +
			64 * st.entries + slack;
		CHECK(grown >= (long long)(content * 9 / 10), "grew %lld bytes for %llu of content",
		      grown, (unsigned long long)content);
		CHECK(grown <= (long long)bound, "grew %lld bytes, the limit allows %llu",
		      grown, (unsigned long long)bound);
		printf("# max_bytes %llu: %llu entries, %llu content bytes, arena %llu, tables %llu; "
		       "memory grew %lld (%.2f x content, %.1f bytes per entry beyond the arena)\n",
		       (unsigned long long)max, (unsigned long long)st.entries,
		       (unsigned long long)content, (unsigned long long)st.arena_bytes,
		       (unsigned long long)st.table_bytes, grown,
		       content ? (double)grown / content : 0.0,
		       st.entries ? (double)(grown - (long long)st.arena_bytes) / st.entries : 0.0);
		other = start_other(full ? 4000 : 800);
		hammer(fd, cls, nhammer, 1ULL << 41, 0, entries_len, &hm);
		CHECK(wait_other(other) == 0, "the other pool: %s", oth->why);
		m1 = mem_settled(m0 + slack);
		/* No old keys in this hammer: every call is a new one. */
		CHECK(hm.edquot == hm.calls - hm.hits && !hm.other_errno,
		      "%llu calls: %llu EDQUOT, %llu others (first %s)",
		      (unsigned long long)hm.calls, (unsigned long long)hm.edquot,
		      (unsigned long long)hm.other_errno, strerror(hm.first_bad));
		CHECK(m1 - m0 <= slack, "memory grew %lld bytes over %llu refused calls",
		      m1 - m0, (unsigned long long)hm.calls);
		CHECK_OK(ut_stats(fd, &st2));
		CHECK(st2.arena_bytes == st.arena_bytes && st2.entries == st.entries,
		      "arena %llu -> %llu", (unsigned long long)st.arena_bytes,
		      (unsigned long long)st2.arena_bytes);
		close(fd);
		m2 = mem_settled(base + slack);
		CHECK(m2 - base <= slack, "after the last close: %lld bytes over the baseline",
		      m2 - base);
		printf("# max_bytes: %llu refused calls, memory %+lld; after the last close %+lld from the baseline\n",
		       (unsigned long long)hm.calls, m1 - m0, m2 - base);
	}

	th_case("tiny keys: the real cost of a full pool beyond max_bytes") {
		__u64 max = full ? 8ULL << 20 : 1ULL << 20, i, h;
		long long base, grown;
		__u32 cls, len;

		base = mem_now();
		fd = pool_with("limits-tiny", max, 0, 0);
		CHECK(fd >= 0, "attach: %s", strerror(errno));
		cls = ut_class(fd, "t");
		for (i = 0; ; i++) {
			len = 3 + i % 6;
			/* 3..8 bytes, the low bytes of i: distinct below 2^24. */
			if (ut_intern(fd, cls, key(i, len), len, &h, NULL)) {
				CHECK(errno == EDQUOT, "intern: %s", strerror(errno));
				break;
			}
		}
		CHECK_OK(ut_stats(fd, &st));
		grown = mem_now() - base;
		CHECK(grown <= (long long)(st.arena_bytes + 65536 * 2 + 2 * st.table_bytes +
					   64 * st.entries + slack),
		      "grew %lld bytes: arena %llu tables %llu entries %llu", grown,
		      (unsigned long long)st.arena_bytes,
		      (unsigned long long)st.table_bytes, (unsigned long long)st.entries);
		printf("# tiny keys: max_bytes %llu holds %llu entries; tables %llu bytes; memory grew %lld = %.2f x max_bytes (%.1f bytes per entry)\n",
		       (unsigned long long)max, (unsigned long long)st.entries,
		       (unsigned long long)st.table_bytes, grown, (double)grown / max,
		       st.entries ? (double)grown / st.entries : 0.0);
		close(fd);
		m2 = mem_settled(base + slack);
		CHECK(m2 - base <= slack, "after the last close: %lld bytes over the baseline",
		      m2 - base);
	}

	th_case("largest keys: the real cost of a full pool beyond max_bytes") {
		__u64 max = full ? 32ULL << 20 : 4ULL << 20, i, h;
		long long base, grown;
		__u32 cls;

		base = mem_now();
		fd = pool_with("limits-large", max, 0, 0);
		CHECK(fd >= 0, "attach: %s", strerror(errno));
		cls = ut_class(fd, "l");
		for (i = 0; ; i++) {
			if (ut_intern(fd, cls, key(i, max_key_len), max_key_len, &h, NULL)) {
				CHECK(errno == EDQUOT, "intern: %s", strerror(errno));
				break;
			}
		}
		CHECK_OK(ut_stats(fd, &st));
		grown = mem_now() - base;
		/*
		 * A record this big has mapped pages of its own, which waste
		 * under a page each (bounded here by 1/8 and a page).
		 */
		CHECK(grown <= (long long)(st.arena_bytes + st.arena_bytes / 8 +
					   4096 * st.entries + 2 * st.table_bytes +
					   64 * st.entries + slack),
		      "grew %lld bytes: arena %llu tables %llu entries %llu", grown,
		      (unsigned long long)st.arena_bytes,
		      (unsigned long long)st.table_bytes, (unsigned long long)st.entries);
		printf("# largest keys (%u bytes): max_bytes %llu holds %llu entries; memory grew %lld = %.2f x max_bytes (%.0f bytes per record of %llu arena bytes)\n",
		       max_key_len, (unsigned long long)max, (unsigned long long)st.entries,
		       grown, (double)grown / max,
		       st.entries ? (double)grown / st.entries : 0.0,
		       (unsigned long long)ut_rec_size(max_key_len));
		close(fd);
		m2 = mem_settled(base + slack);
		CHECK(m2 - base <= slack, "after the last close: %lld bytes over the baseline",
		      m2 - base);
	}

	th_case("max_classes: EDQUOT for every new class, old ones work, memory flat") {
		__u32 maxc = 8, c, id;
		char name[32];
		__u64 i, edq = 0, h;

		fd = pool_with("limits-classes", 0, 0, maxc);
		CHECK(fd >= 0, "attach: %s", strerror(errno));
		for (c = 1; c <= maxc; c++) {
			snprintf(name, sizeof(name), "class-%u", c);
			CHECK(ut_class(fd, name) == c, "class %u: %s", c, strerror(errno));
		}
		m0 = mem_now();
		for (i = 0; i < nhammer; i++) {
			snprintf(name, sizeof(name), "new-class-%llu", (unsigned long long)i);
			if (ut_class_full(fd, name, 0, &id, NULL) && errno == EDQUOT)
				edq++;
			snprintf(name, sizeof(name), "class-%llu", 1 + (unsigned long long)i % maxc);
			CHECK(ut_class(fd, name) == 1 + i % maxc, "old class: %s", strerror(errno));
			if (i % 16 == 0)
				CHECK_OK(ut_intern(fd, 1 + i % maxc, key(i, 16), 16, &h, NULL));
		}
		m1 = mem_settled(m0 + slack);
		CHECK(edq == nhammer, "%llu of %llu new classes got EDQUOT",
		      (unsigned long long)edq, (unsigned long long)nhammer);
		CHECK_OK(ut_stats(fd, &st));
		CHECK(st.classes == maxc, "classes %u", st.classes);
		/* The interned keys are the only growth allowed. */
		CHECK(m1 - m0 <= slack + (long long)st.arena_bytes + (long long)st.table_bytes,
		      "memory grew %lld bytes", m1 - m0);
		printf("# max_classes %u: %llu new classes refused; memory %+lld\n", maxc,
		       (unsigned long long)edq, m1 - m0);
		close(fd);
	}

	if (have_memcg) {
		ut_cgroup_join("");
		rmdir(UT_CG "/" MYCG);
		if (mounted_cg)
			umount(UT_CG);
	}
	return th_finish();
}
