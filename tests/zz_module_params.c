// SPDX-License-Identifier: GPL-2.0
/*
 * Module parameters: out-of-range values make insmod fail, and non-default
 * ones take effect (1 MiB keys with their DIGEST, a small per-user pool
 * quota, a small entry maximum). Runs last: it reloads the module and
 * leaves it loaded with its defaults for the harness to unload.
 */
#define _GNU_SOURCE
#include <sys/wait.h>

#include "harness.h"
#include "uniqd_test.h"


static int sh(const char *cmd)
{
	int st = system(cmd);

	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

int main(void)
{
	const __u32 big = 1U << 20;
	__u8 want[UNIQD_DIGEST_SIZE];
	struct uniqd_version v;
	struct uniqd_attach a;
	struct uniqd_digest d;
	__u8 *data, *back;
	__u64 h = 0, h2 = 0;
	__u32 len = 0, cls;
	int fd, f1, f2, i;

	th_init("module_params");
	data = malloc(big);
	back = malloc(big);
	for (i = 0; i < (int)big; i++)
		data[i] = (__u8)(i * 131 + (i >> 9));

	th_case("unload with no file open") {
		CHECK(sh("rmmod uniqd") == 0, "rmmod failed");
	}

	th_case("out-of-range parameters are refused") {
		CHECK(sh("insmod /uniqd.ko max_pools=0 2>/dev/null") != 0, "max_pools=0 loaded");
		CHECK(sh("insmod /uniqd.ko max_pools=4 max_user_pools=5 2>/dev/null") != 0,
		      "max_user_pools > max_pools loaded");
		CHECK(sh("insmod /uniqd.ko max_key_len=2097152 2>/dev/null") != 0,
		      "max_key_len above UNIQD_KEY_MAX loaded");
		CHECK(sh("insmod /uniqd.ko max_pool_entries=0 2>/dev/null") != 0,
		      "max_pool_entries=0 loaded");
		CHECK(sh("insmod /uniqd.ko max_user_bytes=4095 2>/dev/null") != 0,
		      "max_user_bytes=4095 loaded");
		CHECK(sh("insmod /uniqd.ko max_user_entries=0 2>/dev/null") != 0,
		      "max_user_entries=0 loaded");
		CHECK(access(UNIQD_DEVICE_PATH, F_OK) != 0, "a refused load left the device");
	}

	th_case("non-default parameters take effect") {
		CHECK(sh("insmod /uniqd.ko max_key_len=1048576 max_user_pools=2 "
			 "max_pool_entries=1000") == 0, "insmod with parameters");
		CHECK(ut_param("max_key_len") == big, "max_key_len %ld", ut_param("max_key_len"));
		fd = ut_open();
		CHECK(fd >= 0 && !ioctl(fd, UNIQD_IOC_VERSION, &v), "VERSION: %s", strerror(errno));
		CHECK(v.max_key_len == big, "VERSION max_key_len %u", v.max_key_len);

		/* A key of the largest size: interned, resolved, digested. */
		CHECK_OK(ut_attach(fd, "params-big", 0));
		cls = ut_class(fd, "blob");
		CHECK(cls, "class: %s", strerror(errno));
		CHECK_OK(ut_intern(fd, cls, data, big, &h, NULL));
		CHECK_OK(ut_intern(fd, cls, data, big, &h2, NULL));
		CHECK(h && h == h2, "1 MiB key: %#llx then %#llx", (unsigned long long)h,
		      (unsigned long long)h2);
		CHECK_OK(ut_resolve(fd, h, back, big, &len, NULL));
		CHECK(len == big && !memcmp(back, data, big), "RESOLVE of 1 MiB differs");
		memset(&d, 0, sizeof(d));
		d.handle = h;
		CHECK_OK(ioctl(fd, UNIQD_IOC_DIGEST, &d));
		ut_expected_digest("blob", data, big, want);
		CHECK(!memcmp(d.digest, want, sizeof(want)), "DIGEST of 1 MiB differs");
		CHECK_ERR(ut_intern(fd, cls, data, big + 1, &h, NULL), EMSGSIZE);

		/* max_pool_entries is the largest max_entries a pool may ask for. */
		f1 = ut_open();
		memset(&a, 0, sizeof(a));
		a.name = U64P("params-entries");
		a.name_len = strlen("params-entries");
		a.max_entries = 1001;
		CHECK_ERR(ioctl(f1, UNIQD_IOC_ATTACH, &a), EINVAL);
		a.max_entries = 0;
		CHECK_OK(ioctl(f1, UNIQD_IOC_ATTACH, &a));
		CHECK(a.max_entries == 1000, "default max_entries %llu",
		      (unsigned long long)a.max_entries);

		/* Root owns params-big and params-entries: two of two. */
		f2 = ut_pool("params-third", UNIQD_ATTACH_NEW);
		CHECK(f2 < 0 && errno == EDQUOT, "third pool: %s", f2 < 0 ? strerror(errno) : "created");
		if (f2 >= 0)
			close(f2);
		close(f1);
		f2 = ut_pool("params-third", UNIQD_ATTACH_NEW);
		CHECK(f2 >= 0, "after a close: %s", strerror(errno));
		close(f2);
		close(fd);
	}

	th_case("reload with the defaults") {
		CHECK(sh("rmmod uniqd") == 0, "rmmod failed");
		CHECK(sh("insmod /uniqd.ko") == 0, "insmod failed");
		CHECK(ut_param("max_key_len") == 65536, "max_key_len %ld", ut_param("max_key_len"));
	}

	free(data);
	free(back);
	return th_finish();
}
