// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// uniqd-mlir.so, a pass plugin for mlir-opt:
//
//	mlir-opt-19 --load-pass-plugin=uniqd-mlir.so --uniqd-intern='pool=build' ...
//
// Built from MLIR's headers alone (tools/mlir/CMakeLists.txt): MLIR's
// symbols stay undefined and bind to mlir-opt's own, so the plugin and the
// tool share one copy of MLIR (one MLIRContext, one set of TypeIDs).
// libuniqd is linked in, its symbols hidden; this is the only export.
#include "mlir/Tools/Plugins/PassPlugin.h"

#include "UniqdMLIR.h"

namespace uniqd_mlir {
void registerPasses();
} // namespace uniqd_mlir

extern "C" __attribute__((visibility("default"))) ::mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "uniqd", UNIQD_VERSION, [] { uniqd_mlir::registerPasses(); }};
}
