// SPDX-License-Identifier: GPL-2.0
/*
 * ATTACH: creating and finding pools, its flags and errors, files that are
 * not attached, and the pool's life ending with its last file.
 */
#define _GNU_SOURCE
#include <sys/mman.h>

#include "harness.h"
#include "uniqd_test.h"

static void check_unattached(int fd)
{
	char buf[64];
	struct uniqd_class c = { .name = U64P("c"), .name_len = 1 };
	struct uniqd_key k = { .class_id = 1, .data = U64P(buf), .len = 1 };
	struct uniqd_batch b = { .keys = U64P(&k), .count = 1,
				 .key_size = sizeof(k) };
	struct uniqd_resolve r = { .handle = 1 };
	struct uniqd_digest d = { .handle = 1 };
	struct uniqd_stats st;
	struct uniqd_class_info ci = { .class_id = 1 };
	struct uniqd_version v;

	CHECK_ERR(ioctl(fd, UNIQD_IOC_CLASS, &c), EBADFD);
	CHECK_ERR(ioctl(fd, UNIQD_IOC_INTERN, &k), EBADFD);
	CHECK_ERR(ioctl(fd, UNIQD_IOC_LOOKUP, &k), EBADFD);
	CHECK_ERR(ioctl(fd, UNIQD_IOC_INTERN_BATCH, &b), EBADFD);
	CHECK_ERR(ioctl(fd, UNIQD_IOC_RESOLVE, &r), EBADFD);
	CHECK_ERR(ioctl(fd, UNIQD_IOC_DIGEST, &d), EBADFD);
	CHECK_ERR(ioctl(fd, UNIQD_IOC_STATS, &st), EBADFD);
	CHECK_ERR(ioctl(fd, UNIQD_IOC_CLASS_INFO, &ci), EBADFD);
	CHECK_OK(ioctl(fd, UNIQD_IOC_VERSION, &v));
}

