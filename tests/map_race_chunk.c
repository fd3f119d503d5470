// SPDX-License-Identifier: GPL-2.0
/*
 * Processes race to create the same key of a mapped record over 8 KiB,
 * which goes into the current 64 KiB chunk when it has room, between other
 * records; then each interns a small key (after it) and, in turn, one of
 * them a key whose record takes as many pages but more bytes. A loser's
 * record inside a chunk owns its bytes, not the pages they lie on: handed
 * to that larger record as pages of its own, it would let it run over the
 * records after it. Every handle must RESOLVE to its content, in the kernel
 * and in the mapping, and LOOKUP must find it.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "harness.h"
#include "uniqd_map_test.h"

#define NPROC		3
#define ROUNDS		300
#define RACE_LEN	8185	/* a mapped record of 8200 bytes: 3 pages */
#define BIG_LEN		12280	/* 12288 bytes: the same 3 pages, all of them */
#define SMALL_LEN	1000
#define MAX_LEN		BIG_LEN

struct shared {
	int count, gen, failed, err;
	__u64 race[ROUNDS][NPROC];	/* each racer's handle of the round's key */
	__u64 small[ROUNDS][NPROC];
	__u64 big[ROUNDS];
};

/* The content of key @kind (0 race, 1 small, 2 big) of round @r, racer @p. */
static __u32 content(int kind, int r, int p, __u8 *buf)
{
	__u32 len = kind == 0 ? RACE_LEN : kind == 1 ? SMALL_LEN : BIG_LEN;
	__u32 s = (__u32)(kind * 1000003 + r * 131 + p * 7 + 1);

	for (__u32 i = 0; i < len; i++) {
		s = s * 1103515245 + 12345;
		buf[i] = (__u8)(s >> 16);
	}
	return len;
}

/* All NPROC processes meet here; returns when the last has come. */
static void meet(struct shared *sh)
{
	int gen = __atomic_load_n(&sh->gen, __ATOMIC_ACQUIRE);

	if (__atomic_add_fetch(&sh->count, 1, __ATOMIC_ACQ_REL) == NPROC) {
		__atomic_store_n(&sh->count, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&sh->gen, gen + 1, __ATOMIC_RELEASE);
	} else {
		while (__atomic_load_n(&sh->gen, __ATOMIC_ACQUIRE) == gen)
			sched_yield();
	}
}

static int racer(struct shared *sh, __u32 cls, int me)
{
	static __u8 buf[MAX_LEN];
	int fd = ut_pool("map-race-chunk", UNIQD_ATTACH_EXISTING);
	__u32 len;

	for (int r = 0; r < ROUNDS; r++) {
		meet(sh);
		if (fd < 0 || sh->failed)
			continue;
		len = content(0, r, 0, buf);
		if (ut_intern(fd, cls, buf, len, &sh->race[r][me], NULL))
			goto fail;
		meet(sh);
		len = content(1, r, me, buf);
		if (ut_intern(fd, cls, buf, len, &sh->small[r][me], NULL))
			goto fail;
		if (r % NPROC == me) {
			len = content(2, r, 0, buf);
			if (ut_intern(fd, cls, buf, len, &sh->big[r], NULL))
				goto fail;
		}
		continue;
fail:
		sh->err = errno;
		__atomic_store_n(&sh->failed, 1, __ATOMIC_RELEASE);
	}
	return fd < 0;
}

/* @h resolves to key (@kind, @r, @p), in the kernel and the mapping. */
static int check_key(int fd, const struct ut_map *m, __u32 cls, __u64 h,
		     int kind, int r, int p)
{
	static __u8 want[MAX_LEN], got[MAX_LEN];
	const struct uniqd_map_rec *mr;
	__u32 len = content(kind, r, p, want), glen = 0, gcls = 0;
	__u64 found = 0;

	if (!h || ut_resolve(fd, h, got, sizeof(got), &glen, &gcls) ||
	    glen != len || gcls != cls || memcmp(got, want, len))
		return 0;
	if (ut_lookup(fd, cls, want, len, &found, NULL) || found != h)
		return 0;
	mr = ut_map_rec(m, (__u32)h);
	return mr && mr->class_id == cls && mr->len == len &&
	       mr->idx == (__u32)h && !memcmp(mr->data, want, len);
}

int main(void)
{
	struct shared *sh;
	struct ut_map m;
	__u32 cls;
	int fd, ok = 1, bad = 0, first = -1;

	th_init("map_race_chunk");
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	fd = ut_pool("map-race-chunk", UNIQD_ATTACH_NEW);
	if (sh == MAP_FAILED || fd < 0)
		return 1;
	cls = ut_class(fd, "chunk");

	th_case("a loser's record inside a chunk is never reused by a larger one") {
		__u8 one = 1;

		CHECK(cls, "class");
		/* A small record first: the chunk exists from the start. */
		CHECK_OK(ut_intern(fd, cls, &one, 1, NULL, NULL));
		fflush(stdout);
		for (int i = 0; i < NPROC; i++) {
			pid_t pid = fork();

			if (!pid)
				_exit(racer(sh, cls, i));
			ok &= pid > 0;
		}
		for (int i = 0; i < NPROC; i++) {
			int ws = 0;

			ok &= wait(&ws) > 0 && WIFEXITED(ws) && !WEXITSTATUS(ws);
		}
		CHECK(ok, "a racer failed");
		CHECK(!sh->failed, "intern: %s", strerror(sh->err));
		CHECK_OK(ut_map(fd, &m));
		for (int r = 0; r < ROUNDS; r++) {
			int b = 0;

			for (int p = 0; p < NPROC; p++) {
				b += sh->race[r][p] != sh->race[r][0];
				b += !check_key(fd, &m, cls, sh->race[r][p], 0, r, 0);
				b += !check_key(fd, &m, cls, sh->small[r][p], 1, r, p);
			}
			b += !check_key(fd, &m, cls, sh->big[r], 2, r, 0);
			if (b && first < 0)
				first = r;
			bad += b;
		}
		CHECK(!bad, "%d handles wrong, first in round %d", bad, first);
		ut_unmap(&m);
	}
	close(fd);
	return th_finish();
}
