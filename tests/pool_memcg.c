// SPDX-License-Identifier: GPL-2.0
/*
 * Pool memory is charged to the memory cgroup of the process that made the
 * pool grow, and stays charged while the pool lives; a process that runs
 * into its cgroup's limit gets ENOMEM (or is OOM-killed by its cgroup) and
 * the pool stays consistent: every reported handle resolves, and the byte
 * accounting has no leak.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "harness.h"
#include "uniqd_test.h"

#define KEY	65536

struct report {
	int count;
	int err;
	__u64 handle[4096];
};

/* Child: join @cg, intern @n distinct 64 KiB keys (or until an error). */
static void interner(const char *cg, const char *pool, int n,
		     struct report *r)
{
	static char key[KEY];
	int fd, i;
	__u32 cls;

	if (ut_cgroup_join(cg))
		_exit(20);
	fd = ut_pool(pool, UNIQD_ATTACH_EXISTING);
	cls = ut_class(fd, "blob");
	if (fd < 0 || !cls)
		_exit(21);
	for (i = 0; i < n; i++) {
		__u64 h;

		memset(key, 'a' + i % 26, sizeof(key));
		memcpy(key, &i, sizeof(i));
		if (ut_intern(fd, cls, key, sizeof(key), &h, NULL)) {
			r->err = errno;
			break;
		}
		r->handle[r->count++] = h;
	}
	_exit(0);
}

int main(void)
{
	struct report *r;
	struct uniqd_stats st;
	long long before, during, after;
	int fd, status, have_cg, i;
	pid_t pid;

	th_init("pool_memcg");
	r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	have_cg = ut_memcg_make("uniqd-charge", NULL) == 0 &&
		  ut_memcg_make("uniqd-limit", NULL) == 0;
	if (!have_cg) {
		th_skip("charged", "no cgroup2 memory controller in this kernel");
		th_skip("limit", "no cgroup2 memory controller in this kernel");
		return th_finish();
	}

	th_case("pool memory is charged to the cgroup that made it grow") {
		fd = ut_pool("memcg-charge", UNIQD_ATTACH_NEW);
		CHECK(fd >= 0, "attach: %s", strerror(errno));
		before = ut_read_ll(UT_CG "/uniqd-charge/memory.current");
		memset(r, 0, sizeof(*r));
		fflush(stdout);
		pid = fork();
		if (!pid)
			interner("uniqd-charge", "memcg-charge", 64, r);
		waitpid(pid, &status, 0);
		CHECK(WIFEXITED(status) && !WEXITSTATUS(status),
		      "child status %d", status);
		CHECK(r->count == 64 && !r->err, "interned %d: %s", r->count,
		      strerror(r->err));
		/* The child is gone; its 4 MiB of content stay charged. */
		during = ut_read_ll(UT_CG "/uniqd-charge/memory.current");
		CHECK(during - before >= 64LL * KEY, "charged %lld bytes",
		      during - before);
		close(fd);
		/* Freed with the pool (frees may uncharge lazily: allow 1 MiB). */
		after = ut_read_ll(UT_CG "/uniqd-charge/memory.current");
		CHECK(during - after >= 63LL * KEY, "after free: %lld -> %lld",
		      during, after);
		printf("# memory.current: %lld before, %lld with the pool, "
		       "%lld after\n", before, during, after);
	}

	th_case("running into the cgroup limit: ENOMEM or OOM kill, pool intact") {
		char limit[32];
		__u32 len = 0, cls = 0;
		static char out[KEY];

		fd = ut_pool("memcg-limit", UNIQD_ATTACH_NEW);
		CHECK(fd >= 0, "attach: %s", strerror(errno));
		CHECK(ut_class(fd, "blob") == 1, "class");
		snprintf(limit, sizeof(limit), "%lld",
			 ut_read_ll(UT_CG "/uniqd-limit/memory.current") + (8LL << 20));
		CHECK_OK(ut_write_file(UT_CG "/uniqd-limit/memory.max", limit));
		ut_write_file(UT_CG "/uniqd-limit/memory.swap.max", "0");
		memset(r, 0, sizeof(*r));
		fflush(stdout);
		pid = fork();
		if (!pid)
			interner("uniqd-limit", "memcg-limit", 4096, r);
		waitpid(pid, &status, 0);
		CHECK((WIFEXITED(status) && !WEXITSTATUS(status) &&
		       r->err == ENOMEM) ||
		      (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL),
		      "status %d, %d interned, errno %s", status, r->count,
		      strerror(r->err));
		CHECK(r->count > 0 && r->count < 4096, "interned %d", r->count);
		printf("# limit: %d keys of 64 KiB, then %s\n", r->count,
		       WIFSIGNALED(status) ? "OOM kill" : strerror(r->err));

		/* Every reported handle resolves to its content. */
		for (i = 0; i < r->count; i++) {
			char want[16];

			memset(want, 'a' + i % 26, sizeof(want));
			memcpy(want, &i, sizeof(i));
			CHECK_OK(ut_resolve(fd, r->handle[i], out, sizeof(out),
					    &len, &cls));
			CHECK(len == KEY && !memcmp(out, want, sizeof(want)),
			      "key %d", i);
		}
		/* No byte reserved by a failed call is left behind. */
		CHECK_OK(ut_stats(fd, &st));
		CHECK(st.entries >= (__u64)r->count &&
		      st.entries <= (__u64)r->count + 1, "entries %llu",
		      (unsigned long long)st.entries);
		CHECK(st.arena_bytes == ut_rec_size(4) + st.entries * ut_rec_size(KEY),
		      "arena_bytes %llu for %llu entries",
		      (unsigned long long)st.arena_bytes,
		      (unsigned long long)st.entries);
		CHECK(st.bytes == st.entries * KEY, "bytes %llu",
		      (unsigned long long)st.bytes);
		/* And the pool goes on working outside the limit. */
		CHECK(ut_s(fd, 1, "after"), "intern after: %s", strerror(errno));
		close(fd);
	}

	return th_finish();
}
