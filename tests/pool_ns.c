// SPDX-License-Identifier: GPL-2.0
/*
 * Pool names are scoped by ipc namespace, like SysV IPC keys: a container
 * with its own ipc namespace (CLONE_NEWIPC) never meets the host's pool of
 * the same name, and a descriptor passed across keeps its own pool.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/socket.h>

#include "harness.h"
#include "uniqd_test.h"

/* The handle's high half: the pool id. */
static __u32 pool_id_of(int fd)
{
	if (ut_class(fd, "c") != 1)
		return 0;
	return ut_s(fd, 1, "k") >> 32;
}

/* Child body in a new ipc namespace; writes its pool id to @wfd. */
static int in_new_ns(int wfd, const char *name, __u32 flags)
{
	__u32 id;
	int fd;

	if (unshare(CLONE_NEWIPC))
		return 20;
	/* The parent's pool is not there... */
	fd = ut_open();
	if (fd < 0)
		return 21;
	if (!ut_attach(fd, name, UNIQD_ATTACH_EXISTING))
		return 22;
	if (errno != ENOENT)
		return 23;
	close(fd);
	/* ...and the same name makes a second pool. */
	fd = ut_pool(name, flags);
	if (fd < 0)
		return 24;
	id = pool_id_of(fd);
	if (!id)
		return 25;
	if (write(wfd, &id, sizeof(id)) != sizeof(id))
		return 26;
	close(fd);
	return 0;
}

static int run_in_new_ns(const char *name, __u32 flags, __u32 *id)
{
	int p[2], st;
	pid_t pid;

	if (pipe(p))
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		close(p[0]);
		_exit(in_new_ns(p[1], name, flags));
	}
	close(p[1]);
	if (read(p[0], id, sizeof(*id)) != sizeof(*id))
		*id = 0;
	close(p[0]);
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Send @fd over @sock (SCM_RIGHTS). */
static int send_fd(int sock, int fd)
{
	char c = 0, cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { &c, 1 };
	struct msghdr m = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &m, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char c, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &c, 1 };
	struct msghdr m = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &m, 0) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&m);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/*
 * In a new ipc namespace as uid 1000: POOLS lists its own pool but not
 * @host_id, a SHARE_ALL pool of the host's namespace it could not attach
 * by name. 0 if so.
 */
static int list_in_new_ns(__u32 host_id)
{
	static struct uniqd_pool_status st[UNIQD_POOLS_MAX];
	struct uniqd_pools p;
	int fd, own, i, n, seen_own = 0;
	__u32 own_id;

	if (unshare(CLONE_NEWIPC))
		return 40;
	if (setresgid(1000, 1000, 1000) || setresuid(1000, 1000, 1000))
		return 41;
	own = ut_pool("ns-list-own", UNIQD_ATTACH_NEW);
	if (own < 0)
		return 42;
	own_id = pool_id_of(own);
	fd = ut_open();
	memset(&p, 0, sizeof(p));
	p.pools = U64P(st);
	p.count = UNIQD_POOLS_MAX;
	p.info_size = sizeof(st[0]);
	p.start_id = 1;
	if (fd < 0 || ioctl(fd, UNIQD_IOC_POOLS, &p))
		return 43;
	n = p.count;
	for (i = 0; i < n; i++) {
		if (st[i].id == host_id)
			return 44;
		if (st[i].id == own_id)
			seen_own = 1;
	}
	return seen_own ? 0 : 45;
}

/*
 * In a new ipc namespace: 0 if unshare(CLONE_NEWIPC) works, 1 if the
 * limit refuses it (ENOSPC), else another status.
 */
static int try_new_ns(void)
{
	int st;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (!pid)
		_exit(unshare(CLONE_NEWIPC) ? (errno == ENOSPC ? 1 : 2) : 0);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return 3;
	return WEXITSTATUS(st);
}

