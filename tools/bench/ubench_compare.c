// SPDX-License-Identifier: GPL-2.0
/*
 * The interleaved timer of the benchmarks: see ubench.h.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ubench.h"

/* ---- interleaved timing ------------------------------------------------- */

void ub_compare(const char *kind, struct ub_case *cases, unsigned int n,
		unsigned int rounds, double round_ms, double slice_ms)
{
	uint64_t slice_ns = (uint64_t)(slice_ms * 1e6);
	unsigned int nslices = (unsigned int)(round_ms / slice_ms);
	unsigned int c, r, s;

	if (!nslices)
		nslices = 1;
	/* Calibrate (and warm up): a burst of about one slice per case. */
	for (c = 0; c < n; c++) {
		struct ub_case *k = &cases[c];
		uint64_t t = 0, b = k->unit ? k->unit : 1;

		if (!k->unit)
			k->unit = 1;
		for (;;) {
			unsigned int i;

			/*
			 * The fastest of three tries: one preempted try on a
			 * busy host would otherwise leave a burst of a few ops.
			 */
			t = UINT64_MAX;
			for (i = 0; i < 3 && !k->dead; i++) {
				uint64_t t0 = ub_now(), t1;

				if (k->run(k->ctx, b)) {
					ub_out("error case %s failed while calibrating",
					       k->name);
					k->dead = true;
				}
				t1 = ub_now() - t0;
				if (t1 < t)
					t = t1;
			}
			if (k->dead || t >= slice_ns / 4 || b >= (1ULL << 40))
				break;
			b *= 2;
		}
		if (k->dead)
			continue;
		b = t ? (uint64_t)((double)b * slice_ns / t) : b;
		b = (b + k->unit - 1) / k->unit * k->unit;
		k->burst = b ? b : k->unit;
	}

	for (r = 0; r < rounds; r++) {
		uint64_t ops[64] = { 0 }, ns[64] = { 0 }, best[64];

		if (n > 64)
			ub_die("too many cases");
		for (c = 0; c < n; c++)
			best[c] = UINT64_MAX;
		for (s = 0; s < nslices; s++) {
			for (c = 0; c < n; c++) {
				struct ub_case *k = &cases[(c + s) % n];
				unsigned int i = (c + s) % n;
				uint64_t t0, t;

				if (k->dead)
					continue;
				t0 = ub_now();
				if (k->run(k->ctx, k->burst)) {
					ub_out("error case %s failed in round %u",
					       k->name, r);
					k->dead = true;
					continue;
				}
				t = ub_now() - t0;
				ops[i] += k->burst;
				ns[i] += t;
				if (t * 1000 / k->burst < best[i])
					best[i] = t * 1000 / k->burst;
			}
		}
		for (c = 0; c < n; c++) {
			if (!ops[c])
				continue;
			ub_out("%s name=%s round=%u ops=%llu ns=%llu best_ps=%llu",
			       kind, cases[c].name, r,
			       (unsigned long long)ops[c],
			       (unsigned long long)ns[c],
			       (unsigned long long)best[c]);
		}
	}
}
