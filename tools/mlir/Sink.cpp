// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Where the keys go: the configuration, the uniqd pool (through
// <uniqd.hpp>, built -fno-exceptions like MLIR), the private table of
// table=private, the log, the stats and the one warning.
//
// Nothing here may fail the user's mlir-opt: every error ends in giveUp(),
// one line on stderr (never an MLIR diagnostic, so no --verify-diagnostics
// or error count sees it), and the plugin stays off for the rest of the
// process; the IR is never touched.
#include "UniqdMLIR.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <unistd.h>
#include <unordered_map>

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <uniqd.hpp>

namespace uniqd_mlir {
namespace {

std::mutex lock; // everything below but givenUp
std::atomic<bool> givenUp{false};

// One attached pool per name, for the process's life (a pool the plugin
// created would die with mlir-opt: it never creates one).
struct Attached {
  uniqd::pool pool;
  std::unordered_map<std::string, uint32_t> classes;
  size_t maxKey = UNIQD_KEY_MAX_FALLBACK;
  static constexpr size_t UNIQD_KEY_MAX_FALLBACK = 1u << 20;
};
std::map<std::string, Attached> pools;

// table=private: this process's table, dense handles from 1; the class is
// part of the key, as in a pool.
std::unordered_map<std::string, uint64_t> privateTable;
std::unordered_map<std::string, uint32_t> privateClasses;
// The private table's memory but its bucket array: a node per entry (the
// key string, the handle, the cached hash, the next pointer) and each key's
// own buffer once it outgrows the string's inline storage. The stats'
// bytes=, which the corpus benchmark sets against the pool's bytes.
size_t privateNodeBytes;

size_t privateBytes() {
  if (privateTable.empty())
    return 0;
  return privateNodeBytes + privateTable.bucket_count() * sizeof(void *);
}

Attached *attach(const Config &cfg) {
  auto it = pools.find(cfg.pool);
  if (it != pools.end())
    return &it->second;
  std::error_code ec;
  uniqd::pool p = uniqd::pool::open(cfg.pool, UNIQD_OPEN_EXISTING, ec);
  if (ec) {
    giveUp(uniqd::last_error());
    return nullptr;
  }
  Attached &a = pools[cfg.pool];
  struct uniqd_pool_info info = p.info(ec);
  if (!ec && info.device.max_key_len)
    a.maxKey = info.device.max_key_len;
  a.pool = std::move(p);
  return &a;
}

uint32_t classOf(Attached &a, const std::string &name) {
  auto it = a.classes.find(name);
  if (it != a.classes.end())
    return it->second;
  std::error_code ec;
  uint32_t id = a.pool.register_class(name, ec).value();
  if (ec) {
    giveUp(uniqd::last_error());
    return 0;
  }
  a.classes.emplace(name, id);
  return id;
}

bool setOne(Config &cfg, const std::string &key, const std::string &value,
            const std::string &spelled) {
  if (value.empty()) {
    giveUp(spelled + " needs a value");
    return false;
  }
  if (key == "pool") {
    if (value.size() > 255) {
      giveUp(spelled + ": a pool name is at most 255 bytes");
      return false;
    }
    cfg.pool = value;
  } else if (key == "table") {
    if (value == "uniqd")
      cfg.table = Table::Uniqd;
    else if (value == "private")
      cfg.table = Table::Private;
    else if (value == "none")
      cfg.table = Table::None;
    else {
      giveUp(spelled + "=" + value + ": the table is uniqd, private or none");
      return false;
    }
  } else if (key == "key") {
    if (value == "printed")
      cfg.key = KeyKind::Printed;
    else if (value == "handles")
      cfg.key = KeyKind::Handles;
    else {
      giveUp(spelled + "=" + value + ": the key is printed or handles");
      return false;
    }
  } else if (key == "log") {
    cfg.log = value;
  } else if (key == "stats") {
    cfg.stats = value;
  }
  return true;
}

// Append BUF to FILE in one write(), so that the lines of parallel
// mlir-opt processes never interleave.
void append(const std::string &file, const std::string &buf) {
  int fd = open(file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
  size_t done = 0;

  if (fd < 0) {
    giveUp("cannot open " + file + ": " + strerror(errno));
    return;
  }
  while (done < buf.size()) {
    ssize_t w = write(fd, buf.data() + done, buf.size() - done);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0) {
      giveUp("cannot write " + file + ": " + strerror(errno));
      break;
    }
    done += (size_t)w;
  }
  close(fd);
}

} // namespace

void giveUp(const std::string &what) {
  if (givenUp.exchange(true))
    return;
  fprintf(stderr, "uniqd mlir plugin: %s; running without uniqd\n", what.c_str());
  fflush(stderr);
}

bool isOff() { return givenUp; }

bool configure(Config &cfg, const std::vector<Setting> &options) {
  static const char *const env[][2] = {
      {"pool", "UNIQD_MLIR_POOL"}, {"table", "UNIQD_MLIR_TABLE"}, {"key", "UNIQD_MLIR_KEY"},
      {"log", "UNIQD_MLIR_LOG"},   {"stats", "UNIQD_MLIR_STATS"},
  };
  std::lock_guard<std::mutex> g(lock);

  if (givenUp)
    return false;
  for (const auto &e : env) {
    const char *v = getenv(e[1]);
    if (v && !setOne(cfg, e[0], v, e[1]))
      return false;
  }
  for (const Setting &s : options)
    if (s.set && !setOne(cfg, s.key, s.value, s.key))
      return false;
  return true;
}

size_t maxKeyLen(const Config &cfg) {
  std::lock_guard<std::mutex> g(lock);
  if (cfg.table != Table::Uniqd)
    return Attached::UNIQD_KEY_MAX_FALLBACK;
  Attached *a = givenUp ? nullptr : attach(cfg);
  return a ? a->maxKey : 0;
}

bool internKeys(const Config &cfg, std::vector<Key> &keys, size_t first, Counts &n) {
  std::lock_guard<std::mutex> g(lock);

  if (givenUp)
    return false;
  n.interns += keys.size() - first;
  for (size_t i = first; i < keys.size(); i++)
    n.bytes += keys[i].content.size();
  switch (cfg.table) {
  case Table::None:
    return true;
  case Table::Private:
    for (size_t i = first; i < keys.size(); i++) {
      Key &k = keys[i];
      uint32_t cls = privateClasses.emplace(k.cls, (uint32_t)privateClasses.size() + 1)
                         .first->second;
      std::string key(reinterpret_cast<const char *>(&cls), sizeof(cls));
      key += k.content;
      auto r = privateTable.emplace(std::move(key), (uint64_t)privateTable.size() + 1);
      k.handle = r.first->second;
      k.status = r.second ? UNIQD_CREATED : 0;
      n.created += r.second;
      if (r.second) {
        size_t cap = r.first->first.capacity();
        privateNodeBytes += sizeof(*r.first) + 2 * sizeof(void *) +
                            (cap > std::string().capacity() ? cap + 1 : 0);
      }
    }
    return true;
  case Table::Uniqd:
    break;
  }
  Attached *a = attach(cfg);
  if (!a)
    return false;
  std::vector<uniqd_item> items(keys.size() - first);
  for (size_t i = first; i < keys.size(); i++) {
    uniqd_item &it = items[i - first];
    it.data = keys[i].content.data();
    it.len = keys[i].content.size();
    it.class_id = classOf(*a, keys[i].cls);
    if (!it.class_id)
      return false;
  }
  std::error_code ec;
  a->pool.intern_many(items.data(), items.size(), 0, ec);
  if (ec) {
    giveUp(uniqd::last_error());
    return false;
  }
  for (size_t i = first; i < keys.size(); i++) {
    const uniqd_item &it = items[i - first];
    keys[i].handle = it.handle;
    keys[i].status = it.status;
    n.cached += !!(it.status & UNIQD_CACHED);
    n.mapped += !!(it.status & UNIQD_MAPPED);
    n.syscalls += !(it.status & (UNIQD_CACHED | UNIQD_MAPPED));
    n.created += !!(it.status & UNIQD_CREATED);
  }
  return true;
}

void publishLog(const Config &cfg, const std::string &unit, const std::vector<Key> &keys,
                const Counts &n) {
  static const char hex[] = "0123456789abcdef";

  if (isOff())
    return;
  if (!cfg.log.empty() && cfg.table != Table::None) {
    std::string out;
    char head[32];
    for (const Key &k : keys) {
      snprintf(head, sizeof(head), "%016llx\t", (unsigned long long)k.handle);
      out += head;
      out += k.cls;
      out += '\t';
      for (unsigned char c : k.content) {
        out += hex[c >> 4];
        out += hex[c & 15];
      }
      out += '\n';
    }
    std::lock_guard<std::mutex> g(lock);
    append(cfg.log, out);
  }
  if (!cfg.stats.empty()) {
    std::lock_guard<std::mutex> g(lock);
    char line[512];
    snprintf(line, sizeof(line),
             " interns=%llu cached=%llu mapped=%llu syscalls=%llu created=%llu "
             "key_bytes=%llu skipped=%llu bytes=%llu\n",
             (unsigned long long)n.interns, (unsigned long long)n.cached,
             (unsigned long long)n.mapped, (unsigned long long)n.syscalls,
             (unsigned long long)n.created, (unsigned long long)n.bytes,
             (unsigned long long)n.skipped, (unsigned long long)privateBytes());
    append(cfg.stats, "module=" + unit + line);
  }
}

std::string normalPath(const std::string &file) {
  llvm::SmallString<256> abs(file), cwd;

  if (file.empty() || file == "-" || file == "<stdin>")
    return file;
  if (llvm::sys::fs::current_path(cwd))
    return file;
  llvm::sys::fs::make_absolute(cwd, abs);
  llvm::sys::path::remove_dots(abs, /*remove_dot_dot=*/true);
  llvm::StringRef a = abs.str(), d = cwd.str();
  if (d == "/")
    return a.drop_front().str();
  if (a.size() > d.size() && a.starts_with(d) && a[d.size()] == '/')
    return a.drop_front(d.size() + 1).str();
  return a.str();
}

namespace {

// A file location's file, line and, for a piece of --split-input-file
// (MLIR 19 names its buffer "within split at FILE:N offset " and counts
// lines from the piece's start), the piece's first line N; 0 otherwise.
struct Where {
  std::string file;
  unsigned line = 0, split = 0;
};

bool whereOf(mlir::Location loc, Where &w) {
  static const llvm::StringLiteral pre("within split at "), post(" offset ");
  bool found = false;

  loc->walk([&](mlir::Location l) {
    auto f = llvm::dyn_cast<mlir::FileLineColLoc>(l);
    if (!f)
      return mlir::WalkResult::advance();
    llvm::StringRef name = f.getFilename().getValue();
    w.line = f.getLine();
    w.split = 0;
    if (name.starts_with(pre) && name.ends_with(post)) {
      llvm::StringRef inner = name.drop_front(pre.size()).drop_back(post.size());
      auto colon = inner.rfind(':');
      unsigned n = 0;
      if (colon != llvm::StringRef::npos && !inner.drop_front(colon + 1).getAsInteger(10, n)) {
        name = inner.take_front(colon);
        w.split = n;
        if (w.line)
          w.line += n - 1;
      }
    }
    w.file = normalPath(name.str());
    found = true;
    return mlir::WalkResult::interrupt();
  });
  return found;
}

} // namespace

std::string fileLine(mlir::Location loc) {
  Where w;

  if (!whereOf(loc, w))
    return "";
  return w.file + ":" + std::to_string(w.line);
}

std::string unitName(mlir::Location loc) {
  Where w;

  if (!whereOf(loc, w))
    return "";
  return w.split ? w.file + ":" + std::to_string(w.split) : w.file;
}

} // namespace uniqd_mlir
