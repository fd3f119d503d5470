// SPDX-License-Identifier: GPL-2.0
/* Built with -DGEOM_ROWCOL: struct place's fields are named row and col here. */
#include "store.h"
#include "log.h"

void store_report(void)
{
	struct list_node *p;

	list_for_each(p, &store_entries) {
		const struct store_entry *e = list_entry(p, struct store_entry, node);

		log_msg(LOG_INFO, "#%u %-10s %8.2f at row %d col %d", (unsigned int)e->id,
			e->name[0] ? e->name : "(empty)", e->price, e->where.row, e->where.col);
	}
	log_msg(LOG_INFO, "%zu items, total %.2f", list_length(&store_entries), store_total());
}
