// SPDX-License-Identifier: GPL-2.0
/*
 * The layout demo (tools/demo/layout/README): three items go from item.c
 * to store.c through a struct item the two units lay out differently. The
 * program compiles without a warning and prints wrong prices and empty
 * names; `uniqdctl layouts` finds why from what the GCC plugin interned.
 */
#include "store.h"
#include "log.h"

int main(void)
{
	static const struct {
		const char *name;
		double price;
	} stock[] = { { "widget", 9.50 }, { "gadget", 4.25 }, { "gizmo", 12.00 } };
	double expected = 0;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(stock); i++) {
		struct item *it = item_make((item_id)(i + 1), stock[i].name, stock[i].price);

		if (!it)
			return 1;
		store_add(it, (struct place){ (int)i, 2 * (int)i });
		expected += stock[i].price;
		item_free(it);
	}
	store_report();
	log_msg(LOG_INFO, "expected total %.2f", expected);
	return 0;
}
