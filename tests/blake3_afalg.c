// SPDX-License-Identifier: GPL-2.0
/*
 * The module's "blake3" shash seen from userspace through AF_ALG
 * (algif_hash), in the VM guest with uniqd.ko, af_alg and algif_hash
 * loaded. Static binary; the official digests are embedded from
 * tests/blake3_vectors.h (generated from the JSON by
 * tools/b3sum/gen_vectors.py). Lengths the vectors do not cover are
 * checked against the userspace build of uniqd/blake3/blake3.c.
 *
 * uniqd.ko registers one driver per implementation the CPU can run; the
 * userspace build's own CPU check (the same sources) says which ones the
 * guest must have. Each is tested by its driver name, "blake3" must be the
 * best of them, and the ones the CPU cannot run must be absent.
 *
 * Build: make build/tests/blake3_afalg
 */
#include <errno.h>
#include <linux/if_alg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"
#include "blake3.h"
#include "blake3_impl.h"
#include "blake3_vectors.h"

#ifndef AF_ALG
#define AF_ALG 38
#endif
#ifndef SOL_ALG
#define SOL_ALG 279
#endif

#define DIGEST 32
/* What update() streams in the kernel build; see uniqd/blake3/blake3.h. */
#define STREAM_MAX UNIQD_BLAKE3_DEPTH_MAX_LEN(UNIQD_BLAKE3_KERNEL_STREAM_DEPTH)
#define BUF_LEN (6 << 20)

static u8 *pattern;		/* byte i is i % 251 */
static u8 vec_key[32];

static int unhex(const char *s, u8 *out, size_t n)
{
	unsigned int b;
	size_t i;

	for (i = 0; i < n; i++) {
		if (sscanf(s + 2 * i, "%2x", &b) != 1)
			return -1;
		out[i] = b;
	}
	return 0;
}

static const char *hexs(const u8 *b)
{
	static char s[2][2 * DIGEST + 1];
	static int k;
	char *r = s[k++ % 2];
	int i;

	for (i = 0; i < DIGEST; i++)
		sprintf(r + 2 * i, "%02x", b[i]);
	return r;
}

/* A bound transform socket for @name, keyed if @key; -1 with errno. */
static int tfm_open(const char *name, const u8 *key, size_t keylen)
{
	struct sockaddr_alg sa = { .salg_family = AF_ALG };
	int fd, e;

	strcpy((char *)sa.salg_type, "hash");
	strncpy((char *)sa.salg_name, name, sizeof(sa.salg_name) - 1);
	fd = socket(AF_ALG, SOCK_SEQPACKET, 0);
	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    (key && setsockopt(fd, SOL_ALG, ALG_SET_KEY, key, keylen))) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

enum finish {
	FIN_LAST,	/* last piece sent without MSG_MORE (finup/digest) */
	FIN_READ,	/* everything with MSG_MORE, then read (final) */
	FIN_EMPTY,	/* everything with MSG_MORE, then an empty send */
};

static u64 rng_state = 0x243f6a8885a308d3ULL;

static size_t rng_piece(void)
{
	u64 x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	rng_state = x;
	return x % 3 ? x % 1500 + 1 : x % 9000 + 1;
}

/*
 * Send @len bytes in pieces of @split (0: random) and read the digest.
 * Returns 0, or -errno of the failing call (-EIO for a short count).
 */
static int op_hash(int op, const u8 *d, size_t len, size_t split,
		   enum finish fin, u8 out[DIGEST])
{
	size_t pos = 0, n;
	ssize_t r;
	int flags;

	while (pos < len) {
		n = split ? split : rng_piece();
		if (n > len - pos)
			n = len - pos;
		flags = (pos + n < len || fin != FIN_LAST) ? MSG_MORE : 0;
		r = send(op, d + pos, n, flags);
		if (r < 0)
			return -errno;
		if ((size_t)r != n)
			return -EIO;
		pos += n;
	}
	if (fin == FIN_EMPTY && send(op, d, 0, 0) < 0)
		return -errno;
	r = read(op, out, DIGEST);
	if (r < 0)
		return -errno;
	return r == DIGEST ? 0 : -EIO;
}

