// SPDX-License-Identifier: GPL-2.0
/*
 * Native throughput of uniqd's BLAKE3 (the userspace build of the module's
 * sources), one thread, for each implementation this CPU runs, next to
 * OpenSSL's SHA-256 and BLAKE2b-512 (libcrypto) on the same sizes and to
 * Debian's b3sum (the official Rust implementation, --num-threads 1) on a
 * large file. Then 16-byte keys in keyed_hash mode, one at a time and
 * through uniqd_blake3_hash_many(). Not a test: it prints figures and
 * ratios from this one run, every figure the best of a few repetitions,
 * timed in CPU time of this thread (or of the b3sum child): the machine is
 * shared, and time spent descheduled is not the code's.
 *
 *   bench_blake3_native [seconds-per-figure] [b3sum-file-MiB]
 *				(defaults 0.3 and 256; b3sum from $PATH)
 *
 * The "keyed" rows at the end keep the format tools/testing/bench.sh reads.
 */
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "blake3.h"
#include "blake3_impl.h"

#define REPS		3
#define NKEYS		4096
#define KEY_LEN		16

static volatile u8 sink;
static double secs = 0.3;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

typedef void (*op_fn)(const void *arg, const u8 *buf, size_t len);

/* Best-of-REPS seconds per call of @fn, each repetition ~secs / REPS. */
static double time_op(op_fn fn, const void *arg, const u8 *buf, size_t len)
{
	double best = 1e30;
	int rep;

	for (rep = 0; rep < REPS; rep++) {
		unsigned long long iters = 0, batch = 1, i;
		double t0 = now(), t;

		do {
			for (i = 0; i < batch; i++)
				fn(arg, buf, len);
			iters += batch;
			t = now();
			if (t - t0 < secs / REPS / 50)
				batch *= 2;
		} while (t - t0 < secs / REPS);
		if ((t - t0) / iters < best)
			best = (t - t0) / iters;
	}
	return best;
}

static void op_uniqd(const void *arg, const u8 *buf, size_t len)
{
	struct uniqd_blake3_hasher h;
	u8 out[UNIQD_BLAKE3_OUT_LEN];

	uniqd_blake3_init(&h);
	uniqd_blake3_finup_seek_impl(arg, &h, buf, len, 0, out, sizeof(out));
	sink ^= out[0];
}

static void op_uniqd_keyed(const void *arg, const u8 *buf, size_t len)
{
	static const u8 key[UNIQD_BLAKE3_KEY_LEN] = { 1, 2, 3 };
	struct uniqd_blake3_hasher h;
	u8 out[UNIQD_BLAKE3_OUT_LEN];

	uniqd_blake3_init_keyed(&h, key);
	uniqd_blake3_finup_seek_impl(arg, &h, buf, len, 0, out, sizeof(out));
	sink ^= out[0];
}

static void op_evp(const void *arg, const u8 *buf, size_t len)
{
	u8 out[EVP_MAX_MD_SIZE];
	unsigned int n;

	EVP_Digest(buf, len, out, &n, arg, NULL);
	sink ^= out[0];
}

/* 16-byte keys: NKEYS of them at @buf, one after the other. */
static const u8 bench_key[UNIQD_BLAKE3_KEY_LEN] = { 1, 2, 3 };

static void op_keys_one(const void *arg, const u8 *buf, size_t len)
{
	u8 out[UNIQD_BLAKE3_OUT_LEN];
	struct uniqd_blake3_hasher h;
	size_t i;

	for (i = 0; i < NKEYS; i++) {
		uniqd_blake3_init_keyed(&h, bench_key);
		uniqd_blake3_finup_seek_impl(arg, &h, buf + i * len, len, 0,
					     out, sizeof(out));
		sink ^= out[0];
	}
}

static void op_keys_many(const void *arg, const u8 *buf, size_t len)
{
	static u8 out[NKEYS][UNIQD_BLAKE3_OUT_LEN];
	static const void *in[NKEYS];
	static size_t lens[NKEYS];
	size_t i;

	for (i = 0; i < NKEYS; i++) {
		in[i] = buf + i * len;
		lens[i] = len;
	}
	uniqd_blake3_hash_many(arg, bench_key, in, lens, NKEYS, out[0]);
	sink ^= out[NKEYS - 1][0];
}

/* CPU seconds of one `b3sum --num-threads 1 @path`, best of REPS. */
static double time_b3sum(const char *path)
{
	double best = -1, t;
	struct rusage ru;
	int rep, st;

	for (rep = 0; rep < REPS; rep++) {
		pid_t pid = fork();

		if (pid < 0)
			return -1;
		if (!pid) {
			int fd = open("/dev/null", O_WRONLY);

			if (fd >= 0)
				dup2(fd, 1);
			execlp("b3sum", "b3sum", "--num-threads", "1", path,
			       (char *)NULL);
			_exit(127);
		}
		if (wait4(pid, &st, 0, &ru) != pid || !WIFEXITED(st) ||
		    WEXITSTATUS(st))
			return -1;
		t = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
		    ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
		if (best < 0 || t < best)
			best = t;
	}
	return best;
}

