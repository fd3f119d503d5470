// SPDX-License-Identifier: GPL-2.0
/*
 * The text of a type: its gcc.tag key ("struct foo@inc/foo.h:12") and its
 * gcc.layout key (the tag key, size, alignment and every member's name,
 * bit offset, bit size and type key). Two units that agree on the layout
 * key agree on the type's ABI; Documentation/gcc-plugin.rst has the
 * grammar, gcc_keys.h the summary.
 *
 * Type keys strip typedefs and qualifiers (TYPE_MAIN_VARIANT at every
 * level): `uint32_t` and `const unsigned int` are both "unsigned int", so
 * a typedef that changes under an #ifdef shows as a different type, and a
 * const that does not change the ABI shows as nothing.
 */
#define INCLUDE_STRING
#define INCLUDE_VECTOR
#include "gcc-plugin.h"
#include "tree.h"

#include "gcc_keys.h"
#include "plugin.h"
#include "layout.h"

namespace {

/* Anonymous aggregates are written inline; this bounds their nesting. */
const int max_depth = 32;

std::string num(HOST_WIDE_INT v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), HOST_WIDE_INT_PRINT_DEC, v);
	return buf;
}

/* A constant size or offset, or "?" for one that is not (VLAs). */
std::string cst(tree t)
{
	return t && tree_fits_shwi_p(t) ? num(tree_to_shwi(t)) : "?";
}

const char *kind(tree t)
{
	switch (TREE_CODE(t)) {
	case UNION_TYPE:
	case QUAL_UNION_TYPE:
		return "union";
	case ENUMERAL_TYPE:
		return "enum";
	default:
		return "struct";
	}
}

/* The tag of T, or NULL_TREE when it has none (C's anonymous aggregates;
 * C++ names the anonymous ones it makes with IDENTIFIER_ANON_P). */
tree tag_of(tree t)
{
	tree n = TYPE_NAME(t);

	if (n && TREE_CODE(n) == TYPE_DECL)
		n = DECL_NAME(n);
	if (!n || TREE_CODE(n) != IDENTIFIER_NODE || IDENTIFIER_ANON_P(n))
		return NULL_TREE;
	return n;
}

location_t location_of(tree t)
{
	tree stub = TYPE_STUB_DECL(t);

	if (stub && DECL_P(stub))
		return DECL_SOURCE_LOCATION(stub);
	if (TYPE_NAME(t) && TREE_CODE(TYPE_NAME(t)) == TYPE_DECL)
		return DECL_SOURCE_LOCATION(TYPE_NAME(t));
	return UNKNOWN_LOCATION;
}

void type_key(std::string &out, tree t, int depth);

void members(std::string &out, tree t, int depth)
{
	out += "{ ";
	if (TREE_CODE(t) == ENUMERAL_TYPE) {
		for (tree v = TYPE_VALUES(t); v; v = TREE_CHAIN(v)) {
			tree val = TREE_VALUE(v);

			if (TREE_CODE(val) == CONST_DECL)
				val = DECL_INITIAL(val);
			out += IDENTIFIER_POINTER(TREE_PURPOSE(v));
			out += '=';
			if (val && TREE_CODE(val) == INTEGER_CST) {
				char buf[WIDE_INT_PRINT_BUFFER_SIZE];

				print_dec(wi::to_wide(val), buf, TYPE_SIGN(TREE_TYPE(val)));
				out += buf;
			} else {
				out += '?';
			}
			out += "; ";
		}
		out += '}';
		return;
	}
	for (tree f = TYPE_FIELDS(t); f; f = DECL_CHAIN(f)) {
		if (TREE_CODE(f) != FIELD_DECL)
			continue;	/* C++: methods, statics, member types */
		tree ft = DECL_BIT_FIELD_TYPE(f) ? DECL_BIT_FIELD_TYPE(f) : TREE_TYPE(f);

		out += DECL_NAME(f) ? IDENTIFIER_POINTER(DECL_NAME(f)) : GK_ANON;
		/* (C++ templates' patterns have members but no offsets.) */
		out += " @";
		out += DECL_FIELD_OFFSET(f) && DECL_FIELD_BIT_OFFSET(f) ? cst(bit_position(f)) : "?";
		out += ":" + cst(DECL_SIZE(f)) + " ";
		type_key(out, ft, depth + 1);
		out += "; ";
	}
	out += '}';
}

/* The name GCC gives a base type ("long unsigned int"), or a made-up one. */
std::string base_name(tree t)
{
	tree n = TYPE_NAME(t);

	if (n && TREE_CODE(n) == TYPE_DECL)
		n = DECL_NAME(n);
	if (n && TREE_CODE(n) == IDENTIFIER_NODE)
		return IDENTIFIER_POINTER(n);
	switch (TREE_CODE(t)) {
	case INTEGER_TYPE:
		return (TYPE_UNSIGNED(t) ? "uint" : "int") + num(TYPE_PRECISION(t));
	case REAL_TYPE:
		return "float" + num(TYPE_PRECISION(t));
	default:
		return std::string("?") + get_tree_code_name(TREE_CODE(t));
	}
}

