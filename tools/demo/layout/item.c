// SPDX-License-Identifier: GPL-2.0
/* Built with -DITEM_TRACK_OWNER (see the Makefile): its struct item has `owner`. */
#include "item.h"
#include "log.h"

struct item *item_make(item_id id, const char *name, double price)
{
	struct item *it = calloc(1, sizeof(*it));

	if (!it)
		return NULL;
	it->id = id;
	it->kind = price > 5 ? STORE_FRIDGE : STORE_SHELF;
#ifdef ITEM_TRACK_OWNER
	it->owner = "uqbuild";
#endif
	it->price = price;
	snprintf(it->name, sizeof(it->name), "%s", name);
	log_msg(LOG_DEBUG, "item.c made #%u %s at %.2f (sizeof(struct item) %zu here)",
		(unsigned int)id, it->name, it->price, sizeof(*it));
	return it;
}

void item_free(struct item *it)
{
	free(it);
}