/* One message on a fresh operation socket of @tfm. */
static int tfm_hash(int tfm, const u8 *d, size_t len, size_t split,
		    enum finish fin, u8 out[DIGEST])
{
	int op, ret;

	op = accept(tfm, NULL, 0);
	if (op < 0)
		return -errno;
	ret = op_hash(op, d, len, split, fin, out);
	close(op);
	return ret;
}

/* The driver of implementation @impl, as blake3_shash.c names it. */
static const char *drv_name(const struct uniqd_blake3_impl *impl)
{
	static char buf[4][64];
	static int k;
	char *r = buf[k++ % 4];

	snprintf(r, 64, "blake3-uniqd-%s", impl->simd ? impl->name : "generic");
	return r;
}

/* /proc/crypto's fields of @driver: 1 if found, type and priority out. */
static int proc_crypto(const char *driver, char *type, int *prio,
		       char *best, int *best_prio)
{
	char line[256], name[128] = "", drv[128] = "", ty[128] = "";
	int found = 0, p = -1;
	FILE *f = fopen("/proc/crypto", "r");

	*best_prio = -1;
	while (f && fgets(line, sizeof(line), f)) {
		char k[64], v[128];

		if (sscanf(line, "%63s : %127s", k, v) != 2) {
			name[0] = drv[0] = ty[0] = 0;
			p = -1;
			continue;
		}
		if (!strcmp(k, "name"))
			snprintf(name, sizeof(name), "%s", v);
		if (!strcmp(k, "driver"))
			snprintf(drv, sizeof(drv), "%s", v);
		if (!strcmp(k, "priority"))
			p = atoi(v);
		if (!strcmp(k, "type"))
			snprintf(ty, sizeof(ty), "%s", v);
		/* "type" comes after name, driver and priority. */
		if (strcmp(k, "type") || strcmp(name, "blake3"))
			continue;
		if (!strcmp(ty, "shash") && p > *best_prio) {
			*best_prio = p;
			snprintf(best, 128, "%s", drv);
		}
		if (!strcmp(drv, driver)) {
			found = 1;
			*prio = p;
			snprintf(type, 128, "%s", ty);
		}
	}
	if (f)
		fclose(f);
	return found;
}

