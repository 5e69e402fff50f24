//===- ZeROGather.h - O3's all-gathers of flat groups -----------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The all-gather of one flat group (lib/TrainStep/FlatShards.cpp) back into
// whole tensors, which msamp-zero-shard (ZeROShard.cpp) emits at the end of
// a stage 1-2 step (the new weights) and, at ZeRO stage 3, where the step
// first reads a bucket of weights in each phase (forward, backward).
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_TRANSFORMS_ZEROGATHER_H
#define MSAMP_LIB_TRANSFORMS_ZEROGATHER_H

#include "MSAMP/TrainStep/FlatShards.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::msamp::zero_shard {

/// One tensor of a flat group: where it sits in the group and the piece of
/// it this rank holds.
struct GatherMember {
  int64_t offset = 0;    // flat offset of the tensor in the group
  int64_t lo = 0;        // offset of this rank's piece in the tensor
  Value piece;           // this rank's 1-D piece, null when it holds none
  RankedTensorType type; // the whole tensor
};

/// Every rank's pieces of the members of the group `layout` describes, of
/// element type `stored`: one msamp.all_gather of this rank's owned range,
/// then each member whole, in the order of `members`.
SmallVector<Value> gatherGroup(OpBuilder &b, Location loc,
                               const FlatShardLayout &layout, Type stored,
                               ArrayRef<GatherMember> members, int64_t me);

/// ZeRO stage 3: every use of a member's piece argument `args[k]` by an op
/// of `readers` (the step's own ops, as they were before the rewrite) is
/// replaced by the member whole, all-gathered just before the group's first
/// such reader of its phase: once for the readers up to the op computing
/// the loss (forward), once for those after it (backward, the dgrad
/// GEMMs). Each gathered tensor is dead after its phase's last reader, so
/// bufferization frees it there: a rank holds one bucket's weights at a time
/// per phase. Returns the number of all-gathers emitted.
unsigned gatherBeforeUse(func::FuncOp func, const FlatShardLayout &layout,
                         Type stored, ArrayRef<unsigned> args,
                         ArrayRef<GatherMember> members,
                         const llvm::SmallPtrSetImpl<Operation *> &readers,
                         Operation *loss, int64_t me);

} // namespace mlir::msamp::zero_shard

#endif // MSAMP_LIB_TRANSFORMS_ZEROGATHER_H