void function_key(std::string &out, tree t, int depth)
{
	tree args = TYPE_ARG_TYPES(t);

	out += "func(";
	if (!args) {
		out += '?';	/* C's unprototyped "int f()" */
	} else {
		bool first = true;

		for (; args && args != void_list_node; args = TREE_CHAIN(args)) {
			if (!first)
				out += ", ";
			first = false;
			type_key(out, TREE_VALUE(args), depth + 1);
		}
		if (!args)	/* the list did not end in void: varargs */
			out += first ? "..." : ", ...";
	}
	out += ") ";
	type_key(out, TREE_TYPE(t), depth + 1);
}

void type_key(std::string &out, tree t, int depth)
{
	if (!t || t == error_mark_node) {
		out += '?';
		return;
	}
	t = TYPE_MAIN_VARIANT(t);
	switch (TREE_CODE(t)) {
	case POINTER_TYPE:
		out += '*';
		type_key(out, TREE_TYPE(t), depth);
		return;
	case REFERENCE_TYPE:
		out += '&';
		type_key(out, TREE_TYPE(t), depth);
		return;
	case ARRAY_TYPE: {
		tree dom = TYPE_DOMAIN(t);

		out += '[';
		if (dom && TYPE_MAX_VALUE(dom)) {
			tree lo = TYPE_MIN_VALUE(dom), hi = TYPE_MAX_VALUE(dom);

			if (tree_fits_shwi_p(hi) && (!lo || tree_fits_shwi_p(lo)))
				out += num(tree_to_shwi(hi) - (lo ? tree_to_shwi(lo) : 0) + 1);
			else
				out += '*';	/* variable length */
		}
		out += ']';
		type_key(out, TREE_TYPE(t), depth);
		return;
	}
	case FUNCTION_TYPE:
	case METHOD_TYPE:
		function_key(out, t, depth);
		return;
	case RECORD_TYPE:
	case UNION_TYPE:
	case QUAL_UNION_TYPE:
	case ENUMERAL_TYPE:
		out += kind(t);
		out += ' ';
		if (tree tag = tag_of(t)) {
			out += IDENTIFIER_POINTER(tag);
		} else if (depth > max_depth || !COMPLETE_TYPE_P(t)) {
			out += GK_ANON;
		} else {
			members(out, t, depth);
		}
		return;
	case COMPLEX_TYPE:
		out += "complex ";
		type_key(out, TREE_TYPE(t), depth);
		return;
	case VECTOR_TYPE: {
		poly_uint64 n = TYPE_VECTOR_SUBPARTS(t);

		out += "vector(" + (n.is_constant() ? num((HOST_WIDE_INT)n.to_constant()) : "?") + ")";
		type_key(out, TREE_TYPE(t), depth);
		return;
	}
	default:
		out += base_name(t);
		return;
	}
}

} // namespace

bool uq_type_in_header(tree t)
{
	const line_map_ordinary *map = nullptr;
	location_t loc;

	switch (TREE_CODE(t)) {
	case RECORD_TYPE:
	case UNION_TYPE:
	case QUAL_UNION_TYPE:
	case ENUMERAL_TYPE:
		break;
	default:
		return false;
	}
	/* Complete, and of a constant size: laid out. */
	if (!COMPLETE_TYPE_P(t) || TREE_CODE(TYPE_SIZE(t)) != INTEGER_CST)
		return false;
	loc = location_of(t);
	if (loc <= BUILTINS_LOCATION)
		return false;
	/* A type made by a macro is where the macro was used. */
	linemap_resolve_location(line_table, loc, LRK_MACRO_EXPANSION_POINT, &map);
	return map && !MAIN_FILE_P(map);
}

bool uq_type_has_name(tree t)
{
	return tag_of(t) != NULL_TREE;
}

void uq_type_keys_of(tree t, uq_typedef_name_fn typedef_name, uq_type_keys &out)
{
	location_t loc = linemap_resolve_location(line_table, location_of(t),
						  LRK_MACRO_EXPANSION_POINT, nullptr);
	expanded_location x = expand_location(loc);
	std::string &tag = out.tag;

	tag = kind(t);
	tag += ' ';
	if (tree n = tag_of(t)) {
		tag += IDENTIFIER_POINTER(n);
	} else if (tree n = typedef_name ? typedef_name(t) : NULL_TREE) {
		tag += '<';
		tag += IDENTIFIER_POINTER(n);
		tag += '>';
	} else {
		tag += GK_ANON;
	}
	tag += '@' + uq_normal_path(x.file) + ':' + num(x.line);

	out.layout = tag;
	out.layout += " size=" + cst(TYPE_SIZE_UNIT(t));
	out.layout += " align=" + num(TYPE_ALIGN_UNIT(t));
	out.layout += ' ';
	members(out.layout, t, 0);
}
