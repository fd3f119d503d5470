/* SPDX-License-Identifier: GPL-2.0 */
/* A struct with every kind of member whose layout key the tests know. */
#ifndef SHAPES_H
#define SHAPES_H

#include <stddef.h>

enum color { RED, GREEN = 5, BLUE };
struct point { int x, y; };
typedef struct { double w; struct point corner; } box_t;
typedef int (*cmp_fn)(const void *, const void *);
struct shape {
	unsigned int kind : 3;
	unsigned int visible : 1;
	int : 0;
	signed char tag[4][2];
	struct point pts[3];
	enum color color;
	struct { short a; char b; } inner;
	union { long l; float f; } u;
	cmp_fn cmp;
	void (*draw)(struct shape *, ...);
	int (*old)();
	const char *name;
	struct shape *next;
	box_t box;
	size_t n;
	char data[];
};

int shape_area(const struct shape *s);

#endif
