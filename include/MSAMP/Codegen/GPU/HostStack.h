//===- HostStack.h - Buffers on the host step's own stack -------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The host code of a GPU step writes one kind of memory itself: its own
// stack, the tables of buffer addresses the multi-tensor runtime calls read
// (AdamGroupToRuntime.cpp, a `memref.alloca`). No kernel touches it, so
// writing it needs no wait for the stream (msamp-gpu-async-launches), and
// the same addresses are written at every capture of a CUDA graph
// (msamp-gpu-graph-check). Once the layers are functions
// (msamp-gpu-outline-layers) a table's rows are written by the layer that
// holds their tensors, through a function argument.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_CODEGEN_GPU_HOSTSTACK_H
#define MSAMP_CODEGEN_GPU_HOSTSTACK_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::msamp {

/// The buffers of `module`'s host code that are its own stack: every
/// `memref.alloca`, and each argument of a function the module defines
/// to which every call passes such a buffer.
class HostStack {
public:
  explicit HostStack(ModuleOp module);

  /// Whether `buffer` is host stack memory.
  bool contains(Value buffer) const;

private:
  llvm::DenseSet<Value> arguments;
};

} // namespace mlir::msamp

#endif // MSAMP_CODEGEN_GPU_HOSTSTACK_H
