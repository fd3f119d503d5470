// SPDX-License-Identifier: GPL-2.0
/*
 * uniqd.so, the GCC plugin: interns every identifier of a translation unit,
 * its name, and the tag and layout keys of every struct, union and enum it
 * sees defined in a header into a uniqd pool, with one gcc.use record per
 * type saying "this unit saw this tag with this layout". `uniqdctl
 * layouts` then finds the tags a build saw with more than one layout.
 *
 *	gcc -fplugin=uniqd -fplugin-arg-uniqd-pool=NAME ...
 *
 * This file: the arguments, and following the compilation. Types are
 * collected as the front end finishes them (PLUGIN_FINISH_TYPE, held in a
 * GC root so that they outlive a collection), typedef names of anonymous
 * ones as their declarations finish (PLUGIN_FINISH_DECL), and the unit is
 * published once at its end: PLUGIN_FINISH_UNIT, or PLUGIN_FINISH when
 * there was no code generation (-fsyntax-only). See
 * Documentation/gcc-plugin.rst.
 */
#define INCLUDE_STRING
#define INCLUDE_VECTOR
#define INCLUDE_SET
#include "gcc-plugin.h"
#include "plugin-version.h"
#include "tree.h"
#include "toplev.h"
#include "diagnostic-core.h"
#include "ggc.h"
#include "gtype-desc.h"
#include "hash-set.h"
#include "hash-map.h"
#include "langhooks.h"

#include "plugin.h"
#include "layout.h"

/* The two symbols GCC looks up; everything else is hidden (-fvisibility). */
__attribute__((visibility("default"))) int plugin_is_GPL_compatible;

