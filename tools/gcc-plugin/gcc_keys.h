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

static inline void gk_put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static inline uint64_t gk_get64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static inline void gk_use_encode(unsigned char out[GK_USE_LEN], const struct gk_use *u)
{
	gk_put64(out, u->unit);
	gk_put64(out + 8, u->tag);
	gk_put64(out + 16, u->layout);
}

static inline void gk_use_decode(struct gk_use *u, const unsigned char in[GK_USE_LEN])
{
	u->unit = gk_get64(in);
	u->tag = gk_get64(in + 8);
	u->layout = gk_get64(in + 16);
}

#endif /* UNIQD_GCC_KEYS_H */
