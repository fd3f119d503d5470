/* SPDX-License-Identifier: GPL-2.0 */
/* The planted ABI mismatch: a member only some units see. */
#ifndef CFG_H
#define CFG_H

struct cfg {
	int id;
#ifdef CFG_TRACE
	const char *trace;
#endif
	unsigned int flags;
};

void cfg_apply(struct cfg *c);

#endif
