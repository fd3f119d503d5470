// SPDX-License-Identifier: GPL-2.0
/*
 * Processes that race to create the same large keys, in lockstep, until
 * the pool's max_bytes stops them: a loser's mapped record (of pages of its
 * own above 8 KiB, never given back) must stay counted against max_bytes,
 * so the pool fills with EDQUOT, never ENOMEM from a full records region,
 * and STATS.arena_bytes covers the records region's use.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "harness.h"
#include "uniqd_map_test.h"

#define NPROC		4
#define KEY_LEN		8185	/* a mapped record of 8208 bytes: 3 pages */
#define MAX_BYTES	(2U << 20)
#define MAX_ROUNDS	4000

struct shared {
	int count, gen, stop, go;
	int rounds, created, edquot, enomem, other, other_errno;
};

/*
 * All NPROC processes meet here before each round; the last to come
 * decides for all whether the round runs (no one has asked to stop), so
 * that all leave at the same round.
 */
static int meet(struct shared *sh)
{
	int gen = __atomic_load_n(&sh->gen, __ATOMIC_ACQUIRE);

	if (__atomic_add_fetch(&sh->count, 1, __ATOMIC_ACQ_REL) == NPROC) {
		__atomic_store_n(&sh->count, 0, __ATOMIC_RELAXED);
		sh->go = !__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE);
		__atomic_store_n(&sh->gen, gen + 1, __ATOMIC_RELEASE);
	} else {
		while (__atomic_load_n(&sh->gen, __ATOMIC_ACQUIRE) == gen)
			sched_yield();
	}
	return sh->go;
}

static int racer(struct shared *sh, int me)
{
	static char key[KEY_LEN];
	int fd = ut_pool("map-race-bytes", UNIQD_ATTACH_EXISTING);
	__u32 cls = fd >= 0 ? ut_class(fd, "big") : 0;

	for (int r = 0; r < MAX_ROUNDS; r++) {
		__u32 status = 0;

		if (!meet(sh))
			break;
		if (!me)
			sh->rounds = r + 1;
		memset(key, 'a' + r % 26, sizeof(key));
		snprintf(key, 16, "%d", r);
		if (!cls || ut_intern(fd, cls, key, sizeof(key), NULL, &status)) {
			int e = cls ? errno : EBADF;

			__atomic_add_fetch(e == EDQUOT ? &sh->edquot :
					   e == ENOMEM ? &sh->enomem : &sh->other,
					   1, __ATOMIC_RELAXED);
			if (e != EDQUOT && e != ENOMEM)
				sh->other_errno = e;
			__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
		} else if (status & UNIQD_STATUS_NEW) {
			__atomic_add_fetch(&sh->created, 1, __ATOMIC_RELAXED);
		}
	}
	return 0;
}

int main(void)
{
	struct shared *sh;
	struct uniqd_attach a;
	struct uniqd_stats st;
	struct ut_map m;
	int fd, ok = 1;

	th_init("map_race_bytes");
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	fd = ut_open();
	if (sh == MAP_FAILED || fd < 0)
		return 1;
	memset(&a, 0, sizeof(a));
	a.name = U64P("map-race-bytes");
	a.name_len = strlen("map-race-bytes");
	a.flags = UNIQD_ATTACH_NEW;
	a.max_bytes = MAX_BYTES;

	th_case("racing creators of large keys fill max_bytes: EDQUOT, never ENOMEM") {
		__u64 rec, named, kept, region;

		CHECK_OK(ioctl(fd, UNIQD_IOC_ATTACH, &a));
		CHECK(ut_class(fd, "big"), "class");
		fflush(stdout);
		for (int i = 0; i < NPROC; i++) {
			pid_t pid = fork();

			if (!pid)
				_exit(racer(sh, i));
			ok &= pid > 0;
		}
		for (int i = 0; i < NPROC; i++) {
			int ws = 0;

			ok &= wait(&ws) > 0 && WIFEXITED(ws) && !WEXITSTATUS(ws);
		}
		CHECK(ok, "a racer failed");
		CHECK_OK(ut_stats(fd, &st));
		CHECK_OK(ut_map(fd, &m));
		rec = ut_rec_size(KEY_LEN);
		named = ut_rec_size(3);
		kept = st.arena_bytes - named - st.entries * rec;
		region = m.h ? m.h->records_end - m.h->records_off : 0;
		printf("# %d rounds, %d created, %llu entries, %d EDQUOT, %d ENOMEM, "
		       "%llu losers' records still counted, records region %llu of %llu bytes\n",
		       sh->rounds, sh->created, (unsigned long long)st.entries,
		       sh->edquot, sh->enomem, (unsigned long long)(kept / rec),
		       (unsigned long long)region,
		       (unsigned long long)(m.h ? m.h->records_size : 0));
		CHECK(!sh->enomem, "%d ENOMEM", sh->enomem);
		CHECK(!sh->other, "%d other errors (%s)", sh->other,
		      strerror(sh->other_errno));
		CHECK(sh->edquot > 0, "max_bytes never reached in %d rounds", sh->rounds);
		CHECK(st.entries == (__u64)sh->created, "%llu entries, %d created",
		      (unsigned long long)st.entries, sh->created);
		CHECK(st.arena_bytes <= st.max_bytes && st.arena_bytes >= named + st.entries * rec,
		      "arena_bytes %llu", (unsigned long long)st.arena_bytes);
		/* What the records region holds is what max_bytes counted. */
		CHECK(region <= 2 * st.arena_bytes + (64 << 10),
		      "records take %llu bytes for %llu counted",
		      (unsigned long long)region, (unsigned long long)st.arena_bytes);
		ut_unmap(&m);
	}
	close(fd);
	return th_finish();
}
