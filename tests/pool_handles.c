// SPDX-License-Identifier: GPL-2.0
/*
 * Handles across pools: a handle of pool A is EXDEV in pool B, a pool's id
 * is never reused (so neither are its handles), and DIGEST is the same
 * content identity in every pool.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "uniqd_test.h"


static int digest(int fd, __u64 handle, __u8 out[UNIQD_DIGEST_SIZE])
{
	struct uniqd_digest d;
	int ret;

	memset(&d, 0, sizeof(d));
	d.handle = handle;
	ret = ioctl(fd, UNIQD_IOC_DIGEST, &d);
	memcpy(out, d.digest, UNIQD_DIGEST_SIZE);
	return ret;
}

int main(void)
{
	__u8 d1[UNIQD_DIGEST_SIZE], d2[UNIQD_DIGEST_SIZE], d3[UNIQD_DIGEST_SIZE];
	__u64 ha = 0, hb = 0, hold = 0, hnew = 0;
	__u32 len = 0, cls = 0;
	char buf[64];
	int fa, fb, fd;

	th_init("pool_handles");
	fa = ut_pool("handles-a", UNIQD_ATTACH_NEW);
	fb = ut_pool("handles-b", UNIQD_ATTACH_NEW);

	th_case("two pools, two handle spaces") {
		CHECK(fa >= 0 && fb >= 0, "attach: %s", strerror(errno));
		CHECK(ut_class(fa, "t") == 1 && ut_class(fb, "t") == 1, "class");
		ha = ut_s(fa, 1, "same");
		hb = ut_s(fb, 1, "same");
		CHECK(ha && hb && ha != hb, "ha %llx hb %llx",
		      (unsigned long long)ha, (unsigned long long)hb);
		CHECK_ERR(ut_resolve(fb, ha, buf, sizeof(buf), &len, &cls), EXDEV);
		CHECK_ERR(ut_resolve(fa, hb, buf, sizeof(buf), &len, &cls), EXDEV);
		CHECK_ERR(digest(fb, ha, d1), EXDEV);
		CHECK_OK(ut_resolve(fa, ha, buf, sizeof(buf), &len, &cls));
		CHECK(len == 4 && !memcmp(buf, "same", 4), "resolve");
	}

	th_case("a pool's id is never reused") {
		fd = ut_pool("handles-phoenix", UNIQD_ATTACH_NEW);
		CHECK(ut_class(fd, "t") == 1, "class");
		hold = ut_s(fd, 1, "ash");
		CHECK(hold, "intern");
		close(fd);
		fd = ut_pool("handles-phoenix", UNIQD_ATTACH_NEW);
		CHECK(fd >= 0, "re-create: %s", strerror(errno));
		CHECK(ut_class(fd, "t") == 1, "class");
		CHECK_ERR(ut_resolve(fd, hold, buf, sizeof(buf), &len, &cls), EXDEV);
		hnew = ut_s(fd, 1, "ash");
		CHECK(hnew && hnew != hold, "new handle %llx old %llx",
		      (unsigned long long)hnew, (unsigned long long)hold);
		close(fd);
	}

	th_case("DIGEST") {
		CHECK_OK(digest(fa, ha, d1));
		CHECK_OK(digest(fb, hb, d2));
		/* The same class name and content: the same digest anywhere. */
		CHECK(!memcmp(d1, d2, sizeof(d1)), "digests differ across pools");
		CHECK_OK(digest(fa, ha, d3));
		CHECK(!memcmp(d1, d3, sizeof(d1)), "not deterministic");
		/* Another class name: another digest. */
		CHECK(ut_class(fa, "u") == 2, "class u");
		CHECK_OK(digest(fa, ut_s(fa, 2, "same"), d3));
		CHECK(memcmp(d1, d3, sizeof(d1)), "class name not hashed");
		/* The name's length is hashed: "ab" + "c" is not "a" + "bc". */
		CHECK(ut_class(fa, "ab") == 3 && ut_class(fa, "a") == 4, "classes");
		CHECK_OK(digest(fa, ut_s(fa, 3, "c"), d1));
		CHECK_OK(digest(fa, ut_s(fa, 4, "bc"), d2));
		CHECK(memcmp(d1, d2, sizeof(d1)), "ab|c == a|bc");
		/* Exactly the documented encoding. */
		CHECK_OK(digest(fa, ha, d1));
		ut_expected_digest("t", "same", 4, d2);
		CHECK(!memcmp(d1, d2, sizeof(d1)), "t|same: not the BLAKE3 expected");
		CHECK_OK(digest(fa, ut_s(fa, 3, "c"), d1));
		ut_expected_digest("ab", "c", 1, d2);
		CHECK(!memcmp(d1, d2, sizeof(d1)), "ab|c: not the BLAKE3 expected");
		{
			__u64 he = 0;

			CHECK_OK(ut_intern(fa, 4, NULL, 0, &he, NULL));
			CHECK_OK(digest(fa, he, d1));
			ut_expected_digest("a", "", 0, d2);
			CHECK(!memcmp(d1, d2, sizeof(d1)), "a|empty");
		}
		/* Content longer than a BLAKE3 chunk (and the stack buffer). */
		{
			static char big[65536];
			__u64 hbig = 0;
			size_t i;

			for (i = 0; i < sizeof(big); i++)
				big[i] = (char)(i % 251);
			CHECK_OK(ut_intern(fa, 2, big, sizeof(big), &hbig, NULL));
			CHECK_OK(digest(fa, hbig, d1));
			ut_expected_digest("u", big, sizeof(big), d2);
			CHECK(!memcmp(d1, d2, sizeof(d1)), "u|64 KiB");
		}
		/* Errors. */
		CHECK_ERR(digest(fa, 0, d1), EXDEV);
		CHECK_ERR(digest(fa, (ha & ~0xffffffffULL) | 0xfffff, d1), ENOENT);
		CHECK_ERR(ioctl(fa, UNIQD_IOC_DIGEST, NULL), EFAULT);
	}

	close(fa);
	close(fb);
	return th_finish();
}
