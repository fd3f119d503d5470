/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A fake /dev/uniqd for native tests and benchmarks of libuniqd: it defines
 * libuniqd's uq_sys_* functions (tools/libuniqd/sys.c), so a program that
 * links uniqd_fake.o before libuniqd.a never pulls in the real ones.
 *
 * The fake follows include/uapi/linux/uniqd.h; it is no model of the
 * module's tables. Handles are (pool index + 1) << 40 | n, n counting from
 * 1 in creation order. With fk_map set when a pool is created, the pool is
 * also "mapped" (UNIQD_FEAT_MAP): header, entries[] and records laid out as
 * the ABI says, without the index (header.index stays 0, so lookups still
 * go to the fake ioctls).
 */
#ifndef UNIQD_FAKE_H
#define UNIQD_FAKE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Knobs, read when the device is asked. */
extern uint32_t fk_max_batch;		/* VERSION.max_batch */
extern uint64_t fk_max_entries;		/* every new pool's limit */
extern const char *fk_private_pool;	/* ATTACH to this name: EACCES */
extern int fk_map;			/* pools created now are mapped */

/* The next N batch calls stop halfway with EINTR; how many are left. */
void fk_batch_eintr_set(int n);
int fk_batch_eintr_left(void);

/* Calls of ioctl REQ so far; of every pool ioctl (all but VERSION). */
unsigned long fk_calls(unsigned long req);
unsigned long fk_pool_calls(void);

/* Fake file descriptors open now. */
int fk_files_open(void);

#ifdef __cplusplus
}
#endif

#endif /* UNIQD_FAKE_H */
