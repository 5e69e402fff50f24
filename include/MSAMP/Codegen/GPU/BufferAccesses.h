//===- BufferAccesses.h - which buffers an op reads and writes --*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The conservative buffer model of the GPU passes that move kernels past
// other ops of the bufferized step (msamp-gpu-merge-scalar-kernels,
// msamp-gpu-merge-sibling-kernels): buffers are traced through views and
// casts to their root (rootBuffer); two distinct allocations of the step
// never alias, function arguments and globals may alias each other, a root
// of unknown origin may alias anything; an op whose effects are unknown
// reads and writes every buffer it names; runtime calls read only their
// inputs, scales and histories (docs/RuntimeABI.md 3.1-3.7, 3.12) and read
// and write everything else they name; a call that takes a table of
// addresses (msamp_rt_adam_update_multi's) may touch any buffer.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_CODEGEN_GPU_BUFFERACCESSES_H
#define MSAMP_CODEGEN_GPU_BUFFERACCESSES_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::msamp {

/// The buffers (roots) an op and the ops nested in it read and write.
struct BufferAccesses {
  llvm::SmallDenseSet<Value> reads, writes;
  /// It may touch buffers it does not name.
  bool anything = false;

  /// Adds `other`'s accesses: those of two ops (or runs of ops) together.
  void add(const BufferAccesses &other) {
    reads.insert(other.reads.begin(), other.reads.end());
    writes.insert(other.writes.begin(), other.writes.end());
    anything |= other.anything;
  }
};

/// The accesses of `root` and every op nested in it.
BufferAccesses collectBufferAccesses(Operation *root);

/// Whether two root buffers may share memory.
bool mayAlias(Value a, Value b);

/// Whether `later` may not move before `earlier`, or the two may not run
/// at once: one writes a buffer the other reads or writes.
bool dependsOn(const BufferAccesses &later, const BufferAccesses &earlier);

} // namespace mlir::msamp

#endif // MSAMP_CODEGEN_GPU_BUFFERACCESSES_H
