// SPDX-License-Identifier: GPL-2.0
/*
 * Native throughput of uniqd/blake3.c (portable C, userspace build) for
 * the input sizes uniqd cares about. Not a test: it only prints numbers.
 *
 *   bench_blake3_native [seconds-per-size]	(default 0.5)
 *
 * For each size it hashes the same buffer back to back, one-shot
 * (uniqd_blake3_hash) in hash and keyed_hash mode and through the
 * streaming API (init, update, final), and prints ns per call and MB/s
 * (10^6 bytes per second).
 *
 * Build: gcc -O2 -Wall -Wextra -Iuniqd tools/bench/bench_blake3_native.c \
 *	uniqd/blake3.c -o build/bench_blake3_native
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blake3.h"

static volatile u8 sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

enum kind { ONESHOT, KEYED, STREAM };
static const char *const kind_name[] = { "hash", "keyed", "stream" };

static void run(enum kind k, const u8 *buf, size_t len, double secs)
{
	static const u8 key[UNIQD_BLAKE3_KEY_LEN] = { 1, 2, 3 };
	struct uniqd_blake3_hasher h;
	u8 out[UNIQD_BLAKE3_OUT_LEN];
	unsigned long long iters = 0, batch = 1;
	double t0, t, elapsed;

	/* Grow the batch until one batch takes ~1/50 of the budget. */
	t0 = now();
	do {
		unsigned long long i;

		for (i = 0; i < batch; i++) {
			switch (k) {
			case ONESHOT:
				uniqd_blake3_hash(NULL, buf, len, out,
						  sizeof(out));
				break;
			case KEYED:
				uniqd_blake3_hash(key, buf, len, out,
						  sizeof(out));
				break;
			case STREAM:
				uniqd_blake3_init(&h);
				uniqd_blake3_update(&h, buf, len);
				uniqd_blake3_final(&h, out, sizeof(out));
				break;
			}
			sink ^= out[0];
		}
		iters += batch;
		t = now();
		if (t - t0 < secs / 50)
			batch *= 2;
	} while (t - t0 < secs);
	elapsed = t - t0;

	printf("%-7s %8zu B  %10.1f ns/op  %9.1f MB/s\n", kind_name[k], len,
	       elapsed * 1e9 / iters, (double)len * iters / elapsed / 1e6);
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 16, 64, 1024, 4096, 65536, 1 << 20 };
	double secs = argc > 1 ? atof(argv[1]) : 0.5;
	size_t i, max = 1 << 20;
	int k;
	u8 *buf;

	if (secs <= 0)
		secs = 0.5;
	buf = malloc(max);
	if (!buf)
		return 1;
	for (i = 0; i < max; i++)
		buf[i] = i % 251;

	printf("# uniqd blake3 portable C, userspace, %.2f s per row\n", secs);
	for (k = ONESHOT; k <= STREAM; k++)
		for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			run(k, buf, sizes[i], secs);
	free(buf);
	return 0;
}
