// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Collector: see Keys.h.
#include "Keys.h"

#include "mlir/IR/AttributeSupport.h"
#include "mlir/IR/TypeSupport.h"
#include "llvm/Support/raw_ostream.h"

#include "mlir_keys.h"

namespace uniqd_mlir {

int Collector::type(mlir::Type t) {
  if (!t)
    return -1;
  return add(t.getAsOpaquePointer(), true, t, mlir::Attribute());
}

int Collector::attr(mlir::Attribute a) {
  if (!a)
    return -1;
  return add(a.getAsOpaquePointer(), false, mlir::Type(), a);
}

// Types and attributes are uniqued by their context: one storage object,
// one pointer, per value, and a type's storage is never an attribute's.
int Collector::add(const void *ptr, bool isType, mlir::Type t, mlir::Attribute a) {
  auto found = index.find(ptr);
  if (found != index.end())
    return found->second;
  int self = (int)nodes.size();
  index[ptr] = self;
  nodes.emplace_back();

  // Sub-elements first (nodes may grow: no reference into it is kept).
  std::vector<int> subs;
  auto onAttr = [&](mlir::Attribute sub) { subs.push_back(attr(sub)); };
  auto onType = [&](mlir::Type sub) { subs.push_back(type(sub)); };
  llvm::StringRef name;
  std::string printed;
  llvm::raw_string_ostream os(printed);
  if (isType) {
    t.walkImmediateSubElements(onAttr, onType);
    name = t.getAbstractType().getName();
    t.print(os);
  } else {
    a.walkImmediateSubElements(onAttr, onType);
    name = a.getAbstractAttribute().getName();
    a.print(os);
  }
  os.flush();

  int height = 0;
  for (int s : subs)
    if (s >= 0 && nodes[s].height >= 0)
      height = std::max(height, nodes[s].height + 1);
  Node &n = nodes[self];
  n.cls = name.empty() ? (isType ? "mlir.type" : "mlir.attribute") : name.str();
  n.printed = std::move(printed);
  n.subs = std::move(subs);
  n.height = height;
  return self;
}

// key=handles: the printed form, each immediate sub-element's own printed
// text (searched left to right, in walk order) replaced by MK_REF and its
// handle. A sub-element not found in the text, or without a handle (too
// long, or on a cycle), stays text. Printed text never holds the byte
// MK_REF (the printer escapes control characters), so putting each
// handle's printed form back gives the printed form: equal keys, equal
// printed forms; and equal printed forms are equal values, whose
// sub-elements, walk order and handles are equal: equal keys.
std::string Collector::keyOf(const Node &x, const std::vector<Key> &keys) const {
  if (kind == KeyKind::Printed || x.subs.empty())
    return x.printed;
  std::string out;
  size_t cur = 0;
  for (int s : x.subs) {
    if (s < 0)
      continue;
    const Node &c = nodes[s];
    if (c.height < 0 || c.height >= x.height || c.key < 0 || !keys[c.key].handle ||
        c.printed.empty())
      continue;
    size_t at = x.printed.find(c.printed, cur);
    if (at == std::string::npos)
      continue;
    unsigned char ref[MK_REF_LEN];
    ref[0] = MK_REF;
    uq_le_put64(ref + 1, keys[c.key].handle);
    out.append(x.printed, cur, at - cur);
    out.append(reinterpret_cast<const char *>(ref), sizeof(ref));
    cur = at + c.printed.size();
  }
  out.append(x.printed, cur, std::string::npos);
  return out;
}

bool Collector::intern(const Config &cfg, std::vector<Key> &keys, Counts &n) {
  int top = 0;
  for (const Node &x : nodes)
    top = std::max(top, x.height);
  if (kind == KeyKind::Printed)
    top = 0;
  for (int h = 0; h <= top; h++) {
    size_t first = keys.size();
    for (Node &x : nodes) {
      if (kind == KeyKind::Handles && x.height != h)
        continue;
      std::string content = keyOf(x, keys);
      if (content.size() > maxKey) {
        n.skipped++;
        continue;
      }
      x.key = (long)keys.size();
      keys.push_back(Key{x.cls, std::move(content)});
    }
    if (keys.size() > first && !internKeys(cfg, keys, first, n))
      return false;
  }
  return true;
}

uint64_t Collector::handle(int node, const std::vector<Key> &keys) const {
  if (node < 0 || nodes[node].key < 0)
    return 0;
  return keys[nodes[node].key].handle;
}

} // namespace uniqd_mlir