int main(void)
{
	__u32 id, child_id;
	int fd, fd2, rc;

	th_init("pool_ns");
	/* The debug test kernel has neither SYSVIPC nor POSIX_MQUEUE. */
	if (access("/proc/self/ns/ipc", F_OK)) {
		th_skip("all", "this kernel has no ipc namespaces (CONFIG_IPC_NS off, as in the debug test kernel): every pool is in one scope");
		return th_finish();
	}

	th_case("two ipc namespaces, one name, two pools") {
		fd = ut_pool("ns-same", UNIQD_ATTACH_NEW | UNIQD_ATTACH_SHARE_ALL);
		CHECK(fd >= 0, "attach: %s", strerror(errno));
		id = pool_id_of(fd);
		CHECK(id != 0, "pool id");
		rc = run_in_new_ns("ns-same", UNIQD_ATTACH_NEW, &child_id);
		CHECK(rc == 0, "child: %d", rc);
		CHECK(child_id && child_id != id, "child pool %u, ours %u",
		      child_id, id);
		/* Ours is untouched: one class, one entry. */
		{
			struct uniqd_stats st;

			CHECK_OK(ut_stats(fd, &st));
			CHECK(st.entries == 1 && st.attached == 1,
			      "entries %llu attached %u",
			      (unsigned long long)st.entries, st.attached);
		}
		close(fd);
	}

	th_case("the child's pool died with its namespace's last file") {
		/* Two children in two namespaces: neither finds the other's. */
		__u32 a = 0, b = 0;

		rc = run_in_new_ns("ns-other", UNIQD_ATTACH_NEW, &a);
		CHECK(rc == 0, "first: %d", rc);
		rc = run_in_new_ns("ns-other", UNIQD_ATTACH_NEW, &b);
		CHECK(rc == 0, "second: %d", rc);
		CHECK(a && b && a != b, "ids %u %u", a, b);
		fd = ut_open();
		CHECK_ERR(ut_attach(fd, "ns-other", UNIQD_ATTACH_EXISTING), ENOENT);
		close(fd);
	}

	th_case("a descriptor passed into another namespace keeps its pool") {
		int sv[2], st;
		pid_t pid;

		CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
		fd = ut_pool("ns-passed", UNIQD_ATTACH_NEW);
		CHECK(fd >= 0, "attach: %s", strerror(errno));
		id = pool_id_of(fd);
		fflush(stdout);
		pid = fork();
		if (!pid) {
			int got;

			close(sv[0]);
			if (unshare(CLONE_NEWIPC))
				_exit(30);
			got = recv_fd(sv[1]);
			if (got < 0)
				_exit(31);
			/* The passed file still interns into the host's pool. */
			if ((ut_s(got, 1, "k") >> 32) != id)
				_exit(32);
			/* The name is free here. */
			fd2 = ut_pool("ns-passed", UNIQD_ATTACH_NEW);
			if (fd2 < 0)
				_exit(33);
			_exit(pool_id_of(fd2) != id ? 0 : 34);
		}
		close(sv[1]);
		CHECK_OK(send_fd(sv[0], fd));
		CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
		      WEXITSTATUS(st) == 0, "child status %#x", st);
		close(sv[0]);
		close(fd);
	}

	th_case("POOLS lists only the caller's namespace (but to an admin)") {
		int st;
		pid_t pid;

		fd = ut_pool("ns-list", UNIQD_ATTACH_NEW | UNIQD_ATTACH_SHARE_ALL);
		CHECK(fd >= 0, "attach: %s", strerror(errno));
		id = pool_id_of(fd);
		fflush(stdout);
		pid = fork();
		if (!pid)
			_exit(list_in_new_ns(id));
		CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
		      WEXITSTATUS(st) == 0, "child status %#x", st);
		close(fd);
	}

	th_case("a pool pins its ipc namespace until it dies") {
		const char *max = "/proc/sys/user/max_ipc_namespaces";
		long long old = ut_read_ll(max);
		int sv[2], st, got = -1, r, tries;
		pid_t pid;

		CHECK(old > 0, "%s: %s", max, strerror(errno));
		/* Room for one more ipc namespace of root's, no more. */
		CHECK_OK(ut_write_file(max, "1"));
		/* Namespaces of the cases above are freed by a worker: wait. */
		for (tries = 0; (r = try_new_ns()) == 1 && tries < 100; tries++)
			usleep(20000);
		CHECK(r == 0, "no room for one namespace (%d): another is alive", r);
		CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
		fflush(stdout);
		pid = fork();
		if (!pid) {
			/* Its last process: the pool's file is all that is left. */
			close(sv[0]);
			/* try_new_ns()'s namespace may not be freed yet. */
			for (tries = 0; unshare(CLONE_NEWIPC); tries++) {
				if (errno != ENOSPC || tries == 100)
					_exit(50);
				usleep(20000);
			}
			fd = ut_pool("ns-pinned", UNIQD_ATTACH_NEW);
			if (fd < 0 || send_fd(sv[1], fd))
				_exit(51);
			_exit(0);
		}
		close(sv[1]);
		got = recv_fd(sv[0]);
		CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
		      WEXITSTATUS(st) == 0, "child status %#x", st);
		CHECK(got >= 0, "no pool file passed");
		/* The namespace lives on in the pool: no room for another. */
		CHECK(try_new_ns() == 1, "a second namespace fit: not pinned");
		/* The pool gone, the namespace goes too (freed from a worker). */
		if (got >= 0)
			close(got);
		for (tries = 0; (r = try_new_ns()) == 1 && tries < 100; tries++)
			usleep(20000);
		CHECK(r == 0, "namespace still counted after the pool: %d", r);
		close(sv[0]);
		if (old > 0) {
			char buf[32];

			snprintf(buf, sizeof(buf), "%lld", old);
			CHECK_OK(ut_write_file(max, buf));
		}
	}

	return th_finish();
}
