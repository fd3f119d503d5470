// SPDX-License-Identifier: GPL-2.0
/* Unit b: built with -DCFG_TRACE (an ABI difference from a.c) and
 * -DSTAMP_PUBLIC (a names-only one), or without either (a clean build). */
#include "inc/cfg.h"
#include "inc/stamp.h"

long stamp_sec(const struct stamp *s)
{
	struct cfg c = { 0 };

	cfg_apply(&c);
	return s->sec + c.flags;
}
