//===- CallSites.h - the calls of each function a module defines -*- C++
//-*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The GPU passes that change a function's arguments or reason about what
// every call passes it (msamp-gpu-static-arena's frames,
// msamp-gpu-stage-globals, msamp-gpu-mark-fresh-arguments, HostStack.h)
// look up a function's calls from one map built in one walk.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_CODEGEN_GPU_CALLSITES_H
#define MSAMP_CODEGEN_GPU_CALLSITES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::msamp {

/// Each function `module` defines (a body, not a declaration) to its
/// calls, in program order; a function nothing calls has no entry.
using CallSites = llvm::DenseMap<Operation *, SmallVector<func::CallOp>>;
CallSites collectCallSites(ModuleOp module, SymbolTable &symbols);

} // namespace mlir::msamp

#endif // MSAMP_CODEGEN_GPU_CALLSITES_H
