// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The passes: --uniqd-intern interns every type and attribute a module
// holds; --uniqd-symbols records what each module sees of every func.func
// and llvm.func symbol. Both only read the IR (every analysis is kept) and
// never fail: a bad option, a missing device or pool, a full pool, give up
// with one line on stderr and leave mlir-opt's output as it would be
// without them.
#include "Keys.h"
#include "UniqdMLIR.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

#include "mlir_keys.h"

namespace uniqd_mlir {
namespace {

// The options both passes take, and the one place that reads them.
template <typename PassT>
class UniqdPass : public mlir::PassWrapper<PassT, mlir::OperationPass<mlir::ModuleOp>> {
public:
  UniqdPass() = default;
  UniqdPass(const UniqdPass &other)
      : mlir::PassWrapper<PassT, mlir::OperationPass<mlir::ModuleOp>>(other),
        optionError(other.optionError) {}

  // A bad option must not fail the pipeline: remember it, give up when run.
  mlir::LogicalResult
  initializeOptions(llvm::StringRef options,
                    llvm::function_ref<mlir::LogicalResult(const llvm::Twine &)>) override {
    std::string why;
    if (mlir::failed(mlir::Pass::initializeOptions(options, [&](const llvm::Twine &msg) {
          why = msg.str();
          return mlir::failure();
        }))) {
      // MLIR's message, on one line, without its parser's name.
      llvm::StringRef w = llvm::StringRef(why).trim();
      w.consume_front("<Pass-Options-Parser>: ");
      std::string line = w.empty() ? std::string("bad options") : w.str();
      for (char &ch : line)
        if (ch == '\n')
          ch = ' ';
      optionError = this->getArgument().str() + "{" + options.str() + "}: " + line;
    }
    return mlir::success();
  }

protected:
  using Base = mlir::PassWrapper<PassT, mlir::OperationPass<mlir::ModuleOp>>;
  template <typename T> using Option = typename Base::template Option<T>;

  Option<std::string> pool{*this, "pool", llvm::cl::desc("the uniqd pool (it must exist)")};
  Option<std::string> table{*this, "table",
                            llvm::cl::desc("uniqd, private (this process's own table) or none")};
  Option<std::string> key{*this, "key",
                          llvm::cl::desc("printed (MLIR's printed form) or handles")};
  Option<std::string> log{*this, "log", llvm::cl::desc("append a line per interned key")};
  Option<std::string> stats{*this, "stats", llvm::cl::desc("append a line per module")};

  // The configuration, or false when the plugin is off.
  bool setUp(Config &cfg) {
    if (!optionError.empty())
      giveUp(optionError);
    if (isOff())
      return false;
    std::vector<Setting> given;
    for (auto *o : {&pool, &table, &key, &log, &stats})
      given.push_back(Setting{o->ArgStr.data(), o->getNumOccurrences() > 0, o->getValue()});
    return configure(cfg, given);
  }

  // Both passes: nothing of the module changes; the options, then the
  // pass's own walk (PassT::run) unless the plugin is off.
  void runOnOperation() final {
    this->markAllAnalysesPreserved();
    Config cfg;
    if (!setUp(cfg))
      return;
    Collector c(cfg.key, maxKeyLen(cfg));
    if (isOff())
      return;
    static_cast<PassT *>(this)->run(this->getOperation(), cfg, c);
  }

  // The module's name: its file relative to the working directory (and
  // its first line, for a piece of --split-input-file).
  static std::string unitOf(mlir::ModuleOp m) {
    std::string u = unitName(m.getLoc());
    return u.empty() ? std::string("<unknown>") : u;
  }

  std::string optionError;
};

class InternPass : public UniqdPass<InternPass> {
public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(InternPass)

  llvm::StringRef getArgument() const final { return "uniqd-intern"; }
  llvm::StringRef getDescription() const final {
    return "Intern every type and attribute of the module into a uniqd pool "
           "(Documentation/mlir.rst)";
  }

