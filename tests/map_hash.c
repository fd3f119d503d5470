// SPDX-License-Identifier: GPL-2.0
/*
 * The mapped index hash as Documentation/userspace-api.rst ("The index
 * hash") states it: an implementation written from that text alone (its
 * 128-bit products from 32-bit halves, its reads byte by byte) must give the
 * documented vectors and agree with uniqd_maphash() of <linux/uniqd.h>, and
 * the kernel must have put every interned key where it says: in its class's
 * array (classes[class_id]), in the first empty slot of the window from its
 * home (hash & (slots - 1)), the slot holding its tag (hash >> 40) over its
 * record's offset / 8; or out of the index (STATS.map_overflow) with the
 * window full. Entries a full window left out are placed again when their
 * class's array grows.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "uniqd_map_test.h"

/* ---- the text's hash ------------------------------------------------------ */

/* "the 128-bit product a * b; its low 64 bits xor its high 64 bits" */
static __u64 spec_mix(__u64 a, __u64 b)
{
	__u64 al = a & 0xffffffff, ah = a >> 32, bl = b & 0xffffffff, bh = b >> 32;
	__u64 ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
	__u64 mid = (ll >> 32) + (lh & 0xffffffff) + (hl & 0xffffffff);
	__u64 lo = (ll & 0xffffffff) | mid << 32;
	__u64 hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);

	return lo ^ hi;
}

/* "n content bytes from offset i read as a little-endian integer" */
static __u64 spec_le(const __u8 *d, __u32 i, int n)
{
	__u64 v = 0;

	for (int k = n - 1; k >= 0; k--)
		v = v << 8 | d[i + k];
	return v;
}

#define C0 0x2d358dccaa6c78a5ULL
#define C1 0x8bb84b93962eacc9ULL
#define C2 0x4b33a62ed433d4a3ULL
#define C3 0x4d5a2da51de1aa47ULL

static __u64 spec_hash(__u64 seed0, __u64 seed1, __u32 class_id,
		       const __u8 *d, __u32 len)
{
	__u64 s = seed0 ^ spec_mix(seed1 ^ C0, (__u64)class_id ^ C1);
	__u64 a = 0, b = 0, h;

	if (len >= 1 && len <= 3) {
		a = (__u64)d[0] << 16 | (__u64)d[len / 2] << 8 | d[len - 1];
	} else if (len >= 4 && len <= 16) {
		__u32 q = 4 * (len / 8);

		a = spec_le(d, 0, 4) << 32 | spec_le(d, q, 4);
		b = spec_le(d, len - 4, 4) << 32 | spec_le(d, len - 4 - q, 4);
	} else if (len > 16) {
		__u32 p = 0, n = len;

		if (n > 48) {
			__u64 s1 = s, s2 = s;

			do {
				s = spec_mix(spec_le(d, p, 8) ^ C1, spec_le(d, p + 8, 8) ^ s);
				s1 = spec_mix(spec_le(d, p + 16, 8) ^ C2,
					      spec_le(d, p + 24, 8) ^ s1);
				s2 = spec_mix(spec_le(d, p + 32, 8) ^ C3,
					      spec_le(d, p + 40, 8) ^ s2);
				p += 48;
				n -= 48;
			} while (n > 48);
			s = s ^ s1 ^ s2;
		}
		while (n > 16) {
			s = spec_mix(spec_le(d, p, 8) ^ C1, spec_le(d, p + 8, 8) ^ s);
			p += 16;
			n -= 16;
		}
		a = spec_le(d, len - 16, 8);
		b = spec_le(d, len - 8, 8);
	}
	h = spec_mix(a ^ C1 ^ len, b ^ s);
	h = spec_mix(h ^ C0, s ^ C2);
	if (!(h >> 32))
		h |= 1ULL << 32;
	return h;
}

/* The table of userspace-api.rst; content byte i is i % 251. */
static const struct {
	__u64 seed0, seed1;
	__u32 class_id, len;
	__u64 hash;
} vectors[] = {
	{ 0, 0, 0, 0, 0x10e244e332ec237aULL },
	{ 0, 0, 1, 0, 0x7d1df645609ada18ULL },
	{ 0, 0, 1, 1, 0x2181437e0b3d115cULL },
	{ 0, 0, 1, 3, 0x5da04774c10286b0ULL },
	{ 0, 0, 1, 4, 0xa3e9c03f21052432ULL },
	{ 0, 0, 1, 7, 0x6a703ae500494e4dULL },
	{ 0, 0, 1, 8, 0xbeaa95ccef1a2d31ULL },
	{ 0, 0, 1, 16, 0x95737bc3e9eb3ceeULL },
	{ 0x0123456789abcdefULL, 0xfedcba9876543210ULL, 7, 17, 0x19c483c5d9bb4d65ULL },
	{ 0x0123456789abcdefULL, 0xfedcba9876543210ULL, 7, 48, 0x7939a32d13eecf64ULL },
	{ 0x0123456789abcdefULL, 0xfedcba9876543210ULL, 7, 49, 0xe4dd9e1da487b58eULL },
	{ 0x0123456789abcdefULL, 0xfedcba9876543210ULL, 7, 100, 0x83f6f096db48c60eULL },
	{ 0x0123456789abcdefULL, 0xfedcba9876543210ULL, 0xffffffff, 200,
	  0x1bc1198782d9b92fULL },
	{ 0x17e2ad408ULL, 0, 1, 5, 0x00000001049bf209ULL },
};

