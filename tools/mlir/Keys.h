// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The keys of types and attributes: Collector gathers a value and,
// through walkImmediateSubElements(), everything it holds, once each; then
// interns them all, sub-elements first. A key's class is the value's
// dialect-qualified name (AbstractType::getName(),
// AbstractAttribute::getName()); its content is MLIR's printed form
// (key=printed), or that form with the text of each immediate sub-element
// replaced by MK_REF and the sub-element's handle (key=handles, as a
// StorageUniquer key holds its parameters' pointers). Either way two
// values get one handle exactly when their printed forms are equal.
#ifndef UNIQD_MLIR_COLLECTOR_KEYS_H
#define UNIQD_MLIR_COLLECTOR_KEYS_H

#include "UniqdMLIR.h"

#include "mlir/IR/Attributes.h"
#include "mlir/IR/Types.h"
#include "llvm/ADT/DenseMap.h"

namespace uniqd_mlir {

class Collector {
public:
  Collector(KeyKind kind, size_t maxKey) : kind(kind), maxKey(maxKey) {}

  // The node of T (or A) and, the first time, of all it holds; -1 for null.
  int type(mlir::Type t);
  int attr(mlir::Attribute a);

  // Append every node's key to KEYS and intern them (sub-elements first:
  // by height under key=handles, in one call under key=printed). False
  // after giving up.
  bool intern(const Config &cfg, std::vector<Key> &keys, Counts &n);

  // A node's handle once interned; 0 if its key was too long for the pool.
  uint64_t handle(int node, const std::vector<Key> &keys) const;

  size_t size() const { return nodes.size(); }

private:
  struct Node {
    std::string cls;
    std::string printed;
    std::vector<int> subs; // immediate sub-elements, in walk order
    int height = -1;       // -1 while being visited
    long key = -1;         // index in the keys, -1 if not interned
  };

  int add(const void *ptr, bool isType, mlir::Type t, mlir::Attribute a);
  std::string keyOf(const Node &x, const std::vector<Key> &keys) const;

  KeyKind kind;
  size_t maxKey;
  llvm::DenseMap<const void *, int> index;
  std::vector<Node> nodes;
};

} // namespace uniqd_mlir

#endif // UNIQD_MLIR_COLLECTOR_KEYS_H
