// SPDX-License-Identifier: GPL-2.0
/*
 * Who may attach: the owner (the creator's fsuid), the owner group for
 * SHARE_GROUP pools (in_group_p: fsgid or a supplementary group), everyone
 * for SHARE_ALL pools, and CAP_DAC_OVERRIDE only when the caller asks with
 * UNIQD_ATTACH_OVERRIDE; everyone else gets EACCES. UNIQD_ATTACH_OWNED
 * refuses (EPERM) a pool someone else owns, shared or not, root included.
 */
#define _GNU_SOURCE
#include <linux/capability.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>

#include "harness.h"
#include "uniqd_test.h"

static const gid_t build_group[] = { 2000 };

struct attach_arg {
	const char *name;
	__u32 flags;
	int want_errno;		/* 0: must attach */
	__u64 handle;		/* if non-zero: INTERN "shared" must give it */
};

/* Child body: 0 if the attach went as wanted. */
static int try_attach(void *p)
{
	struct attach_arg *arg = p;
	struct uniqd_attach a;
	int fd = ut_open();
	__u64 h;

	if (fd < 0)
		return 10;
	if (ut_attach_full(fd, arg->name, arg->flags, &a))
		return errno == arg->want_errno ? 0 : 11;
	if (arg->want_errno)
		return 12;
	if (arg->handle) {
		if (ut_intern(fd, 1, "shared", 6, &h, NULL) || h != arg->handle)
			return 13;
	}
	close(fd);
	return 0;
}

static int attach_as(uid_t uid, gid_t gid, int ngroups, const gid_t *groups,
		     const char *name, __u32 flags, int want_errno, __u64 handle)
{
	struct attach_arg arg = { name, flags, want_errno, handle };

	return ut_run_as(uid, gid, ngroups, groups, try_attach, &arg);
}

/* Root without CAP_DAC_OVERRIDE in its effective set. */
static int drop_dac_override(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data))
		return -1;
	data[0].effective &= ~(1U << CAP_DAC_OVERRIDE);
	return syscall(SYS_capset, &hdr, data);
}

static int try_attach_without_cap(void *p)
{
	if (drop_dac_override())
		return 14;
	return try_attach(p);
}

