//===- GraphCheck.h - can the step be captured as a CUDA graph? -*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_CODEGEN_GPU_GRAPHCHECK_H
#define MSAMP_CODEGEN_GPU_GRAPHCHECK_H

#include "llvm/ADT/StringRef.h"

namespace mlir::msamp {

/// The module attribute msamp-gpu-graph-check sets: why the step's host
/// code cannot be replayed from a CUDA graph, with its location; "" when it
/// can.
constexpr llvm::StringLiteral kCudaGraphBlockerAttr =
    "msamp.cuda_graph_blocker";

} // namespace mlir::msamp

#endif // MSAMP_CODEGEN_GPU_GRAPHCHECK_H
