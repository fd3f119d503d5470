/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared code of the userspace benchmarks that run in the bench VM
 * (tools/bench/ub_*.c), one concern a file: results, time and keys
 * (ubench.c), a slice-interleaving timer (ubench_compare.c), processes
 * started together (ubench_procs.c), uniqd set-up over the test-support
 * library's raw ioctls (ubench_uniqd.c), the in-process interner
 * (ubench_interner.c) and Redis through hiredis (ubench_redis.c, linked
 * into ub_micro and ub_memory only).
 *
 * Every result is a line "UBENCH <kind> key=value ..." written to
 * $UNIQD_RESULTS (the VM's result port) and to stdout; the host's
 * tools/bench/report.py reads them back. Benchmarks never judge.
 */
#ifndef UBENCH_H
#define UBENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/uniqd.h>

#include "lib/ut_ioctl.h"	/* the raw ioctl wrappers (test-support library) */

/* ---- output and time ---------------------------------------------------- */

void ub_out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ub_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
uint64_t ub_now(void);
void *ub_alloc(size_t size);		/* zeroed, prefaulted; dies on failure */

/* ---- keys ---------------------------------------------------------------- */

/*
 * A set of distinct keys of 4..32 identifier bytes, the last four encoding
 * (base + index) so that sets with different bases never overlap; the same
 * seed gives the same keys.
 */
struct ub_keys {
	uint32_t n;
	uint8_t *bytes;
	uint32_t *off;
	uint16_t *len;
};

void ub_keys_make(struct ub_keys *k, uint32_t n, uint32_t base, uint64_t seed);
static inline const uint8_t *ub_key(const struct ub_keys *k, uint32_t i,
				    uint32_t *len)
{
	*len = k->len[i];
	return k->bytes + k->off[i];
}

uint64_t ub_rand(uint64_t *s);
void ub_shuffle(uint32_t *a, uint32_t n, uint64_t seed);

/* ---- interleaved timing ------------------------------------------------- */

/*
 * Cases compared with each other take turns in short slices (a few ms) so
 * that the shared host's slow moments fall on all of them alike; a round
 * gives each case about round_ms in all. Per round and case one line:
 *   UBENCH KIND name=NAME round=R ops=N ns=T best_ps=P
 * (KIND is @kind, "op" for most: a program whose case names repeat
 * another's in the same raw file, as ub_map's intern_hit does ub_micro's,
 * passes its own.)
 * N operations in T ns in all; P picoseconds per operation in the fastest
 * slice. run() does @ops operations (what an operation is: the case says:
 * a call, or a key of a batch) and returns 0, or -1 when it cannot go on
 * (the case is then dropped with an "UBENCH error" line).
 */
struct ub_case {
	const char *name;
	int (*run)(void *ctx, uint64_t ops);
	void *ctx;
	uint64_t unit;		/* ops run() must be asked for at a time */
	/* filled in */
	uint64_t burst;
	bool dead;
};

void ub_compare(const char *kind, struct ub_case *cases, unsigned int n,
		unsigned int rounds, double round_ms, double slice_ms);

/* ---- processes started together ---------------------------------------- */

/*
 * The fork-and-wait harness of the multi-process benchmarks: @n processes
 * are forked; each runs setup() (may be NULL; non-zero: it fails), waits
 * for the start, runs run(), whose result (res_size bytes) it sends back,
 * and exits 0 when run() returned 0. The parent lets them settle (50 ms),
 * starts them all at once and reads their results into @res (n * res_size
 * bytes, in the order they arrive). Returns the wall ns from the start to
 * the last result, or 0 when a process failed (setup() or run() non-zero,
 * no result, or an exit status other than 0).
 */
struct ub_procs {
	unsigned int n;
	int (*setup)(unsigned int p, void *arg);
	int (*run)(unsigned int p, void *arg, void *res);
	void *arg;
	size_t res_size;
};

uint64_t ub_procs_run(const struct ub_procs *pr, void *res);

/* ---- uniqd ioctls ------------------------------------------------------ */

/*
 * The raw wrappers are the test-support library's (tests/lib/ut_ioctl.h:
 * ut_intern(), ut_batch(), ut_stats(), ...); these few die on failure, as
 * a benchmark's set-up does.
 */
int ub_uniqd_open(const char *pool);	/* ATTACHed to @pool */
uint32_t ub_uniqd_class(int fd, const char *name);
/* INTERN keys [0, n) of @k in class @cls, 256 a batch. */
void ub_uniqd_intern_all(int fd, uint32_t cls, const struct ub_keys *k,
			 uint32_t n);

/* ---- the in-process interner -------------------------------------------- */

/*
 * What a compiler does today: one process, an open-addressing table of
 * { 64-bit hash, record } with records in an arena, ids dense from 1. The
 * hash is the same keyed BLAKE3 as the kernel's (UB_HASH_BLAKE3) or the
 * cheap multiply-mix hash of libuniqd's cache (UB_HASH_FAST).
 */
enum ub_hash_kind { UB_HASH_BLAKE3, UB_HASH_FAST };

struct ub_interner;
struct ub_interner *ub_interner_new(enum ub_hash_kind kind);
void ub_interner_free(struct ub_interner *t);
/* The id of (cls, data); *created when new. */
uint64_t ub_intern_local(struct ub_interner *t, uint32_t cls, const void *data,
			 uint32_t len, bool *created);
uint64_t ub_interner_entries(const struct ub_interner *t);
uint64_t ub_interner_bytes(const struct ub_interner *t);

/* ---- Redis over a Unix socket (hiredis) --------------------------------- */

struct ub_redis;
struct ub_redis *ub_redis_connect(const char *path);	/* NULL if none */
void ub_redis_close(struct ub_redis *r);
/* Load the interning script; 0 or -1. */
int ub_redis_load(struct ub_redis *r);
/* Intern @n keys (class @cls) in one round trip: EVALSHA pipelined. */
int ub_redis_intern(struct ub_redis *r, uint32_t cls, const uint8_t *const *data,
		    const uint32_t *len, uint32_t n, int64_t *ids);
/* Intern keys [0, n) of @k (class 1), 256 a round trip; 0 or -1. */
int ub_redis_intern_all(struct ub_redis *r, const struct ub_keys *k,
			uint32_t n);
/* A command that must reply +OK or an integer (FLUSHALL etc.). */
int ub_redis_simple(struct ub_redis *r, const char *cmd);
/* INFO memory's used_memory, or -1. */
int64_t ub_redis_used_memory(struct ub_redis *r);

#endif /* UBENCH_H */
