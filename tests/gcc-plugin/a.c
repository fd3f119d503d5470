// SPDX-License-Identifier: GPL-2.0
/* Unit a: sees every header, built without defines. */
#include "inc/shapes.h"
#include "inc/cfg.h"
#include "inc/stamp.h"

struct local_only { int q; };	/* in the main file: never published */

int shape_area(const struct shape *s)
{
	return (int)(s->kind + s->n);
}

void cfg_apply(struct cfg *c)
{
	c->flags |= 1;
}