namespace {

const char *plugin_name = "uniqd";
uq_config cfg;
bool published;

/* Every complete aggregate type decided on (SEEN holds the same), and the
 * ones to publish, in the order first seen. GC roots: a pointer in SEEN
 * must not be freed and reused for another type. */
vec<tree, va_gc> *visited;
vec<tree, va_gc> *types;
hash_set<tree> *seen;
hash_map<tree, tree> *typedef_names;

const ggc_root_tab roots[] = {
	{ &visited, 1, sizeof(visited), &gt_ggc_mx_vec_tree_va_gc_, &gt_pch_nx_vec_tree_va_gc_ },
	{ &types, 1, sizeof(types), &gt_ggc_mx_vec_tree_va_gc_, &gt_pch_nx_vec_tree_va_gc_ },
	LAST_GGC_ROOT_TAB
};

struct plugin_info info = {
	UNIQD_VERSION,
	"interns identifiers and struct layouts into a uniqd pool; arguments "
	"pool=NAME table=uniqd|private|none log=FILE stats=FILE quiet[=1|0] "
	"(see Documentation/gcc-plugin.rst)",
};

/* quiet: no value (-fplugin-arg-uniqd-quiet) or 1 is on, 0 off; -1 for
 * another value. */
int parse_quiet(const char *value)
{
	if (!value || !strcmp(value, "1"))
		return 1;
	if (!strcmp(value, "0"))
		return 0;
	return -1;
}

/* Whether the build asked for no "compiling without uniqd" line: the
 * environment's UNIQD_PLUGIN_QUIET (1 or 0; empty is unset), then the
 * command line over it. A value that is neither counts as on here, so that
 * its own refusal is the only line (set() refuses it). */
bool quiet_asked(const plugin_name_args *args)
{
	const char *v = getenv("UNIQD_PLUGIN_QUIET");
	bool q = v && *v && parse_quiet(v) != 0;

	for (int i = 0; i < args->argc; i++)
		if (!strcmp(args->argv[i].key, "quiet"))
			q = parse_quiet(args->argv[i].value) != 0;
	return q;
}

/* Check one setting; false (after giving up) when it is invalid. */
bool set(const char *key, const char *value, const char *spelled)
{
	std::string k = key;

	if (k == "pool" || k == "table" || k == "log" || k == "stats") {
		if (!value || !*value) {
			uq_give_up(std::string(spelled) + " needs a value", true);
			return false;
		}
	}
	if (k == "pool") {
		if (strlen(value) > 255) {
			uq_give_up(std::string(spelled) + ": a pool name is at most 255 bytes", true);
			return false;
		}
		cfg.pool = value;
	} else if (k == "table") {
		if (!strcmp(value, "uniqd"))
			cfg.table = uq_table_kind::uniqd;
		else if (!strcmp(value, "private"))
			cfg.table = uq_table_kind::priv;
		else if (!strcmp(value, "none"))
			cfg.table = uq_table_kind::none;
		else {
			uq_give_up(std::string(spelled) + "=" + value +
				   ": the table is uniqd, private or none", true);
			return false;
		}
	} else if (k == "log") {
		cfg.log = value;
	} else if (k == "stats") {
		cfg.stats = value;
	} else if (k == "quiet") {
		/* Read by quiet_asked() before anything could give up. */
		if (parse_quiet(value) < 0) {
			uq_give_up(std::string(spelled) + "=" + value + ": quiet is 1 or 0", true);
			return false;
		}
	} else {
		uq_give_up(std::string("unknown argument ") + spelled, true);
		return false;
	}
	return true;
}

/* The environment first, then the command line over it. */
bool configure(const plugin_name_args *args)
{
	static const char *const env[][2] = {
		{ "pool", "UNIQD_PLUGIN_POOL" }, { "table", "UNIQD_PLUGIN_TABLE" },
		{ "log", "UNIQD_PLUGIN_LOG" }, { "stats", "UNIQD_PLUGIN_STATS" },
		{ "quiet", "UNIQD_PLUGIN_QUIET" },
	};

	for (const auto &e : env) {
		const char *v = getenv(e[1]);

		if (v && !*v && !strcmp(e[0], "quiet"))
			continue;	/* UNIQD_PLUGIN_QUIET= is unset */
		if (v && !set(e[0], v, e[1]))
			return false;
	}
	for (int i = 0; i < args->argc; i++) {
		std::string spelled = std::string("-fplugin-arg-") + plugin_name + "-" +
				      args->argv[i].key;

		if (!set(args->argv[i].key, args->argv[i].value, spelled.c_str()))
			return false;
	}
	return true;
}

void note_type(tree t);

/* Members' types defined inside a struct get no FINISH_TYPE of their own. */
void note_members(tree t)
{
	if (TREE_CODE(t) == ENUMERAL_TYPE)
		return;
	for (tree f = TYPE_FIELDS(t); f; f = DECL_CHAIN(f)) {
		if (TREE_CODE(f) != FIELD_DECL)
			continue;
		tree ft = TREE_TYPE(f);

		while (ft && (TREE_CODE(ft) == ARRAY_TYPE || TREE_CODE(ft) == POINTER_TYPE))
			ft = TREE_TYPE(ft);
		if (ft)
			note_type(ft);
	}
}

void note_type(tree t)
{
	if (!t || t == error_mark_node || !TYPE_P(t))
		return;
	t = TYPE_MAIN_VARIANT(t);
	/* C fires FINISH_TYPE at every mention: decide once per complete type
	 * (an incomplete one may be completed later), cheapest test first. */
	if (!RECORD_OR_UNION_TYPE_P(t) && TREE_CODE(t) != ENUMERAL_TYPE)
		return;
	if (!COMPLETE_TYPE_P(t) || seen->add(t))
		return;
	vec_safe_push(visited, t);
	if (!uq_type_in_header(t))
		return;
	vec_safe_push(types, t);
	note_members(t);
}

void on_finish_type(void *gcc_data, void *)
{
	note_type((tree)gcc_data);
}

/* `typedef struct { ... } name;`: C leaves the struct nameless; remember
 * the first typedef of it, for its tag key. */
void on_finish_decl(void *gcc_data, void *)
{
	tree d = (tree)gcc_data;
	tree orig;

	if (!d || TREE_CODE(d) != TYPE_DECL || !DECL_NAME(d))
		return;
	orig = DECL_ORIGINAL_TYPE(d);
	if (!orig || orig != TYPE_MAIN_VARIANT(orig) || !seen->contains(orig))
		return;
	if (!typedef_names->get(orig))
		typedef_names->put(orig, DECL_NAME(d));
}

tree typedef_name(tree t)
{
	tree *n = typedef_names->get(t);

	return n ? *n : NULL_TREE;
}

int add_ident(cpp_reader *, hashnode node, const void *data)
{
	auto *idents = (std::vector<std::pair<const char *, size_t>> *)const_cast<void *>(data);

	idents->emplace_back((const char *)HT_STR(node), (size_t)HT_LEN(node));
	return 1;
}

void publish()
{
	std::set<std::string> done;
	uq_unit unit;
	unsigned i;
	tree t;

	if (published || uq_off() || in_lto_p)
		return;
	published = true;
	unit.name = uq_normal_path(main_input_filename);
	ht_forall(ident_hash, add_ident, &unit.idents);
	FOR_EACH_VEC_SAFE_ELT(types, i, t) {
		uq_type_keys k;

		/* An anonymous type no typedef names lives inline in the layout
		 * of what contains it, and has no identity of its own. */
		if (!uq_type_has_name(t) && !typedef_name(t))
			continue;
		uq_type_keys_of(t, typedef_name, k);
		/* A header read twice (no include guard) gives one key twice. */
		if (done.insert(k.tag + '\n' + k.layout).second)
			unit.types.push_back(std::move(k));
	}
	uq_publish(cfg, unit);
}

void on_finish_unit(void *, void *)
{
	publish();
}

/* Without code generation (-fsyntax-only) FINISH_UNIT never comes. A unit
 * with errors makes no object and publishes nothing. */
void on_finish(void *, void *)
{
	if (!seen_error())
		publish();
}

} // namespace

