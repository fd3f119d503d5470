/* SPDX-License-Identifier: GPL-2.0 */
/*
 * uniqdctl symbols (symbols.c): the func.func and llvm.func symbols that
 * the modules of a build saw with different function types, from the MLIR
 * plugin's mlir.symbol records. See uniqdctl(8) and Documentation/mlir.rst.
 */
#ifndef UNIQDCTL_SYMBOLS_H
#define UNIQDCTL_SYMBOLS_H

#include <stdbool.h>

struct symbols_opts {
	const char *device;	/* NULL: /dev/uniqd */
	const char *pool;
	bool json;
};

/* Exit status: 0 no mismatch, 1 a mismatch, 2 an error. */
int cmd_symbols(const struct symbols_opts *o, int argc, char **argv);

#endif /* UNIQDCTL_SYMBOLS_H */