static void test_registration(void)
{
	static const int prios[] = { 100, 150, 170, 190 };
	const struct uniqd_blake3_impl *impl, *best = NULL;
	static char name[96];
	char type[128], bestdrv[128] = "";
	int fd, prio, best_prio, found;
	unsigned int k;

	for (k = 0; (impl = uniqd_blake3_impl_nth(k)); k++) {
		bool usable = uniqd_blake3_impl_usable(impl);

		if (usable)
			best = impl;
		snprintf(name, sizeof(name), "proc_crypto.%s", impl->name);
		th_case(name) {
			found = proc_crypto(drv_name(impl), type, &prio,
					    bestdrv, &best_prio);
			CHECK(found == usable, "%s: registered %d, CPU can run it %d",
			      drv_name(impl), found, usable);
			CHECK(!found || (!strcmp(type, "shash") &&
					 prio == prios[k]),
			      "%s: type %s priority %d", drv_name(impl), type,
			      prio);
			fd = tfm_open(drv_name(impl), NULL, 0);
			CHECK(usable ? fd >= 0 : fd < 0 && errno == ENOENT,
			      "bind %s: %s", drv_name(impl), strerror(errno));
			if (fd >= 0)
				close(fd);
		}
	}
	/* The best shash for in-kernel users, the ahash above all of them. */
	th_case("best_is_blake3") {
		found = proc_crypto("blake3-uniqd", type, &prio, bestdrv,
				    &best_prio);
		CHECK(best && !strcmp(bestdrv, drv_name(best)),
		      "the best blake3 shash is %s, the best this CPU runs is %s",
		      bestdrv, best ? drv_name(best) : "?");
		CHECK(found && !strcmp(type, "ahash") && prio == 300,
		      "blake3-uniqd: found %d type %s priority %d", found,
		      type, prio);
		fd = tfm_open("blake3", NULL, 0);
		CHECK(fd >= 0, "bind blake3: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
	}

	th_case("setkey_lengths") {
		static const size_t bad[] = { 1, 16, 31, 33, 64 };
		u8 key[64] = { 0 };
		size_t i;

		fd = tfm_open("blake3", NULL, 0);
		CHECK(fd >= 0, "bind: %s", strerror(errno));
		for (i = 0; fd >= 0 && i < sizeof(bad) / sizeof(bad[0]); i++)
			CHECK_ERR(setsockopt(fd, SOL_ALG, ALG_SET_KEY, key,
					     bad[i]), EINVAL);
		if (fd >= 0) {
			CHECK_OK(setsockopt(fd, SOL_ALG, ALG_SET_KEY, key, 32));
			close(fd);
		}
	}
}

/* Every official vector, one send, hash and keyed_hash mode. */
static void test_vectors(const char *alg)
{
	u8 want[DIGEST], got[DIGEST];
	static char name[96];
	size_t i;
	int keyed, tfm, ret;

	for (keyed = 0; keyed <= 1; keyed++) {
		tfm = tfm_open(alg, keyed ? vec_key : NULL, 32);
		for (i = 0; i < BLAKE3_NVECTORS; i++) {
			const struct blake3_vector *v = &blake3_vectors[i];

			snprintf(name, sizeof(name), "vector.%s.%s.len%u", alg,
				 keyed ? "keyed_hash" : "hash", v->input_len);
			th_case(name) {
				CHECK(tfm >= 0, "bind: %s", strerror(errno));
				unhex(keyed ? v->keyed_hash : v->hash, want,
				      DIGEST);
				ret = tfm < 0 ? -EBADF :
				      tfm_hash(tfm, pattern, v->input_len,
					       v->input_len, FIN_LAST, got);
				CHECK(ret == 0 && !memcmp(got, want, DIGEST),
				      "one send: ret %d, %s want %s", ret,
				      hexs(got), hexs(want));
				ret = tfm < 0 ? -EBADF :
				      tfm_hash(tfm, pattern, v->input_len,
					       v->input_len / 2 + 1, FIN_READ,
					       got);
				CHECK(ret == 0 && !memcmp(got, want, DIGEST),
				      "two sends + read: ret %d, %s", ret,
				      hexs(got));
			}
		}
		if (tfm >= 0)
			close(tfm);
	}
}

/* MSG_MORE streaming in many splits, each way of finishing. */
static void test_splits(const char *alg)
{
	static char name[96];
	static const size_t splits[] = { 1, 63, 64, 65, 1023, 1024, 1025,
					 4096, 65536, 0 };
	u8 want[DIGEST], got[DIGEST];
	size_t i, s;
	int keyed, fin, tfm, ret;

	for (keyed = 0; keyed <= 1; keyed++) {
		snprintf(name, sizeof(name), "msg_more_splits.%s.%s", alg,
			 keyed ? "keyed_hash" : "hash");
		th_case(name) {
			tfm = tfm_open(alg, keyed ? vec_key : NULL, 32);
			CHECK(tfm >= 0, "bind: %s", strerror(errno));
			for (i = 0; tfm >= 0 && i < BLAKE3_NVECTORS; i++) {
				const struct blake3_vector *v =
					&blake3_vectors[i];

				if (v->input_len < 1000)
					continue;
				unhex(keyed ? v->keyed_hash : v->hash, want,
				      DIGEST);
				for (s = 0; s < sizeof(splits) / sizeof(*splits);
				     s++) {
					if (splits[s] == 1 && v->input_len > 9000)
						continue;
					for (fin = FIN_LAST; fin <= FIN_EMPTY;
					     fin++) {
						ret = tfm_hash(tfm, pattern,
							       v->input_len,
							       splits[s], fin,
							       got);
						CHECK(ret == 0 &&
						      !memcmp(got, want, DIGEST),
						      "len %u split %zu fin %d: ret %d %s",
						      v->input_len, splits[s],
						      fin, ret, hexs(got));
					}
				}
			}
			if (tfm >= 0)
				close(tfm);
		}
	}
}

/* accept() on an operation socket clones its state: export + import. */
static void test_clone(const char *alg)
{
	static char name[96];
	const struct blake3_vector *v = NULL;
	u8 want[DIGEST], got1[DIGEST], got2[DIGEST];
	size_t i, cut;
	int tfm, op1 = -1, op2 = -1;

	for (i = 0; i < BLAKE3_NVECTORS; i++)
		if (blake3_vectors[i].input_len == 31744)
			v = &blake3_vectors[i];

	snprintf(name, sizeof(name), "accept_clones_state.%s", alg);
	th_case(name) {
		CHECK(v != NULL, "no 31744-byte vector");
		tfm = tfm_open(alg, vec_key, 32);
		CHECK(tfm >= 0, "bind: %s", strerror(errno));
		if (v && tfm >= 0) {
			unhex(v->keyed_hash, want, DIGEST);
			cut = 10000;
			op1 = accept(tfm, NULL, 0);
			CHECK(op1 >= 0, "accept: %s", strerror(errno));
			CHECK(send(op1, pattern, cut, MSG_MORE) == (ssize_t)cut,
			      "send: %s", strerror(errno));
			op2 = accept(op1, NULL, 0);
			CHECK(op2 >= 0, "accept clone: %s", strerror(errno));
			CHECK(op_hash(op1, pattern + cut, v->input_len - cut,
				      4096, FIN_LAST, got1) == 0, "op1");
			CHECK(op_hash(op2, pattern + cut, v->input_len - cut,
				      777, FIN_READ, got2) == 0, "op2");
			CHECK(!memcmp(got1, want, DIGEST), "original %s",
			      hexs(got1));
			CHECK(!memcmp(got2, want, DIGEST), "clone %s",
			      hexs(got2));
		}
		if (op1 >= 0)
			close(op1);
		if (op2 >= 0)
			close(op2);
		if (tfm >= 0)
			close(tfm);
	}
}

/*
 * "blake3" is the ahash "blake3-uniqd": several MiB streamed in many send()
 * sizes, each way of finishing, hash and keyed, against the userspace
 * build's digest.
 */
static void test_stream_long(void)
{
	static const size_t lens[] = { (3 << 20) + 777, 5 << 20 };
	static const size_t splits[] = { 4096, 65536, 1000, 1 << 20, 0 };
	u8 want[DIGEST], got[DIGEST];
	size_t i, s;
	int keyed, fin, tfm, ret;

	for (keyed = 0; keyed <= 1; keyed++) {
		th_case(keyed ? "stream_mib.keyed_hash" : "stream_mib.hash") {
			tfm = tfm_open("blake3", keyed ? vec_key : NULL, 32);
			CHECK(tfm >= 0, "bind: %s", strerror(errno));
			for (i = 0; tfm >= 0 && i < sizeof(lens) / sizeof(*lens);
			     i++) {
				uniqd_blake3_hash(keyed ? vec_key : NULL,
						  pattern, lens[i], want,
						  DIGEST);
				for (s = 0; s < sizeof(splits) / sizeof(*splits);
				     s++) {
					fin = (s + i) % 3;
					ret = tfm_hash(tfm, pattern, lens[i],
						       splits[s], fin, got);
					CHECK(ret == 0 &&
					      !memcmp(got, want, DIGEST),
					      "len %zu split %zu fin %d: ret %d %s",
					      lens[i], splits[s], fin, ret,
					      hexs(got));
				}
			}
			if (tfm >= 0)
				close(tfm);
		}
	}
}

/*
 * The shash drivers (here the generic one) keep their state in the
 * descriptor: algif_hash feeds all but the last page through update(), so
 * a message may stream up to STREAM_MAX bytes; past that the send fails
 * (or, if part of the same send was already absorbed, comes back short).
 */
static void test_stream_bound(void)
{
	static const size_t lens[] = { 200000, STREAM_MAX - 1, STREAM_MAX };
	static const size_t splits[] = { 4096, 65536, 1000, 0 };
	u8 want[DIGEST], got[DIGEST];
	size_t i, s;
	ssize_t r;
	int tfm, op, ret;

	th_case("stream_up_to_bound") {
		tfm = tfm_open("blake3-uniqd-generic", NULL, 0);
		CHECK(tfm >= 0, "bind: %s", strerror(errno));
		for (i = 0; tfm >= 0 && i < sizeof(lens) / sizeof(*lens); i++) {
			uniqd_blake3_hash(NULL, pattern, lens[i], want, DIGEST);
			for (s = 0; s < sizeof(splits) / sizeof(*splits); s++) {
				ret = tfm_hash(tfm, pattern, lens[i], splits[s],
					       FIN_READ, got);
				CHECK(ret == 0 && !memcmp(got, want, DIGEST),
				      "len %zu split %zu: ret %d %s", lens[i],
				      splits[s], ret, hexs(got));
			}
			ret = tfm_hash(tfm, pattern, lens[i], lens[i], FIN_LAST,
				       got);
			CHECK(ret == 0 && !memcmp(got, want, DIGEST),
			      "len %zu one send: ret %d %s", lens[i], ret,
			      hexs(got));
		}
		if (tfm >= 0)
			close(tfm);
	}

	th_case("stream_past_bound_fails") {
		tfm = tfm_open("blake3-uniqd-generic", NULL, 0);
		CHECK(tfm >= 0, "bind: %s", strerror(errno));
		op = tfm >= 0 ? accept(tfm, NULL, 0) : -1;
		CHECK(op >= 0, "accept: %s", strerror(errno));
		if (op >= 0) {
			for (i = 0; i < STREAM_MAX; i += 4096) {
				size_t n = STREAM_MAX - i < 4096 ?
					   STREAM_MAX - i : 4096;

				r = send(op, pattern + i, n, MSG_MORE);
				CHECK(r == (ssize_t)n, "send at %zu: %zd %s", i,
				      r, strerror(errno));
			}
			CHECK_ERR(send(op, pattern, 1, MSG_MORE), EOVERFLOW);
			close(op);
		}

		/* One big send: refused, or cut short where update() failed. */
		op = tfm >= 0 ? accept(tfm, NULL, 0) : -1;
		if (op >= 0) {
			errno = 0;
			r = send(op, pattern, 1 << 20, 0);
			CHECK((r < 0 && errno == EOVERFLOW) ||
			      (r >= 0 && r < 1 << 20),
			      "1 MiB send: %zd %s", r, strerror(errno));
			close(op);
		}
		if (tfm >= 0)
			close(tfm);
	}
}

int main(void)
{
	const struct uniqd_blake3_impl *impl;
	unsigned int k;
	size_t i;

	th_init("blake3_afalg");
	pattern = malloc(BUF_LEN);
	if (!pattern)
		return 2;
	for (i = 0; i < BUF_LEN; i++)
		pattern[i] = i % 251;
	memcpy(vec_key, BLAKE3_VECTOR_KEY, 32);

	test_registration();
	for (k = 0; (impl = uniqd_blake3_impl_nth(k)); k++) {
		if (!uniqd_blake3_impl_usable(impl))
			continue;
		test_vectors(drv_name(impl));
		test_splits(drv_name(impl));
		test_clone(drv_name(impl));
	}
	test_clone("blake3");
	test_stream_long();
	test_stream_bound();

	free(pattern);
	return th_finish();
}
