/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where an item sits in the store. report.c is built with GEOM_ROWCOL and
 * names the two fields differently: the same layout under other names, a
 * "names-only" difference the checker reports apart from ABI ones.
 */
#ifndef LAYOUT_GEOM_H
#define LAYOUT_GEOM_H

struct place {
#ifdef GEOM_ROWCOL
	int row;
	int col;
#else
	int x;
	int y;
#endif
};

#endif
