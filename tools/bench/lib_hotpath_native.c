// SPDX-License-Identifier: GPL-2.0
/*
 * libuniqd's hot path on the host: uniqd_intern() answered by the calling
 * thread's cache, against the fake device of the native tests
 * (tests/native/fake/), so no module is needed. What it shows is what the
 * library's thread-local state costs in each way a program can get the
 * library (mk/libuniqd.mk builds all three):
 *
 *   lib_hotpath_static     libuniqd.a linked in (TLS relaxed to local-exec)
 *   lib_hotpath_shared     libuniqd-fake.so a DT_NEEDED of the program
 *   lib_hotpath_dlopen SO  SO dlopen()ed at run time, as a plugin would
 *
 * libuniqd-fake.so is libuniqd.so built with the fake in place of sys.o.
 * Prints one line per case: the best of ROUNDS runs, in ns per call.
 *
 *   lib_hotpath_* [SO] [--rounds N] [--calls N]
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libuniqd.h"

#define KEYS 64

static uniqd_pool *(*p_open)(const char *, unsigned int);
static uint32_t (*p_class)(uniqd_pool *, const char *);
static uint64_t (*p_intern)(uniqd_pool *, uint32_t, const void *, size_t);
static const char *(*p_last_error)(void);

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

#ifdef HOTPATH_DLOPEN
static int bind_library(const char *so)
{
	void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return -1;
	}
	*(void **)&p_open = dlsym(h, "uniqd_open");
	*(void **)&p_class = dlsym(h, "uniqd_class");
	*(void **)&p_intern = dlsym(h, "uniqd_intern");
	*(void **)&p_last_error = dlsym(h, "uniqd_last_error");
	if (!p_open || !p_class || !p_intern || !p_last_error) {
		fprintf(stderr, "dlsym: %s\n", dlerror());
		return -1;
	}
	return 0;
}
#else
static int bind_library(const char *so)
{
	(void)so;
	p_open = uniqd_open;
	p_class = uniqd_class;
	p_intern = uniqd_intern;
	p_last_error = uniqd_last_error;
	return 0;
}
#endif

int main(int argc, char **argv)
{
	unsigned long rounds = 9, calls = 4000000;
	char keys[KEYS][32];
	size_t lens[KEYS];
	const char *so = NULL;
	double best = 1e30;
	uint64_t sum = 0;
	uniqd_pool *p;
	uint32_t cls;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--calls") && i + 1 < argc)
			calls = strtoul(argv[++i], NULL, 0);
		else
			so = argv[i];
	}
	if (bind_library(so))
		return 1;
	p = p_open("hotpath", 0);
	cls = p ? p_class(p, "bench.ident") : 0;
	if (!cls) {
		fprintf(stderr, "open: %s\n", p_last_error());
		return 1;
	}
	/* Identifier-like keys of 8 to 23 bytes, all in the cache after one pass. */
	for (int k = 0; k < KEYS; k++) {
		snprintf(keys[k], sizeof(keys[k]), "ident_%0*d", 2 + k % 16, k);
		lens[k] = strlen(keys[k]);
		sum += p_intern(p, cls, keys[k], lens[k]);
	}
	for (unsigned long r = 0; r < rounds; r++) {
		double t0 = now_ns(), t;

		for (unsigned long i = 0; i < calls; i++)
			sum += p_intern(p, cls, keys[i % KEYS], lens[i % KEYS]);
		t = (now_ns() - t0) / (double)calls;
		if (t < best)
			best = t;
	}
	printf("cache_hit_ns %.2f (best of %lu x %lu calls; checksum %llx)\n", best,
	       rounds, calls, (unsigned long long)sum);
	return 0;
}