int main(void)
{
	struct uniqd_attach a;
	__u64 h = 0;
	int fd, fd2, rc;

	th_init("pool_access");

	th_case("a private pool refuses other users") {
		fd = ut_open();
		CHECK_OK(ut_attach_full(fd, "acc-private", 0, &a));
		CHECK(a.owner_uid == 0 && a.mode == 0, "owner %u mode %u",
		      a.owner_uid, a.mode);
		rc = attach_as(1000, 1000, 0, NULL, "acc-private", 0, EACCES, 0);
		CHECK(rc == 0, "uid 1000: %d", rc);
		rc = attach_as(1000, 1000, 1, build_group, "acc-private",
			       UNIQD_ATTACH_EXISTING, EACCES, 0);
		CHECK(rc == 0, "uid 1000 in build: %d", rc);
		/* Asking for sharing on attach changes nothing. */
		rc = attach_as(1000, 1000, 0, NULL, "acc-private",
			       UNIQD_ATTACH_SHARE_ALL, EACCES, 0);
		CHECK(rc == 0, "uid 1000 asking SHARE_ALL: %d", rc);
		close(fd);
	}

	th_case("SHARE_ALL admits everyone") {
		fd = ut_open();
		CHECK_OK(ut_attach_full(fd, "acc-all", UNIQD_ATTACH_SHARE_ALL, &a));
		CHECK(a.mode == UNIQD_ATTACH_SHARE_ALL, "mode %u", a.mode);
		CHECK(ut_class(fd, "c") == 1, "class");
		h = ut_s(fd, 1, "shared");
		rc = attach_as(1000, 1000, 0, NULL, "acc-all", 0, 0, h);
		CHECK(rc == 0, "uid 1000: %d", rc);
		rc = attach_as(4242, 4242, 0, NULL, "acc-all",
			       UNIQD_ATTACH_EXISTING, 0, h);
		CHECK(rc == 0, "uid 4242: %d", rc);
		rc = attach_as(1000, 1000, 0, NULL, "acc-all", UNIQD_ATTACH_NEW,
			       EEXIST, 0);
		CHECK(rc == 0, "NEW: %d", rc);
		close(fd);
	}

	th_case("SHARE_GROUP admits the owner group's members") {
		/* The pool's group is the creator's fsgid: 2000 here. */
		CHECK(setfsgid(2000) == 0, "setfsgid");
		fd = ut_open();
		CHECK_OK(ut_attach_full(fd, "acc-group",
					UNIQD_ATTACH_SHARE_GROUP, &a));
		setfsgid(0);
		CHECK(setfsgid(0) == 0, "fsgid restored");
		CHECK(a.mode == UNIQD_ATTACH_SHARE_GROUP, "mode %u", a.mode);
		CHECK(ut_class(fd, "c") == 1, "class");
		h = ut_s(fd, 1, "shared");
		/* A supplementary member. */
		rc = attach_as(1000, 1000, 1, build_group, "acc-group", 0, 0, h);
		CHECK(rc == 0, "uid 1000 in build: %d", rc);
		/* The group as primary gid. */
		rc = attach_as(3000, 2000, 0, NULL, "acc-group", 0, 0, h);
		CHECK(rc == 0, "gid 2000: %d", rc);
		/* Not a member. */
		rc = attach_as(1000, 1000, 0, NULL, "acc-group", 0, EACCES, 0);
		CHECK(rc == 0, "uid 1000 alone: %d", rc);
		close(fd);
	}

	th_case("a user's private pool: owner yes, others no, root only by asking") {
		/* Created with fsuid 1000: owned by user 1000. */
		CHECK(setfsuid(1000) == 0, "setfsuid");
		fd = ut_open();
		CHECK_OK(ut_attach_full(fd, "acc-user", 0, &a));
		setfsuid(0);
		CHECK(setfsuid(0) == 0, "fsuid restored");
		CHECK(a.owner_uid == 1000, "owner %u", a.owner_uid);
		CHECK(ut_class(fd, "c") == 1, "class");
		h = ut_s(fd, 1, "shared");
		rc = attach_as(1000, 1000, 0, NULL, "acc-user", 0, 0, h);
		CHECK(rc == 0, "owner: %d", rc);
		rc = attach_as(1001, 1000, 0, NULL, "acc-user", 0, EACCES, 0);
		CHECK(rc == 0, "uid 1001: %d", rc);
		/* Root: CAP_DAC_OVERRIDE is no implicit key to a user's pool... */
		rc = attach_as(0, 0, 0, NULL, "acc-user", UNIQD_ATTACH_EXISTING,
			       EACCES, 0);
		CHECK(rc == 0, "root without OVERRIDE: %d", rc);
		/* ...only when asked for, like for files. */
		fd2 = ut_pool("acc-user", UNIQD_ATTACH_EXISTING | UNIQD_ATTACH_OVERRIDE);
		CHECK(fd2 >= 0, "root with OVERRIDE: %s", strerror(errno));
		close(fd2);
		{
			struct attach_arg arg = { "acc-user", UNIQD_ATTACH_OVERRIDE,
						  EACCES, 0 };

			rc = ut_run_as(0, 0, 0, NULL, try_attach_without_cap, &arg);
			CHECK(rc == 0, "root without CAP_DAC_OVERRIDE: %d", rc);
		}
		/* OVERRIDE gives a user without the capability nothing. */
		rc = attach_as(1001, 1000, 0, NULL, "acc-user",
			       UNIQD_ATTACH_OVERRIDE, EACCES, 0);
		CHECK(rc == 0, "uid 1001 with OVERRIDE: %d", rc);
		close(fd);
	}

	th_case("OWNED: only a pool the caller owns") {
		/* A shared pool of uid 1000, which uid 1001 may join. */
		CHECK(setfsuid(1000) == 0, "setfsuid");
		fd = ut_open();
		CHECK_OK(ut_attach_full(fd, "acc-owned", UNIQD_ATTACH_SHARE_ALL, &a));
		setfsuid(0);
		CHECK(setfsuid(0) == 0, "fsuid restored");
		CHECK(ut_class(fd, "c") == 1, "class");
		h = ut_s(fd, 1, "shared");
		/* The owner: yes. */
		rc = attach_as(1000, 1000, 0, NULL, "acc-owned",
			       UNIQD_ATTACH_OWNED, 0, h);
		CHECK(rc == 0, "owner: %d", rc);
		/* Anyone else: EPERM, though the pool would admit them. */
		rc = attach_as(1001, 1001, 0, NULL, "acc-owned",
			       UNIQD_ATTACH_OWNED, EPERM, 0);
		CHECK(rc == 0, "uid 1001: %d", rc);
		rc = attach_as(0, 0, 0, NULL, "acc-owned",
			       UNIQD_ATTACH_OWNED | UNIQD_ATTACH_OVERRIDE, EPERM, 0);
		CHECK(rc == 0, "root: %d", rc);
		/* NEW is checked first; an absent name is created and ours. */
		rc = attach_as(1001, 1001, 0, NULL, "acc-owned",
			       UNIQD_ATTACH_OWNED | UNIQD_ATTACH_NEW, EEXIST, 0);
		CHECK(rc == 0, "NEW: %d", rc);
		close(fd);
		rc = attach_as(1001, 1001, 0, NULL, "acc-owned",
			       UNIQD_ATTACH_OWNED, 0, 0);
		CHECK(rc == 0, "absent: %d", rc);
	}

	th_case("VERSION announces OWNED and OVERRIDE") {
		struct uniqd_version v;

		fd = ut_open();
		memset(&v, 0, sizeof(v));
		CHECK_OK(ioctl(fd, UNIQD_IOC_VERSION, &v));
		CHECK(v.features & UNIQD_FEAT_ATTACH_OWNER, "features %llx",
		      (unsigned long long)v.features);
		close(fd);
	}

	th_case("users create their own pools") {
		rc = attach_as(1000, 1000, 0, NULL, "acc-made-by-1000",
			       UNIQD_ATTACH_NEW, 0, 0);
		CHECK(rc == 0, "create: %d", rc);
		/* The child's close freed it. */
		fd = ut_open();
		CHECK_ERR(ut_attach(fd, "acc-made-by-1000", UNIQD_ATTACH_EXISTING),
			  ENOENT);
		close(fd);
	}

	return th_finish();
}
