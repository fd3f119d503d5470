/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every unit of the layout demo includes: the C library headers and
 * a few helpers, so that the units' identifiers repeat (as in any real
 * project), which is what a shared pool makes cheap.
 */
#ifndef LAYOUT_COMMON_H
#define LAYOUT_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

typedef uint32_t item_id;

enum store_kind {
	STORE_SHELF,
	STORE_FRIDGE,
	STORE_FREEZER,
};

static inline const char *store_kind_name(enum store_kind k)
{
	static const char *const names[] = { "shelf", "fridge", "freezer" };

	return (size_t)k < ARRAY_SIZE(names) ? names[k] : "?";
}

#endif