/* The same job as b3sum: map the file and hash it in one update(). */
static double time_file(const struct uniqd_blake3_impl *impl,
			const char *path)
{
	double best = -1;
	int rep;

	for (rep = 0; rep < REPS; rep++) {
		struct uniqd_blake3_hasher h;
		u8 out[UNIQD_BLAKE3_OUT_LEN];
		double t0 = now();
		int fd = open(path, O_RDONLY);
		struct stat st;
		void *map;

		if (fd < 0 || fstat(fd, &st))
			return -1;
		map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		close(fd);
		if (map == MAP_FAILED)
			return -1;
		uniqd_blake3_init(&h);
		uniqd_blake3_update_impl(impl, &h, map, st.st_size);
		uniqd_blake3_final_seek_impl(impl, &h, 0, out, sizeof(out));
		munmap(map, st.st_size);
		sink ^= out[0];
		if (best < 0 || now() - t0 < best)
			best = now() - t0;
	}
	return best;
}

static void file_vs_b3sum(const struct uniqd_blake3_impl **impls, int nimpl,
			  const u8 *buf, size_t buflen, size_t mib)
{
	char path[] = "/tmp/uniqd-b3bench-XXXXXX";
	char empty[] = "/tmp/uniqd-b3empty-XXXXXX";
	double tb, t0, tu;
	int fd, efd, k;
	size_t i;

	fd = mkstemp(path);
	efd = mkstemp(empty);
	if (fd < 0 || efd < 0) {
		printf("# b3sum: cannot create a temporary file\n");
		return;
	}
	close(efd);
	for (i = 0; i < mib * (1 << 20) / buflen; i++)
		if (write(fd, buf, buflen) != (ssize_t)buflen)
			break;
	close(fd);
	tb = time_b3sum(path);
	t0 = time_b3sum(empty);
	if (tb < 0 || t0 < 0) {
		printf("# b3sum: not runnable (install Debian's b3sum); skipped\n");
	} else {
		tb -= t0;	/* its process start and exit, not hashing */
		printf("\n# %zu MiB file, mapped, one update(); Debian b3sum --num-threads 1: %.0f MB/s (start-up %.1f ms taken off)\n",
		       mib, mib * 1048576.0 / tb / 1e6, t0 * 1e3);
		printf("%-10s %10s %10s\n", "impl", "MB/s", "x b3sum");
		for (k = 0; k < nimpl; k++) {
			tu = time_file(impls[k], path);
			printf("%-10s %10.0f %10.2f\n", impls[k]->name,
			       mib * 1048576.0 / tu / 1e6, tb / tu);
		}
	}
	unlink(path);
	unlink(empty);
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 16, 64, 1024, 65536, 1 << 20 };
	const struct uniqd_blake3_impl *impls[8];
	const EVP_MD *sha = EVP_sha256(), *b2 = EVP_blake2b512();
	size_t mib = argc > 2 ? strtoul(argv[2], NULL, 10) : 256;
	size_t i, max = 1 << 20;
	int nimpl = 0, k;
	double t[8], ts, tb2;
	u8 *buf;

	if (argc > 1 && atof(argv[1]) > 0)
		secs = atof(argv[1]);
	buf = malloc(max);
	if (!buf)
		return 1;
	for (i = 0; i < max; i++)
		buf[i] = i % 251;
	for (k = 0; uniqd_blake3_impl_nth(k); k++)
		if (uniqd_blake3_impl_usable(uniqd_blake3_impl_nth(k)))
			impls[nimpl++] = uniqd_blake3_impl_nth(k);

	printf("# uniqd BLAKE3, userspace build, one thread, hash mode, MB/s (best of %d)\n",
	       REPS);
	printf("%-8s", "size");
	for (k = 0; k < nimpl; k++)
		printf(" %9s", impls[k]->name);
	printf(" %9s %9s %9s %9s %9s\n", "sha256", "blake2b", "best/port",
	       "x sha256", "x blake2b");
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i];

		printf("%-8zu", n);
		for (k = 0; k < nimpl; k++) {
			t[k] = time_op(op_uniqd, impls[k], buf, n);
			printf(" %9.0f", n / t[k] / 1e6);
		}
		ts = time_op(op_evp, sha, buf, n);
		tb2 = time_op(op_evp, b2, buf, n);
		printf(" %9.0f %9.0f %9.2f %9.2f %9.2f\n", n / ts / 1e6,
		       n / tb2 / 1e6, t[0] / t[nimpl - 1], ts / t[nimpl - 1],
		       tb2 / t[nimpl - 1]);
	}

	printf("\n# %d keys of %d bytes, keyed_hash, ns per key\n", NKEYS,
	       KEY_LEN);
	printf("%-10s %12s %12s %9s\n", "impl", "one-by-one", "hash_many",
	       "speedup");
	for (k = 0; k < nimpl; k++) {
		double one, many;

		one = time_op(op_keys_one, impls[k], buf, KEY_LEN) / NKEYS;
		many = time_op(op_keys_many, impls[k], buf, KEY_LEN) / NKEYS;
		printf("%-10s %12.1f %12.1f %9.2f\n", impls[k]->name, one * 1e9,
		       many * 1e9, one / many);
	}

	if (mib)
		file_vs_b3sum(impls, nimpl, buf, max, mib);

	/* What tools/testing/bench.sh reads: the default implementation. */
	printf("\n");
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		double tk = time_op(op_uniqd_keyed, uniqd_blake3_impl_default(),
				    buf, sizes[i]);

		printf("keyed %8zu B %10.1f ns/op %9.1f MB/s\n", sizes[i],
		       tk * 1e9, sizes[i] / tk / 1e6);
	}
	free(buf);
	return 0;
}
