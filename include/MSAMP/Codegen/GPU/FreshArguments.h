//===- FreshArguments.h - arguments every call gives a buffer of its own -===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// A layer outlined before bufferization takes its results as out-parameters
// (buffer-results-to-out-params): every call passes a buffer its caller
// allocated for it alone. Inside the function such an argument is as much
// the function's own as an allocation: no other argument, global or
// allocation shares its memory. msamp-gpu-mark-fresh-arguments marks those
// arguments (kFreshArgAttr), and the GPU passes that need a buffer nothing
// else reaches (msamp-gpu-reduction-inits; the merges' buffer model,
// BufferAccesses.h) accept them like allocations.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_CODEGEN_GPU_FRESHARGUMENTS_H
#define MSAMP_CODEGEN_GPU_FRESHARGUMENTS_H

#include "mlir/IR/Value.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::msamp {

/// The unit argument attribute of a fresh argument.
constexpr llvm::StringLiteral kFreshArgAttr = "msamp.fresh";

/// Whether `root` (a buffer traced to its root) is the function's own: an
/// allocation of it, or an argument marked fresh.
bool isOwnBuffer(Value root);

} // namespace mlir::msamp

#endif // MSAMP_CODEGEN_GPU_FRESHARGUMENTS_H
