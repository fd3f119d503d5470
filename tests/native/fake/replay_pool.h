/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pool of the native replays (layouts_replay.c, which includes
 * uniqdctl's layouts.c; symbols_replay.c, which includes symbols.c): their
 * checker's libuniqd calls go to libuniqd itself, on the fake device
 * (uniqd_fake.h), in a pool this opens (rp_open()); pool_intern() gives
 * equal content one handle as the plugins' table=uniqd does; unhex() reads
 * the logs' contents. Include it after the checker.
 */
#ifndef UNIQD_TESTS_NATIVE_REPLAY_POOL_H
#define UNIQD_TESTS_NATIVE_REPLAY_POOL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uniqd_fake.h"

/* ---- the pool: libuniqd on the fake device -------------------------------- */

/*
 * The pool "replay" on the fake device, mapped (the checkers walk it with
 * uniqd_foreach()), created and held here, so that the checker, which
 * attaches to an existing pool, finds it.
 */
static uniqd_pool *rp_pool;

static void rp_open(void)
{
	fk_map = 1;
	rp_pool = uniqd_open("replay", UNIQD_OPEN_NEW);
	if (!rp_pool) {
		fprintf(stderr, "replay: the fake device's pool: %s\n", uniqd_last_error());
		exit(EXIT_ERROR);
	}
}

/* Class @name's id: registered if @create, else 0 if it is not. */
static uint32_t rp_class(const char *name, size_t len, bool create)
{
	return uniqd_class_n(rp_pool, name, len, create ? 0 : UNIQD_CLASS_FIND);
}

/* Class @id's name, for printing (static buffer). */
static const char *rp_class_name(uint32_t id)
{
	static struct uniqd_class_desc d;

	if (uniqd_class_info(rp_pool, id, &d) < 0) {
		fprintf(stderr, "replay: class %u: %s\n", id, uniqd_last_error());
		exit(EXIT_ERROR);
	}
	return d.name;
}

/* The handle of (@class_id, @data), a new entry if the pool has none. */
static uint64_t pool_intern(uint32_t class_id, const unsigned char *data, size_t len)
{
	uint64_t h = uniqd_intern(rp_pool, class_id, data, len);

	if (!h) {
		fprintf(stderr, "replay: intern: %s\n", uniqd_last_error());
		exit(EXIT_ERROR);
	}
	return h;
}

/* ---- reading a log ------------------------------------------------------ */

/* The @n hex digits at @s as bytes into @out; -1 if they are not. */
static int unhex(const char *s, size_t n, unsigned char *out)
{
	if (n % 2)
		return -1;
	for (size_t i = 0; i < n; i += 2) {
		unsigned int v;

		if (sscanf(s + i, "%2x", &v) != 1)
			return -1;
		out[i / 2] = (unsigned char)v;
	}
	return 0;
}

#endif /* UNIQD_TESTS_NATIVE_REPLAY_POOL_H */
