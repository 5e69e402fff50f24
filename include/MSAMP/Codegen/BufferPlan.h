//===- BufferPlan.h - the static buffer plan of a train step ----*- C++ -*-===//
//
// After bufferization and buffer deallocation every buffer of the step is a
// memref.alloc with a static size and a lifetime: from the alloc to the
// memref.dealloc that frees it (or to the end of the step when none does).
// The plan lists them in program order and computes the high-water mark of
// live bytes, which msamp-compile writes as memory_report.json's
// "peak_bytes" (docs/Passes.md, msamp-buffer-plan). It is target
// independent: the CPU pipeline records it, and the GPU pipeline places the
// same buffers in a static arena (msamp-gpu-static-arena): placeInArena
// gives each an offset from its lifetime up to its last use (the buffer's
// own and its views'), since a placed buffer needs no dealloc.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_CODEGEN_BUFFERPLAN_H
#define MSAMP_CODEGEN_BUFFERPLAN_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

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
  /// The last position that uses the buffer or a view of it; a use inside a
  /// region (a loop body, an if) counts at the end of the op the alloc is
  /// not in. The end of the step when the buffer escapes.
  unsigned lastUse = 0;
  /// It reaches a value the plan does not follow (a loop's iteration
  /// argument or result, an if's result, a select, a return of the step):
  /// its uses are unknown, so it must not be placed.
  bool escapes = false;
  /// Its alloc runs more than once per step (inside a loop) or is one of
  /// several instances (a callee called more than once): one offset cannot
  /// serve it.
  bool repeated = false;
  /// Set by placeInArena: the arena it is in (-1: not placed) and its
  /// offset there.
  int region = -1;
  int64_t offset = -1;
};

/// One arena of placeInArena.
struct PlannedArena {
  int64_t bytes = 0;     ///< its size
  int64_t peakBytes = 0; ///< the most bytes live at once: a lower bound
  int64_t buffers = 0;   ///< buffers placed in it
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

  /// Whether a buffer's lifetime up to its last use is all of it: it
  /// neither escapes nor repeats.
  static bool isPlaceable(const PlannedBuffer &buffer) {
    return !buffer.escapes && !buffer.repeated;
  }
  /// Places every buffer for which `regionOf` returns r in [0, numRegions)
  /// in arena r (-1: not placed), at offsets that are multiples of
  /// `alignment` (ArenaLayout.h): two buffers of one arena whose lifetimes
  /// [start, lastUse] overlap never share a byte. `regionOf` must return -1
  /// for a buffer that is not isPlaceable.
  void placeInArena(llvm::function_ref<int(const PlannedBuffer &)> regionOf,
                    unsigned numRegions, int64_t alignment);
  llvm::ArrayRef<PlannedArena> getArenas() const { return arenas; }

  /// The module attribute msamp-compile reads (BufferPlanAttr.h): the peak
  /// and, after placeInArena, arena 0's size, lower bound and buffers (and
  /// arena 1's as host_arena_* when there are two). With `runsFromArenas`
  /// (the step's buffers are the arenas' views) its step bytes are the
  /// arenas' sizes plus the peak of the buffers left unplaced; otherwise the
  /// peak of every buffer up to its dealloc.
  void record(ModuleOp module, func::FuncOp func, bool runsFromArenas) const;

private:
  Buffers buffers;
  llvm::SmallVector<PlannedArena> arenas;
  int64_t argumentBytes = 0;
  int64_t peakStepBytes = 0;
  Operation *peakOp = nullptr;
};

/// The value `value` is a view of: through views, casts and the base buffer
/// of extract_strided_metadata, as far as they go.
Value getViewRoot(Value value);

/// Bytes of a statically shaped memref (sub-byte elements rounded up to a
/// byte, as stored), or std::nullopt.
std::optional<int64_t> getStaticMemRefBytes(MemRefType type);

} // namespace mlir::msamp

#endif // MSAMP_CODEGEN_BUFFERPLAN_H
