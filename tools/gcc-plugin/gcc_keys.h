/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the uniqd GCC plugin publishes, shared by the plugin (C++), the
 * checker `uniqdctl layouts` (C) and the tests that plant records by hand.
 * Documentation/gcc-plugin.rst describes every key format in full; the
 * comments here are the summary a reader of the code needs.
 */
#ifndef UNIQD_GCC_KEYS_H
#define UNIQD_GCC_KEYS_H

#include <stdint.h>
#include <string.h>

#include "uniqd_le.h"

/* The classes, all in one pool. */
#define GK_CLASS_IDENT	"gcc.ident"	/* an identifier of GCC's ident_hash */
#define GK_CLASS_UNIT	"gcc.unit"	/* main input file, cwd-relative */
#define GK_CLASS_TAG	"gcc.tag"	/* "struct foo@include/foo.h:12" */
#define GK_CLASS_LAYOUT	"gcc.layout"	/* tag key, size, align, members */
#define GK_CLASS_USE	"gcc.use"	/* unit, tag, layout handles */

/*
 * A layout key:
 *
 *	struct foo@inc/foo.h:12 size=16 align=8 { a @0:32 int; p @64:64 *char; }
 *	enum mode@inc/foo.h:30 size=4 align=4 { M_OFF=0; M_ON=1; }
 *
 * Members are "NAME @BITOFFSET:BITSIZE TYPE; ", enumerators "NAME=VALUE; ".
 * An unnamed member is GK_ANON. Types are Go-like and need no declarator
 * parsing: *T, [N]T, []T, func(A, B) R, struct tag, or an anonymous
 * struct/union/enum written inline with its own member list.
 */
#define GK_ANON		"<anonymous>"

/* A gcc.use record: three little-endian u64 handles, 24 bytes. */
#define GK_USE_LEN	24

struct gk_use {
	uint64_t unit;
	uint64_t tag;
	uint64_t layout;
};

static inline void gk_use_encode(unsigned char out[GK_USE_LEN], const struct gk_use *u)
{
	uq_le_put64(out, u->unit);
	uq_le_put64(out + 8, u->tag);
	uq_le_put64(out + 16, u->layout);
}

static inline void gk_use_decode(struct gk_use *u, const unsigned char in[GK_USE_LEN])
{
	u->unit = uq_le_get64(in);
	u->tag = uq_le_get64(in + 8);
	u->layout = uq_le_get64(in + 16);
}

#endif /* UNIQD_GCC_KEYS_H */