/* ---- the index as the kernel filled it ----------------------------------- */

struct where {
	int slot;	/* 0..probe-1 from home, or -1: not in the window */
	int before_empty;	/* an empty slot before it in its window */
	int window_full;	/* no empty slot in the window */
};

/* Where the entry of class @cls, index hash @hash, record at @off sits. */
static struct where locate(const struct ut_map *m, __u32 cls, __u64 hash,
			   __u64 off)
{
	__u64 w = ut_map_class_word(m, cls), n;
	const __u64 *slots = ut_map_slots(m, w, &n);
	/* The text: the tag, hash >> 40, over the record's offset / 8. */
	__u64 want = (hash >> 40) << 40 | off >> 3;
	struct where r = { -1, 0, 1 };

	for (__u32 i = 0; slots && i < m->h->probe; i++) {
		__u64 v = UT_ACQ(&slots[(hash + i) & (n - 1)]);

		if (!v) {
			r.window_full = 0;
			if (r.slot < 0)
				r.before_empty = 1;
		} else if (v == want && r.slot < 0) {
			r.slot = (int)i;
		}
	}
	return r;
}

static int make_key(unsigned int i, __u8 *buf)
{
	int n = (int)(i % 131);

	for (int k = 0; k < n; k++)
		buf[k] = (__u8)(i * 131 + k * 7);
	return n + sprintf((char *)buf + n, "/%u", i);
}

/*
 * Intern the next filler of class @c (*@fi counts the names tried) whose
 * home is away from slot 0 modulo 256 and the 16 slots before it: in any
 * array of 256 slots or more it stays out of the windows the regrow case
 * fills. Returns ut_intern()'s result.
 */
static int add_filler(int fd, const struct ut_map *m, __u32 c,
		      unsigned int *fi)
{
	char filler[24];
	__u64 hh, x;
	int len;

	do {
		len = sprintf(filler, "f%u", (*fi)++);
		hh = spec_hash(m->h->hash_seed[0], m->h->hash_seed[1], c,
			       (__u8 *)filler, len);
	} while (((hh + 16) & 255) < 64);
	return ut_intern(fd, c, filler, len, &x, NULL);
}

