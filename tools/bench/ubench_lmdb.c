// SPDX-License-Identifier: GPL-2.0
/*
 * LMDB as an interner shared between processes: see ubench_lmdb.h.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "ubench.h"
#include "ubench_lmdb.h"

#define UB_TMPFS_MAGIC	0x01021994	/* linux/magic.h */

const char *ub_lmdb_dir(bool *tmpfs)
{
	static const char *const dirs[] = { "/tmp", "/dev/shm", NULL };
	struct statfs sf;
	unsigned int i;

	for (i = 0; dirs[i]; i++) {
		if (!statfs(dirs[i], &sf) && sf.f_type == UB_TMPFS_MAGIC &&
		    !access(dirs[i], W_OK)) {
			*tmpfs = true;
			return dirs[i];
		}
	}
	*tmpfs = false;
	return "/tmp";
}

void ub_lmdb_open(struct ub_lmdb *db, const char *path)
{
	MDB_txn *txn;
	int rc;

	memset(db, 0, sizeof(*db));
	rc = mdb_env_create(&db->env);
	if (!rc)
		rc = mdb_env_set_mapsize(db->env, UB_LMDB_MAPSIZE);
	/* A tmpfs: nothing to sync to. */
	if (!rc)
		rc = mdb_env_open(db->env, path,
				  MDB_NOSUBDIR | MDB_NOSYNC | MDB_NOMETASYNC, 0600);
	if (rc)
		ub_die("lmdb: %s: %s", path, mdb_strerror(rc));
	/* The main database is always there: a read transaction opens it. */
	rc = mdb_txn_begin(db->env, NULL, MDB_RDONLY, &txn);
	if (!rc)
		rc = mdb_dbi_open(txn, NULL, 0, &db->dbi);
	if (rc)
		ub_die("lmdb: %s: opening the database: %s", path, mdb_strerror(rc));
	mdb_txn_reset(txn);
	db->rtxn = txn;
	db->maxkey = (uint32_t)mdb_env_get_maxkeysize(db->env);
}

void ub_lmdb_close(struct ub_lmdb *db)
{
	if (db->rtxn)
		mdb_txn_abort(db->rtxn);
	if (db->env)
		mdb_env_close(db->env);
	free(db->kbuf);
	free(db->keys);
	free(db->miss);
	memset(db, 0, sizeof(*db));
}

void ub_lmdb_remove(const char *path)
{
	char lock[256];

	snprintf(lock, sizeof(lock), "%s-lock", path);
	unlink(path);
	unlink(lock);
}

int ub_lmdb_key(const struct ub_lmdb *db, uint8_t cls, const void *data,
		uint32_t len, uint8_t *buf, MDB_val *key)
{
	if (len + 1 > db->maxkey)
		return -1;
	buf[0] = cls;
	memcpy(buf + 1, data, len);
	key->mv_data = buf;
	key->mv_size = len + 1;
	return 0;
}

int ub_lmdb_read_begin(struct ub_lmdb *db)
{
	return mdb_txn_renew(db->rtxn) ? -1 : 0;
}

void ub_lmdb_read_end(struct ub_lmdb *db)
{
	mdb_txn_reset(db->rtxn);
}

int ub_lmdb_get(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, uint64_t *handle)
{
	MDB_val v;
	int rc = mdb_get(txn, dbi, key, &v);

	if (rc == MDB_NOTFOUND) {
		*handle = 0;
		return 0;
	}
	if (rc || v.mv_size != sizeof(*handle))
		return -1;
	memcpy(handle, v.mv_data, sizeof(*handle));
	return 0;
}

uint64_t ub_lmdb_next(MDB_txn *txn, MDB_dbi dbi)
{
	MDB_stat st;

	if (mdb_stat(txn, dbi, &st))
		return 0;
	return st.ms_entries + 1;
}

int ub_lmdb_put(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, uint64_t *next,
		uint64_t *handle)
{
	uint64_t h = *next;
	MDB_val v = { .mv_size = sizeof(h), .mv_data = &h };
	int rc = mdb_put(txn, dbi, key, &v, MDB_NOOVERWRITE);

	if (!rc) {
		*handle = (*next)++;
		return 0;
	}
	/* Already there: v now points at the store's value. */
	if (rc != MDB_KEYEXIST || v.mv_size != sizeof(h))
		return -1;
	memcpy(handle, v.mv_data, sizeof(h));
	return 0;
}

/* Room for @n keys of @bytes content in all. */
static int ub_lmdb_reserve(struct ub_lmdb *db, size_t n, size_t bytes)
{
	if (bytes + n > db->kcap) {
		size_t cap = (bytes + n) * 2;
		uint8_t *p = realloc(db->kbuf, cap);

		if (!p)
			return -1;
		db->kbuf = p;
		db->kcap = cap;
	}
	if (n > db->ncap) {
		size_t cap = n * 2;
		MDB_val *k = realloc(db->keys, cap * sizeof(*k));
		uint32_t *m;

		if (!k)
			return -1;
		db->keys = k;
		m = realloc(db->miss, cap * sizeof(*m));
		if (!m)
			return -1;
		db->miss = m;
		db->ncap = cap;
	}
	return 0;
}

long ub_lmdb_intern_many(struct ub_lmdb *db, const uint8_t *cls,
			 const uint8_t *const *data, const uint32_t *len,
			 size_t n, uint64_t *handles)
{
	size_t bytes = 0, off = 0, nmiss = 0, i;
	MDB_txn *w;
	uint64_t next;

	for (i = 0; i < n; i++)
		bytes += len[i];
	if (ub_lmdb_reserve(db, n, bytes))
		return -1;
	for (i = 0; i < n; i++) {
		if (ub_lmdb_key(db, cls[i], data[i], len[i], db->kbuf + off,
				&db->keys[i]))
			return -1;
		off += len[i] + 1;
	}

	if (ub_lmdb_read_begin(db))
		return -1;
	for (i = 0; i < n; i++) {
		if (ub_lmdb_get(db->rtxn, db->dbi, &db->keys[i], &handles[i])) {
			ub_lmdb_read_end(db);
			return -1;
		}
		if (!handles[i])
			db->miss[nmiss++] = (uint32_t)i;
	}
	ub_lmdb_read_end(db);
	if (!nmiss)
		return 0;

	if (mdb_txn_begin(db->env, NULL, 0, &w))
		return -1;
	next = ub_lmdb_next(w, db->dbi);
	for (i = 0; next && i < nmiss; i++) {
		uint32_t k = db->miss[i];

		if (ub_lmdb_put(w, db->dbi, &db->keys[k], &next, &handles[k]))
			break;
	}
	if (i < nmiss || !next) {
		mdb_txn_abort(w);
		return -1;
	}
	return mdb_txn_commit(w) ? -1 : (long)nmiss;
}

void ub_lmdb_usage(struct ub_lmdb *db, uint64_t *entries, uint64_t *bytes)
{
	MDB_envinfo info;
	MDB_stat st;

	*entries = *bytes = 0;
	if (ub_lmdb_read_begin(db))
		return;
	if (!mdb_stat(db->rtxn, db->dbi, &st))
		*entries = st.ms_entries;
	ub_lmdb_read_end(db);
	if (!mdb_env_info(db->env, &info) && !mdb_env_stat(db->env, &st))
		*bytes = (uint64_t)(info.me_last_pgno + 1) * st.ms_psize;
}
