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

#include <cstdint>

namespace mlir::msamp {

/// Runtime entry points the CUDA backend runs as work on its stream: ordered
/// after earlier launches without the step waiting, and returning before
/// that work is done (any value it reads on the host, SGD's lr and step, it
/// copies after a stream synchronization of its own).
bool isStreamOrderedCall(llvm::StringRef callee);

/// Host synchronizations of one runtime entry point on the CUDA backend
/// with a compiled step's buffers (device or managed memory): its
/// Staging::finish does not wait (Staging.h), and Adam reads step and lr on
/// the device (optimizer/adam.cu), but SGD still reads them back to the
/// host first, one synchronization each (lib/Runtime/CUDA/CudaBackend.cpp,
/// readStepAndLr).
int64_t syncsOfLibraryCall(llvm::StringRef callee);

} // namespace mlir::msamp

#endif // MSAMP_CODEGEN_GPU_STREAMORDEREDCALLS_H
