// SPDX-License-Identifier: GPL-2.0
/*
 * Native test of uniqd/blake3.c against the official BLAKE3 test vectors,
 * plus streaming splits, XOF seeking, finup after streaming and the bounded
 * streaming state.
 *
 * Two builds of the same uniqd/blake3.c are compared here:
 *  - "user": linked in separately, with the userspace defaults (a 54-entry
 *    CV stack, i.e. streaming without a practical bound);
 *  - "kern": included below with the kernel's depths and its public names
 *    renamed to kb3_*, so the struct layout, the streaming bound and the
 *    finup stack extension are exactly those of the kernel module.
 *
 * Vectors: argv[1], else $BLAKE3_VECTORS, else the first of
 * tests/data/blake3_test_vectors.json and ../shared/data/blake3/
 * test_vectors.json (relative to the repo root) that exists.
 *
 * Every implementation this CPU can run (portable, SSE4.1, AVX2, AVX-512)
 * is forced in turn for the vectors, and the lanes are checked against
 * the portable code: mixed lengths, every lane count, keyed and unkeyed.
 *
 * Build: make build/native/test_blake3 (uniqd/blake3*.c but the shash,
 * the SIMD files with their -m flags)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "blake3.h"
#include "blake3_vectors.h"

static const unsigned long long user_stream_max = UNIQD_BLAKE3_STREAM_MAX_LEN;

/* ---- the kernel-configured copy of blake3.c, renamed to kb3_* ---- */
#undef UNIQD_BLAKE3_H
#undef UNIQD_BLAKE3_STREAM_DEPTH
#undef UNIQD_BLAKE3_FINUP_DEPTH
#define UNIQD_BLAKE3_STREAM_DEPTH UNIQD_BLAKE3_KERNEL_STREAM_DEPTH
#define UNIQD_BLAKE3_FINUP_DEPTH UNIQD_BLAKE3_KERNEL_FINUP_DEPTH
#define uniqd_blake3_hasher kb3_hasher
#define uniqd_blake3_init kb3_init
#define uniqd_blake3_init_keyed kb3_init_keyed
#define uniqd_blake3_init_derive_key kb3_init_derive_key
#define uniqd_blake3_update kb3_update
#define uniqd_blake3_final kb3_final
#define uniqd_blake3_final_seek kb3_final_seek
#define uniqd_blake3_finup kb3_finup
#define uniqd_blake3_finup_seek kb3_finup_seek
#define uniqd_blake3_hash kb3_hash
#define uniqd_blake3_derive_key kb3_derive_key
#define uniqd_blake3_update_ext kb3_update_ext
#define uniqd_blake3_final_ext kb3_final_ext
#define uniqd_blake3_compress_portable kb3_compress_portable
#define uniqd_blake3_hash_many_portable kb3_hash_many_portable
#define uniqd_blake3_portable kb3_portable
#define uniqd_blake3_update_impl kb3_update_impl
#define uniqd_blake3_final_seek_impl kb3_final_seek_impl
#define uniqd_blake3_finup_seek_impl kb3_finup_seek_impl
#define uniqd_blake3_hash_many kb3_hash_many
#include "blake3.c"
#undef uniqd_blake3_hasher
#undef uniqd_blake3_init
#undef uniqd_blake3_init_keyed
#undef uniqd_blake3_init_derive_key
#undef uniqd_blake3_update
#undef uniqd_blake3_final
#undef uniqd_blake3_final_seek
#undef uniqd_blake3_finup
#undef uniqd_blake3_finup_seek
#undef uniqd_blake3_hash
#undef uniqd_blake3_derive_key
#undef uniqd_blake3_update_ext
#undef uniqd_blake3_final_ext
#undef uniqd_blake3_compress_portable
#undef uniqd_blake3_hash_many_portable
#undef uniqd_blake3_portable
#undef uniqd_blake3_update_impl
#undef uniqd_blake3_final_seek_impl
#undef uniqd_blake3_finup_seek_impl
#undef uniqd_blake3_hash_many

static const unsigned long long kern_stream_max = UNIQD_BLAKE3_STREAM_MAX_LEN;
static const unsigned long long kern_finup_max = UNIQD_BLAKE3_FINUP_MAX_LEN;

/* Both builds behind one interface, so every check runs on each. */
enum impl { USER, KERN };
static const char *const impl_name[] = { "user", "kern" };

union hasher {
	struct uniqd_blake3_hasher u;
	struct kb3_hasher k;
};

enum mode { M_HASH, M_KEYED, M_DERIVE };
static const char *const mode_name[] = { "hash", "keyed_hash", "derive_key" };

#define OUT_LEN 131

static u8 vec_key[32];
static char vec_context[256];

static int h_init(enum impl im, union hasher *h, enum mode m)
{
	switch (m) {
	case M_HASH:
		if (im == USER)
			uniqd_blake3_init(&h->u);
		else
			kb3_init(&h->k);
		return 0;
	case M_KEYED:
		if (im == USER)
			uniqd_blake3_init_keyed(&h->u, vec_key);
		else
			kb3_init_keyed(&h->k, vec_key);
		return 0;
	default:
		return im == USER ?
			uniqd_blake3_init_derive_key(&h->u, vec_context,
						     strlen(vec_context)) :
			kb3_init_derive_key(&h->k, vec_context,
					    strlen(vec_context));
	}
}

