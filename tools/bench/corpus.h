/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one reader of the token corpus (the format tools/bench/tokenize.c
 * writes: "UBCORP01", u32 units, u32 0, u64 tokens, u64 token bytes; then
 * per unit a u32 count and per token u8 class, u8 0, u16 length, the
 * bytes), for ub_corpus and replay_native.
 */
#ifndef UB_CORPUS_H
#define UB_CORPUS_H

#include <stdint.h>

struct ub_tok {
	const uint8_t *data;
	uint16_t len;
	uint8_t cls;		/* 1 ident, 2 string */
};

struct ub_corpus {
	struct ub_tok *toks;	/* ntoks, pointing into the file read whole */
	uint64_t ntoks;
	uint64_t bytes;		/* the header's token bytes */
	uint64_t *unit_first;	/* tokens of unit u: [unit_first[u], unit_first[u + 1]) */
	uint32_t nunits;
};

/* Read the corpus at @path into memory (prefaulted); dies on failure. */
void ub_corpus_load(struct ub_corpus *c, const char *path);

#endif /* UB_CORPUS_H */