  void run(mlir::ModuleOp m, const Config &cfg, Collector &c) {
    m->walk([&](mlir::Operation *op) {
      for (mlir::Type t : op->getResultTypes())
        c.type(t);
      for (mlir::Value v : op->getOperands())
        c.type(v.getType());
      // Inherent attributes (properties) included.
      c.attr(op->getAttrDictionary());
      for (mlir::Region &r : op->getRegions())
        for (mlir::Block &b : r)
          for (mlir::BlockArgument a : b.getArguments())
            c.type(a.getType());
    });
    std::string unit = unitOf(m);
    std::vector<Key> keys;
    Counts n;
    keys.push_back(Key{MK_CLASS_MODULE, unit});
    if (!internKeys(cfg, keys, 0, n) || !c.intern(cfg, keys, n))
      return;
    publishLog(cfg, unit, keys, n);
  }
};

class SymbolsPass : public UniqdPass<SymbolsPass> {
public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(SymbolsPass)

  llvm::StringRef getArgument() const final { return "uniqd-symbols"; }
  llvm::StringRef getDescription() const final {
    return "Record each func.func and llvm.func symbol the module declares or defines, "
           "with its function type, in a uniqd pool (uniqdctl symbols checks them)";
  }

  void run(mlir::ModuleOp m, const Config &cfg, Collector &c) {
    std::string unit = unitOf(m);
    struct Seen {
      size_t name, kind, loc; // indexes into keys
      int type;               // the collector's node
    };
    std::vector<Key> keys;
    std::vector<Seen> seen;
    keys.push_back(Key{MK_CLASS_MODULE, unit});
    m->walk([&](mlir::FunctionOpInterface fn) {
      mlir::Operation *op = fn.getOperation();
      llvm::StringRef opName = op->getName().getStringRef();
      bool llvmFunc = opName == "llvm.func";
      if (!llvmFunc && opName != "func.func")
        return;
      bool decl = fn.isExternal();
      // A definition local to its module is no one else's business.
      if (!decl && isLocal(op, llvmFunc))
        return;
      mlir::StringAttr name = mlir::SymbolTable::getSymbolName(op);
      if (!name)
        return;
      std::string where = fileLine(op->getLoc());
      Seen s;
      s.name = keys.size();
      keys.push_back(Key{MK_CLASS_NAME, name.str()});
      s.kind = keys.size();
      keys.push_back(Key{MK_CLASS_KIND, llvmFunc ? (decl ? MK_KIND_LLVM_DECL : MK_KIND_LLVM_DEF)
                                                 : (decl ? MK_KIND_FUNC_DECL : MK_KIND_FUNC_DEF)});
      s.loc = keys.size();
      keys.push_back(Key{MK_CLASS_LOC, where.empty() ? unit : where});
      s.type = c.type(fn.getFunctionType());
      seen.push_back(s);
    });
    Counts n;
    if (!internKeys(cfg, keys, 0, n) || !c.intern(cfg, keys, n))
      return;
    // The records hold the handles: interned last.
    size_t first = keys.size();
    for (const Seen &s : seen) {
      mk_symbol r = {keys[0].handle, keys[s.name].handle, c.handle(s.type, keys),
                     keys[s.kind].handle, keys[s.loc].handle};
      unsigned char buf[MK_SYMBOL_LEN];
      mk_symbol_encode(buf, &r);
      keys.push_back(Key{MK_CLASS_SYMBOL, std::string(reinterpret_cast<char *>(buf), sizeof(buf))});
    }
    if (keys.size() > first && !internKeys(cfg, keys, first, n))
      return;
    publishLog(cfg, unit, keys, n);
  }

private:
  // func.func: private visibility; llvm.func: internal or private linkage.
  static bool isLocal(mlir::Operation *op, bool llvmFunc) {
    if (!llvmFunc)
      return mlir::SymbolTable::getSymbolVisibility(op) ==
             mlir::SymbolTable::Visibility::Private;
    std::optional<mlir::Attribute> linkage = op->getInherentAttr("linkage");
    if (!linkage || !*linkage)
      return false;
    std::string s;
    llvm::raw_string_ostream os(s);
    linkage->print(os);
    os.flush();
    return s.find("<internal>") != std::string::npos ||
           s.find("<private>") != std::string::npos;
  }
};

} // namespace

void registerPasses() {
  mlir::registerPass([] { return std::make_unique<InternPass>(); });
  mlir::registerPass([] { return std::make_unique<SymbolsPass>(); });
}

} // namespace uniqd_mlir
