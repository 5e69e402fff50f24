//===- StreamOrderedCalls.h - Runtime calls that run on the stream -*- C++ -*-//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// What the CUDA backend does with a compiled step's runtime calls, as the
// GPU passes must know it: which calls only enqueue work on the session's
// stream (msamp-gpu-async-launches does not wait before them), and how many
// times one of them still waits for the stream itself (gpu_cost.json's
// host_syncs; a CUDA graph cannot capture a wait, msamp-gpu-graph-check).
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_CODEGEN_GPU_STREAMORDEREDCALLS_H
#define MSAMP_CODEGEN_GPU_STREAMORDEREDCALLS_H

#include "llvm/ADT/StringRef.h"

namespace mlir::msamp {

/// Runtime entry points the CUDA backend runs as work on its stream: ordered
/// after earlier launches without the step waiting, and returning before
/// that work is done. None reads a value back to the host with a compiled
/// step's buffers (device memory): the optimizers read lr and step on the
/// device (lib/Runtime/CUDA/optimizer), so each is capturable in a CUDA
/// graph and costs no host synchronization.
bool isStreamOrderedCall(llvm::StringRef callee);

} // namespace mlir::msamp

#endif // MSAMP_CODEGEN_GPU_STREAMORDEREDCALLS_H