static int h_update(enum impl im, union hasher *h, const void *d, size_t n)
{
	return im == USER ? uniqd_blake3_update(&h->u, d, n) :
			    kb3_update(&h->k, d, n);
}

static int h_final_seek(enum impl im, const union hasher *h, u64 off, u8 *out,
			size_t n)
{
	return im == USER ? uniqd_blake3_final_seek(&h->u, off, out, n) :
			    kb3_final_seek(&h->k, off, out, n);
}

static int h_final(enum impl im, const union hasher *h, u8 *out, size_t n)
{
	return im == USER ? uniqd_blake3_final(&h->u, out, n) :
			    kb3_final(&h->k, out, n);
}

static int h_finup_seek(enum impl im, union hasher *h, const void *d,
			size_t len, u64 off, u8 *out, size_t n)
{
	return im == USER ?
		uniqd_blake3_finup_seek(&h->u, d, len, off, out, n) :
		kb3_finup_seek(&h->k, d, len, off, out, n);
}

static int h_oneshot(enum impl im, enum mode m, const void *d, size_t len,
		     u8 *out, size_t n)
{
	const char *c = vec_context;

	if (m == M_DERIVE)
		return im == USER ?
			uniqd_blake3_derive_key(c, strlen(c), d, len, out, n) :
			kb3_derive_key(c, strlen(c), d, len, out, n);
	return im == USER ?
		uniqd_blake3_hash(m == M_KEYED ? vec_key : NULL, d, len, out,
				  n) :
		kb3_hash(m == M_KEYED ? vec_key : NULL, d, len, out, n);
}

/* Hash @len bytes of @d in pieces of @split (0: random pieces). */
static int h_stream(enum impl im, enum mode m, const u8 *d, size_t len,
		    size_t split, u64 *rng, u8 *out, size_t n);

