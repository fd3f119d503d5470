/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LAYOUT_STORE_H
#define LAYOUT_STORE_H

#include "geom.h"
#include "item.h"
#include "list.h"

struct store_entry {
	struct list_node node;
	struct place where;
	item_id id;
	double price;
	char name[24];
};

void store_add(const struct item *it, struct place where);
double store_total(void);
void store_report(void);
extern struct list_node store_entries;

#endif
