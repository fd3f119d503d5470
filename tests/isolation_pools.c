// SPDX-License-Identifier: GPL-2.0
/*
 * One user must not be able to take the module away from the others.
 *
 * max_pools bounds the pools that exist at once, for the whole machine, and
 * max_user_pools those one uid owns. A process of uid 1000 creates pools
 * (private, empty: one open file each) until ATTACH says EDQUOT, after
 * exactly max_user_pools of them, and keeps them; then another unprivileged
 * user (uid 2000) and root must still be able to create a pool of their own.
 *
 * Also measured, never judged: how fast pool identities go by when pools
 * are created and closed (they wrap like PIDs after 2^32 - 1, skipping
 * live ones, so this cannot exhaust them).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/resource.h>
#include <time.h>

#include "harness.h"
#include "uniqd_test.h"

struct hog_report {
	int pools;
	int err;
};

/* uid 1000: create pools until refused, report, then hold them until EOF. */
static void hog(int report_fd, int hold_fd)
{
	struct hog_report r = { 0, 0 };
	char name[64], x;

	if (setgroups(0, NULL) || setresgid(1000, 1000, 1000) ||
	    setresuid(1000, 1000, 1000))
		_exit(120);
	for (;;) {
		int fd = ut_open();

		if (fd < 0) {
			r.err = errno;
			break;
		}
		snprintf(name, sizeof(name), "uid1000-hog-%d", r.pools);
		if (ut_attach(fd, name, UNIQD_ATTACH_NEW)) {
			r.err = errno;
			close(fd);
			break;
		}
		r.pools++;
	}
	if (write(report_fd, &r, sizeof(r)) != sizeof(r))
		_exit(121);
	if (read(hold_fd, &x, 1) < 0)
		_exit(122);
	_exit(0);
}

static int create_one(void *arg)
{
	int fd = ut_open();

	if (fd < 0)
		return 10;
	if (ut_attach(fd, arg, UNIQD_ATTACH_NEW))
		return errno == ENOSPC ? 28 : 11;
	close(fd);
	return 0;
}

int main(void)
{
	struct hog_report r = { 0, 0 };
	int rep[2], hold[2], rc_other = -1, rc_root = -1, st;
	struct rlimit rl;
	pid_t pid;

	th_init("isolation_pools");

	th_case("uid 1000 holding every pool leaves another user one") {
		/* One file a pool: make room for max_pools of them. */
		if (!getrlimit(RLIMIT_NOFILE, &rl)) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
		CHECK_OK(pipe(rep));
		CHECK_OK(pipe(hold));
		fflush(stdout);
		pid = fork();
		if (!pid) {
			close(rep[0]);
			close(hold[1]);
			hog(rep[1], hold[0]);
		}
		close(rep[1]);
		close(hold[0]);
		CHECK(read(rep[0], &r, sizeof(r)) == sizeof(r), "no report from uid 1000");
		printf("# uid 1000 created %d pools, then %s\n", r.pools, strerror(r.err));
		CHECK(r.err == EDQUOT, "uid 1000 stopped on %s, not EDQUOT: "
		      "RLIMIT_NOFILE below max_user_pools?", strerror(r.err));
		CHECK(r.pools == ut_param("max_user_pools"),
		      "uid 1000 got %d pools, max_user_pools is %ld", r.pools,
		      ut_param("max_user_pools"));
		rc_other = ut_run_as(2000, 2000, 0, NULL, create_one, "uid2000-own-pool");
		rc_root = create_one("root-own-pool");
		printf("# then uid 2000 creating a pool: %s; root: %s\n",
		       rc_other == 0 ? "ok" : rc_other == 28 ? "ENOSPC" : "error",
		       rc_root == 0 ? "ok" : rc_root == 28 ? "ENOSPC" : "error");
		CHECK(rc_other == 0, "uid 2000 cannot create a pool while uid 1000 holds "
		      "%d (%s): one user exhausts max_pools for everyone", r.pools,
		      rc_other == 28 ? "ENOSPC" : "error");
		close(hold[1]);
		CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st),
		      "uid 1000 process: %#x", st);
		close(rep[0]);
	}

	th_case("pool identities used by create-and-close (measured)") {
		const char *scale = getenv("UNIQD_SCALE");
		int n = scale && !strcmp(scale, "full") ? 20000 : 2000, i, fd;
		__u64 first = 0, last = 0, h;
		double t0 = ut_now(), dt;

		for (i = 0; i < n; i++) {
			fd = ut_pool("id-burner", UNIQD_ATTACH_NEW);
			/* Ids only grow here: 2000 pools are far from a wrap. */
			if (fd < 0 || ut_class(fd, "c") != 1 || !(h = ut_s(fd, 1, "x"))) {
				CHECK(0, "pool %d: %s", i, strerror(errno));
				break;
			}
			if (i && (h >> 32) <= (last >> 32))
				CHECK(0, "pool id %llu after %llu", (unsigned long long)(h >> 32),
				      (unsigned long long)(last >> 32));
			if (!i)
				first = h;
			last = h;
			close(fd);
		}
		dt = ut_now() - t0;
		printf("# %d pools created and closed in %.2fs (ids %llu..%llu): "
		       "%.1f us each; all 2^32 - 1 ids at this rate: %.1f hours\n",
		       n, dt, (unsigned long long)(first >> 32),
		       (unsigned long long)(last >> 32), 1e6 * dt / n,
		       dt / n * 4294967295.0 / 3600);
	}

	return th_finish();
}
