/* SPDX-License-Identifier: GPL-2.0 */
/*
 * uniqdctl layouts (layouts.c): the tags a build saw with more than one
 * layout, from the GCC plugin's gcc.use records. See uniqdctl(8) and
 * Documentation/gcc-plugin.rst.
 */
#ifndef UNIQDCTL_LAYOUTS_H
#define UNIQDCTL_LAYOUTS_H

#include <stdbool.h>

enum layouts_format {
	LAYOUTS_GCC,		/* FILE:LINE: error: ..., GCC's diagnostic form (default) */
	LAYOUTS_TEXT,		/* the report, member by member */
	LAYOUTS_JSON,
	LAYOUTS_SARIF,		/* SARIF 2.1.0 */
};

struct layouts_opts {
	const char *device;	/* NULL: /dev/uniqd */
	const char *pool;
	enum layouts_format format;
	bool strict;		/* names-only differences fail too */
};

/* "text", "gcc", "json" or "sarif" to *F; -1 for another word. */
int layouts_format_parse(const char *word, enum layouts_format *f);

/* Exit status: 0 no ABI mismatch, 1 an ABI mismatch (or with STRICT any
 * mismatch), 2 an error. */
int cmd_layouts(const struct layouts_opts *o, int argc, char **argv);

#endif /* UNIQDCTL_LAYOUTS_H */