int main(void)
{
	struct uniqd_attach a;
	struct uniqd_version v;
	struct uniqd_stats st;
	int fd, fd2, fd3;

	th_init("pool_attach");

	th_case("version features") {
		fd = ut_open();
		CHECK(fd >= 0, "open: %s", strerror(errno));
		CHECK_OK(ioctl(fd, UNIQD_IOC_VERSION, &v));
		CHECK((v.features & (UNIQD_FEAT_POOLS | UNIQD_FEAT_BATCH |
				     UNIQD_FEAT_RESOLVE | UNIQD_FEAT_STATS)) ==
		      (UNIQD_FEAT_POOLS | UNIQD_FEAT_BATCH |
		       UNIQD_FEAT_RESOLVE | UNIQD_FEAT_STATS),
		      "features %llx", (unsigned long long)v.features);
		CHECK(v.features & UNIQD_FEAT_BLAKE3_SHASH, "no blake3 feature");
		CHECK(v.max_key_len == 65536, "max_key_len %u", v.max_key_len);
		CHECK(v.max_batch == UNIQD_BATCH_MAX, "max_batch %u", v.max_batch);
		close(fd);
	}

	th_case("unattached file gets EBADFD") {
		fd = ut_open();
		check_unattached(fd);
		close(fd);
	}

	th_case("create then attach") {
		fd = ut_open();
		CHECK_OK(ut_attach_full(fd, "attach-1", 0, &a));
		CHECK(a.status == UNIQD_ATTACH_CREATED, "status %u", a.status);
		CHECK(a.owner_uid == 0, "owner %u", a.owner_uid);
		CHECK(a.mode == 0, "mode %u", a.mode);
		CHECK(a.max_bytes == 1ULL << 30, "max_bytes %llu",
		      (unsigned long long)a.max_bytes);
		CHECK(a.max_entries == 1ULL << 24, "max_entries %llu",
		      (unsigned long long)a.max_entries);
		CHECK(a.max_classes == 4096, "max_classes %u", a.max_classes);

		fd2 = ut_open();
		/* Sharing flags and limits only apply at creation. */
		memset(&a, 0, sizeof(a));
		a.name = U64P("attach-1");
		a.name_len = 8;
		a.flags = UNIQD_ATTACH_SHARE_ALL;
		a.max_entries = 5;
		CHECK_OK(ioctl(fd2, UNIQD_IOC_ATTACH, &a));
		CHECK(a.status == 0, "status %u", a.status);
		CHECK(a.mode == 0, "mode %u", a.mode);
		CHECK(a.max_entries == 1ULL << 24, "max_entries %llu",
		      (unsigned long long)a.max_entries);

		CHECK_OK(ut_stats(fd, &st));
		CHECK(st.attached == 2, "attached %u", st.attached);
		CHECK(st.max_entries == 1ULL << 24, "%llu",
		      (unsigned long long)st.max_entries);
		close(fd2);
		CHECK_OK(ut_stats(fd, &st));
		CHECK(st.attached == 1, "attached %u", st.attached);
		close(fd);
	}

	th_case("EXISTING and NEW") {
		fd = ut_open();
		fd2 = ut_open();
		fd3 = ut_open();
		CHECK_ERR(ut_attach(fd, "attach-2", UNIQD_ATTACH_EXISTING), ENOENT);
		CHECK_ERR(ut_attach(fd, "attach-2",
				    UNIQD_ATTACH_EXISTING | UNIQD_ATTACH_NEW), EINVAL);
		CHECK_OK(ut_attach_full(fd, "attach-2", UNIQD_ATTACH_NEW, &a));
		CHECK(a.status == UNIQD_ATTACH_CREATED, "status %u", a.status);
		CHECK_ERR(ut_attach(fd2, "attach-2", UNIQD_ATTACH_NEW), EEXIST);
		CHECK_OK(ut_attach_full(fd2, "attach-2", UNIQD_ATTACH_EXISTING, &a));
		CHECK(a.status == 0, "status %u", a.status);
		/* Names are bytes: a prefix is another pool. */
		CHECK_ERR(ut_attach(fd3, "attach-", UNIQD_ATTACH_EXISTING), ENOENT);
		close(fd);
		close(fd2);
		close(fd3);
	}

	th_case("ATTACH on an attached file gets EBUSY") {
		fd = ut_pool("attach-3", 0);
		CHECK(fd >= 0, "attach: %s", strerror(errno));
		CHECK_ERR(ut_attach(fd, "attach-3", 0), EBUSY);
		CHECK_ERR(ut_attach(fd, "attach-other", 0), EBUSY);
		CHECK_OK(ut_stats(fd, &st));
		CHECK(st.attached == 1, "attached %u", st.attached);
		close(fd);
	}

	th_case("bad arguments") {
		char longname[UNIQD_POOL_NAME_MAX + 2];

		fd = ut_open();
		memset(&a, 0, sizeof(a));
		a.name = U64P("x");
		a.name_len = 1;
		a.flags = (UNIQD_ATTACH_FLAGS << 1) & ~UNIQD_ATTACH_FLAGS;
		CHECK_ERR(ioctl(fd, UNIQD_IOC_ATTACH, &a), EINVAL);
		a.flags = ~0U;
		CHECK_ERR(ioctl(fd, UNIQD_IOC_ATTACH, &a), EINVAL);
		a.flags = 0;
		a.name_len = 0;
		CHECK_ERR(ioctl(fd, UNIQD_IOC_ATTACH, &a), EINVAL);
		memset(longname, 'n', sizeof(longname));
		a.name = U64P(longname);
		a.name_len = UNIQD_POOL_NAME_MAX + 1;
		CHECK_ERR(ioctl(fd, UNIQD_IOC_ATTACH, &a), ENAMETOOLONG);
		a.name_len = ~0U;
		CHECK_ERR(ioctl(fd, UNIQD_IOC_ATTACH, &a), ENAMETOOLONG);
		a.name = 0;
		a.name_len = 4;
		CHECK_ERR(ioctl(fd, UNIQD_IOC_ATTACH, &a), EFAULT);
		a.name = 0xffffffff81000000ULL;
		CHECK_ERR(ioctl(fd, UNIQD_IOC_ATTACH, &a), EFAULT);

		/* Limits above the module's maxima. */
		a.name = U64P("attach-4");
		a.name_len = 8;
		a.max_bytes = (1ULL << 30) + 1;
		CHECK_ERR(ioctl(fd, UNIQD_IOC_ATTACH, &a), EINVAL);
		a.max_bytes = 0;
		a.max_entries = (1ULL << 24) + 1;
		CHECK_ERR(ioctl(fd, UNIQD_IOC_ATTACH, &a), EINVAL);
		a.max_entries = 0;
		a.max_classes = 4097;
		CHECK_ERR(ioctl(fd, UNIQD_IOC_ATTACH, &a), EINVAL);
		a.max_classes = 0;

		/* None of that attached the file. */
		check_unattached(fd);

		/* The longest name works. */
		memset(longname, 'L', sizeof(longname));
		a.name = U64P(longname);
		a.name_len = UNIQD_POOL_NAME_MAX;
		CHECK_OK(ioctl(fd, UNIQD_IOC_ATTACH, &a));
		CHECK(a.status == UNIQD_ATTACH_CREATED, "status %u", a.status);
		close(fd);
	}

	th_case("binary names") {
		static const char n1[4] = { 'a', 0, 'b', 0 };
		static const char n2[4] = { 'a', 0, 'c', 0 };

		fd = ut_open();
		fd2 = ut_open();
		memset(&a, 0, sizeof(a));
		a.name = U64P(n1);
		a.name_len = 4;
		CHECK_OK(ioctl(fd, UNIQD_IOC_ATTACH, &a));
		CHECK(a.status == UNIQD_ATTACH_CREATED, "status %u", a.status);
		memset(&a, 0, sizeof(a));
		a.name = U64P(n2);
		a.name_len = 4;
		CHECK_OK(ioctl(fd2, UNIQD_IOC_ATTACH, &a));
		CHECK(a.status == UNIQD_ATTACH_CREATED, "status %u", a.status);
		close(fd);
		close(fd2);
	}

	th_case("ATTACH with an unwritable struct attaches nothing") {
		struct uniqd_attach *ro;

		ro = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		CHECK(ro != MAP_FAILED, "mmap");
		memset(ro, 0, sizeof(*ro));
		ro->name = U64P("attach-ro");
		ro->name_len = 9;
		mprotect(ro, 4096, PROT_READ);
		fd = ut_open();
		CHECK_ERR(ioctl(fd, UNIQD_IOC_ATTACH, ro), EFAULT);
		check_unattached(fd);
		CHECK_ERR(ut_attach(fd, "attach-ro", UNIQD_ATTACH_EXISTING), ENOENT);
		close(fd);
		munmap(ro, 4096);
	}

	th_case("the last close frees the pool") {
		fd = ut_pool("attach-5", UNIQD_ATTACH_NEW);
		CHECK(fd >= 0, "attach: %s", strerror(errno));
		fd2 = ut_pool("attach-5", UNIQD_ATTACH_EXISTING);
		CHECK(fd2 >= 0, "attach: %s", strerror(errno));
		close(fd);
		/* Still alive through fd2. */
		fd3 = ut_pool("attach-5", UNIQD_ATTACH_EXISTING);
		CHECK(fd3 >= 0, "attach: %s", strerror(errno));
		close(fd2);
		close(fd3);
		fd = ut_open();
		CHECK_ERR(ut_attach(fd, "attach-5", UNIQD_ATTACH_EXISTING), ENOENT);
		CHECK_OK(ut_attach_full(fd, "attach-5", UNIQD_ATTACH_NEW, &a));
		close(fd);
	}

	th_case("a dup or a fork shares the attachment") {
		pid_t pid;
		int status;

		fd = ut_pool("attach-6", 0);
		fd2 = dup(fd);
		CHECK_OK(ut_stats(fd2, &st));
		CHECK(st.attached == 1, "attached %u", st.attached);
		pid = fork();
		if (!pid) {
			struct uniqd_stats cst;

			_exit(ut_stats(fd, &cst) || cst.attached != 1);
		}
		waitpid(pid, &status, 0);
		CHECK(WIFEXITED(status) && !WEXITSTATUS(status), "child %d", status);
		close(fd);
		/* The struct file lives on in fd2. */
		fd = ut_open();
		CHECK_OK(ut_attach(fd, "attach-6", UNIQD_ATTACH_EXISTING));
		close(fd);
		close(fd2);
	}

	th_case("racing ATTACHes of one new name make one pool") {
		/*
		 * A new pool is allocated outside the registry mutex, then
		 * checked for again: of the processes that race to create
		 * a name, one creates it and every other attaches to it
		 * (Documentation/design.rst, Lifetimes).
		 */
		enum { PROCS = 6, ROUNDS = 40 };
		struct { int round, created; __u64 handle; } rec;
		int created[ROUNDS] = { 0 }, seen[ROUNDS] = { 0 };
		__u64 handle[ROUNDS] = { 0 };
		int out[2], hold[2], p, r, status, bad = 0;

		CHECK_OK(pipe(out));
		CHECK_OK(pipe(hold));
		for (p = 0; p < PROCS; p++) {
			fflush(stdout);
			if (fork())
				continue;
			close(out[0]);
			close(hold[1]);
			for (r = 0; r < ROUNDS; r++) {
				char name[32];
				struct uniqd_attach a;
				__u32 cls;
				int pfd = ut_open();

				snprintf(name, sizeof(name), "attach-race-%d", r);
				if (pfd < 0 || ut_attach_full(pfd, name, 0, &a))
					_exit(1);
				cls = ut_class(pfd, "c");
				rec.round = r;
				rec.created = a.status & UNIQD_ATTACH_CREATED;
				rec.handle = cls ? ut_s(pfd, cls, "same") : 0;
				if (write(out[1], &rec, sizeof(rec)) != sizeof(rec))
					_exit(2);
				/* pfd stays open: the pool lives until all are done. */
			}
			close(out[1]);	/* the parent reads to EOF */
			if (read(hold[0], &r, 1) < 0)
				_exit(3);
			_exit(0);
		}
		close(out[1]);
		close(hold[0]);
		/* To EOF: a child closes out[1] when done or dead. */
		for (int n = 0; n < PROCS * ROUNDS; n++) {
			if (read(out[0], &rec, sizeof(rec)) != sizeof(rec)) {
				bad++;
				break;
			}
			if (rec.round < 0 || rec.round >= ROUNDS || !rec.handle) {
				bad++;
				continue;
			}
			seen[rec.round]++;
			created[rec.round] += rec.created;
			if (!handle[rec.round])
				handle[rec.round] = rec.handle;
			else if (handle[rec.round] != rec.handle)
				bad++;
		}
		close(hold[1]);	/* the children exit, the pools go */
		for (p = 0; p < PROCS; p++) {
			wait(&status);
			CHECK(WIFEXITED(status) && !WEXITSTATUS(status),
			      "child status %#x", status);
		}
		close(out[0]);
		CHECK(!bad, "%d reports without a handle or with another pool's", bad);
		for (r = 0; r < ROUNDS; r++) {
			CHECK(seen[r] == PROCS, "round %d: %d reports", r, seen[r]);
			CHECK(created[r] == 1, "round %d: %d creators", r, created[r]);
		}
	}

	th_case("max_user_pools: EDQUOT; max_pools: ENOSPC; usable after a close") {
		long maxp = ut_param("max_pools"), maxu = ut_param("max_user_pools");
		int *fds = calloc(maxu > 0 ? maxu + 1 : 1, sizeof(int));
		int n = 0, i, last_errno = 0, total, hold[2], st;
		struct { int pools, err; } rep = { 0, 0 };
		uid_t uid;

		CHECK(maxp > 0 && maxu > 0 && maxu <= maxp, "params %ld %ld", maxp, maxu);
		/* No other pool is alive now: root gets exactly its share. */
		for (i = 0; maxu > 0 && i <= maxu; i++) {
			char name[32];

			snprintf(name, sizeof(name), "many-%d", i);
			fds[n] = ut_pool(name, UNIQD_ATTACH_NEW);
			if (fds[n] < 0) {
				last_errno = errno;
				break;
			}
			n++;
		}
		CHECK(n == maxu, "root created %d pools, max_user_pools %ld", n, maxu);
		CHECK(last_errno == EDQUOT, "errno %s", strerror(last_errno));

		/* Other owners fill the rest until the module's limit. */
		total = n;
		CHECK_OK(pipe(hold));
		for (uid = 3000; total < maxp && uid < 3000 + 1024; uid++) {
			int r[2];
			pid_t pid;

			if (pipe(r))
				break;
			fflush(stdout);
			pid = fork();
			if (!pid) {
				char c, name[48];

				close(r[0]);
				close(hold[1]);
				/* Root's pools must die when root closes them. */
				for (i = 0; i < n; i++)
					close(fds[i]);
				rep.pools = 0;
				if (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
				    setresuid(uid, uid, uid))
					_exit(120);
				for (;;) {
					int fd = ut_open();

					snprintf(name, sizeof(name), "many-%u-%d", uid, rep.pools);
					if (fd < 0 || ut_attach(fd, name, UNIQD_ATTACH_NEW)) {
						rep.err = errno;
						break;
					}
					rep.pools++;
				}
				if (write(r[1], &rep, sizeof(rep)) != sizeof(rep))
					_exit(121);
				if (read(hold[0], &c, 1) < 0)
					_exit(122);
				_exit(0);
			}
			close(r[1]);
			if (read(r[0], &rep, sizeof(rep)) != sizeof(rep))
				rep.err = -1;
			close(r[0]);
			total += rep.pools;
			if (rep.err != EDQUOT)
				break;
		}
		CHECK(total == maxp, "%d pools exist, max_pools %ld", total, maxp);
		CHECK(rep.err == ENOSPC, "the last owner stopped on %s", strerror(rep.err));

		/* Attaching to an existing pool still works. */
		fd = ut_pool("many-0", UNIQD_ATTACH_EXISTING);
		CHECK(fd >= 0, "attach existing: %s", strerror(errno));
		close(fd);
		/* Root is at its max_user_pools too: ENOSPC wins over EDQUOT. */
		CHECK(n == maxu, "root holds %d pools", n);
		CHECK_ERR(ut_pool("many-new", UNIQD_ATTACH_NEW), ENOSPC);
		close(fds[--n]);
		fd = ut_pool("many-new", UNIQD_ATTACH_NEW);
		CHECK(fd >= 0, "attach after a close: %s", strerror(errno));
		close(fd);
		while (n > 0)
			close(fds[--n]);
		close(hold[1]);
		while (wait(&st) > 0)
			CHECK(WIFEXITED(st) && !WEXITSTATUS(st), "owner process %#x", st);
		free(fds);
	}

	return th_finish();
}
