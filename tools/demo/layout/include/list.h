/* SPDX-License-Identifier: GPL-2.0 */
/* A tiny intrusive list, shared by every unit. */
#ifndef LAYOUT_LIST_H
#define LAYOUT_LIST_H

#include "common.h"

struct list_node {
	struct list_node *next;
	struct list_node *prev;
};

#define LIST_INIT(n)	{ &(n), &(n) }
#define list_entry(p, type, member) \
	((type *)((char *)(p) - offsetof(type, member)))
#define list_for_each(p, head) \
	for ((p) = (head)->next; (p) != (head); (p) = (p)->next)

void list_add_tail(struct list_node *head, struct list_node *n);
size_t list_length(const struct list_node *head);

#endif
