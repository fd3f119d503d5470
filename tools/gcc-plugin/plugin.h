// SPDX-License-Identifier: GPL-2.0
/*
 * The uniqd GCC plugin's parts, in plain C++ (no GCC header), so that only
 * plugin.cc and layout.cc need GCC's: plugin.cc reads the arguments and
 * follows the compilation, layout.cc writes the keys of GCC's types,
 * sink.cc interns a unit's keys into the table asked for (table.cc is the
 * private one) and writes the log and stats, path.cc normalises file names.
 */
#ifndef UNIQD_GCC_PLUGIN_H
#define UNIQD_GCC_PLUGIN_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

enum class uq_table_kind { uniqd, priv, none };

struct uq_config {
	std::string pool = "default";
	uq_table_kind table = uq_table_kind::uniqd;
	std::string log;	/* empty: no log */
	std::string stats;	/* empty: no stats */
};

/* A tag and its layout key, as layout.cc writes them. */
struct uq_type_keys {
	std::string tag;
	std::string layout;
};

/* Everything one unit publishes. IDENTS point into GCC's string pool. */
struct uq_unit {
	std::string name;
	std::vector<std::pair<const char *, size_t>> idents;
	std::vector<uq_type_keys> types;
};

/* sink.cc */
/* Print "uniqd plugin: WHAT; compiling without uniqd" once, then stay off.
 * Quiet (-fplugin-arg-uniqd-quiet, UNIQD_PLUGIN_QUIET=1) stays off without
 * the line, except for a bad argument or environment value (ALWAYS): a
 * mistake in the build's flags is not the machine's lack of uniqd. */
void uq_give_up(const std::string &what, bool always = false);
void uq_set_quiet(bool quiet);
bool uq_off();
void uq_publish(const uq_config &cfg, const uq_unit &unit);

/* table.cc: the per-process table of table=private. */
uint64_t uq_private_intern(uint32_t class_id, const void *data, size_t len,
			   bool *created);
/* The bytes the private table has allocated: its slots, its entry records
 * and its copies of the keys (what the vectors hold, capacity included). */
uint64_t uq_private_bytes();

/* unrecord.cc: keep -fplugin=BASE and its arguments out of the object. */
void uq_unrecord_options(const char *base);

/* path.cc: FILE relative to the working directory when under it, else
 * absolute; "." and ".." resolved by name (not through symbolic links). */
std::string uq_normal_path(const char *file);

#endif /* UNIQD_GCC_PLUGIN_H */
