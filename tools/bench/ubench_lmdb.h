/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LMDB, the peer a user would pick to share an interner between processes
 * on one machine (Debian's liblmdb-dev, linked statically into ub_corpus
 * and ub_micro only). One environment is one file on a tmpfs (MDB_NOSUBDIR;
 * the lock file beside it), opened by every process after fork() (LMDB
 * handles do not survive a fork). Nothing is synced: MDB_NOSYNC and
 * MDB_NOMETASYNC, since a tmpfs has no disk behind it.
 *
 * An interned key is the LMDB key (class byte, content), its value the
 * 8-byte handle. Handles are dense from 1: a writer gives a new key the
 * database's entry count + 1, read inside its write transaction (writers
 * are serialised), and puts it with MDB_NOOVERWRITE; if the key is there
 * already (another process, or earlier in the same transaction) the handle
 * is the one in the store. So equal keys get equal handles in every process.
 */
#ifndef UBENCH_LMDB_H
#define UBENCH_LMDB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <lmdb.h>

/* Large enough for the corpus with room to spare; a tmpfs file is sparse. */
#define UB_LMDB_MAPSIZE		(1ULL << 30)

struct ub_lmdb {
	MDB_env *env;
	MDB_dbi dbi;
	MDB_txn *rtxn;		/* the read transaction, reset when unused */
	uint32_t maxkey;	/* mdb_env_get_maxkeysize() */
	uint8_t *kbuf;		/* keys of ub_lmdb_intern_many() */
	size_t kcap;
	MDB_val *keys;
	uint32_t *miss;
	size_t ncap;
};

/*
 * Where the environment goes: /tmp or /dev/shm, the first one on a tmpfs
 * (*tmpfs false if neither is: the caller says so in its output).
 */
const char *ub_lmdb_dir(bool *tmpfs);
/* Open (creating) the environment in file @path; dies on failure. */
void ub_lmdb_open(struct ub_lmdb *db, const char *path);
void ub_lmdb_close(struct ub_lmdb *db);
/* Remove the environment's data and lock files. */
void ub_lmdb_remove(const char *path);

/* The key (class byte, content) in @buf (len + 1 bytes); -1 if too long. */
int ub_lmdb_key(const struct ub_lmdb *db, uint8_t cls, const void *data,
		uint32_t len, uint8_t *buf, MDB_val *key);
/* Begin (renew) and end (reset) the read transaction. */
int ub_lmdb_read_begin(struct ub_lmdb *db);
void ub_lmdb_read_end(struct ub_lmdb *db);
/* In a transaction: *handle of @key, 0 if absent; -1 on error. */
int ub_lmdb_get(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, uint64_t *handle);
/* In a write transaction: the handle the next new key gets. */
uint64_t ub_lmdb_next(MDB_txn *txn, MDB_dbi dbi);
/*
 * In a write transaction: put @key with handle *next unless it is there
 * (then *next is used up); *handle is the store's handle for @key either
 * way. 0 or -1.
 */
int ub_lmdb_put(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, uint64_t *next,
		uint64_t *handle);

/*
 * Intern @n keys, as a compiler would a file's tokens: every key looked up
 * in one read transaction, then the misses put in one write transaction.
 * handles[i] is the store's handle of key i. Returns how many keys the
 * read transaction did not find (and the write transaction put or found
 * put by then), or -1.
 */
long ub_lmdb_intern_many(struct ub_lmdb *db, const uint8_t *cls,
			 const uint8_t *const *data, const uint32_t *len,
			 size_t n, uint64_t *handles);

/* The store's entries, and the bytes of the map in use (pages x size). */
void ub_lmdb_usage(struct ub_lmdb *db, uint64_t *entries, uint64_t *bytes);

#endif /* UBENCH_LMDB_H */