/* ---- deterministic randomness ---- */
static u64 rng_next(u64 *s)
{
	u64 x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

static size_t rng_piece(u64 *rng)
{
	/* Mostly small pieces, sometimes whole chunks and more. */
	switch (rng_next(rng) % 4) {
	case 0:
		return rng_next(rng) % 65;
	case 1:
		return rng_next(rng) % 1100;
	case 2:
		return 1024 * (rng_next(rng) % 5) + rng_next(rng) % 3;
	default:
		return rng_next(rng) % 9000;
	}
}

static int h_stream(enum impl im, enum mode m, const u8 *d, size_t len,
		    size_t split, u64 *rng, u8 *out, size_t n)
{
	union hasher h;
	size_t pos = 0, piece;
	int ret;

	ret = h_init(im, &h, m);
	while (!ret && pos < len) {
		piece = split ? split : rng_piece(rng);
		if (piece > len - pos)
			piece = len - pos;
		ret = h_update(im, &h, d + pos, piece);
		pos += piece;
	}
	return ret ? ret : h_final(im, &h, out, n);
}

/* ---- input: byte i is i % 251, as in the vectors ---- */
static u8 *pattern;
static size_t pattern_len;

static const u8 *input(size_t len)
{
	size_t i;

	if (len > pattern_len) {
		free(pattern);
		pattern = malloc(len);
		if (!pattern) {
			fprintf(stderr, "out of memory (%zu)\n", len);
			exit(2);
		}
		for (i = 0; i < len; i++)
			pattern[i] = i % 251;
		pattern_len = len;
	}
	return pattern;
}

/* ---- a tiny JSON reader, enough for test_vectors.json ---- */
#define MAX_CASES 64

struct vcase {
	size_t input_len;
	u8 out[3][OUT_LEN];
};

static struct vcase cases[MAX_CASES];
static int ncases;

struct json {
	const char *p, *end;
	int err;
};

static void js_ws(struct json *j)
{
	while (j->p < j->end && strchr(" \t\r\n", *j->p))
		j->p++;
}

static int js_eat(struct json *j, char c)
{
	js_ws(j);
	if (j->p < j->end && *j->p == c) {
		j->p++;
		return 1;
	}
	return 0;
}

/* Reads a string into buf (NUL-terminated, truncated to size). */
static void js_string(struct json *j, char *buf, size_t size)
{
	size_t n = 0;
	char c;

	if (!js_eat(j, '"')) {
		j->err = 1;
		return;
	}
	while (j->p < j->end && *j->p != '"') {
		c = *j->p++;
		if (c == '\\' && j->p < j->end) {
			c = *j->p++;
			switch (c) {
			case 'n':
				c = '\n';
				break;
			case 't':
				c = '\t';
				break;
			case 'u':
				j->p += 4; /* not needed by the vectors */
				c = '?';
				break;
			default:
				break; /* \" \\ \/ */
			}
		}
		if (buf && n + 1 < size)
			buf[n++] = c;
	}
	if (buf && size)
		buf[n] = '\0';
	if (!js_eat(j, '"'))
		j->err = 1;
}

static void js_skip(struct json *j);

static void js_skip_compound(struct json *j, char open, char close)
{
	int first = 1;

	js_eat(j, open);
	while (!j->err && !js_eat(j, close)) {
		if (!first && !js_eat(j, ','))
			j->err = 1;
		first = 0;
		if (open == '{') {
			js_string(j, NULL, 0);
			if (!js_eat(j, ':'))
				j->err = 1;
		}
		js_skip(j);
		if (j->p >= j->end)
			j->err = 1;
	}
}

static void js_skip(struct json *j)
{
	js_ws(j);
	if (j->p >= j->end) {
		j->err = 1;
		return;
	}
	switch (*j->p) {
	case '"':
		js_string(j, NULL, 0);
		break;
	case '{':
		js_skip_compound(j, '{', '}');
		break;
	case '[':
		js_skip_compound(j, '[', ']');
		break;
	default:
		while (j->p < j->end && !strchr(",}] \t\r\n", *j->p))
			j->p++;
	}
}

static int unhex(const char *s, u8 *out, size_t n)
{
	size_t i;
	unsigned int b;

	if (strlen(s) != 2 * n)
		return -1;
	for (i = 0; i < n; i++) {
		if (sscanf(s + 2 * i, "%2x", &b) != 1)
			return -1;
		out[i] = b;
	}
	return 0;
}

static void js_case(struct json *j, struct vcase *vc)
{
	static const char *const keys[] = { "hash", "keyed_hash",
					    "derive_key" };
	char name[64], hex[2 * OUT_LEN + 8];
	int first = 1, i, seen = 0;

	if (!js_eat(j, '{')) {
		j->err = 1;
		return;
	}
	while (!j->err && !js_eat(j, '}')) {
		if (!first && !js_eat(j, ','))
			j->err = 1;
		first = 0;
		js_string(j, name, sizeof(name));
		if (!js_eat(j, ':'))
			j->err = 1;
		js_ws(j);
		if (!strcmp(name, "input_len")) {
			vc->input_len = strtoul(j->p, NULL, 10);
			seen |= 8;
			js_skip(j);
			continue;
		}
		for (i = 0; i < 3; i++)
			if (!strcmp(name, keys[i]))
				break;
		if (i == 3) {
			js_skip(j);
			continue;
		}
		js_string(j, hex, sizeof(hex));
		if (unhex(hex, vc->out[i], OUT_LEN))
			j->err = 1;
		seen |= 1 << i;
	}
	if (seen != 15)
		j->err = 1;
}

static int load_vectors(const char *path, char *why, size_t whylen)
{
	char name[64], key[64];
	struct json j = { 0 };
	int first = 1, have = 0;
	long size;
	char *buf;
	FILE *f;

	f = fopen(path, "rb");
	if (!f) {
		snprintf(why, whylen, "cannot open %s: %s", path,
			 strerror(errno));
		return -1;
	}
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	buf = malloc(size + 1);
	if (!buf || fread(buf, 1, size, f) != (size_t)size) {
		snprintf(why, whylen, "cannot read %s", path);
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	j.p = buf;
	j.end = buf + size;

	if (!js_eat(&j, '{'))
		j.err = 1;
	while (!j.err && !js_eat(&j, '}')) {
		if (!first && !js_eat(&j, ','))
			j.err = 1;
		first = 0;
		js_string(&j, name, sizeof(name));
		if (!js_eat(&j, ':'))
			j.err = 1;
		if (!strcmp(name, "key")) {
			js_string(&j, key, sizeof(key));
			if (strlen(key) != 32)
				j.err = 1;
			memcpy(vec_key, key, 32);
			have |= 1;
		} else if (!strcmp(name, "context_string")) {
			js_string(&j, vec_context, sizeof(vec_context));
			have |= 2;
		} else if (!strcmp(name, "cases")) {
			int cfirst = 1;

			if (!js_eat(&j, '['))
				j.err = 1;
			while (!j.err && !js_eat(&j, ']')) {
				if (!cfirst && !js_eat(&j, ','))
					j.err = 1;
				cfirst = 0;
				if (ncases == MAX_CASES) {
					j.err = 1;
					break;
				}
				js_case(&j, &cases[ncases++]);
			}
			have |= 4;
		} else {
			js_skip(&j);
		}
	}
	free(buf);
	if (j.err || have != 7) {
		snprintf(why, whylen, "%s: parse error near byte %ld", path,
			 (long)(j.p - (j.end - size)));
		return -1;
	}
	return 0;
}

/* ---- helpers for reporting ---- */
static const char *hexs(const u8 *b, size_t n)
{
	static char s[4][80];
	static int k;
	char *r = s[k++ % 4];
	size_t i;

	if (n > 32)
		n = 32;
	for (i = 0; i < n; i++)
		sprintf(r + 2 * i, "%02x", b[i]);
	return r;
}

#define CHECK_BYTES(got, want, n, fmt, ...)				\
	CHECK(!memcmp(got, want, n), fmt ": got %s want %s",		\
	      ##__VA_ARGS__, hexs(got, n), hexs(want, n))

/* ---- the official vectors ---- */
static void test_vector(const struct vcase *vc, enum mode m)
{
	static const size_t splits[] = { 1, 63, 64, 65, 1023, 1024, 1025,
					 4096, 0, 0, 0 };
	const u8 *want = vc->out[m];
	const u8 *d = input(vc->input_len);
	size_t len = vc->input_len, s, cut, off, n;
	u8 out[OUT_LEN], out32[32];
	u64 rng = 0x9e3779b97f4a7c15ULL ^ len ^ ((u64)m << 40);
	union hasher h;
	int im, ret;

	for (im = USER; im <= KERN; im++) {
		const char *in = impl_name[im];

		/* One-shot, full extended output and default length. */
		memset(out, 0, sizeof(out));
		ret = h_oneshot(im, m, d, len, out, OUT_LEN);
		CHECK(ret == 0, "%s oneshot ret %d", in, ret);
		CHECK_BYTES(out, want, OUT_LEN, "%s oneshot", in);
		ret = h_oneshot(im, m, d, len, out32, 32);
		CHECK(ret == 0 && !memcmp(out32, want, 32),
		      "%s 32-byte oneshot differs", in);

		/* One update, final of 131 and of 32 bytes. */
		ret = h_stream(im, m, d, len, len ? len : 1, NULL, out,
			       OUT_LEN);
		CHECK(ret == 0, "%s stream ret %d", in, ret);
		CHECK_BYTES(out, want, OUT_LEN, "%s single update", in);

		/* Fixed and random splits. */
		for (s = 0; s < sizeof(splits) / sizeof(splits[0]); s++) {
			memset(out, 0, sizeof(out));
			ret = h_stream(im, m, d, len, splits[s], &rng, out,
				       OUT_LEN);
			CHECK(ret == 0 && !memcmp(out, want, OUT_LEN),
			      "%s split %zu: ret %d, %s", in, splits[s], ret,
			      hexs(out, 32));
		}

		/* finup after streaming a prefix, at many cut points. */
		for (cut = 0; cut <= len; cut += cut < 2100 ? 1 + cut / 3 :
						      len / 7 + 1) {
			size_t c = cut > len ? len : cut;

			ret = h_init(im, &h, m) ?:
			      h_update(im, &h, d, c) ?:
			      h_finup_seek(im, &h, d + c, len - c, 0, out,
					   OUT_LEN);
			CHECK(ret == 0 && !memcmp(out, want, OUT_LEN),
			      "%s finup after %zu: ret %d %s", in, c, ret,
			      hexs(out, 32));
		}
		ret = h_init(im, &h, m) ?: h_update(im, &h, d, len) ?:
		      h_finup_seek(im, &h, NULL, 0, 0, out, OUT_LEN);
		CHECK(ret == 0 && !memcmp(out, want, OUT_LEN),
		      "%s finup of nothing", in);

		/* XOF: every offset, several lengths, from final and finup. */
		ret = h_init(im, &h, m) ?: h_update(im, &h, d, len);
		CHECK(ret == 0, "%s update ret %d", in, ret);
		for (off = 0; off < OUT_LEN; off++) {
			for (n = 0; off + n <= OUT_LEN; n += 1 + n / 2) {
				memset(out, 0xa5, sizeof(out));
				ret = h_final_seek(im, &h, off, out, n);
				CHECK(ret == 0 && !memcmp(out, want + off, n) &&
				      (n == OUT_LEN || out[n] == 0xa5),
				      "%s seek %zu len %zu", in, off, n);
			}
		}
		for (off = 0; off < OUT_LEN; off += 13) {
			union hasher h2;

			ret = h_init(im, &h2, m) ?:
			      h_finup_seek(im, &h2, d, len, off, out,
					   OUT_LEN - off);
			CHECK(ret == 0 && !memcmp(out, want + off,
						  OUT_LEN - off),
			      "%s finup seek %zu", in, off);
		}
	}
}

/* ---- XOF far out in the output stream ---- */
static void test_xof_far(void)
{
	static const u64 offs[] = {
		64ULL << 32, (64ULL << 32) - 3, (1ULL << 40) + 5,
		~0ULL - 300, 12345678901ULL,
	};
	u8 a[300], b[300], c[300];
	const u8 *d = input(5000);
	union hasher hu, hk;
	size_t i, k;

	th_case("xof_far_offsets") {
		CHECK(!h_init(USER, &hu, M_KEYED) &&
		      !h_update(USER, &hu, d, 5000), "init");
		CHECK(!h_init(KERN, &hk, M_KEYED) &&
		      !h_update(KERN, &hk, d, 5000), "init");
		for (i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
			CHECK(!h_final_seek(USER, &hu, offs[i], a, 200), "u");
			CHECK(!h_final_seek(KERN, &hk, offs[i], b, 200), "k");
			CHECK_BYTES(a, b, 200, "user/kern at %llu",
				    (unsigned long long)offs[i]);
			for (k = 1; k < 70; k += 7) {
				CHECK(!h_final_seek(USER, &hu, offs[i] + k, c,
						    200 - k), "u");
				CHECK_BYTES(c, a + k, 200 - k,
					    "suffix %zu at %llu", k,
					    (unsigned long long)offs[i]);
			}
		}
		/* The counter is 64 bits: block 2^32 must not be block 0. */
		CHECK(!h_final_seek(USER, &hu, 64ULL << 32, a, 64), "u");
		CHECK(!h_final_seek(USER, &hu, 0, b, 64), "u");
		CHECK(memcmp(a, b, 64), "output block 2^32 == block 0");
	}
}

/* ---- the bounded streaming state of the kernel build ---- */
static void test_bounds(void)
{
	size_t max = kern_stream_max, pos, piece, big;
	u8 want[32], got[32];
	const u8 *d;
	union hasher h;
	int ret, m;
	u64 rng = 42;

	th_case("kern_layout") {
		CHECK(sizeof(struct kb3_hasher) <= 360, "sizeof %zu",
		      sizeof(struct kb3_hasher));
		CHECK(kern_stream_max == 255 * 1024, "bound %llu",
		      kern_stream_max);
		CHECK(user_stream_max == ~0ULL, "user bound %llu",
		      user_stream_max);
		CHECK(kern_finup_max == ((1ULL << 25) - 1) * 1024,
		      "finup bound %llu", kern_finup_max);
	}

	d = input(max + 64 * 1024 * 1024);

	/* Every prefix length in whole chunks up to the bound, and +-1. */
	th_case("kern_stream_every_chunk_count") {
		for (m = M_HASH; m <= M_KEYED; m++) {
			h_init(KERN, &h, m);
			for (pos = 0; pos < max; pos += piece) {
				piece = pos % 1024 ? 1024 - pos % 1024 : 1023;
				ret = h_update(KERN, &h, d + pos, piece);
				CHECK(ret == 0, "update at %zu: %d", pos, ret);
				h_final(KERN, &h, got, 32);
				h_oneshot(USER, m, d, pos + piece, want, 32);
				CHECK_BYTES(got, want, 32, "prefix %zu",
					    pos + piece);
			}
			CHECK(pos == max, "pos %zu", pos);
		}
	}

	th_case("kern_stream_to_bound_in_splits") {
		static const size_t splits[] = { 1, 64, 1000, 1024, 4096,
						 65536, 0 };
		size_t s;

		h_oneshot(USER, M_HASH, d, max, want, 32);
		for (s = 0; s < sizeof(splits) / sizeof(splits[0]); s++) {
			ret = h_stream(KERN, M_HASH, d, max, splits[s], &rng,
				       got, 32);
			CHECK(ret == 0, "split %zu ret %d", splits[s], ret);
			CHECK_BYTES(got, want, 32, "split %zu", splits[s]);
		}
	}

	th_case("kern_stream_past_bound_fails") {
		/* Exactly at the bound, then one byte more. */
		h_init(KERN, &h, M_HASH);
		CHECK(h_update(KERN, &h, d, max) == 0, "to bound");
		CHECK(h_update(KERN, &h, d, 0) == 0, "empty at bound");
		ret = h_update(KERN, &h, d + max, 1);
		CHECK(ret == -EOVERFLOW, "one past: %d", ret);
		ret = h_final(KERN, &h, got, 32);
		CHECK(ret == -EOVERFLOW, "final after overflow: %d", ret);
		ret = h_update(KERN, &h, d, 0);
		CHECK(ret == -EOVERFLOW, "update after overflow: %d", ret);
		ret = h_finup_seek(KERN, &h, d, 1, 0, got, 32);
		CHECK(ret == -EOVERFLOW, "finup after overflow: %d", ret);

		/* One update straddling the bound absorbs nothing. */
		h_init(KERN, &h, M_HASH);
		CHECK(h_update(KERN, &h, d, max - 100) == 0, "near");
		ret = h_update(KERN, &h, d + max - 100, 101);
		CHECK(ret == -EOVERFLOW, "straddle: %d", ret);

		/* A single oversized update from empty. */
		h_init(KERN, &h, M_KEYED);
		ret = h_update(KERN, &h, d, max + 1);
		CHECK(ret == -EOVERFLOW, "oversized: %d", ret);

		/* The user build has no such bound. */
		h_init(USER, &h, M_HASH);
		CHECK(h_update(USER, &h, d, max + 4096) == 0, "user");
	}

	th_case("kern_finup_after_full_stream") {
		static const size_t tails[] = { 0, 1, 1023, 1024, 1025,
						1 << 20, (4 << 20) + 77,
						(16 << 20) + 1024 * 333 + 5 };
		size_t t;

		for (m = M_HASH; m <= M_DERIVE; m++) {
			for (t = 0; t < sizeof(tails) / sizeof(tails[0]); t++) {
				h_oneshot(USER, m, d, max + tails[t], want, 32);
				ret = h_init(KERN, &h, m) ?:
				      h_update(KERN, &h, d, max) ?:
				      h_finup_seek(KERN, &h, d + max, tails[t],
						   0, got, 32);
				CHECK(ret == 0, "ret %d", ret);
				CHECK_BYTES(got, want, 32, "%s tail %zu",
					    mode_name[m], tails[t]);
			}
		}
	}

	th_case("kern_oneshot_beyond_bound") {
		static const size_t lens[] = {
			255 * 1024 + 1, 256 * 1024, 1 << 20, 4 << 20,
			(1 << 20) - 1024 + 1, ((1 << 16) - 1) * 1024 + 3,
			((1 << 15) - 1) * 1024, 5 * 1024 * 1024 + 12345,
		};
		size_t i;

		for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
			for (m = M_HASH; m <= M_DERIVE; m++) {
				h_oneshot(USER, m, d, lens[i], want, 32);
				ret = h_oneshot(KERN, m, d, lens[i], got, 32);
				CHECK(ret == 0, "ret %d", ret);
				CHECK_BYTES(got, want, 32, "%s len %zu",
					    mode_name[m], lens[i]);
			}
		}
		/* Many-bit chunk counts: every stack depth up to 16. */
		for (i = 1; i <= 16; i++) {
			big = ((1ULL << i) - 1) * 1024 + i;
			h_oneshot(USER, M_HASH, d, big, want, 32);
			ret = h_oneshot(KERN, M_HASH, d, big, got, 32);
			CHECK(ret == 0 && !memcmp(got, want, 32),
			      "2^%zu-1 chunks: ret %d", i, ret);
		}
	}

	th_case("kern_finup_limit") {
		/* Refused before any byte is read, so the buffer is fine. */
		h_init(KERN, &h, M_HASH);
		ret = h_finup_seek(KERN, &h, d, kern_finup_max + 1, 0, got, 32);
		CHECK(ret == -EOVERFLOW, "finup past limit: %d", ret);
		h_init(KERN, &h, M_HASH);
		CHECK(h_update(KERN, &h, d, max) == 0, "to bound");
		ret = h_finup_seek(KERN, &h, d, kern_finup_max - max + 1, 0,
				   got, 32);
		CHECK(ret == -EOVERFLOW, "finup past limit after stream: %d",
		      ret);
		ret = kb3_hash(NULL, d, kern_finup_max + 1, got, 32);
		CHECK(ret == -EOVERFLOW, "oneshot past limit: %d", ret);
	}

	th_case("spent_after_finup") {
		int im;

		for (im = USER; im <= KERN; im++) {
			h_init(im, &h, M_HASH);
			CHECK(h_finup_seek(im, &h, d, 10, 0, got, 32) == 0,
			      "finup");
			CHECK(h_final(im, &h, got, 32) == -EINVAL, "final");
			CHECK(h_update(im, &h, d, 1) == -EINVAL, "update");
		}
	}
}

/* ---- derive_key with a long context, and random differentials ---- */
static void test_misc(void)
{
	u8 a[64], b[64];
	const u8 *d = input(600 * 1024);
	union hasher h;
	u64 rng = 7;
	int i, ret;

	th_case("derive_key_long_context") {
		static const size_t lens[] = { 0, 1, 1024, 1025, 300 * 1024 };
		size_t k;

		for (k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
			ret = uniqd_blake3_derive_key(d, lens[k], "m", 1, a,
						      64);
			CHECK(ret == 0, "user %d", ret);
			ret = kb3_derive_key(d, lens[k], "m", 1, b, 64);
			CHECK(ret == 0, "kern %d", ret);
			CHECK_BYTES(a, b, 64, "context len %zu", lens[k]);
			ret = uniqd_blake3_init_derive_key(&h.u, d, lens[k]) ?:
			      uniqd_blake3_update(&h.u, "m", 1) ?:
			      uniqd_blake3_final(&h.u, b, 64);
			CHECK(ret == 0 && !memcmp(a, b, 64), "streamed");
		}
	}

	th_case("random_differential") {
		for (i = 0; i < 300; i++) {
			size_t len = rng_next(&rng) % (i < 200 ? 9000 :
							   300 * 1024);
			size_t cut = len ? rng_next(&rng) % (len + 1) : 0;
			enum mode m = rng_next(&rng) % 3;
			size_t n = 1 + rng_next(&rng) % 64;
			u64 off = rng_next(&rng) % 1000;

			/* Reference: user build, one update, seek. */
			h_init(USER, &h, m);
			h_update(USER, &h, d, len);
			h_final_seek(USER, &h, off, a, n);

			/* Kernel build, random splits, from offset 0. */
			ret = h_stream(KERN, m, d, len, 0, &rng, b, 64);
			if (len <= kern_stream_max) {
				u8 c[64];

				CHECK(ret == 0, "kern stream %zu: %d", len,
				      ret);
				h_final_seek(USER, &h, 0, c, 64);
				CHECK_BYTES(b, c, 64, "kern stream len %zu",
					    len);
			} else {
				CHECK(ret == -EOVERFLOW, "kern stream %zu: %d",
				      len, ret);
			}

			/* Kernel build, update up to cut, finup, seek. */
			if (cut > kern_stream_max)
				cut = kern_stream_max;
			ret = h_init(KERN, &h, m) ?:
			      h_update(KERN, &h, d, cut) ?:
			      h_finup_seek(KERN, &h, d + cut, len - cut, off,
					   b, n);
			CHECK(ret == 0, "kern finup %zu: %d", len, ret);
			CHECK_BYTES(b, a, n, "mode %d len %zu cut %zu off %llu",
				    m, len, cut, (unsigned long long)off);
		}
	}
}


/* ---- the lanes and the compression function of each implementation ---- */
/* The portable primitives are those of the kernel-configured copy (kb3_). */
static u64 lane_rng = 0x243f6a8885a308d3ULL;

static void fill_random(void *p, size_t n)
{
	u8 *b = p;

	while (n--)
		*b++ = (u8)(rng_next(&lane_rng) >> 32);
}

static void test_compress(const struct uniqd_blake3_impl *impl)
{
	u32 cv[8], m[16], want[16], got[16];
	int i;

	for (i = 0; i < 200; i++) {
		u64 ctr = rng_next(&lane_rng);
		u32 bl = (u32)(ctr % 65), fl = (u32)(ctr >> 32) & 0x7f;

		fill_random(cv, sizeof(cv));
		fill_random(m, sizeof(m));
		kb3_compress_portable(want, cv, m, ctr, bl, fl);
		impl->compress(got, cv, m, ctr, bl, fl);
		CHECK(!memcmp(got, want, sizeof(want)), "%s compress %d",
		      impl->name, i);
	}
}

/*
 * The primitive: n = 1 .. lanes + 1 jobs of mixed kinds in one call
 * (chunks of every awkward length, root or not, keyed or not, parents),
 * against the portable jobs one by one.
 */
static void test_hash_many_jobs(const struct uniqd_blake3_impl *impl)
{
	static const u32 lens[] = { 0, 1, 63, 64, 65, 127, 128, 129, 511,
				    1000, 1023, 1024 };
	struct uniqd_blake3_job jobs[UNIQD_BLAKE3_MAX_LANES];
	u8 want[UNIQD_BLAKE3_MAX_LANES][32], got[UNIQD_BLAKE3_MAX_LANES][32];
	static u8 data[UNIQD_BLAKE3_MAX_LANES][1024];
	u32 key[8];
	unsigned int n, i, round;

	for (round = 0; round < 40; round++) {
		for (n = 1; n <= impl->lanes; n++) {
			fill_random(data, sizeof(data));
			fill_random(key, sizeof(key));
			for (i = 0; i < n; i++) {
				u64 r = rng_next(&lane_rng);
				struct uniqd_blake3_job *j = &jobs[i];

				j->in = data[i];
				j->counter = r & 1 ? r >> 20 : 0;
				if ((r >> 8) % 5 == 0) {
					j->len = 64;
					j->flags = B3_PARENT;
					j->flags_start = 0;
					j->flags_end = r & 2 ? B3_ROOT : 0;
				} else {
					j->len = (r >> 8) % 3 ?
						 lens[(r >> 12) % 12] :
						 (u32)((r >> 12) % 1025);
					j->flags = r & 4 ? B3_KEYED_HASH : 0;
					j->flags_start = B3_CHUNK_START;
					j->flags_end = B3_CHUNK_END |
						       (r & 2 ? B3_ROOT : 0);
				}
			}
			memset(got, 0, sizeof(got));
			kb3_hash_many_portable(jobs, n, key, want[0]);
			impl->hash_many(jobs, n, key, got[0]);
			for (i = 0; i < n; i++)
				CHECK(!memcmp(got[i], want[i], 32),
				      "%s n %u lane %u len %u flags %x/%x/%x",
				      impl->name, n, i, jobs[i].len,
				      jobs[i].flags, jobs[i].flags_start,
				      jobs[i].flags_end);
		}
	}
}

/*
 * uniqd_blake3_hash_many(): every official vector's input in one call, in
 * two orders and keyed and unkeyed, then random mixes of lengths (0, 1,
 * 63, 64, 65, 1023, 1024, 1025, several chunks) in every count up to three
 * times the lanes.
 */
static void test_hash_many_api(const struct uniqd_blake3_impl *impl)
{
	static const size_t lens[] = { 0, 1, 63, 64, 65, 1023, 1024, 1025,
				       2048, 3073, 5 * 1024 + 7, 16384,
				       17 * 1024 + 1 };
	const void *in[MAX_CASES + 48];
	size_t len[MAX_CASES + 48];
	u8 (*out)[32] = calloc(MAX_CASES + 48, 32);
	u8 want[32];
	int i, k, rev, keyed, ret;

	CHECK(out, "out of memory");
	if (!out)
		return;
	for (keyed = 0; keyed < 2; keyed++) {
		for (rev = 0; rev < 2; rev++) {
			for (i = 0; i < ncases; i++) {
				k = rev ? ncases - 1 - i : i;
				in[i] = input(cases[k].input_len);
				len[i] = cases[k].input_len;
			}
			ret = uniqd_blake3_hash_many(impl,
						     keyed ? vec_key : NULL,
						     in, len, ncases, out[0]);
			CHECK(ret == 0, "%s ret %d", impl->name, ret);
			for (i = 0; i < ncases; i++) {
				k = rev ? ncases - 1 - i : i;
				CHECK_BYTES(out[i],
					    cases[k].out[keyed ? M_KEYED : M_HASH],
					    32, "%s %s vector len %zu",
					    impl->name, keyed ? "keyed" : "hash",
					    len[i]);
			}
		}
	}
	for (k = 1; k <= (int)impl->lanes * 3; k++) {
		for (i = 0; i < k; i++) {
			u64 r = rng_next(&lane_rng);

			len[i] = r & 1 ? lens[(r >> 8) % 13] : (r >> 8) % 1100;
			in[i] = input(len[i] + 3) + (r >> 40) % 3;
		}
		keyed = k & 1;
		ret = uniqd_blake3_hash_many(impl, keyed ? vec_key : NULL, in,
					     len, k, out[0]);
		CHECK(ret == 0, "%s ret %d", impl->name, ret);
		for (i = 0; i < k; i++) {
			uniqd_blake3_hash_many(uniqd_blake3_impl_nth(0),
					       keyed ? vec_key : NULL, &in[i],
					       &len[i], 1, want);
			CHECK_BYTES(out[i], want, 32, "%s n %d input %d len %zu",
				    impl->name, k, i, len[i]);
		}
	}
	free(out);
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : getenv("BLAKE3_VECTORS");
	char why[512] = "", name[80];
	int loaded = -1, i, m;
	unsigned int k;

	if (!path || !*path) {
		path = "tests/data/blake3_test_vectors.json";
		if (access(path, R_OK))
			path = "../shared/data/blake3/test_vectors.json";
	}

	th_init("blake3_native");

	th_case("vectors_load") {
		loaded = load_vectors(path, why, sizeof(why));
		CHECK(loaded == 0, "%s", why);
		CHECK(loaded || ncases == 35, "%d cases, want 35", ncases);
	}

	/* The AF_ALG test's embedded copy (tests/blake3_vectors.h). */
	th_case("embedded_vectors_match") {
		u8 d[32];
		size_t k;

		CHECK(!loaded, "no vectors loaded");
		CHECK(loaded || BLAKE3_NVECTORS == (size_t)ncases,
		      "%zu embedded, %d in the file", BLAKE3_NVECTORS, ncases);
		CHECK(!memcmp(vec_key, BLAKE3_VECTOR_KEY, 32) &&
		      !strcmp(vec_context, BLAKE3_VECTOR_CONTEXT),
		      "key or context string differ");
		for (k = 0; !loaded && k < BLAKE3_NVECTORS &&
			    k < (size_t)ncases; k++) {
			const struct blake3_vector *v = &blake3_vectors[k];

			CHECK(v->input_len == cases[k].input_len, "len %u",
			      v->input_len);
			CHECK(!unhex(v->hash, d, 32) &&
			      !memcmp(d, cases[k].out[M_HASH], 32),
			      "hash of %u", v->input_len);
			CHECK(!unhex(v->keyed_hash, d, 32) &&
			      !memcmp(d, cases[k].out[M_KEYED], 32),
			      "keyed_hash of %u", v->input_len);
		}
	}

	/* Each implementation in turn, as the default of the plain API. */
	for (k = 0; uniqd_blake3_impl_nth(k); k++) {
		const struct uniqd_blake3_impl *impl = uniqd_blake3_impl_nth(k);

		if (!uniqd_blake3_impl_usable(impl)) {
			snprintf(why, sizeof(why), "this CPU cannot run %s",
				 impl->name);
			th_skip(impl->name, why);
			continue;
		}
		th_case("force") {
			CHECK(uniqd_blake3_impl_force(impl->name) == 0 &&
			      uniqd_blake3_impl_default() == impl,
			      "cannot force %s", impl->name);
		}
		for (i = 0; i < (loaded ? 0 : ncases); i++) {
			for (m = M_HASH; m <= M_DERIVE; m++) {
				snprintf(name, sizeof(name),
					 "vector.%s.%s.len%zu", impl->name,
					 mode_name[m], cases[i].input_len);
				th_case(name)
					test_vector(&cases[i], m);
			}
		}
		snprintf(name, sizeof(name), "compress.%s", impl->name);
		th_case(name)
			test_compress(impl);
		snprintf(name, sizeof(name), "hash_many_jobs.%s", impl->name);
		th_case(name)
			test_hash_many_jobs(impl);
		snprintf(name, sizeof(name), "hash_many.%s", impl->name);
		th_case(name) {
			CHECK(!loaded, "no vectors loaded");
			if (!loaded)
				test_hash_many_api(impl);
		}
	}
	/* The kernel's ahash state: the hasher plus 24 caller-owned slots. */
	th_case("update_ext_past_stream_bound") {
		static u32 ext[24][8];
		size_t len = 3 * kern_stream_max + 1234, pos = 0, n;
		struct kb3_hasher kh;
		u8 want[32], got[32];
		u64 rng = 42;
		int ret = 0;

		kb3_init(&kh);
		while (!ret && pos < len) {
			n = rng_piece(&rng);
			if (n > len - pos)
				n = len - pos;
			ret = kb3_update_ext(uniqd_blake3_impl_best(), &kh,
					     ext[0], 24, input(len) + pos, n);
			pos += n;
		}
		CHECK(ret == 0, "update_ext ret %d at %zu", ret, pos);
		ret = kb3_final_ext(uniqd_blake3_impl_best(), &kh, ext[0], got,
				    32);
		uniqd_blake3_hash(NULL, input(len), len, want, 32);
		CHECK(ret == 0 && !memcmp(got, want, 32), "ret %d %s", ret,
		      hexs(got, 32));
	}

	th_case("force_unknown") {
		CHECK(uniqd_blake3_impl_force("nonesuch") == -ENOENT,
		      "unknown name accepted");
		CHECK(uniqd_blake3_impl_force("auto") == 0 &&
		      uniqd_blake3_impl_default() == uniqd_blake3_impl_best(),
		      "auto is not the best");
	}

	test_xof_far();
	test_bounds();
	test_misc();

	free(pattern);
	return th_finish();
}
