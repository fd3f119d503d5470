/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * What the uniqd MLIR plugin publishes beside types and attributes, shared
 * by the plugin (C++, tools/mlir/), the checker `uniqdctl symbols` (C) and
 * the tests. Documentation/mlir.rst describes every key in full.
 *
 * Types and attributes are interned under their dialect-qualified names
 * (AbstractType::getName(), AbstractAttribute::getName(): builtin.integer,
 * llvm.struct, ...). Their content is MLIR's printed form; with the
 * plugin's key=handles, each immediate sub-element's printed text in it is
 * replaced by MK_REF and the sub-element's handle (8 bytes, little-endian).
 */
#ifndef UNIQD_MLIR_KEYS_H
#define UNIQD_MLIR_KEYS_H

#include <stdint.h>

#include "uniqd_le.h"

#define MK_CLASS_MODULE	"mlir.module"	/* the module's file, cwd-relative */
#define MK_CLASS_NAME	"mlir.symbol_name"	/* a symbol's name: "ext" */
#define MK_CLASS_KIND	"mlir.symbol_kind"	/* "func.func declaration", ... */
#define MK_CLASS_LOC	"mlir.loc"	/* where: "dir/a.mlir:12" */
#define MK_CLASS_SYMBOL	"mlir.symbol"	/* the five handles below */

/* The kinds (MK_CLASS_KIND contents). */
#define MK_KIND_FUNC_DECL	"func.func declaration"
#define MK_KIND_FUNC_DEF	"func.func definition"
#define MK_KIND_LLVM_DECL	"llvm.func declaration"
#define MK_KIND_LLVM_DEF	"llvm.func definition"

/* In a key=handles content: this byte, then a little-endian u64 handle. */
#define MK_REF		0x01
#define MK_REF_LEN	9

/*
 * An mlir.symbol record: "the module MODULE sees symbol NAME, of function
 * type TYPE, as KIND, at LOC": five little-endian u64 handles, 40 bytes, a
 * run of handles (uniqd_merge_refs(3) and uniqd_intern_refs(3) translate
 * them).
 */
#define MK_SYMBOL_LEN	40

struct mk_symbol {
	uint64_t module;
	uint64_t name;
	uint64_t type;
	uint64_t kind;
	uint64_t loc;
};

static inline void mk_symbol_encode(unsigned char out[MK_SYMBOL_LEN], const struct mk_symbol *s)
{
	uq_le_put64(out, s->module);
	uq_le_put64(out + 8, s->name);
	uq_le_put64(out + 16, s->type);
	uq_le_put64(out + 24, s->kind);
	uq_le_put64(out + 32, s->loc);
}

static inline void mk_symbol_decode(struct mk_symbol *s, const unsigned char in[MK_SYMBOL_LEN])
{
	s->module = uq_le_get64(in);
	s->name = uq_le_get64(in + 8);
	s->type = uq_le_get64(in + 16);
	s->kind = uq_le_get64(in + 24);
	s->loc = uq_le_get64(in + 32);
}

#endif /* UNIQD_MLIR_KEYS_H */
