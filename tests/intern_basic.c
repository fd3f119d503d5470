// SPDX-License-Identifier: GPL-2.0
/*
 * CLASS, INTERN, LOOKUP, RESOLVE, CLASS_INFO and STATS in one process: the
 * success paths and every errno of each.
 */
#define _GNU_SOURCE
#include <sys/mman.h>

#include "harness.h"
#include "uniqd_test.h"

int main(void)
{
	__u32 c1 = 0, c2 = 0, id = 0, status = 0, len = 0, cls = 0;
	__u64 h1 = 0, h2 = 0, h3 = 0, h = 0;
	struct uniqd_stats st, st2;
	char buf[512];
	int fd;

	th_init("intern_basic");
	fd = ut_pool("intern-basic", UNIQD_ATTACH_NEW);
	th_case("attach") {
		CHECK(fd >= 0, "attach: %s", strerror(errno));
	}
	if (fd < 0)
		return th_finish();

	th_case("CLASS registers dense ids from 1") {
		CHECK_OK(ut_class_full(fd, "type", 0, &c1, &status));
		CHECK(c1 == 1, "id %u", c1);
		CHECK(status == UNIQD_STATUS_NEW, "status %u", status);
		CHECK_OK(ut_class_full(fd, "attr", 0, &c2, &status));
		CHECK(c2 == 2, "id %u", c2);
		CHECK(status == UNIQD_STATUS_NEW, "status %u", status);
		CHECK_OK(ut_class_full(fd, "type", 0, &id, &status));
		CHECK(id == c1 && status == 0, "id %u status %u", id, status);
		CHECK_OK(ut_class_full(fd, "attr", UNIQD_CLASS_EXISTING, &id, &status));
		CHECK(id == c2 && status == 0, "id %u status %u", id, status);
		CHECK_ERR(ut_class_full(fd, "loc", UNIQD_CLASS_EXISTING, &id, NULL),
			  ENOENT);
		/* EXISTING did not register it: the next new class is 3. */
		CHECK_OK(ut_class_full(fd, "loc", 0, &id, &status));
		CHECK(id == 3 && status == UNIQD_STATUS_NEW, "id %u", id);
	}

	th_case("CLASS errors") {
		struct uniqd_class c;
		char longname[UNIQD_CLASS_NAME_MAX + 1];

		memset(&c, 0, sizeof(c));
		c.name = U64P("x");
		c.name_len = 1;
		c.flags = 2;
		CHECK_ERR(ioctl(fd, UNIQD_IOC_CLASS, &c), EINVAL);
		c.flags = 0;
		c.name_len = 0;
		CHECK_ERR(ioctl(fd, UNIQD_IOC_CLASS, &c), EINVAL);
		memset(longname, 'c', sizeof(longname));
		c.name = U64P(longname);
		c.name_len = UNIQD_CLASS_NAME_MAX + 1;
		CHECK_ERR(ioctl(fd, UNIQD_IOC_CLASS, &c), ENAMETOOLONG);
		c.name_len = UNIQD_CLASS_NAME_MAX;
		CHECK_OK(ioctl(fd, UNIQD_IOC_CLASS, &c));
		CHECK(c.class_id == 4, "id %u", c.class_id);
		c.name = 0;
		c.name_len = 3;
		CHECK_ERR(ioctl(fd, UNIQD_IOC_CLASS, &c), EFAULT);
		c.name = 0x8000000000000000ULL;
		CHECK_ERR(ioctl(fd, UNIQD_IOC_CLASS, &c), EFAULT);
	}

	th_case("INTERN: equal content, equal handle") {
		__u32 s1 = 9, s2 = 9;

		CHECK_OK(ut_intern(fd, c1, "i32", 3, &h1, &s1));
		CHECK(h1 != 0, "handle 0");
		CHECK(s1 == UNIQD_STATUS_NEW, "status %u", s1);
		CHECK_OK(ut_intern(fd, c1, "i32", 3, &h2, &s2));
		CHECK(h2 == h1, "%llx != %llx", (unsigned long long)h2,
		      (unsigned long long)h1);
		CHECK(s2 == 0, "status %u", s2);
		/* Different content, or another class: another handle. */
		CHECK_OK(ut_intern(fd, c1, "i64", 3, &h3, NULL));
		CHECK(h3 != h1 && h3 != 0, "h3 %llx", (unsigned long long)h3);
		CHECK_OK(ut_intern(fd, c2, "i32", 3, &h, &s1));
		CHECK(h != h1 && h != h3 && h != 0, "h %llx", (unsigned long long)h);
		CHECK(s1 == UNIQD_STATUS_NEW, "status %u", s1);
		/* A prefix is another key. */
		CHECK_OK(ut_intern(fd, c1, "i3", 2, &h, &s1));
		CHECK(h != h1 && s1 == UNIQD_STATUS_NEW, "prefix");
	}

	th_case("INTERN: empty and binary content") {
		static const char bin[5] = { 0, 1, 0, 2, 0 };
		__u64 e1, e2, b1, b2;

		CHECK_OK(ut_intern(fd, c1, NULL, 0, &e1, &status));
		CHECK(e1 != 0 && status == UNIQD_STATUS_NEW, "empty");
		CHECK_OK(ut_intern(fd, c1, "ignored", 0, &e2, &status));
		CHECK(e2 == e1 && status == 0, "empty again");
		CHECK_OK(ut_intern(fd, c1, bin, 5, &b1, NULL));
		CHECK_OK(ut_intern(fd, c1, bin, 4, &b2, NULL));
		CHECK(b1 != b2, "binary prefix");
		CHECK_OK(ut_resolve(fd, b1, buf, sizeof(buf), &len, &cls));
		CHECK(len == 5 && !memcmp(buf, bin, 5), "resolve binary");
		CHECK_OK(ut_resolve(fd, e1, buf, sizeof(buf), &len, &cls));
		CHECK(len == 0 && cls == c1, "resolve empty: %u %u", len, cls);
	}

	th_case("INTERN: large keys up to max_key_len") {
		static char big[65536 + 1];
		__u64 hb, hb2;
		__u32 i;

		for (i = 0; i < sizeof(big); i++)
			big[i] = (char)(i * 7 + i / 251);
		CHECK_OK(ut_intern(fd, c2, big, 65536, &hb, &status));
		CHECK(status == UNIQD_STATUS_NEW, "status %u", status);
		CHECK_OK(ut_intern(fd, c2, big, 65536, &hb2, &status));
		CHECK(hb2 == hb && status == 0, "again");
		CHECK_OK(ut_intern(fd, c2, big, 257, &hb2, &status));
		CHECK(hb2 != hb && status == UNIQD_STATUS_NEW, "257");
		CHECK_ERR(ut_intern(fd, c2, big, 65537, &hb2, NULL), EMSGSIZE);
		CHECK_ERR(ut_lookup(fd, c2, big, 65537, &hb2, NULL), EMSGSIZE);
		CHECK_ERR(ut_intern(fd, c2, big, ~0U, &hb2, NULL), EMSGSIZE);
		{
			static char out[65536];

			CHECK_OK(ut_resolve(fd, hb, out, sizeof(out), &len, &cls));
			CHECK(len == 65536 && cls == c2 &&
			      !memcmp(out, big, 65536), "resolve big");
		}
	}

	th_case("INTERN errors") {
		struct uniqd_key k;

		CHECK_ERR(ut_intern(fd, 0, "a", 1, &h, NULL), EBADSLT);
		CHECK_ERR(ut_intern(fd, 99, "a", 1, &h, NULL), EBADSLT);
		CHECK_ERR(ut_intern(fd, ~0U, "a", 1, &h, NULL), EBADSLT);
		CHECK_ERR(ut_lookup(fd, 99, "a", 1, &h, NULL), EBADSLT);
		CHECK_ERR(ut_intern(fd, c1, NULL, 1, &h, NULL), EFAULT);
		CHECK_ERR(ut_intern(fd, c1, (void *)0xffffffff81000000UL, 8, &h,
				    NULL), EFAULT);
		CHECK_ERR(ut_lookup(fd, c1, NULL, 300, &h, NULL), EFAULT);
		memset(&k, 0, sizeof(k));
		k.class_id = c1;
		k.data = U64P("a");
		k.len = 1;
		k.flags = 1;
		CHECK_ERR(ioctl(fd, UNIQD_IOC_INTERN, &k), EINVAL);
		CHECK_ERR(ioctl(fd, UNIQD_IOC_LOOKUP, &k), EINVAL);
		k.flags = 0x80000000;
		CHECK_ERR(ioctl(fd, UNIQD_IOC_INTERN, &k), EINVAL);
		/* Out fields carry nothing in. */
		k.flags = 0;
		k.status = ~0U;
		k.handle = ~0ULL;
		CHECK_OK(ioctl(fd, UNIQD_IOC_INTERN, &k));
		CHECK(k.handle != ~0ULL && k.handle != 0, "handle");
		/* Extensible struct: a zero tail is fine, a non-zero one is not. */
		{
			struct { struct uniqd_key k; __u64 more; } big;

			memset(&big, 0, sizeof(big));
			big.k = k;
			CHECK_OK(ioctl(fd, _IOWR(UNIQD_IOC_MAGIC, 0x03, big), &big));
			CHECK(big.k.handle == k.handle, "bigger struct");
			big.more = 1;
			CHECK_ERR(ioctl(fd, _IOWR(UNIQD_IOC_MAGIC, 0x03, big), &big),
				  E2BIG);
			CHECK_ERR(ioctl(fd, _IOWR(UNIQD_IOC_MAGIC, 0x03, __u64), &big),
				  EINVAL);
			CHECK_ERR(ioctl(fd, _IOR(UNIQD_IOC_MAGIC, 0x03,
						 struct uniqd_key), &big), ENOTTY);
		}
		CHECK_ERR(ioctl(fd, UNIQD_IOC_INTERN, NULL), EFAULT);
		CHECK_ERR(ioctl(fd, UNIQD_IOC_LOOKUP, (void *)8), EFAULT);
	}

	th_case("LOOKUP finds and never creates") {
		CHECK_OK(ut_stats(fd, &st));
		CHECK_OK(ut_lookup(fd, c1, "i32", 3, &h, &status));
		CHECK(h == h1 && status == 0, "lookup i32");
		CHECK_ERR(ut_lookup(fd, c1, "never", 5, &h, NULL), ENOENT);
		CHECK_ERR(ut_lookup(fd, c1, "never", 5, &h, NULL), ENOENT);
		CHECK_OK(ut_stats(fd, &st2));
		CHECK(st2.entries == st.entries, "entries %llu -> %llu",
		      (unsigned long long)st.entries,
		      (unsigned long long)st2.entries);
		CHECK(st2.hits == st.hits + 1, "hits %llu -> %llu",
		      (unsigned long long)st.hits, (unsigned long long)st2.hits);
		CHECK(st2.misses == st.misses + 2, "misses %llu -> %llu",
		      (unsigned long long)st.misses,
		      (unsigned long long)st2.misses);
		CHECK(st2.arena_bytes == st.arena_bytes, "arena");
		CHECK_OK(ut_intern(fd, c1, "never", 5, &h, &status));
		CHECK(status == UNIQD_STATUS_NEW, "interned now");
		CHECK_OK(ut_lookup(fd, c1, "never", 5, &h2, NULL));
		CHECK(h2 == h, "lookup after intern");
	}

	th_case("RESOLVE") {
		memset(buf, 0, sizeof(buf));
		CHECK_OK(ut_resolve(fd, h1, buf, sizeof(buf), &len, &cls));
		CHECK(len == 3 && cls == c1 && !memcmp(buf, "i32", 3),
		      "len %u cls %u", len, cls);
		/* Only the length. */
		CHECK_OK(ut_resolve(fd, h1, NULL, 0, &len, &cls));
		CHECK(len == 3 && cls == c1, "len %u", len);
		/* Exactly big enough. */
		CHECK_OK(ut_resolve(fd, h1, buf, 3, &len, &cls));
		/* Too short: ERANGE, and the length needed. */
		len = 0;
		CHECK_ERR(ut_resolve(fd, h1, buf, 2, &len, &cls), ERANGE);
		CHECK(len == 3 && cls == c1, "len %u cls %u", len, cls);
		CHECK_ERR(ut_resolve(fd, h1, NULL, 3, &len, &cls), EFAULT);
		{
			void *ro = mmap(NULL, 4096, PROT_READ,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			CHECK_ERR(ut_resolve(fd, h1, ro, 16, &len, &cls), EFAULT);
			munmap(ro, 4096);
		}
	}

	th_case("RESOLVE errors: foreign, forged, reserved") {
		struct uniqd_resolve r;
		__u64 pool_bits = h1 & 0xffffffff00000000ULL;

		CHECK_ERR(ut_resolve(fd, 0, buf, sizeof(buf), &len, &cls), EXDEV);
		CHECK_ERR(ut_resolve(fd, h1 ^ (1ULL << 32), buf, sizeof(buf),
				     &len, &cls), EXDEV);
		CHECK_ERR(ut_resolve(fd, h1 | 0xffffffff00000000ULL, buf,
				     sizeof(buf), &len, &cls), EXDEV);
		CHECK_ERR(ut_resolve(fd, pool_bits, buf, sizeof(buf), &len, &cls),
			  ENOENT);
		CHECK_ERR(ut_resolve(fd, pool_bits | 0x7fffffff, buf, sizeof(buf),
				     &len, &cls), ENOENT);
		CHECK_ERR(ut_resolve(fd, pool_bits | 0xffffffff, buf, sizeof(buf),
				     &len, &cls), ENOENT);
		CHECK_ERR(ut_resolve(fd, pool_bits | 100000, buf, sizeof(buf),
				     &len, &cls), ENOENT);
		memset(&r, 0, sizeof(r));
		r.handle = h1;
		r.reserved = 1;
		CHECK_ERR(ioctl(fd, UNIQD_IOC_RESOLVE, &r), EINVAL);
	}

	th_case("every handle of the pool resolves to its own content") {
		char word[32], out[32];
		__u64 hs[300];
		int i, bad = 0;

		for (i = 0; i < 300; i++) {
			snprintf(word, sizeof(word), "word-%d", i);
			hs[i] = ut_s(fd, c2, word);
			if (!hs[i])
				bad++;
		}
		CHECK(!bad, "%d failed", bad);
		for (i = 0; i < 300; i++) {
			snprintf(word, sizeof(word), "word-%d", i);
			if (ut_resolve(fd, hs[i], out, sizeof(out), &len, &cls) ||
			    len != strlen(word) || memcmp(out, word, len) ||
			    cls != c2)
				bad++;
		}
		CHECK(!bad, "%d mismatches", bad);
	}

	th_case("CLASS_INFO") {
		struct uniqd_class_info ci;
		char name[16];

		memset(&ci, 0, sizeof(ci));
		memset(name, 0, sizeof(name));
		ci.class_id = c1;
		ci.name = U64P(name);
		ci.name_buf_len = sizeof(name);
		CHECK_OK(ioctl(fd, UNIQD_IOC_CLASS_INFO, &ci));
		CHECK(ci.name_len == 4 && !memcmp(name, "type", 4),
		      "name_len %u", ci.name_len);
		/* i32, i64, i3, empty, bin5, bin4, the flags test's "a", never */
		CHECK(ci.entries == 8, "entries %llu",
		      (unsigned long long)ci.entries);
		/* Query only. */
		ci.name = 0;
		ci.name_len = 0;
		CHECK_OK(ioctl(fd, UNIQD_IOC_CLASS_INFO, &ci));
		CHECK(ci.name_len == 4, "name_len %u", ci.name_len);
		ci.name = U64P(name);
		ci.name_buf_len = 0;
		CHECK_OK(ioctl(fd, UNIQD_IOC_CLASS_INFO, &ci));
		/* Short buffer. */
		ci.name_buf_len = 3;
		ci.name_len = 0;
		CHECK_ERR(ioctl(fd, UNIQD_IOC_CLASS_INFO, &ci), ERANGE);
		CHECK(ci.name_len == 4, "name_len %u", ci.name_len);
		ci.name_buf_len = 4;
		CHECK_OK(ioctl(fd, UNIQD_IOC_CLASS_INFO, &ci));
		ci.name = 1;
		CHECK_ERR(ioctl(fd, UNIQD_IOC_CLASS_INFO, &ci), EFAULT);
		ci.name = U64P(name);
		ci.class_id = 0;
		CHECK_ERR(ioctl(fd, UNIQD_IOC_CLASS_INFO, &ci), EBADSLT);
		ci.class_id = 1000;
		CHECK_ERR(ioctl(fd, UNIQD_IOC_CLASS_INFO, &ci), EBADSLT);
		ci.class_id = c1;
		ci.reserved = 1;
		CHECK_ERR(ioctl(fd, UNIQD_IOC_CLASS_INFO, &ci), EINVAL);
	}

	th_case("STATS") {
		struct uniqd_class_info ci;
		__u64 entries = 0;
		__u32 i;

		CHECK_OK(ut_stats(fd, &st));
		CHECK(st.classes == 4, "classes %u", st.classes);
		for (i = 1; i <= st.classes; i++) {
			memset(&ci, 0, sizeof(ci));
			ci.class_id = i;
			CHECK_OK(ioctl(fd, UNIQD_IOC_CLASS_INFO, &ci));
			entries += ci.entries;
		}
		CHECK(st.entries == entries, "entries %llu vs %llu",
		      (unsigned long long)st.entries,
		      (unsigned long long)entries);
		CHECK(st.bytes > 65536 && st.bytes < st.arena_bytes, "bytes %llu",
		      (unsigned long long)st.bytes);
		CHECK(st.table_bytes >= (st.table_slots + st.class_slots) * 8,
		      "table_bytes %llu", (unsigned long long)st.table_bytes);
		CHECK(st.class_slots == 64, "class_slots %u", st.class_slots);
		CHECK(st.max_classes == 4096, "max_classes %u", st.max_classes);
		CHECK(st.attached == 1, "attached %u", st.attached);
		CHECK(st.hits > 0 && st.misses > 0, "hits %llu misses %llu",
		      (unsigned long long)st.hits,
		      (unsigned long long)st.misses);
		/*
		 * Class 2 has over 300 entries, but they live in its mapped
		 * index, which holds every entry that is not kernel-only: a
		 * class has a kernel-only table only once a full probe window
		 * sent an entry there (a later growth may place it in the
		 * index again; its record stays, so the table does too, with
		 * no entry counted in map_overflow), and the tables stay at
		 * their 64 buckets unless many entries did.
		 */
		CHECK(st.map_indexed + st.map_overflow == st.entries,
		      "indexed %llu + overflow %llu, entries %llu",
		      (unsigned long long)st.map_indexed,
		      (unsigned long long)st.map_overflow,
		      (unsigned long long)st.entries);
		CHECK(st.index_slots >= 2 * st.map_indexed, "index_slots %llu",
		      (unsigned long long)st.index_slots);
		CHECK(st.table_slots <= 64ULL * st.classes,
		      "table_slots %llu, %u classes",
		      (unsigned long long)st.table_slots, st.classes);
	}

	close(fd);
	return th_finish();
}
