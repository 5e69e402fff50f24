//===- BufferPlan.h - the static buffer plan of a train step ----*- C++ -*-===//
//
// After bufferization and buffer deallocation every buffer of the step is a
// memref.alloc with a static size and a lifetime: from the alloc to the
// memref.dealloc that frees it (or to the end of the step when none does).
// The plan lists them in program order and computes the high-water mark of
// live bytes, which msamp-compile writes as memory_report.json's
// "peak_bytes" (docs/Passes.md, msamp-buffer-plan). It is target
// independent: the CPU pipeline records it, and a GPU arena planner can
// place the same buffers in one arena (offsets from these lifetimes).
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_CODEGEN_BUFFERPLAN_H
#define MSAMP_CODEGEN_BUFFERPLAN_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::msamp {

/// One allocation of the step.
struct PlannedBuffer {
  memref::AllocOp alloc;
  int64_t bytes;
  /// Positions in program order (a pre-order walk of the function): the
  /// buffer is live from `start` (the alloc) through `end` (the dealloc,
  /// or the last position when nothing frees it inside the step).
  unsigned start;
  unsigned end;
  bool freed;
};

class BufferPlan {
public:
  using Buffers = llvm::SmallVector<PlannedBuffer>;

  /// The plan of `func` (bufferized, deallocation inserted). Fails with a
  /// located error on an allocation whose size is not static.
  static FailureOr<BufferPlan> compute(func::FuncOp func);

  llvm::ArrayRef<PlannedBuffer> getBuffers() const { return buffers; }
  /// Bytes of the function's memref arguments: the buffers its caller
  /// allocates and binds for the whole step (a train step's state, inputs
  /// and outputs).
  int64_t getArgumentBytes() const { return argumentBytes; }
  /// The most bytes of the step's own allocations live at one point.
  int64_t getPeakStepBytes() const { return peakStepBytes; }
  /// Arguments plus the step's peak: the high-water mark of the step.
  int64_t getPeakBytes() const { return argumentBytes + peakStepBytes; }
  /// The allocation that reaches the peak (null when the step allocates
  /// nothing): its location names the worst point.
  Operation *getPeakOp() const { return peakOp; }

private:
  Buffers buffers;
  int64_t argumentBytes = 0;
  int64_t peakStepBytes = 0;
  Operation *peakOp = nullptr;
};

/// Bytes of a statically shaped memref (sub-byte elements rounded up to a
/// byte, as stored), or std::nullopt.
std::optional<int64_t> getStaticMemRefBytes(MemRefType type);

} // namespace mlir::msamp

#endif // MSAMP_CODEGEN_BUFFERPLAN_H
