//===- BufferPlanAttr.h - the buffer plan's record on a module --*- C++ -*-===//
//
// The names of the module attribute --msamp-buffer-plan writes and
// msamp-compile reads (one definition for both).
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_CODEGEN_BUFFERPLANATTR_H
#define MSAMP_CODEGEN_BUFFERPLANATTR_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace mlir::msamp {

/// Offsets in a static arena are multiples of this: cudaMalloc's
/// guarantee, and every alignment a step's allocation asks for.
constexpr int64_t kArenaAlignment = 256;

constexpr llvm::StringLiteral kBufferPlanAttr = "msamp.buffer_plan";
constexpr llvm::StringLiteral kPlanPeakBytes = "peak_bytes";
constexpr llvm::StringLiteral kPlanSessionBytes = "session_bytes";
constexpr llvm::StringLiteral kPlanStepBytes = "step_bytes";
constexpr llvm::StringLiteral kPlanBuffers = "buffers";
constexpr llvm::StringLiteral kPlanAt = "at";
/// After placement in a static arena (the GPU step's): the device arena's
/// size, its lower bound (most aligned bytes live at once) and buffers;
/// the pinned host arena's size and buffers.
constexpr llvm::StringLiteral kPlanArenaBytes = "arena_bytes";
constexpr llvm::StringLiteral kPlanArenaPeakBytes = "arena_peak_bytes";
constexpr llvm::StringLiteral kPlanArenaBuffers = "arena_buffers";
constexpr llvm::StringLiteral kPlanHostArenaBytes = "host_arena_bytes";
constexpr llvm::StringLiteral kPlanHostArenaBuffers = "host_arena_buffers";

} // namespace mlir::msamp

#endif // MSAMP_CODEGEN_BUFFERPLANATTR_H
