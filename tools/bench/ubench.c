// SPDX-License-Identifier: GPL-2.0
/*
 * The benchmarks' basics (results, time, memory, keys): see ubench.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ubench.h"

/* ---- output and time ---------------------------------------------------- */

static FILE *ub_results;

void ub_out(const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (!ub_results) {
		const char *p = getenv("UNIQD_RESULTS");

		ub_results = p ? fopen(p, "a") : NULL;
		if (!ub_results)
			ub_results = stdout;
		else
			setvbuf(ub_results, NULL, _IOLBF, 0);
	}
	fprintf(ub_results, "UBENCH %s\n", line);
	if (ub_results != stdout)
		printf("UBENCH %s\n", line);
	fflush(stdout);
}

void ub_die(const char *fmt, ...)
{
	char line[900];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	ub_out("error %s: %s", program_invocation_short_name, line);
	exit(1);
}

uint64_t ub_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

void *ub_alloc(size_t size)
{
	char *p = calloc(1, size ? size : 1);
	size_t i;

	if (!p)
		ub_die("out of memory (%zu bytes)", size);
	/* Fault every page in now, not while something is timed. */
	for (i = 0; i < size; i += 4096)
		p[i] = 0;
	return p;
}

/* ---- keys ---------------------------------------------------------------- */

uint64_t ub_rand(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

void ub_shuffle(uint32_t *a, uint32_t n, uint64_t seed)
{
	uint32_t i;

	seed |= 1;
	for (i = n; i > 1; i--) {
		uint32_t j = ub_rand(&seed) % i, t = a[i - 1];

		a[i - 1] = a[j];
		a[j] = t;
	}
}

static const char ub_chars[] =
	"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_";

void ub_keys_make(struct ub_keys *k, uint32_t n, uint32_t base, uint64_t seed)
{
	uint64_t off = 0;
	uint32_t i;

	seed |= 1;
	k->n = n;
	k->bytes = ub_alloc((size_t)n * 32);
	k->off = ub_alloc((size_t)n * sizeof(*k->off));
	k->len = ub_alloc((size_t)n * sizeof(*k->len));
	for (i = 0; i < n; i++) {
		uint32_t len = 4 + ub_rand(&seed) % 29, j, v = base + i;
		uint8_t *p = k->bytes + off;

		for (j = 0; j < len - 4; j++)
			p[j] = ub_chars[ub_rand(&seed) % 63];
		/* 62^4 > 14.7 million distinct tails: bases stay below that. */
		for (j = len - 4; j < len; j++, v /= 62)
			p[j] = ub_chars[v % 62];
		k->off[i] = (uint32_t)off;
		k->len[i] = (uint16_t)len;
		off += len;
	}
}
