// SPDX-License-Identifier: GPL-2.0
/*
 * layout.cc's interface to plugin.cc; needs GCC's tree.h first.
 */
#ifndef UNIQD_GCC_LAYOUT_H
#define UNIQD_GCC_LAYOUT_H

/* The typedef name of an anonymous struct/union/enum, or NULL_TREE. */
typedef tree (*uq_typedef_name_fn)(tree type);

/*
 * Whether T (a main variant) is a struct, union or enum that may be
 * published: complete, with a defining location in a file other than the
 * unit's main file (a header).
 */
bool uq_type_in_header(tree t);

/* Whether T has a tag of its own (C: not an anonymous aggregate). */
bool uq_type_has_name(tree t);

/* The gcc.tag and gcc.layout keys of T (uq_type_in_header(T) is true). */
void uq_type_keys_of(tree t, uq_typedef_name_fn typedef_name, uq_type_keys &out);

#endif /* UNIQD_GCC_LAYOUT_H */