__attribute__((visibility("default")))
int plugin_init(struct plugin_name_args *args, struct plugin_gcc_version *version)
{
	plugin_name = args->base_name;
	uq_unrecord_options(plugin_name);
	register_callback(plugin_name, PLUGIN_INFO, nullptr, &info);
	uq_set_quiet(quiet_asked(args));

	/* Returning an error would fail the compilation: give up instead. The
	 * plugin ABI is GCC's release; Debian's revisions of it stay loadable. */
	if (strcmp(version->basever, gcc_version.basever)) {
		uq_give_up(std::string("built for GCC ") + gcc_version.basever +
			   ", loaded into GCC " + version->basever);
		return 0;
	}
	if (!configure(args))
		return 0;
	/* -E makes no unit (and lto1, which publish() tells by in_lto_p, sees
	 * no front end). */
	if (flag_preprocess_only)
		return 0;

	seen = new hash_set<tree>;
	typedef_names = new hash_map<tree, tree>;
	/* Layouts are C's: a C++ tag would need its template arguments and
	 * namespace to name one type (and C++ has -Wodr); C++ units publish
	 * their identifiers and name only. (C's name is "GNU C17" etc.) */
	if (!strncmp(lang_hooks.name, "GNU C", 5) && strchr("0123456789", lang_hooks.name[5])) {
		register_callback(plugin_name, PLUGIN_REGISTER_GGC_ROOTS, nullptr,
				  const_cast<ggc_root_tab *>(roots));
		register_callback(plugin_name, PLUGIN_FINISH_TYPE, on_finish_type, nullptr);
		register_callback(plugin_name, PLUGIN_FINISH_DECL, on_finish_decl, nullptr);
	}
	register_callback(plugin_name, PLUGIN_FINISH_UNIT, on_finish_unit, nullptr);
	register_callback(plugin_name, PLUGIN_FINISH, on_finish, nullptr);
	return 0;
}
