/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An item of the store. The planted bug: `owner` exists only where
 * ITEM_TRACK_OWNER is defined, and the Makefile defines it for item.c
 * alone. item.c fills a struct item and store.c reads it: every field after
 * `owner` sits 8 bytes further in item.c's layout than in store.c's, and
 * neither gcc -Wall -Wextra nor -flto -Wlto-type-mismatch says a word.
 */
#ifndef LAYOUT_ITEM_H
#define LAYOUT_ITEM_H

#include "common.h"

struct item {
	item_id id;
	enum store_kind kind;
#ifdef ITEM_TRACK_OWNER
	const char *owner;
#endif
	double price;
	char name[24];
};

struct item *item_make(item_id id, const char *name, double price);
void item_free(struct item *it);

#endif