int main(void)
{
	static __u8 in[256];

	th_init("map_hash");
	for (int i = 0; i < 256; i++)
		in[i] = (__u8)(i % 251);

	th_case("the documented vectors, from the text and from the header") {
		for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
			__u64 t = spec_hash(vectors[i].seed0, vectors[i].seed1,
					    vectors[i].class_id, in, vectors[i].len);
			__u64 u = uniqd_maphash(vectors[i].seed0, vectors[i].seed1,
						vectors[i].class_id, in, vectors[i].len);

			CHECK(t == vectors[i].hash, "vector %zu: text gives %#llx, doc %#llx",
			      i, (unsigned long long)t, (unsigned long long)vectors[i].hash);
			CHECK(u == vectors[i].hash, "vector %zu: header gives %#llx", i,
			      (unsigned long long)u);
		}
	}

	th_case("text and header agree on 200000 random inputs, unaligned too") {
		static __u8 buf[512];
		__u64 x = 0x9e3779b97f4a7c15ULL;
		int bad = 0;

		for (int i = 0; i < 200000; i++) {
			__u32 len, off, cls;
			__u64 s0, s1;

			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			s0 = x;
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			s1 = x;
			len = (__u32)(s1 >> 20) % 300;
			off = (__u32)(s1 >> 40) % 8;
			cls = (__u32)(s0 >> 17);
			for (__u32 k = 0; k < len; k++)
				buf[off + k] = (__u8)(x >> (k % 57));
			bad += spec_hash(s0, s1, cls, buf + off, len) !=
			       uniqd_maphash(s0, s1, cls, buf + off, len);
		}
		CHECK(!bad, "%d inputs differ", bad);
	}

	th_case("the kernel placed every key where the text says") {
		int fd = ut_pool("map-hash-place", 0);
		__u32 cls[2] = { ut_class(fd, "a"), ut_class(fd, "b") };
		int n = 3000, bad_slot = 0, out = 0, bad_out = 0;
		struct uniqd_stats st;
		struct ut_map m;
		__u8 key[160];

		CHECK(fd >= 0 && cls[0] && cls[1], "pool");
		for (int i = 0; i < n; i++) {
			int len = make_key(i, key);

			CHECK_OK(ut_intern(fd, cls[i & 1], key, len, NULL, NULL));
		}
		if (ut_map(fd, &m)) {
			CHECK(0, "mmap: %s", strerror(errno));
			n = 0;
		}
		for (int i = 0; i < n; i++) {
			int len = make_key(i, key);
			__u64 h, hh = spec_hash(m.h->hash_seed[0], m.h->hash_seed[1],
						cls[i & 1], key, len);
			struct where w;

			const struct uniqd_map_rec *r;

			CHECK_OK(ut_lookup(fd, cls[i & 1], key, len, &h, NULL));
			r = ut_map_rec(&m, (__u32)h);
			if (!r) {
				bad_out++;
				continue;
			}
			w = locate(&m, cls[i & 1], hh, (__u64)((const __u8 *)r - m.base));
			if (w.slot < 0) {
				out++;
				bad_out += !w.window_full;
			} else {
				bad_slot += w.before_empty;
			}
		}
		CHECK_OK(ut_stats(fd, &st));
		CHECK(!bad_slot, "%d keys after an empty slot of their window", bad_slot);
		CHECK(!bad_out, "%d keys missing from a window with room", bad_out);
		CHECK(st.map_overflow == (__u64)out && st.map_indexed == (__u64)(n - out),
		      "STATS says %llu out, %llu in; the index %d out",
		      (unsigned long long)st.map_overflow,
		      (unsigned long long)st.map_indexed, out);
		ut_unmap(&m);
		close(fd);
	}

	th_case("entries a full window left out are placed when the class's array grows") {
		int fd = ut_pool("map-hash-regrow", 0);
		__u32 c = ut_class(fd, "c"), got[2] = { 0, 0 };
		__u32 log2 = 0, slots = 0;
		char keys[20][24];
		int n = 0, found = 0, nf = 0;
		unsigned int fi = 0;
		struct uniqd_stats st;
		struct ut_map m;
		__u64 h[20], w = 0;

		CHECK(fd >= 0 && c, "pool");
		if (ut_map(fd, &m)) {
			CHECK(0, "mmap: %s", strerror(errno));
			m.h = &(struct uniqd_map_header){ .probe = 16 };
		}
		/*
		 * Fillers homed away from slot 0 modulo 256, and so from every
		 * multiple of 256 in any array of 256 slots or more, until the
		 * class's array has 256 slots or more (2^log2): the 20 keys
		 * below then fit under half of it with what is there.
		 */
		while (log2 < 8 && fi < 1000000 && m.base) {
			CHECK_OK(add_filler(fd, &m, c, &fi));
			nf++;
			w = ut_map_class_word(&m, c);
			log2 = w ? UNIQD_MAP_INDEX_LOG2(w) : 0;
		}
		slots = 1U << log2;
		CHECK(log2 >= 8, "classes[%u] %#llx after %d fillers", c,
		      (unsigned long long)w, nf);
		/*
		 * 20 keys with home 0 in the class's array, 10 of each home
		 * they split into at twice as many slots (0 and slots): 4 are
		 * left out of this array and all fit in the next.
		 */
		for (unsigned int i = 0; n < 20 && i < 100000000; i++) {
			int len = sprintf(keys[n], "ov%u", i);
			__u64 hh = spec_hash(m.h->hash_seed[0], m.h->hash_seed[1],
					     c, (__u8 *)keys[n], len);
			int half = (hh >> log2) & 1;

			if ((hh & (slots - 1)) || got[half] == 10)
				continue;
			got[half]++;
			n++;
		}
		CHECK(n == 20, "found %d keys", n);
		for (int i = 0; i < n; i++)
			CHECK_OK(ut_intern(fd, c, keys[i], strlen(keys[i]), &h[i], NULL));
		CHECK_OK(ut_stats(fd, &st));
		CHECK(ut_map_class_word(&m, c) == w && st.index_slots == slots &&
		      st.map_overflow == 4,
		      "%llu slots (%u), %llu left out", (unsigned long long)st.index_slots,
		      slots, (unsigned long long)st.map_overflow);
		/* More fillers, away from both windows, until the array grows. */
		for (nf = 0; ut_map_class_word(&m, c) == w && fi < 2000000 && m.base; nf++)
			CHECK_OK(add_filler(fd, &m, c, &fi));
		CHECK_OK(ut_stats(fd, &st));
		CHECK(st.index_slots == 2 * slots, "%llu slots after %d more fillers",
		      (unsigned long long)st.index_slots, nf);
		for (int i = 0; i < n; i++)
			found += ut_map_find(&m, c, keys[i], strlen(keys[i])) == h[i];
		CHECK(found == n, "%d of %d found through the mapping", found, n);
		CHECK(st.map_overflow == 0, "%llu still left out",
		      (unsigned long long)st.map_overflow);
		ut_unmap(&m);
		close(fd);
	}
	return th_finish();
}
