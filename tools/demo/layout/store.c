// SPDX-License-Identifier: GPL-2.0
/* Built without ITEM_TRACK_OWNER: reads a struct item that item.c laid out otherwise. */
#include "store.h"
#include "log.h"

struct list_node store_entries = LIST_INIT(store_entries);

void store_add(const struct item *it, struct place where)
{
	struct store_entry *e = calloc(1, sizeof(*e));

	if (!e)
		return;
	e->id = it->id;
	e->price = it->price;
	memcpy(e->name, it->name, sizeof(e->name));
	e->name[sizeof(e->name) - 1] = '\0';
	e->where = where;
	list_add_tail(&store_entries, &e->node);
	log_msg(LOG_DEBUG, "store.c stored #%u '%s' at %.2f in the %s (sizeof(struct item) %zu here)",
		(unsigned int)e->id, e->name, e->price, store_kind_name(it->kind),
		sizeof(*it));
}

double store_total(void)
{
	struct list_node *p;
	double sum = 0;

	list_for_each(p, &store_entries)
		sum += list_entry(p, struct store_entry, node)->price;
	return sum;
}
