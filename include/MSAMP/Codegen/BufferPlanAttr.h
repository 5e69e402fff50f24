//===- BufferPlanAttr.h - the buffer plan's record on a module --*- C++ -*-===//
//
// The names of the module attribute --msamp-buffer-plan writes and
// msamp-compile reads (one definition for both).
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_CODEGEN_BUFFERPLANATTR_H
#define MSAMP_CODEGEN_BUFFERPLANATTR_H

#include "llvm/ADT/StringRef.h"

namespace mlir::msamp {

constexpr llvm::StringLiteral kBufferPlanAttr = "msamp.buffer_plan";
constexpr llvm::StringLiteral kPlanPeakBytes = "peak_bytes";
constexpr llvm::StringLiteral kPlanSessionBytes = "session_bytes";
constexpr llvm::StringLiteral kPlanStepBytes = "step_bytes";
constexpr llvm::StringLiteral kPlanBuffers = "buffers";
constexpr llvm::StringLiteral kPlanAt = "at";

} // namespace mlir::msamp

#endif // MSAMP_CODEGEN_BUFFERPLANATTR_H
