// SPDX-License-Identifier: GPL-2.0
/*
 * Module parameters: out-of-range values make insmod fail, and non-default
 * ones take effect (1 MiB keys with their DIGEST, a small per-user pool
 * quota, a small entry maximum); a runtime write out of range, one above
 * another parameter included (max_user_pools above max_pools), is refused
 * with EINVAL and keeps the old value. Runs last (after module_lifecycle,
 * tools/testing/vm/last-tests.txt): it reloads the module and leaves it
 * loaded with its defaults for the harness to unload.
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

/* Write @val to parameter @name as root does with echo: 0 or the errno. */
static int param_write(const char *name, const char *val)
{
	char path[128];
	ssize_t n;
	int fd, e;

	snprintf(path, sizeof(path), "/sys/module/uniqd/parameters/%s", name);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return errno;
	n = write(fd, val, strlen(val));
	e = n < 0 ? errno : n == (ssize_t)strlen(val) ? 0 : EIO;
	close(fd);
	return e;
}

/* Each write refused with EINVAL, and the parameter still @keep. */
static void refused(const char *name, const char *const *vals, long keep)
{
	int e;

	for (; *vals; vals++) {
		e = param_write(name, *vals);
		CHECK(e == EINVAL, "%s=%s: %s", name, *vals, e ? strerror(e) : "accepted");
		CHECK(ut_param(name) == keep, "%s=%s left %ld, was %ld", name, *vals,
		      ut_param(name), keep);
	}
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

	th_case("runtime writes out of range are refused, the value kept") {
		static const char *const pools_1024[] = { "1025", "65536", "0", NULL };
		static const char *const pools_3[] = { "4", "1024", NULL };
		static const char *const ubytes[] = { "4095", "1099511627777", "0", NULL };
		static const char *const uentries[] = { "0", "4294967297", NULL };

		/* Loaded above with max_pools at its default, 1024. */
		CHECK(ut_param("max_pools") == 1024, "max_pools %ld", ut_param("max_pools"));
		refused("max_user_pools", pools_1024, 2);
		CHECK(!param_write("max_user_pools", "1024"), "max_user_pools=1024 refused");
		CHECK(ut_param("max_user_pools") == 1024, "max_user_pools %ld",
		      ut_param("max_user_pools"));
		refused("max_user_bytes", ubytes, 256L << 20);
		CHECK(!param_write("max_user_bytes", "1099511627776"), "max_user_bytes=2^40");
		refused("max_user_entries", uentries, 1L << 21);
		CHECK(!param_write("max_user_entries", "4294967296"), "max_user_entries=2^32");

		CHECK(sh("rmmod uniqd") == 0, "rmmod failed");
		/* The default max_user_pools, 128, would not load with max_pools=3. */
		CHECK(sh("insmod /uniqd.ko max_pools=3 max_user_pools=2") == 0,
		      "insmod max_pools=3 max_user_pools=2");
		CHECK(ut_param("max_user_pools") == 2, "max_user_pools %ld",
		      ut_param("max_user_pools"));
		CHECK(!param_write("max_user_pools", "3"), "max_user_pools=3 refused");
		refused("max_user_pools", pools_3, 3);
		CHECK(!param_write("max_user_pools", "1"), "max_user_pools=1 refused");
		CHECK(ut_param("max_user_pools") == 1, "max_user_pools %ld",
		      ut_param("max_user_pools"));
		CHECK(sh("rmmod uniqd") == 0, "rmmod failed");
	}

	th_case("at load a bound by another parameter holds in any order") {
		/* max_user_pools before the max_pools that allows it. */
		CHECK(sh("insmod /uniqd.ko max_user_pools=2000 max_pools=4096") == 0,
		      "insmod max_user_pools=2000 max_pools=4096");
		CHECK(ut_param("max_user_pools") == 2000 && ut_param("max_pools") == 4096,
		      "max_user_pools %ld max_pools %ld", ut_param("max_user_pools"),
		      ut_param("max_pools"));
		CHECK(param_write("max_user_pools", "4097") == EINVAL, "4097 accepted");
		CHECK(!param_write("max_user_pools", "4096"), "4096 refused");
		CHECK(sh("rmmod uniqd") == 0, "rmmod failed");
		CHECK(sh("insmod /uniqd.ko max_user_pools=5 max_pools=4 2>/dev/null") != 0,
		      "max_user_pools=5 max_pools=4 loaded");
		CHECK(access(UNIQD_DEVICE_PATH, F_OK) != 0, "a refused load left the device");
	}

	th_case("reload with the defaults") {
		/* The cases above leave the module unloaded, unless they failed. */
		sh("rmmod uniqd 2>/dev/null");
		CHECK(sh("insmod /uniqd.ko") == 0, "insmod failed");
		CHECK(ut_param("max_key_len") == 65536, "max_key_len %ld", ut_param("max_key_len"));
	}

	free(data);
	free(back);
	return th_finish();
}
