// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The uniqd MLIR plugin's parts: Sink.cpp (the configuration, the pool, the
// private table, the log, the stats, the one warning), Keys.cpp (the keys
// of a module's types and attributes), Passes.cpp (--uniqd-intern and
// --uniqd-symbols), Plugin.cpp (what mlir-opt --load-pass-plugin= calls).
// See Documentation/mlir.rst.
#ifndef UNIQD_MLIR_UNIQDMLIR_H
#define UNIQD_MLIR_UNIQDMLIR_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mlir {
class Attribute;
class Location;
class Operation;
class Type;
} // namespace mlir

namespace uniqd_mlir {

enum class Table { Uniqd, Private, None };
enum class KeyKind { Printed, Handles };

struct Config {
  std::string pool = "default";
  Table table = Table::Uniqd;
  KeyKind key = KeyKind::Printed;
  std::string log;   // empty: no log
  std::string stats; // empty: no stats
};

// One pass option as given (SET: it was given at all).
struct Setting {
  const char *key;
  bool set;
  std::string value;
};

// The configuration from the environment (UNIQD_MLIR_POOL, ...), then the
// pass's options over it; false after giving up (a bad value).
bool configure(Config &cfg, const std::vector<Setting> &options);

// Print "uniqd mlir plugin: WHAT; running without uniqd" once per process
// (stderr, never an MLIR diagnostic), and stay off.
void giveUp(const std::string &what);
bool isOff();

// One key: its class, its content; the handle and libuniqd's status bits
// after interning.
struct Key {
  std::string cls;
  std::string content;
  uint64_t handle = 0;
  unsigned status = 0;
};

struct Counts {
  uint64_t interns = 0, cached = 0, mapped = 0, syscalls = 0, created = 0;
  uint64_t bytes = 0;   // content bytes of the keys
  uint64_t skipped = 0; // keys longer than the pool takes
};

// The longest key the table takes (the device's max_key_len).
size_t maxKeyLen(const Config &cfg);

// Intern KEYS[first..] in one call of the table CFG names (uniqd: one
// uniqd_intern_many(); private: this process's table; none: nothing).
// False after giving up.
bool internKeys(const Config &cfg, std::vector<Key> &keys, size_t first, Counts &n);

// Append KEYS to the log and one stats line for UNIT, as configured.
void publishLog(const Config &cfg, const std::string &unit, const std::vector<Key> &keys,
                const Counts &n);

// FILE relative to the working directory when under it, else absolute;
// "." and ".." resolved by name.
std::string normalPath(const std::string &file);

// "file:line" of the first file location in LOC (a piece of
// --split-input-file counted in the whole file's lines), or "" when it has
// none.
std::string fileLine(mlir::Location loc);

// The name of the module at LOC: its file, or "file:N" for the piece of
// --split-input-file that starts at line N; "" when LOC has no file.
std::string unitName(mlir::Location loc);

} // namespace uniqd_mlir

#endif // UNIQD_MLIR_UNIQDMLIR_H
