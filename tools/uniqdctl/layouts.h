/* SPDX-License-Identifier: GPL-2.0 */
/*
 * uniqdctl layouts (layouts.c): the tags a build saw with more than one
 * layout, from the GCC plugin's gcc.use records. See uniqdctl(8) and
 * Documentation/gcc-plugin.rst.
 */
#ifndef UNIQDCTL_LAYOUTS_H
#define UNIQDCTL_LAYOUTS_H

#include <stdbool.h>

struct layouts_opts {
	const char *device;	/* NULL: /dev/uniqd */
	const char *pool;
	bool json;
	bool strict;		/* names-only differences fail too */
};

/* Exit status: 0 no ABI mismatch, 1 an ABI mismatch (or with STRICT any
 * mismatch), 2 an error. */
int cmd_layouts(const struct layouts_opts *o, int argc, char **argv);

#endif /* UNIQDCTL_LAYOUTS_H */
