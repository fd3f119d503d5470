/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fake /dev/uniqd of the native tests and of the native replay
 * (tools/bench/replay_native.c): it defines libuniqd's uq_sys_* functions
 * (tools/libuniqd/sys.c), so a program that links uniqd_fake.o (this and
 * fake_map.c, one object) before libuniqd.a never pulls in the real ones.
 *
 * The fake follows include/uapi/linux/uniqd.h; it is no model of the
 * module's tables. Handles are (pool index + 1) << 40 | n, n counting from
 * 1 in creation order. Every pool keeps its entries as the mapped pool lays
 * them out (fake_map.c, the one writer of that layout); with fk_map set
 * when a pool is created, the pool is also "mapped" (UNIQD_FEAT_MAP,
 * mmap()), and with fk_map_index also set its mapping has the index, so
 * that libuniqd finds entries there without asking the fake (without it,
 * classes[] stay 0 and every lookup goes to the fake's ioctls).
 */
#ifndef UNIQD_FAKE_H
#define UNIQD_FAKE_H

#include <stdint.h>

#include <linux/uniqd.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Knobs, read when the device is asked. */
extern uint32_t fk_max_batch;		/* VERSION.max_batch */
extern uint64_t fk_max_entries;		/* every new pool's limit */
extern const char *fk_private_pool;	/* ATTACH to this name: EACCES */
extern int fk_map;			/* pools created now are mapped */
extern int fk_map_index;		/* ... with the mapped index */
extern int fk_map_version;		/* ... whose header says this (0: ours) */
extern uint64_t fk_pool_entries;	/* entries[] slots of a pool created now */
extern uint64_t fk_pool_records;	/* its bytes of records */
/*
 * Set before the first call: pools and mappings live in memory shared with
 * the processes forked after a pool is created, under a process-shared
 * lock (the replay's processes attach to the pool their parent created).
 */
extern int fk_shared;
/* Called for each INTERN, before the fake takes its lock (the replay's costs). */
extern void (*fk_key_cost)(const struct uniqd_key *k);

/* The next N batch calls stop halfway with EINTR; how many are left. */
void fk_batch_eintr_set(int n);
int fk_batch_eintr_left(void);

/* Calls of ioctl REQ so far; of every pool ioctl (all but VERSION). */
unsigned long fk_calls(unsigned long req);
unsigned long fk_pool_calls(void);

/* Fake file descriptors open now; pools' mappings alive now (mapped or not). */
int fk_files_open(void);
int fk_maps_live(void);

#ifdef __cplusplus
}
#endif

#endif /* UNIQD_FAKE_H */
