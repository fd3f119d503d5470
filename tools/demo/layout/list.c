// SPDX-License-Identifier: GPL-2.0
#include "list.h"

void list_add_tail(struct list_node *head, struct list_node *n)
{
	n->prev = head->prev;
	n->next = head;
	head->prev->next = n;
	head->prev = n;
}

size_t list_length(const struct list_node *head)
{
	const struct list_node *p;
	size_t n = 0;

	list_for_each(p, head)
		n++;
	return n;
}
